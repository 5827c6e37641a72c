// The event log contract: one interface, two transports (embedded SQLite, Kafka).

export interface ProduceMessage {
  key: string;
  /** Serialised value (JSON text); the topic layer (core/topics.ts) encodes and validates it. */
  value: string;
  /** Event time in Unix ms; defaults to the wall clock. Seek-by-time uses it. */
  timestamp?: number;
}

export interface LogMessage {
  topic: string;
  partition: number;
  /** Offset within the partition; strictly increasing, starting at 0. */
  offset: number;
  key: string;
  value: string;
  timestamp: number;
}

export interface Batch {
  topic: string;
  partition: number;
  messages: LogMessage[];
}

export interface TopicSpec {
  name: string;
  partitions: number;
  /** Keep only the latest value per key. */
  compacted: boolean;
  /** Retention for non-compacted topics, ms; undefined keeps everything. */
  retentionMs?: number;
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface ConsumerOptions {
  group: string;
  topics: string[];
  /** Where a group with no committed offset starts: earliest (default) or latest. */
  start?: 'earliest' | 'latest';
  /** Upper bound of messages handed to one eachBatch call. */
  maxBatchSize?: number;
  /**
   * Upper bound of what one fetch of a partition reads, in characters of keys and values; a fetch
   * always returns at least one message. Embedded: a fetch is one synchronous read of the calling
   * thread, so a serving thread bounds it by size as well as by count (candle messages are ~10 KB).
   * Kafka: kafkajs' maxBytesPerPartition.
   */
  maxFetchBytes?: number;
  /**
   * Embedded: batches handled back to back give the event loop a turn once they have held it this
   * long (core/slices.ts), for a thread that also answers requests. Unset: a pass runs through (a
   * turn per batch doubled the swap → frame p99 of the in-process pipeline).
   */
  sliceMs?: number;
  /**
   * Fetch gate: a partition is not fetched while this returns false (its handler still holds
   * enough of it, e.g. a merge waiting for other partitions). Embedded: asked before every fetch.
   * Kafka: asked after every batch; a partition it refuses is paused and resumed once it accepts.
   */
  ready?: (topic: string, partition: number) => boolean;
  /**
   * 'batch' (default): a batch's offsets are committed once eachBatch resolved. 'manual': only
   * commit() commits (a consumer whose sinks acknowledge later than eachBatch returns).
   */
  commit?: 'batch' | 'manual';
  /** Called when partitions are assigned to this member, before their first batch. */
  onAssign?: (partitions: TopicPartition[]) => Promise<void> | void;
  /** Called when partitions are taken away, after their last batch finished. */
  onRevoke?: (partitions: TopicPartition[]) => Promise<void> | void;
}

export interface Consumer {
  /**
   * Delivers batches in offset order per partition. The offset after a batch is committed
   * only once `eachBatch` resolved (commit 'batch'); a throw stops the consumer without committing.
   */
  run(eachBatch: (batch: Batch) => Promise<void>): Promise<void>;
  /** Moves the group's position (before or during run). */
  seek(topic: string, partition: number, offset: number): Promise<void>;
  /** Moves every partition of `topic` to the first message with timestamp >= `timestamp`. */
  seekToTime(topic: string, timestamp: number): Promise<void>;
  /** Commits these positions (next offset to read) for the group; only while run() is active (rejects otherwise). */
  commit(positions: Array<{ topic: string; partition: number; offset: number }>): Promise<void>;
  /** Committed offset (next to read) per partition of a topic; -1 where none. */
  committed(topic: string): Promise<Map<number, number>>;
  /** Stops fetching, waits for the batch in flight, commits it, leaves the group. */
  stop(): Promise<void>;
}

export interface EventLog {
  readonly kind: 'embedded' | 'kafka';
  /** Creates topics where the transport allows it; a no-op for topics that exist. */
  ensureTopics(specs: TopicSpec[]): Promise<void>;
  /**
   * Appends messages; resolves once they are durable (acknowledged). A key always maps to
   * the same partition, so order per key is kept.
   */
  produce(topic: string, messages: ProduceMessage[]): Promise<void>;
  consumer(options: ConsumerOptions): Consumer;
  /**
   * Reads a topic from its beginning to its end as of the call (for a compacted topic, at
   * least the latest value of every key) and resolves; no group offsets are involved.
   */
  readToEnd(topic: string, onMessage: (message: LogMessage) => void): Promise<void>;
  /** End offset (next offset to be written) per partition. */
  endOffsets(topic: string): Promise<Map<number, number>>;
  close(): Promise<void>;
}
