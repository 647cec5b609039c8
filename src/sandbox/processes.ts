import { promises as fs } from 'node:fs';

/**
 * Kills every process whose environment carries `NAME=value`. Process groups miss
 * children that called setsid(); the marker variable is inherited, so it still finds them.
 */
export async function killByEnvMarker(name: string, value: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<number> {
  const needle = Buffer.from(`${name}=${value}\0`);
  let killed = 0;
  let pids: string[];
  try {
    pids = (await fs.readdir('/proc')).filter((p) => /^\d+$/.test(p));
  } catch {
    return 0;
  }
  await Promise.all(
    pids.map(async (pid) => {
      if (Number(pid) === process.pid) return;
      try {
        const environ = await fs.readFile(`/proc/${pid}/environ`);
        if (environ.includes(needle)) {
          process.kill(Number(pid), signal);
          killed++;
        }
      } catch {
        // gone already, or not ours to read
      }
    }),
  );
  return killed;
}

/** Sends a signal to a whole process group, ignoring a group that is already gone. */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
