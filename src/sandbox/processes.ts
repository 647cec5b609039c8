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

/**
 * Kills process group `pgid` once its leader has exited, but only while the group is still
 * ours. Once a group is empty its number is free, and the kernel hands it to new processes:
 * under load a detached command of another sandbox (another test, another episode) can lead a
 * group with the same number a moment later, and a blind kill(-pgid) would end it. A group
 * one of whose members carries our marker still holds its number, so it cannot be anyone
 * else's. Returns whether the group was signalled.
 */
export async function killGroupIfMarked(
  pgid: number | undefined,
  name: string,
  value: string,
  signal: NodeJS.Signals = 'SIGKILL',
): Promise<boolean> {
  if (!pgid) return false;
  const needle = Buffer.from(`${name}=${value}\0`);
  let pids: string[];
  try {
    pids = (await fs.readdir('/proc')).filter((p) => /^\d+$/.test(p));
  } catch {
    return false;
  }
  let ours = false;
  await Promise.all(
    pids.map(async (pid) => {
      if (ours) return;
      try {
        const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
        // Field 5 (pgrp), counted after the parenthesised command name, which may hold spaces.
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) return;
        if ((await fs.readFile(`/proc/${pid}/environ`)).includes(needle)) ours = true;
      } catch {
        // gone already
      }
    }),
  );
  if (ours) killGroup(pgid, signal);
  return ours;
}
