import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest directory at or above `dir` holding a package.json: the checkout, or the installed package (its code is in dist/). */
function packageRootAbove(dir: string): string {
  for (let d = dir; ; d = path.dirname(d)) {
    if (existsSync(path.join(d, 'package.json'))) return d;
    if (path.dirname(d) === d) return path.resolve(dir, '..');
  }
}

/** The checkout or package benchgym runs from: its docker/ recipes and bin/; hidden from sandboxes (its git history holds the suites). */
export const PROJECT_ROOT = packageRootAbove(path.dirname(fileURLToPath(import.meta.url)));

/** Where trajectories, scoring logs, sandboxes and built envs go unless told: $BENCHGYM_HOME, else ~/.cache/benchgym. */
export function defaultDataDir(): string {
  return process.env.BENCHGYM_HOME ?? path.join(os.homedir(), '.cache', 'benchgym');
}
