import type { PassThrough, Writable } from 'node:stream';
import { ExecutorClient } from '../executor/client.ts';
import { probeExecutorMarkers } from '../executor/ops.ts';

/** An executor's process as a transport started it: its stdin, its output, and how its end is seen. */
export interface ExecutorChannel {
  input: Writable;
  output: PassThrough;
  stderr: PassThrough;
  /** Calls `end` once the process's stream closes or fails. */
  onEnd(end: () => void): void;
}

/**
 * Connects to an executor a transport started in a container and asks the marker its commands
 * carry (one command shows it). `untrack` is called when its channel ends: while it lives, its
 * own marker counts as a running command's, so no leftover sweep takes it.
 */
export async function attachExecutor(channel: ExecutorChannel, label: string, untrack: () => void): Promise<ExecutorClient> {
  let ended = false;
  channel.onEnd(() => {
    if (ended) return;
    ended = true;
    untrack();
    channel.output.end();
    channel.stderr.end();
  });
  const ex = await ExecutorClient.connect(
    { input: channel.input, output: channel.output, stderr: channel.stderr },
    { label, connectTimeoutMs: 30_000 },
  );
  try {
    await probeExecutorMarkers(ex);
    return ex;
  } catch (err) {
    await ex.close();
    throw err;
  }
}
