import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../errors.ts';
import type { PythonEnvSpec } from '../tasks/schema.ts';

/** The line an env setup script prints when what it provides cannot be had on this machine. */
export const SETUP_UNAVAILABLE_MARKER = 'benchgym-setup-unavailable:';

type Setup = NonNullable<PythonEnvSpec['setup']>;

/** The host folder a setup step takes its data from (its `inputEnv`), if set; a set but missing folder is an error naming the variable. */
export function setupInput(setup: Setup): string | undefined {
  if (!setup.inputEnv) return undefined;
  const dir = process.env[setup.inputEnv];
  if (!dir) return undefined;
  const abs = path.resolve(dir);
  if (!existsSync(abs)) throw new GymError('INVALID_ARGUMENT', `${setup.inputEnv}=${dir}: no such folder (${setup.description})`);
  return abs;
}

/** What joins an env's cache key for its setup step: the script and, when given, the input folder. */
export function setupKey(setup: Setup | undefined): Record<string, unknown> {
  if (!setup) return {};
  const input = setupInput(setup);
  return { setup: { script: setup.script, ...(input ? { input } : {}) } };
}

/** A failed setup step as a GymError: ENV_UNAVAILABLE with the script's reason when it printed one. */
export function setupFailure(setup: Setup, log: string): GymError {
  const line = log.split('\n').find((l) => l.includes(SETUP_UNAVAILABLE_MARKER));
  if (line) {
    const reason = line.slice(line.indexOf(SETUP_UNAVAILABLE_MARKER) + SETUP_UNAVAILABLE_MARKER.length).trim();
    return new GymError('ENV_UNAVAILABLE', `${setup.description}: ${reason}`, {
      reason: `${setup.description}: ${reason}`,
      log: log.slice(-20_000),
    });
  }
  return new GymError('ENV_BUILD_FAILED', `the env setup step (${setup.description}) failed:\n${log.slice(-4000)}`, {
    reason: 'env setup step failed',
    log: log.slice(-20_000),
  });
}

/** Every regular file under `dir`, as bytes, keyed by path relative to it. */
export async function readBinaryTree(dir: string): Promise<Record<string, Buffer>> {
  const out: Record<string, Buffer> = {};
  async function walk(rel: string): Promise<void> {
    for (const name of await fs.readdir(path.join(dir, rel))) {
      const child = rel ? `${rel}/${name}` : name;
      const stat = await fs.stat(path.join(dir, child));
      if (stat.isDirectory()) await walk(child);
      else if (stat.isFile()) out[child] = await fs.readFile(path.join(dir, child));
    }
  }
  await walk('');
  return out;
}
