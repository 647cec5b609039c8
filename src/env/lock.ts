import { promises as fs } from 'node:fs';
import path from 'node:path';

/**
 * A lock directory shared by processes: `mkdir` is atomic. A lock whose owner process is
 * gone is taken over, so a crash never blocks later builds.
 */
export async function withDirLock<T>(lockDir: string, fn: () => Promise<T>, opts: { timeoutMs?: number } = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30 * 60_000);
  await fs.mkdir(path.dirname(lockDir), { recursive: true });
  for (;;) {
    try {
      await fs.mkdir(lockDir);
      await fs.writeFile(`${lockDir}/pid`, String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(await fs.readFile(`${lockDir}/pid`, 'utf8').catch(() => '0'));
      if (owner && !processAlive(owner)) {
        await fs.rm(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for lock ${lockDir} (held by pid ${owner || 'unknown'})`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lockDir, { recursive: true, force: true });
  }
}

/** True while a process with this pid exists (ours or not). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs `fn` once per key among concurrent callers in this process. */
export class OncePerKey<T> {
  private readonly pending = new Map<string, Promise<T>>();

  run(key: string, fn: () => Promise<T>): Promise<T> {
    let p = this.pending.get(key);
    if (!p) {
      p = fn().finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    return p;
  }
}
