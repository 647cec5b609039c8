import type Docker from 'dockerode';
import os from 'node:os';
import { processAlive } from '../../lock.ts';
import { processStart } from '../container/labels.ts';

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
  await Promise.all(
    containers.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true, v: true })
        .catch(() => {}),
    ),
  );
  const { Volumes } = await docker.listVolumes({ filters });
  const volumes = (Volumes ?? []).filter((v) => stale(v.Labels ?? undefined));
  await Promise.all(
    volumes.map((v) =>
      docker
        .getVolume(v.Name)
        .remove({ force: true })
        .catch(() => {}),
    ),
  );
  return { containers: containers.length, volumes: volumes.length };
}
