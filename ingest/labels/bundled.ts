// The bundled default label lists (data files next to this module).
import fs from 'node:fs';

export const CEX_HOT_WALLETS_FILE = new URL('./cex-hot-wallets.csv', import.meta.url);

/** The public exchange hot wallets per chain, in the label file format (CSV). */
export function readCexHotWallets(): string {
  return fs.readFileSync(CEX_HOT_WALLETS_FILE, 'utf8');
}
