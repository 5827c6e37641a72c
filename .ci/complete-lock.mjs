#!/usr/bin/env node
// Completes package-lock.json with the platform packages a registry mirror does not serve.
//
// Why: native packages (chdb, biome, oxc-parser) list one optional dependency per platform. When
// the registry npm resolves against answers 404 for some of them (a mirror serving only linux-x64),
// `npm install` leaves them out of the lock, and `npm ci` then refuses the lock ("Missing:
// @chdb/lib-darwin-arm64@ from lock file"): its ideal tree still has an edge for each. An entry
// with the exact version and the platform fields (os, cpu, libc) is what npm records from the full
// registry, minus the integrity hash it could not read; npm ci skips it on other platforms and a
// machine of that platform resolves it from its registry. Run after `npm install --package-lock-only`:
//   node .ci/complete-lock.mjs [package-lock.json]
import fs from 'node:fs';

const OS = new Set([
  'aix',
  'android',
  'darwin',
  'freebsd',
  'linux',
  'netbsd',
  'openbsd',
  'openharmony',
  'sunos',
  'win32',
]);
const CPU = new Set(['arm', 'arm64', 'ia32', 'loong64', 'mips64el', 'ppc64', 'riscv64', 's390x', 'wasm32', 'x64']);
const LIBC = { gnu: 'glibc', gnueabihf: 'glibc', musl: 'musl', musleabihf: 'musl' };

/** os, cpu and libc from a platform package's name (`cli-linux-x64-musl`, `lib-darwin-arm64`). */
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((part) => OS.has(part));
  const cpu = parts.find((part) => CPU.has(part));
  if (!os || !cpu) return null;
  const abi = parts.find((part) => part in LIBC);
  const fields = { os: [os], cpu: [cpu] };
  // A linux binary without a musl marker is built against glibc (npm's own entries say so).
  if (os === 'linux') fields.libc = [abi ? LIBC[abi] : 'glibc'];
  return fields;
}

const file = process.argv[2] ?? 'package-lock.json';
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const added = [];
for (const [location, entry] of Object.entries(lock.packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${location ? `${location}/` : ''}node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[`node_modules/${name}`]) continue;
    const platform = platformOf(name);
    if (!platform) continue; // not a platform package: npm resolves it like any other
    if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec)) throw new Error(`${name}: spec "${spec}" is not an exact version`);
    lock.packages[`node_modules/${name}`] = {
      version: spec,
      ...platform,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
    };
    added.push(`${name}@${spec}`);
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`${added.length} platform package(s) added to ${file}\n${added.join('\n')}\n`);
