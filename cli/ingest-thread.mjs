// Entry of the ingest worker thread: loads the TypeScript sources through tsx, as bin/spot.js does.
import { register } from 'tsx/esm/api';

register();
await import('./ingest-thread.ts');
