import { spawn } from 'node:child_process';

/** How long a stop on SIGTERM / SIGINT may take before the process is killed anyway. */
export const SHUTDOWN_DEADLINE_MS = 5000;

/**
 * A separate process that SIGKILLs this one after `ms`, unless this one exits first (its
 * stdin then ends). Not a timer here: process.exit itself waits for libuv's thread pool,
 * which a read of a FIFO (or a hung mount) can hold for ever.
 */
export function startWatchdog(ms: number, message: string): void {
  const code =
    `process.stdin.on('data', () => {}).on('end', () => process.exit(0)); ` +
    `setTimeout(() => { process.stderr.write(${JSON.stringify(message)}); try ` +
    `{ process.kill(${process.pid}, 'SIGKILL'); } catch {} process.exit(0); }, ${ms});`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'ignore', 'inherit'], detached: true });
  child.on('error', () => {});
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
}

/**
 * On the first SIGINT / SIGTERM: run `stop` (stop accepting, end episodes) and exit 0, or
 * be killed by the watchdog after the deadline; a second signal exits at once.
 */
export function onShutdownSignals(stop: () => Promise<void>, deadlineMs = SHUTDOWN_DEADLINE_MS): void {
  let stopping = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (stopping) process.kill(process.pid, 'SIGKILL');
      stopping = true;
      startWatchdog(deadlineMs, `benchgym: shutdown did not finish within ${deadlineMs / 1000} s; killed\n`);
      void stop().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}
