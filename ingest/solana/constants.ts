// Program ids, mints and discriminators (CHAINS.md §1); discriminators = sha256("event:<Name>")[0..8].
export const PROGRAMS = {
  pumpfun: '6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P',
  pumpswap: 'pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA',
  raydiumAmmV4: '675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8',
  raydiumCpmm: 'CPMMoo8L3F4NbTegBCKVNunggL7H1ZpdTHKxQB5qKP1C',
  raydiumClmm: 'CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK',
  launchlab: 'LanMV9sAd7wArD4vJFi2qDdfnVhFxYSUg6eADduJ3uj',
  meteoraDbc: 'dbcij3LWUppWqq96dh6gJWwBifmcGfLSB5D4DuSMaqN',
  meteoraDammV2: 'cpamdpZCGKUy5JxQXB4dcpGPiikHawvSWAd6mEn1sGG',
  moonshot: 'MoonCVVNZFSYkqNXP6bxHLPL6QQJiMagDL3qcqUQTrG',
} as const;

export const PUMP_EVENT_AUTHORITY = 'Ce6TQqeHC9p8KetsN6JsjHK7UTZk7nasjjnr7XxXp9F1';
export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

export const WSOL_MINT = 'So11111111111111111111111111111111111111112';
export const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
/** Pubkey::default(), base58 of 32 zero bytes: "no quote mint" (SOL-paired pump coins). */
export const DEFAULT_PUBKEY = '11111111111111111111111111111111';

export const SOL_DECIMALS = 9;
export const PUMP_DECIMALS = 6;
export const PUMP_TOTAL_SUPPLY = 1_000_000_000_000_000n;
export const PUMP_INITIAL_REAL_TOKEN_RESERVES = 793_100_000_000_000n;

/** Anchor EVENT_IX_TAG: prefix of every emit_cpi! self-invoke instruction. */
export const EVENT_IX_TAG = 'e445a52e51cb9a1d';

export const DISC = {
  pumpTrade: 'bddb7fd34ee661ee',
  pumpCreate: '1b72a94ddeeb6376',
  pumpComplete: '5f72619cd42e9808',
  pumpMigration: 'bde95db95c94ea94',
  pumpswapBuy: '67f4521f2cf57777',
  pumpswapSell: '3e2f370aa503dc2a',
  launchlabTrade: 'bddb7fd34ee661ee',
  raydiumSwap: '40c6cde8260871e2',
  dbcSwap: '1b3c15d58aaabb93',
  dbcSwap2: 'bd4233a826507599',
  dbcCurveComplete: 'e5e756549c864b18',
  // DAMM v2 names its swap events like DBC does, so the discriminators are DBC's (dispatch is by program).
  dammV2Swap: '1b3c15d58aaabb93',
  dammV2Swap2: 'bd4233a826507599',
  launchlabPoolCreate: '97d7e20976a173ae',
  pumpswapCreatePool: 'b1310cd2a076a774',
  moonshotTrade: 'bddb7fd34ee661ee',
} as const;

/** Instruction discriminators used by the encoders (and, for reference, by the real programs). */
export const IX = {
  pumpBuy: '66063d1201daebea',
  pumpSell: '33e685a4017f83ad',
  pumpCreate: '181ec828051c0777',
  pumpMigrate: '9beae792ec9ea21e',
  pumpswapBuy: '66063d1201daebea',
  pumpswapSell: '33e685a4017f83ad',
  // Decoded for creations and migrations that emit no event (sha256("global:<name>")[0..8]).
  launchlabMigrateToAmm: 'cf52c091fecf91df',
  launchlabMigrateToCpswap: '885cc8671cda908c',
  dbcInitializeWithSplToken: '8c55d7b06636684f',
  dbcInitializeWithToken2022: 'a976334e916edc9b',
  dbcMigrateDamm: '1b013016b43f76d9',
  dbcMigrateDammV2: '9ca9e66735e45040',
  moonshotTokenMint: '032ca4b87b0df5b3',
  moonshotMigrateFunds: '2ae50ae7bd3ec1ae',
} as const;

export const QUOTE_MINTS: ReadonlySet<string> = new Set([WSOL_MINT, USDC_MINT]);
