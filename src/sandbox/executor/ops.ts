import { GymError } from '../../errors.ts';
import { fileTooLarge } from '../read_limit.ts';
import type { DirEntry, ExecOptions, ExecResult, FileStat } from '../types.ts';
import type { ExecutorClient } from './client.ts';

/**
 * A container sandbox's operations when it has an in-sandbox executor, the same for every
 * backend that attaches one (the Docker container's and the Kubernetes pod's):
 * the backend supplies how to tell a lost sandbox and how to sweep leftovers.
 */

/** Largest file readFile returns through the executor (its base64 frame stays under the client's frame limit). */
export const MAX_EXECUTOR_READ = 160 * 1024 * 1024;

/** The prefix of the BENCHGYM_EXEC marker each executor gives its commands (`<prefix>-<request id>`). */
const markerPrefixes = new WeakMap<ExecutorClient, string>();

/** Asks a freshly connected executor the marker its commands carry (one command shows it), so leftover sweeps spare them while they run. */
export async function probeExecutorMarkers(ex: ExecutorClient): Promise<void> {
  const probe = await ex.exec(['sh', '-c', 'printf %s "$BENCHGYM_EXEC"'], { timeoutMs: 30_000, maxOutputBytes: 1024 });
  const prefix = /^([0-9a-f]+)-\d+$/.exec(probe.stdout)?.[1];
  if (prefix) markerPrefixes.set(ex, prefix);
}

/** The marker the executor's command `id` carries, or undefined when it was not probed. */
export function executorCommandMarker(ex: ExecutorClient, id: number): string | undefined {
  const prefix = markerPrefixes.get(ex);
  return prefix ? `${prefix}-${id}` : undefined;
}

export interface ExecutorSandboxHooks {
  /** Throws SANDBOX_UNAVAILABLE (sandboxLost) when the sandbox itself is gone or stopped. */
  assertAlive(): Promise<void>;
  /** Counts a marker as a running command's until the returned undo (its processes are nobody's leftovers). */
  track(marker: string): () => void;
  /** Kills what finished commands left behind. */
  sweepLeftovers(): Promise<void>;
  /** Defaults: the sandbox's limits and variables. */
  defaultTimeoutMs: number;
  maxOutputBytes: number;
  vars: Record<string, string>;
}

/** An agent's command through the executor: its timeout, caps and cancel enforced in the sandbox; leftovers swept after it. */
export async function execThroughExecutor(
  ex: ExecutorClient,
  command: string,
  opts: ExecOptions,
  hooks: ExecutorSandboxHooks,
  call: <T>(f: () => Promise<T>) => Promise<T>,
): Promise<ExecResult> {
  const running = ex.startExec(['bash', '-c', command], {
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    env: { ...hooks.vars, ...opts.env },
    stdin: opts.stdin,
    timeoutMs: opts.timeoutMs ?? hooks.defaultTimeoutMs,
    maxOutputBytes: opts.maxOutputBytes ?? hooks.maxOutputBytes,
    signal: opts.signal,
    onOutput: opts.onOutput,
    // Every byte is streamed, as an exec's output was: the protocol decides what a slow reader drops.
    streamLimitBytes: Number.MAX_SAFE_INTEGER,
  });
  // Awaited through `call`, which may throw before it does (a sandbox already lost): never unhandled.
  running.result.catch(() => {});
  // While it runs, what it started (double forks included) is no other command's leftover.
  const marker = executorCommandMarker(ex, running.id);
  const untrack = marker ? hooks.track(marker) : () => {};
  try {
    const r = await call(() => running.result);
    // A SIGKILL nobody sent on timeout: the OOM killer, or the sandbox going away.
    if (r.signal === 'SIGKILL' && !r.timedOut) await hooks.assertAlive();
    return r;
  } catch (err) {
    if (opts.cwd && err instanceof GymError && err.code === 'FILE_NOT_FOUND')
      throw new GymError('NOT_A_DIRECTORY', `'${opts.cwd}' is not a directory`);
    throw err;
  } finally {
    untrack();
    await hooks.sweepLeftovers();
  }
}

/** readFile through the executor: FILE_TOO_LARGE past `maxBytes`. */
export async function readThroughExecutor(ex: ExecutorClient, rel: string, maxBytes?: number): Promise<Buffer> {
  const max = Math.min(maxBytes ?? MAX_EXECUTOR_READ, MAX_EXECUTOR_READ);
  const r = await ex.read(rel, { maxBytes: max });
  if (r.truncated && maxBytes !== undefined && r.size > maxBytes) throw fileTooLarge(rel, r.size, maxBytes);
  return r.data;
}

/** stat through the executor, followed as the shell path's realpath did: a link inside the workspace is what it points to. */
export async function statThroughExecutor(ex: ExecutorClient, rel: string): Promise<FileStat | null> {
  const st = await ex.stat(rel, { follow: true });
  return st ? { type: st.type, size: st.size } : null;
}

/** list through the executor, ordered as the shell path's: by depth, then path. */
export async function listThroughExecutor(
  ex: ExecutorClient,
  rel: string,
  depth: number,
  limit: number,
): Promise<{ entries: DirEntry[]; truncated: boolean }> {
  const listed = await ex.list(rel, { depth, limit });
  const level = (p: string) => p.split('/').length;
  listed.entries.sort((a, b) => level(a.path) - level(b.path) || a.path.localeCompare(b.path));
  return listed;
}
