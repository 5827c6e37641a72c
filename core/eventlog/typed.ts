// The typed edge of the log: values are validated against their topic contract on the way in
// and on the way out, and carried as JSON text in between.
import type { Static, TSchema } from '@sinclair/typebox';
import { assertTopicValue, type TopicContract } from '../topics.ts';
import type { EventLog, LogMessage } from './types.ts';

export interface TypedMessage<T> {
  key: string;
  value: T;
  /** Event time, Unix ms. */
  timestamp: number;
}

/** Validates every value (throws on the first invalid one, producing nothing) and appends them. */
export async function produceValues<T extends TSchema>(
  log: EventLog,
  contract: TopicContract<T>,
  items: TypedMessage<Static<T>>[],
): Promise<void> {
  const messages = items.map((item) => {
    assertTopicValue(contract, item.value);
    return { key: item.key, value: JSON.stringify(item.value), timestamp: item.timestamp };
  });
  await log.produce(contract.name, messages);
}

/** Parses and validates a message's value; throws a TypeError naming the topic and offset when it does not fit. */
export function decodeValue<T extends TSchema>(contract: TopicContract<T>, message: LogMessage): Static<T> {
  let value: unknown;
  try {
    value = JSON.parse(message.value);
  } catch (error) {
    throw new TypeError(
      `${contract.name} ${message.partition}@${message.offset}: value is not JSON (${(error as Error).message})`,
    );
  }
  try {
    assertTopicValue(contract, value);
  } catch (error) {
    throw new TypeError(`${contract.name} ${message.partition}@${message.offset}: ${(error as Error).message}`);
  }
  return value;
}
