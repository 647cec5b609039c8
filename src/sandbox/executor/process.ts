import { spawn } from 'node:child_process';
import { ExecutorClient, type ExecutorClientOptions } from './client.ts';

export interface ExecutorProcessOptions extends ExecutorClientOptions {
  /** The executor binary (ensureExecutorBinary). */
  binary: string;
  /** The workspace root every file path is confined to. */
  root: string;
  /** The executor's environment, which commands start from (default: this process's). */
  env?: Record<string, string>;
  /** A command the executor runs under (`bwrap ... --`, `docker exec -i <id>`); the binary and its flags follow it. */
  wrapper?: string[];
  /** How it keeps out of its commands' reach: `--user UID:GID` (a root executor) or `--pid-namespace` (executorIsolationFlags). */
  flags?: string[];
}

/**
 * Starts an executor as a process of its own and connects to it over its stdin and stdout.
 *
 * @example
 *   const ex = await startExecutorProcess({ binary, root: '/tmp/ws' });
 *   await ex.write('a.txt', 'hi\n');
 */
export async function startExecutorProcess(opts: ExecutorProcessOptions): Promise<ExecutorClient> {
  const argv = [...(opts.wrapper ?? []), opts.binary, '--root', opts.root, ...(opts.flags ?? [])];
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env ?? process.env });
  return ExecutorClient.connect({ input: child.stdin, output: child.stdout, stderr: child.stderr, process: child }, opts);
}
