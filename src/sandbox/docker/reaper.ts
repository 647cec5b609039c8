import type Docker from 'dockerode';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { processAlive } from '../../env/lock.ts';

/** Who made a container: this host and process (its start time guards against pid reuse). */
export const OWNER_LABELS: Record<string, string> = { 'benchgym.host': os.hostname(), 'benchgym.pid': String(process.pid), 'benchgym.started': processStart(process.pid) ?? '' };

/** A process's start time in clock ticks since boot (/proc/PID/stat, field 22), or null. */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Is the process that labelled this object still running here? Two servers (or a server and
 * a `benchgym validate`) that share a server id must not reap each other's live episodes.
 * Objects from another host, or from before owners were labelled, count as not alive.
 */
function ownerAlive(labels: Record<string, string> | undefined): boolean {
  const pid = Number(labels?.['benchgym.pid']);
  if (!labels || labels['benchgym.host'] !== os.hostname() || !pid || !processAlive(pid)) return false;
  return !labels['benchgym.started'] || processStart(pid) === labels['benchgym.started'];
}

/**
 * Removes every container and volume labelled by an earlier instance of this server, in any
 * state, unless the process that made it is still running on this host.
 */
export async function reapStale(docker: Docker, serverId: string, keepInstance?: string): Promise<{ containers: number; volumes: number }> {
  const filters = JSON.stringify({ label: [`benchgym.server=${serverId}`] });
  const stale = (labels: Record<string, string> | undefined) => labels?.['benchgym.instance'] !== keepInstance && !ownerAlive(labels);
  const containers = (await docker.listContainers({ all: true, filters })).filter((c) => stale(c.Labels));
  await Promise.all(containers.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => {})));
  const { Volumes } = await docker.listVolumes({ filters });
  const volumes = (Volumes ?? []).filter((v) => stale(v.Labels ?? undefined));
  await Promise.all(volumes.map((v) => docker.getVolume(v.Name).remove({ force: true }).catch(() => {})));
  return { containers: containers.length, volumes: volumes.length };
}
