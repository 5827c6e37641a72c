// Metrics of one role: a prom-client registry carried in the context. The typed families below are
// what /metrics exposes (docs/operations.md lists them); inc/set/get/snapshot keep the named
// counters the code base reads for logs, hints and benchmarks, exported as one labelled family.
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';
import type { Batch } from './eventlog/types.ts';

/** Seconds buckets for request and write latencies: 0.5 ms to 10 s. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function families(registry: Registry) {
  const registers = [registry];
  return {
    ingestHead: new Gauge({
      name: 'spot_ingest_head',
      help: 'Newest block (EVM) or slot (solana) the chain source has seen',
      labelNames: ['chain'] as const,
      registers,
    }),
    ingestProcessed: new Gauge({
      name: 'spot_ingest_processed',
      help: 'Newest block or slot whose records were published to the event log',
      labelNames: ['chain'] as const,
      registers,
    }),
    ingestBehindBlocks: new Gauge({
      name: 'spot_ingest_behind_blocks',
      help: 'Head minus processed, in blocks or slots',
      labelNames: ['chain'] as const,
      registers,
    }),
    ingestBehindSeconds: new Gauge({
      name: 'spot_ingest_behind_seconds',
      help: 'Wall clock minus the block time of the newest processed block',
      labelNames: ['chain'] as const,
      registers,
    }),
    decodeErrors: new Counter({
      name: 'spot_decode_errors_total',
      help: 'Events of a known program or topic that could not be decoded',
      labelNames: ['chain', 'protocol'] as const,
      registers,
    }),
    consumerLag: new Gauge({
      name: 'spot_log_consumer_lag',
      help: 'Messages in the event log not yet processed by a consumer group (summed over partitions)',
      labelNames: ['group', 'topic'] as const,
      registers,
    }),
    aggregatorMessages: new Counter({
      name: 'spot_aggregator_messages_total',
      help: 'Input messages (swaps, token events) the aggregator processed',
      registers,
    }),
    aggregatorBatchSeconds: new Histogram({
      name: 'spot_aggregator_batch_duration_seconds',
      help: 'Time to flush one aggregator batch (publish trades, hand rows to the store writer)',
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    storeWriteSeconds: new Histogram({
      name: 'spot_store_write_duration_seconds',
      help: 'Time of one store insert, by table',
      labelNames: ['table'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    storeRows: new Counter({
      name: 'spot_store_rows_written_total',
      help: 'Rows written to the store, by table',
      labelNames: ['table'] as const,
      registers,
    }),
    hotViewAge: new Gauge({
      name: 'spot_hot_view_age_seconds',
      help: 'Wall clock minus the event time of the newest message a hot view applied',
      labelNames: ['view'] as const,
      registers,
    }),
    httpSeconds: new Histogram({
      name: 'spot_http_request_duration_seconds',
      help: 'REST request duration by route pattern, method and status',
      labelNames: ['route', 'method', 'status'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    streamConnections: new Gauge({ name: 'spot_stream_connections', help: 'Open stream connections', registers }),
    streamSubscriptions: new Gauge({
      name: 'spot_stream_subscriptions',
      help: 'Subscriptions held by open stream connections',
      registers,
    }),
    // Counters the edge keeps itself; copied on each scrape (stream-edge/ops.ts).
    streamFramesSent: new Counter({
      name: 'spot_stream_frames_sent_total',
      help: 'Frames handed to stream sockets since start',
      registers,
    }),
    streamBackpressureCloses: new Counter({
      name: 'spot_stream_backpressure_closes_total',
      help: 'Stream connections closed with 4008 (too many unsent frames) since start',
      registers,
    }),
  };
}

type MetricFamilies = ReturnType<typeof families>;

/** A registry's metrics as JSON, as one thread hands them to another for /metrics. */
export type MetricsJSON = MetricObjectWithValues<MetricValue<string>>[];

export interface Metrics {
  inc(name: string, by?: number): void;
  set(name: string, value: number): void;
  get(name: string): number;
  snapshot(): Record<string, number>;
  readonly registry: Registry;
  readonly families: MetricFamilies;
  /** Records a consumer's next offset to read per partition (lag is computed against the log's ends on scrape). */
  consumerPosition(group: string, topic: string, partition: number, next: number): void;
  /** A consumer finished this batch: its position, and (`view`) the event time a hot view now shows. */
  batchConsumed(group: string, batch: Batch, view?: string): void;
  /** The same for a whole offsets map keyed "topic:partition" (the aggregator's state). */
  consumerPositions(group: string, offsets: Record<string, number>): void;
  /** group → topic → partition → next offset. */
  positions(): ReadonlyMap<string, ReadonlyMap<string, ReadonlyMap<number, number>>>;
  /** A hot view applied a message of this event time (Unix ms); its age is read on scrape. */
  hotViewApplied(view: string, eventTimeMs: number): void;
  /** Newest block or slot a chain source has seen (RPC head); a chain with none counts processed as head. */
  ingestHead(chain: string, height: number): void;
  /** A record of this block or slot and block time (Unix ms) was published; cheap enough per record. */
  ingestProcessed(chain: string, height: number, blockTimeMs: number): void;
  /** Runs `collect` before every scrape (gauges read from a component's own counters). */
  onCollect(collect: () => void): void;
  /** Adds process metrics (event-loop delay, heap, CPU) once; done by the role that serves /metrics. */
  collectProcessMetrics(): void;
  /** Prometheus text exposition of the registry. */
  expose(): Promise<string>;
  /** The registry's metrics as JSON after the collectors ran (merged with another thread's by /metrics). */
  exposeJSON(): Promise<MetricsJSON>;
}

export function createMetrics(): Metrics {
  const values = new Map<string, number>();
  const registry = new Registry();
  const typed = families(registry);
  const positions = new Map<string, Map<string, Map<number, number>>>();
  const viewTimes = new Map<string, number>();
  const heads = new Map<string, number>();
  const processed = new Map<string, { height: number; blockTimeMs: number }>();
  const collectors: Array<() => void> = [
    () => {
      const now = Date.now();
      for (const [view, time] of viewTimes) typed.hotViewAge.set({ view }, Math.max(0, (now - time) / 1000));
      for (const [chain, done] of processed) {
        const head = Math.max(heads.get(chain) ?? 0, done.height);
        typed.ingestHead.set({ chain }, head);
        typed.ingestProcessed.set({ chain }, done.height);
        typed.ingestBehindBlocks.set({ chain }, head - done.height);
        typed.ingestBehindSeconds.set({ chain }, Math.max(0, (now - done.blockTimeMs) / 1000));
      }
    },
  ];
  let processMetrics = false;

  new Gauge({
    name: 'spot_named_counter',
    help: 'Named counters and gauges of the components (ctx.metrics.inc/set), by name',
    labelNames: ['name'] as const,
    registers: [registry],
    collect() {
      for (const [name, value] of values) this.set({ name }, value);
    },
  });

  const positionOf = (group: string, topic: string) => {
    let byTopic = positions.get(group);
    if (!byTopic) positions.set(group, (byTopic = new Map()));
    let byPartition = byTopic.get(topic);
    if (!byPartition) byTopic.set(topic, (byPartition = new Map()));
    return byPartition;
  };

  return {
    inc(name, by = 1) {
      values.set(name, (values.get(name) ?? 0) + by);
    },
    set(name, value) {
      values.set(name, value);
    },
    get(name) {
      return values.get(name) ?? 0;
    },
    snapshot() {
      return Object.fromEntries(values);
    },
    registry,
    families: typed,
    consumerPosition(group, topic, partition, next) {
      positionOf(group, topic).set(partition, next);
    },
    batchConsumed(group, batch, view) {
      const last = batch.messages[batch.messages.length - 1];
      if (!last) return;
      positionOf(group, batch.topic).set(batch.partition, last.offset + 1);
      if (view !== undefined) viewTimes.set(view, Math.max(viewTimes.get(view) ?? 0, last.timestamp));
    },
    consumerPositions(group, offsets) {
      for (const key in offsets) {
        const colon = key.lastIndexOf(':');
        positionOf(group, key.slice(0, colon)).set(Number(key.slice(colon + 1)), offsets[key]!);
      }
    },
    positions: () => positions,
    hotViewApplied(view, eventTimeMs) {
      viewTimes.set(view, eventTimeMs);
    },
    ingestHead(chain, height) {
      heads.set(chain, Math.max(heads.get(chain) ?? 0, height));
    },
    ingestProcessed(chain, height, blockTimeMs) {
      const done = processed.get(chain);
      if (!done) processed.set(chain, { height, blockTimeMs });
      else if (height >= done.height) {
        done.height = height;
        done.blockTimeMs = Math.max(done.blockTimeMs, blockTimeMs);
      }
    },
    onCollect(collect) {
      collectors.push(collect);
    },
    collectProcessMetrics() {
      if (processMetrics) return;
      processMetrics = true;
      collectDefaultMetrics({ register: registry });
    },
    async expose() {
      for (const collect of collectors) collect();
      return registry.metrics();
    },
    async exposeJSON() {
      for (const collect of collectors) collect();
      return registry.getMetricsAsJSON();
    },
  };
}
