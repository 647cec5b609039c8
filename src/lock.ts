import { spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';

const FLOCK = ['/usr/bin/flock', '/bin/flock'].find((p) => existsSync(p));

/**
 * An exclusive lock shared by processes, held while `fn` runs. With util-linux's flock(1)
 * (every Linux this project runs on) the kernel holds it: a holder that dies, however it
 * dies (kill -9 included), releases it at once, and a reused pid cannot keep it. Without
 * flock, a lock directory (`mkdir` is atomic) whose owner pid is gone is taken over.
 */
export async function withDirLock<T>(lockPath: string, fn: () => Promise<T>, opts: { timeoutMs?: number } = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 30 * 60_000;
  await fs.mkdir(path.dirname(lockPath), { recursive: true });
  const release = FLOCK ? await acquireFlock(FLOCK, lockPath, timeoutMs) : await acquireDir(lockPath, timeoutMs);
  try {
    return await fn();
  } finally {
    await release();
  }
}

/**
 * flock(1) takes the lock, then runs `cat` on our stdin: the lock lives as long as that
 * pipe is open, which is until we close it or this process exits.
 */
function acquireFlock(flock: string, lockPath: string, timeoutMs: number): Promise<() => Promise<void>> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      flock,
      ['-x', '-w', String(Math.max(1, Math.ceil(timeoutMs / 1000))), lockPath, 'sh', '-c', 'echo locked; exec cat >/dev/null'],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    let locked = false;
    const exited = new Promise<void>((r) => child.once('close', () => r()));
    child.stderr.on('data', (b: Buffer) => (stderr += b));
    child.stdout.on('data', (b: Buffer) => {
      if (locked || !b.toString().includes('locked')) return;
      locked = true;
      resolve(async () => {
        child.stdin.end();
        await exited;
      });
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (!locked)
        reject(
          new Error(
            code === 1
              ? `timed out after ${timeoutMs} ms waiting for lock ${lockPath}`
              : `flock ${lockPath} failed (exit ${code}): ${stderr.trim()}`,
          ),
        );
    });
  });
}

async function acquireDir(lockDir: string, timeoutMs: number): Promise<() => Promise<void>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // The pid is written before the directory appears under its name: a lock is never seen
    // without its owner, even when the owner dies at once.
    const staging = `${lockDir}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    await fs.mkdir(staging);
    await fs.writeFile(`${staging}/pid`, String(process.pid));
    try {
      await fs.rename(staging, lockDir);
      return async () => {
        const gone = `${lockDir}.released.${process.pid}.${Math.random().toString(36).slice(2)}`;
        await fs.rename(lockDir, gone).catch(() => {});
        await fs.rm(gone, { recursive: true, force: true });
      };
    } catch (err) {
      await fs.rm(staging, { recursive: true, force: true });
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw err;
      const owner = Number(await fs.readFile(`${lockDir}/pid`, 'utf8').catch(() => '0'));
      // No pid after a minute: the owner died between mkdir and writing it.
      const orphaned = !owner && Date.now() - ((await fs.stat(lockDir).catch(() => null))?.mtimeMs ?? Date.now()) > 60_000;
      if ((owner && !processAlive(owner)) || orphaned) {
        await fs.rm(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for lock ${lockDir} (held by pid ${owner || 'unknown'})`);
      await new Promise((r) => setTimeout(r, 200));
    }
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
