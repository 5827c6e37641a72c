// EVM receipt decoder: one transaction receipt in, normalised raw swaps and token events out.
// Pass 1 learns what the receipt creates (pools, four.meme tokens, launches) so that a receipt
// holding PairCreated + Swap decodes on its own; pass 2 decodes trades and transfers in log order.
import { BaseError } from 'viem';
import type { Chain } from '../../core/chains.ts';
import { createMetrics, type Metrics } from '../../core/metrics.ts';
import type { RawSwap, TokenEvent } from '../../core/topics.ts';
import { eventNameOfTopic, TOPIC0, type EventName } from './abi.ts';
import {
  learnAerodromePoolCreated,
  learnPairCreated,
  learnSlipstreamPoolCreated,
  learnV3PoolCreated,
  learnV4Initialize,
  onAerodromeFees,
  onAerodromeSync,
  onV2StyleSwap,
  onV2Sync,
  onV3Swap,
  onV4Swap,
  learnInfinityInitialize,
  onInfinitySwap,
} from './amm.ts';
import { learnFourMemeCreate, onFourMemeCurveEnd, onFourMemeTrade, onFourMemeTradeV1 } from './fourmeme.ts';
import { detectLaunches } from './launch.ts';
import { quoteRank } from './normalize.ts';
import {
  isRecord,
  normalizeReceipt,
  receiptTimestampMs,
  toBigInt,
  toSafeNumber,
  unwrapReceipt,
  type EvmReceipt,
  type EvmTransaction,
  type NormalLog,
} from './receipt.ts';
import { createPoolRegistry, type PoolRegistry, type TokenInfoProvider } from './registry.ts';
import { createScope, decodeAs, type ReceiptScope } from './scope.ts';
import { createPlatformRegistry, type PlatformRegistry } from '../enrichment/platforms.ts';

/**
 * Which ERC-20 Transfers become `transfer` events: 'tracked' (default) = tokens the token
 * registry knows that are not quote assets (launch tokens and every token the source resolved
 * for trading), 'all' = every ERC-20 Transfer, 'none' = no transfer events.
 */
export type TransferMode = 'tracked' | 'all' | 'none';

export interface EvmDecoderDeps {
  chain: Chain;
  tokens: TokenInfoProvider;
  pools?: PoolRegistry;
  metrics?: Metrics;
  transfers?: TransferMode;
  /** Names the trading platform of a swap from the contract the transaction called (default: the public registry). */
  platforms?: PlatformRegistry;
}

export interface DecodedReceipt {
  swaps: RawSwap[];
  events: TokenEvent[];
}

/** A receipt, or a JSON-RPC response wrapper `{result, blockTimestamp?}`. */
export type ReceiptInput = EvmReceipt | { result: EvmReceipt; blockTimestamp?: string | number | null };

export interface EvmDecoder {
  readonly chain: Chain;
  readonly pools: PoolRegistry;
  readonly tokens: TokenInfoProvider;
  readonly metrics: Metrics;
  /**
   * blockTimestampMs defaults to the receipt's (or wrapper's, or logs') blockTimestamp; one of
   * them is required. `transaction` enables native funding events.
   */
  decodeReceipt(receipt: ReceiptInput, blockTimestampMs?: number, transaction?: EvmTransaction): DecodedReceipt;
}

const CREATION_EVENTS: Partial<Record<EventName, (scope: ReceiptScope, log: NormalLog) => void>> = {
  pairCreated: learnPairCreated,
  v3PoolCreated: learnV3PoolCreated,
  aerodromePoolCreated: learnAerodromePoolCreated,
  slipstreamPoolCreated: learnSlipstreamPoolCreated,
  v4Initialize: learnV4Initialize,
  infinityClInitialize: (scope, log) => learnInfinityInitialize(scope, log, 'cl'),
  infinityBinInitialize: (scope, log) => learnInfinityInitialize(scope, log, 'bin'),
  fourMemeCreate: learnFourMemeCreate,
};

export function createEvmDecoder(deps: EvmDecoderDeps): EvmDecoder {
  const { chain, tokens } = deps;
  const pools = deps.pools ?? createPoolRegistry();
  const metrics = deps.metrics ?? createMetrics();
  const transferMode = deps.transfers ?? 'tracked';
  const registry = deps.platforms ?? createPlatformRegistry();
  // Counter names built once, not per receipt.
  const COUNTER = {
    receipts: `ingest.evm.${chain}.receipts`,
    reverted: `ingest.evm.${chain}.skipped_reverted`,
    swaps: `ingest.evm.${chain}.swaps`,
    events: `ingest.evm.${chain}.events`,
  };

  function guarded(scope: ReceiptScope, run: () => void, protocol = 'evm'): void {
    try {
      run();
    } catch (error) {
      // A log with a known topic0 but another layout (e.g. a look-alike event): not ours.
      if (!(error instanceof BaseError)) throw error;
      scope.count('skipped_undecodable');
      metrics.families.decodeErrors.inc({ chain, protocol });
    }
  }

  function onTransfer(scope: ReceiptScope, log: NormalLog): void {
    if (transferMode === 'none' || log.topics.length !== 3) return; // 4 topics: ERC-721
    const token = log.address;
    if (transferMode === 'tracked' && (quoteRank(chain, token) > 0 || tokens.getToken(chain, token) === undefined))
      return;
    const args = decodeAs('transfer', log);
    scope.events.push(
      Object.assign(scope.at(log.logIndex), {
        kind: 'transfer' as const,
        token,
        from: args.from.toLowerCase(),
        to: args.to.toLowerCase(),
        amount: args.value.toString(),
      }),
    );
  }

  function decodeLog(scope: ReceiptScope, log: NormalLog, name: EventName, curveEnded: Set<string>): void {
    switch (name) {
      case 'v2Sync':
        return onV2Sync(scope, log);
      case 'aerodromeSync':
        return onAerodromeSync(scope, log);
      case 'aerodromeFees':
        return onAerodromeFees(scope, log);
      case 'v2Swap':
        return onV2StyleSwap(scope, log, false);
      case 'aerodromeSwap':
        return onV2StyleSwap(scope, log, true);
      case 'v3Swap':
        return onV3Swap(scope, log, false);
      case 'pancakeV3Swap':
        return onV3Swap(scope, log, true);
      case 'v4Swap':
        return onV4Swap(scope, log);
      case 'infinityClSwap':
        return onInfinitySwap(scope, log, 'cl');
      case 'infinityBinSwap':
        return onInfinitySwap(scope, log, 'bin');
      case 'fourMemePurchase':
        return onFourMemeTrade(scope, log, 'buy');
      case 'fourMemeSale':
        return onFourMemeTrade(scope, log, 'sell');
      case 'fourMemePurchaseV1':
        return onFourMemeTradeV1(scope, log, 'buy');
      case 'fourMemeSaleV1':
        return onFourMemeTradeV1(scope, log, 'sell');
      case 'fourMemePurchaseV1Fee':
        return onFourMemeTradeV1(scope, log, 'buy', true);
      case 'fourMemeSaleV1Fee':
        return onFourMemeTradeV1(scope, log, 'sell', true);
      case 'fourMemeLiquidityAdded':
        return onFourMemeCurveEnd(scope, log, 'liquidityAdded', curveEnded);
      case 'fourMemeTradeStop':
        return onFourMemeCurveEnd(scope, log, 'tradeStop', curveEnded);
      case 'transfer':
        return onTransfer(scope, log);
      default:
        return; // creations were handled in pass 1
    }
  }

  /** A pool created for a token whose curve ended: the token graduated to that pool. */
  function resolveGraduations(scope: ReceiptScope): void {
    for (const creation of scope.creations) {
      for (const token of [creation.token0, creation.token1]) {
        if (tokens.takeGraduationPending(chain, token) === undefined) continue;
        scope.events.push(
          Object.assign(scope.at(creation.logIndex), {
            kind: 'graduated' as const,
            token,
            pool: creation.pool,
            dex: creation.dex,
          }),
        );
      }
    }
  }

  /**
   * A plain value transfer (value > 0, no calldata) whose receipt has no logs (on arc, only the
   * native-USDC Transfer mirror of 0x3600…) funds the receiving wallet.
   */
  function addFunding(scope: ReceiptScope, transaction: EvmTransaction): void {
    const value = toBigInt(transaction.value);
    const input = transaction.input ?? '0x';
    if (value <= 0n || !transaction.to || (input !== '0x' && input !== '')) return;
    const mirror = (log: NormalLog) => log.topics[0] === TOPIC0.transfer && quoteRank(chain, log.address) === 2;
    if (!scope.receipt.logs.every(mirror)) return;
    scope.events.push(
      Object.assign(scope.at(0), {
        kind: 'funding' as const,
        token: null,
        from: transaction.from.toLowerCase(),
        to: transaction.to.toLowerCase(),
        amount: value.toString(),
        fromLabel: null,
      }),
    );
  }

  return {
    chain,
    pools,
    tokens,
    metrics,
    decodeReceipt(input, blockTimestampMs, transaction) {
      const raw = unwrapReceipt(input);
      const receipt = normalizeReceipt(raw);
      metrics.inc(COUNTER.receipts);
      if (receipt.reverted) {
        metrics.inc(COUNTER.reverted);
        return { swaps: [], events: [] };
      }
      const wrapperSeconds = isRecord(input) && 'result' in input ? input.blockTimestamp : undefined;
      const blockTime =
        blockTimestampMs ??
        (wrapperSeconds != null ? toSafeNumber(wrapperSeconds, 'blockTimestamp') * 1000 : receiptTimestampMs(raw));
      if (blockTime === undefined)
        throw new TypeError('block timestamp unknown: pass blockTimestampMs or a blockTimestamp field');
      const scope = createScope({ chain, tokens, pools, receipt, blockTime, metrics });

      for (const log of receipt.logs) {
        const learn = CREATION_EVENTS[eventNameOfTopic(log.topics[0]) ?? 'transfer'];
        if (learn) guarded(scope, () => learn(scope, log));
      }
      guarded(scope, () => detectLaunches(scope));
      const curveEnded = new Set<string>();
      for (const log of receipt.logs) {
        const name = eventNameOfTopic(log.topics[0]);
        if (name) guarded(scope, () => decodeLog(scope, log, name, curveEnded), name);
      }
      resolveGraduations(scope);
      if (transaction) addFunding(scope, transaction);

      const platforms = raw.to ? registry.platformsOf(chain, [raw.to]) : [];
      if (platforms.length > 0) for (const swap of scope.swaps) swap.platforms = platforms;
      const first = scope.swaps[0];
      if (first && receipt.transactionFee !== null)
        first.fees = Object.assign({}, first.fees, { transaction: receipt.transactionFee.toString() });
      // Array.prototype.sort is stable: events of one log index keep the order they were added.
      const events = scope.events.sort((a, b) => a.eventIndex - b.eventIndex);
      metrics.inc(COUNTER.swaps, scope.swaps.length);
      metrics.inc(COUNTER.events, events.length);
      return { swaps: scope.swaps, events };
    },
  };
}
