import { execFile } from 'node:child_process';

/**
 * The local backend's disk bound. Without root-only mounts (a size-limited file system per
 * sandbox) there is no kernel quota for a directory on the host's disk, so the nearest
 * equivalent is a watch: while a command runs, the sandbox's writable directories are
 * measured every `intervalMs` with one `du` pass (no links followed, one file system), and
 * the command is stopped once they exceed the limit. A fast writer can overshoot by what it
 * writes in one interval; RLIMIT_FSIZE still caps each file.
 */
export function watchDisk(
  dirs: string[],
  limitBytes: number,
  intervalMs: number,
  onExceeded: (bytes: number) => void,
  onMeasured?: (bytes: number) => void,
): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    const bytes = await diskUsage(dirs);
    if (stopped) return;
    onMeasured?.(bytes);
    if (bytes > limitBytes) {
      stopped = true;
      onExceeded(bytes);
      return;
    }
    timer = setTimeout(tick, intervalMs);
  };
  timer = setTimeout(tick, intervalMs);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

/** Bytes used under `dirs` (apparent sizes, hard links counted once), 0 when they cannot be measured. */
export function diskUsage(dirs: string[]): Promise<number> {
  return new Promise((resolve) => {
    execFile('du', ['-s', '-x', '-b', '-c', '-P', ...dirs], { maxBuffer: 1024 * 1024, timeout: 30_000 }, (_err, stdout) => {
      // du exits non-zero when a file vanishes mid-walk; its total is still the best figure.
      const total = /^(\d+)\s+total$/m.exec(stdout ?? '');
      resolve(total ? Number(total[1]) : 0);
    });
  });
}

export function formatBytes(n: number): string {
  return n >= 1024 ** 3 ? `${(n / 1024 ** 3).toFixed(1)} GiB` : `${Math.round(n / 1024 ** 2)} MiB`;
}
