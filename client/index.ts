// The typed TypeScript client of the spot market data service: REST (every endpoint) and the
// stream (reconnect, resume from the last cursor, backoff with jitter, Retry-After, restore).
export {
  SpotApiError,
  createRestClient,
  type IdentityTradesQuery,
  type OhlcvQuery,
  type PageQuery,
  type RestClient,
  type RestClientOptions,
} from './rest.ts';
export {
  backoffDelay,
  createStreamClient,
  type Channel,
  type ChannelData,
  type ChannelFilters,
  type StreamClient,
  type StreamClientOptions,
  type StreamErrorInfo,
  type StreamEvent,
  type StreamSubscription,
  type SubscribeHandlers,
  type SubscribeOptions,
  type TradesFilters,
  type UpdateInfo,
} from './stream.ts';
