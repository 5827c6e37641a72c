// The one object that carries config, logger and metrics into every createX(deps) factory.
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';

export interface Context {
  config: Config;
  logger: Logger;
  metrics: Metrics;
}

export function createContext(config: Config, logger: Logger): Context {
  return { config, logger, metrics: createMetrics() };
}
