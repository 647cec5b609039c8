#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx: no build step between a checkout and a server.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const { BUILTINS } = await import('./builtins.ts');
process.exitCode = await main(process.argv.slice(2), BUILTINS);
