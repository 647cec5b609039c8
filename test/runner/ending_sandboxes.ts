/**
 * A real sandbox backend whose sandboxes end under a command, for tests of what a lost sandbox
 * comes to. Before the sandboxes resisted it, an agent's `kill -9 -1` (or the candidate's code
 * doing the same while the hidden tests ran) ended the sandbox's executor or its container; now
 * that it cannot, the tests end the sandbox from the host instead: `Sandbox.destroy()` (its
 * executor and every process end, its workspace goes) as the command is about to run. What
 * follows is the backend's own behaviour for a sandbox gone under a call (SANDBOX_UNAVAILABLE).
 */
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { Gym, type GymOptions } from '../../src/episode/gym.ts';
import { PROJECT_ROOT } from '../../src/project.ts';
import { LocalSandboxFactory } from '../../src/sandbox/local/index.ts';
import type { Sandbox, SandboxFactory } from '../../src/sandbox/types.ts';
import { builtinRegistry, TEST_CACHE_DIR } from '../helpers.ts';

/** The sandbox operations that can be ended: a command, or a file operation (its path). */
const ENDABLE = new Set(['exec', 'readFile', 'writeFile', 'list', 'stat', 'remove', 'diff']);

/**
 * When a call ends its sandbox: the sandbox's role (`scorer` for a scoring sandbox, `episode`),
 * the operation (`exec`, `readFile`, ...), its first argument (the command, the path) and the
 * sandbox (to look at the workspace).
 */
export type EndsSandbox = (role: 'scorer' | 'episode', op: string, arg: string, sandbox: Sandbox) => boolean | Promise<boolean>;

/** `inner`, except that a sandbox is destroyed when `ends` says so of a call about to be made into it; `ended` lists `role op: arg` of each. */
export function endingSandboxes(inner: SandboxFactory, ends: EndsSandbox, ended: string[] = []): SandboxFactory {
  return {
    backend: inner.backend,
    ...(inner.init ? { init: () => inner.init!() } : {}),
    prepare: (task) => inner.prepare(task),
    close: () => inner.close(),
    async create(opts) {
      const sandbox = await inner.create(opts);
      const role = opts.labels?.['benchgym.role'] === 'scorer' ? 'scorer' : 'episode';
      return new Proxy(sandbox, {
        get(target, prop) {
          const value: unknown = Reflect.get(target, prop, target);
          if (typeof value !== 'function') return value;
          const method = (value as (...a: unknown[]) => Promise<unknown>).bind(target);
          if (typeof prop !== 'string' || !ENDABLE.has(prop)) return method;
          return async (...args: unknown[]) => {
            const arg = typeof args[0] === 'string' ? args[0] : '';
            if (await ends(role, prop, arg, target)) {
              ended.push(`${role} ${prop}: ${arg.slice(0, 200)}`);
              await target.destroy();
            }
            // Destroyed: the backend refuses the call as it refuses any call into a sandbox that is gone.
            return method(...args);
          };
        },
      });
    },
  };
}

/** A gym on the local backend (the shared test cache) whose sandboxes end as `ends` says; cleanup closes it and removes its data. */
export async function gymWithEndingSandboxes(
  ends: EndsSandbox,
  opts: Partial<GymOptions> = {},
): Promise<{ gym: Gym; dataDir: string; ended: string[]; cleanup: () => Promise<void> }> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-ending-'));
  const registry = opts.registry ?? builtinRegistry();
  // Hidden from commands as LocalInstanceFactory hides them: the suites, the data dir, the checkout.
  const privatePaths = [...registry.privatePaths(), dataDir, PROJECT_ROOT];
  const local = new LocalSandboxFactory({ baseDir: path.join(dataDir, 'sandboxes'), cacheDir: TEST_CACHE_DIR, privatePaths });
  const ended: string[] = [];
  const gym = new Gym({ dataDir, cacheDir: TEST_CACHE_DIR, registry, ...opts, sandboxes: endingSandboxes(local, ends, ended) });
  return {
    gym,
    dataDir,
    ended,
    cleanup: async () => {
      await gym.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
