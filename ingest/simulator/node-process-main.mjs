// Entry of the simulator's node process: loads the TypeScript sources through tsx, as bin/spot.js does.
import { register } from 'tsx/esm/api';

register();
await import('./node-process-main.ts');
