// docker-compose.yml cannot run here (no Docker engine), so its wiring is checked against the
// code it starts: every role is a `spot` command, every variable is one the config knows and
// accepts, the published ports are the roles' ports, and the services start in a working order.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { parse } from 'yaml';
import { COMMAND_NAMES } from '../cli/main.ts';
import { loadConfig } from '../core/config.ts';

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  deploy?: { replicas?: number };
  healthcheck?: unknown;
}

const compose = parse(fs.readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const services = compose.services;
const configDoc = fs.readFileSync('docs/configuration.md', 'utf8');
/** Variables of the configuration table (docs/configuration.md). */
const documented = new Set([...configDoc.matchAll(/^\| `(SPOT_[A-Z_]+)`/gm)].map((m) => m[1]!));
/** `${NAME:-default}` as Compose resolves it when NAME is unset. */
const interpolate = (value: string | number) => String(value).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
/** The spot command a service runs (`node [node flags] bin/spot.js ROLE …`), from bin/spot.js on. */
const spotArgs = (s: Service) => s.command?.slice(s.command.indexOf('bin/spot.js')) ?? [];
const roleServices = Object.entries(services).filter(([, s]) => s.command?.includes('bin/spot.js'));

describe('docker-compose.yml', () => {
  it('runs Kafka in KRaft mode (no ZooKeeper) and a ClickHouse server, both health-checked', () => {
    const kafka = services.kafka!;
    assert.match(String(kafka.environment?.KAFKA_PROCESS_ROLES), /controller/);
    assert.ok(kafka.environment?.KAFKA_CONTROLLER_QUORUM_VOTERS);
    assert.ok(!Object.keys(services).some((name) => /zookeeper/i.test(name)));
    assert.match(String(services.clickhouse!.image), /^clickhouse\/clickhouse-server:/);
    assert.ok(kafka.healthcheck && services.clickhouse!.healthcheck);
  });

  it('starts every role as a spot command, with at least two aggregator instances', () => {
    const roles = roleServices.map(([, s]) => spotArgs(s)[1]!);
    for (const role of ['migrate', 'ingest', 'aggregate', 'api', 'edge'])
      assert.ok(roles.includes(role), `a service runs spot ${role}`);
    for (const role of roles) assert.ok(COMMAND_NAMES.includes(role), `spot ${role} is a command`);
    const aggregate = roleServices.find(([, s]) => spotArgs(s)[1] === 'aggregate')![1];
    assert.ok((aggregate.deploy?.replicas ?? 1) >= 2);
  });

  it('gives each role only documented variables that the config accepts, pointing at the compose services', () => {
    for (const [name, service] of roleServices) {
      const env = Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(v)]));
      for (const variable of Object.keys(env))
        assert.ok(documented.has(variable), `${name}: ${variable} is in docs/configuration.md`);
      const config = loadConfig(env);
      assert.deepEqual(config.kafkaBrokers, ['kafka:9092'], `${name} uses the Kafka service`);
      const clickhouse = new URL(config.clickhouseUrl!);
      assert.equal(clickhouse.hostname, 'clickhouse');
      assert.equal(clickhouse.username, String(services.clickhouse!.environment!.CLICKHOUSE_USER));
      assert.equal(clickhouse.password, String(services.clickhouse!.environment!.CLICKHOUSE_PASSWORD));
      assert.equal(config.host, '0.0.0.0', `${name} listens beyond its container's loopback`);
    }
  });

  it('publishes the API and stream ports the roles listen on', () => {
    const portOf = (role: string) => roleServices.find(([, s]) => spotArgs(s)[1] === role)![1];
    const config = loadConfig({});
    assert.ok(portOf('api').ports?.includes(`${config.httpPort}:${config.httpPort}`));
    assert.ok(portOf('edge').ports?.includes(`${config.wsPort}:${config.wsPort}`));
  });

  it('installs before migrating and migrates before any other role starts', () => {
    const migrate = roleServices.find(([, s]) => spotArgs(s)[1] === 'migrate')![1];
    assert.equal(migrate.depends_on?.install?.condition, 'service_completed_successfully');
    assert.match(services.install!.command!.join(' '), /^npm ci\b/, 'installs exactly the committed lock');
    for (const [name, service] of roleServices) {
      if (spotArgs(service)[1] === 'migrate') continue;
      assert.equal(
        service.depends_on?.migrate?.condition,
        'service_completed_successfully',
        `${name} waits for the migrations`,
      );
      assert.equal(service.depends_on?.kafka?.condition, 'service_healthy', `${name} waits for Kafka`);
    }
  });
});
