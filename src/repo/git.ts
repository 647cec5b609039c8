import { execFile } from 'node:child_process';
import { GymError, type GymErrorCode } from '../errors.ts';

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export interface GitOptions {
  cwd?: string;
  /** Added to a scrubbed environment (no GIT_DIR and friends from the caller). */
  env?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Standard input for the command. */
  input?: string;
}

const GIT_ENV_KEYS = /^GIT_/;

/**
 * Runs `git <args>` on the host and resolves with its output whatever the exit code; the
 * caller decides. The caller's GIT_* variables are dropped (a GIT_DIR inherited from a hook
 * would point every command at the wrong repository), and prompts and system config are off.
 */
export function runGit(args: string[], opts: GitOptions = {}): Promise<GitResult> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!GIT_ENV_KEYS.test(k)) env[k] = v;
  Object.assign(env, {
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'benchgym',
    GIT_AUTHOR_EMAIL: 'benchgym@localhost',
    GIT_COMMITTER_NAME: 'benchgym',
    GIT_COMMITTER_EMAIL: 'benchgym@localhost',
    ...opts.env,
  });
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      // No hooks or fsmonitor: a repository's own files never make the server run a program.
      ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', ...args],
      { cwd: opts.cwd, env, timeout: opts.timeoutMs ?? 10 * 60_000, maxBuffer: 256 * 1024 * 1024, signal: opts.signal },
      (err, stdout, stderr) => {
        if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
          return reject(new GymError('ENV_UNAVAILABLE', 'git is not installed on this machine'));
        }
        if (err && err.name === 'AbortError') return reject(err);
        const code = typeof (err as { code?: unknown } | null)?.code === 'number' ? (err as { code: number }).code : err ? 1 : 0;
        resolve({ stdout: String(stdout), stderr: String(stderr), exitCode: code });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Runs git and returns its stdout; a non-zero exit throws a GymError with `code` and git's message. */
export async function git(args: string[], opts: GitOptions & { code?: GymErrorCode; what?: string } = {}): Promise<string> {
  const r = await runGit(args, opts);
  if (r.exitCode !== 0) {
    const what = opts.what ?? `git ${args.join(' ')}`;
    throw new GymError(opts.code ?? 'ENV_BUILD_FAILED', `${what} failed (exit ${r.exitCode}): ${r.stderr.trim().slice(-2000)}`, {
      args,
      stderr: r.stderr.slice(-8000),
    });
  }
  return r.stdout;
}

/** A full 40- or 64-hex object name. */
export const FULL_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
