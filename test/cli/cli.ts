import { spawn } from 'node:child_process';
import path from 'node:path';
import { BUILTINS } from '../../bin/builtins.ts';
import { main } from '../../src/cli/main.ts';
import { PROJECT_ROOT } from '../../src/project.ts';
import { TEST_CACHE_DIR } from '../helpers.ts';

export const BIN = path.join(PROJECT_ROOT, 'bin', 'benchgym.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliChild {
  pid: number;
  done: Promise<CliResult>;
  kill(signal: NodeJS.Signals): void;
}

/** Starts `benchgym ARGS` as a user would (with `env`, in that environment); killed with SIGKILL if it outlives `timeoutMs`. */
export function startCli(args: string[], timeoutMs = 300_000, env?: NodeJS.ProcessEnv): CliChild {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...(env ? { env } : {}) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => (stdout += b));
  child.stderr.on('data', (b) => (stderr += b));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { pid: child.pid!, done, kill: (s) => child.kill(s) };
}

/** Runs `benchgym ARGS --cache-dir <the shared test cache>` to its end. */
export function runCli(args: string[], timeoutMs = 300_000): Promise<CliResult> {
  return startCli([...args, '--cache-dir', TEST_CACHE_DIR], timeoutMs).done;
}

/** Runs `benchgym ARGS` in this process, with the built-in suites and agents (as bin/benchgym.js does). */
export function mainWithBuiltins(args: string[]): Promise<number> {
  return main(args, BUILTINS);
}
