#!/usr/bin/env node
// The `spot` command: loads the TypeScript sources through tsx (no build step) and runs the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
