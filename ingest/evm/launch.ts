// Generic launch convention for launchpads that create a token and its pool in one
// transaction (Uniswap V4 launches: Clanker on base, pools.trade on robinhood, arc launches).
//
// A pool is a launch pool when the pool registry marks it (markLaunchPool with the pool id)
// or when its V4 Initialize names hooks registered with registerLaunchHooks. When a receipt
// creates a launch pool and also mints (ERC-20 Transfer from 0x0) the pool's non-quote side,
// that token was launched: one `created` event at the pool creation's log index, supply = all
// of the token minted in the receipt, creator = the transaction sender, pool = the pool (id).
// The mint's recipient is not checked: launchers mint to the PoolManager, to themselves or to
// a locker before seeding the pool. Name and symbol come from the token registry (the RPC
// source reads them with the decimals); unknown decimals skip the event with a metric.
import { EVM_NATIVE_ADDRESS } from '../../core/chains.ts';
import { TOPIC0 } from './abi.ts';
import { pickQuote } from './normalize.ts';
import { decodeAs, type ReceiptScope } from './scope.ts';

const ZERO_TOPIC = `0x${'0'.repeat(64)}`;

export function detectLaunches(scope: ReceiptScope): void {
  const launches = scope.creations.filter((creation) => creation.launchpad);
  if (launches.length === 0) return;
  const minted = new Map<string, { amount: bigint; to: string }>();
  for (const log of scope.receipt.logs) {
    if (
      log.topics[0] !== TOPIC0.transfer ||
      log.topics.length !== 3 ||
      log.topics[1] !== ZERO_TOPIC ||
      log.data.length !== 66
    )
      continue;
    const args = decodeAs('transfer', log);
    const previous = minted.get(log.address);
    minted.set(log.address, {
      amount: (previous?.amount ?? 0n) + args.value,
      to: previous?.to ?? args.to.toLowerCase(),
    });
  }
  for (const creation of launches) {
    const launchpad = creation.launchpad!;
    // The launched token is the side minted here (a Zora coin beside $ZORA ties on quote rank).
    const { token, quote } = pickQuote(scope.chain, creation.token0, creation.token1, (t) => minted.has(t));
    const mint = token === EVM_NATIVE_ADDRESS ? undefined : minted.get(token);
    if (!mint) continue;
    const decimals = scope.tokens.getDecimals(scope.chain, token);
    if (decimals === undefined) {
      scope.count('skipped_unknown_decimals');
      continue;
    }
    scope.tokens.registerToken(scope.chain, token, { decimals, launchpad });
    const info = scope.tokens.getToken(scope.chain, token);
    scope.events.push(
      Object.assign(scope.at(creation.logIndex), {
        kind: 'created' as const,
        token,
        name: info?.name ?? '',
        symbol: info?.symbol ?? '',
        uri: '',
        decimals,
        supply: mint.amount.toString(),
        creator: scope.receipt.from ?? mint.to,
        launchpad,
        pool: creation.pool,
        quoteAsset: quote,
      }),
    );
  }
}
