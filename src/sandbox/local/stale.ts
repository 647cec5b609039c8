import { promises as fs } from 'node:fs';
import path from 'node:path';
import { processAlive } from '../../lock.ts';
import { killByEnvMarker } from '../processes.ts';
import { EXECUTOR_MARKER } from './executor.ts';

/**
 * Who owns a server instance's sandboxes folder (`<root>/<instance>/`): `<instance>.pid`
 * holds the pid (as older versions wrote it) and `<instance>/.owner` the process's start
 * time, so a pid the kernel has since given to another process (in a container a resumed
 * run often gets the killed run's pid) is not taken for the owner.
 */
const OWNER_FILE = '.owner';

/** The start time of a process (clock ticks since boot, /proc/<pid>/stat field 22), or null. */
export async function processStartTime(pid: number): Promise<string | null> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (!stat) return null;
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
}

/** Records this process as the owner of `<root>/<instance>/`: the pid file first, so a folder is never seen without its owner. */
export async function claimSandboxDir(root: string, instance: string): Promise<string> {
  const dir = path.join(root, instance);
  await fs.mkdir(root, { recursive: true });
  await fs.writeFile(path.join(root, `${instance}.pid`), String(process.pid));
  await fs.mkdir(dir, { recursive: true });
  const start = await processStartTime(process.pid);
  if (start) await fs.writeFile(path.join(dir, OWNER_FILE), start);
  return dir;
}

/** True while the process that claimed `<root>/<name>/` lives: same pid and, when recorded, same start time. */
async function ownerAlive(root: string, name: string): Promise<boolean> {
  const pid = Number(await fs.readFile(path.join(root, `${name}.pid`), 'utf8').catch(() => '0'));
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) return false;
  const recorded = (await fs.readFile(path.join(root, name, OWNER_FILE), 'utf8').catch(() => '')).trim();
  if (!recorded) return true;
  const now = await processStartTime(pid);
  // Unreadable (another user's process): alive, to be safe.
  return now === null || now === recorded;
}

/**
 * Removes the sandboxes folders of instances whose owner is gone (a server or run killed
 * with -9, or crashed), after killing what their commands left running (processes carrying
 * a sandbox's marker, which without bubblewrap outlive the server); never a live owner's.
 * Returns the instances removed.
 */
export async function removeStaleSandboxDirs(root: string, self: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await fs.readdir(root).catch(() => [] as string[])) {
    if (name === self || name.endsWith('.pid')) continue;
    if (await ownerAlive(root, name)) continue;
    const dir = path.join(root, name);
    for (const sandbox of await fs.readdir(dir).catch(() => [] as string[])) {
      if (!sandbox.startsWith('lsb-')) continue;
      await killByEnvMarker('BENCHGYM_SANDBOX', sandbox);
      // An executor exits when its server's end of the channel closes; one that did not goes here.
      await killByEnvMarker(EXECUTOR_MARKER, sandbox);
    }
    try {
      await fs.rm(dir, { recursive: true, force: true, maxRetries: 3 });
      await fs.rm(path.join(root, `${name}.pid`), { force: true });
      removed.push(name);
    } catch {
      // Still in use (a process we could not kill writes there): the next start tries again.
    }
  }
  return removed;
}
