/** The CLI's entry: the composition root's suites and agents, run by `main` (bin/benchgym.js starts it). */
import { main } from '../src/cli/main.ts';
import { BUILTINS } from './composition.ts';

process.exitCode = await main(process.argv.slice(2), BUILTINS);
