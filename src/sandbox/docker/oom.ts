import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';

/**
 * How often a container's memory limit killed one of its processes, read on the host from the
 * kernel's own count for the container's memory cgroup (v1 `memory.oom_control`, v2
 * `memory.events`): the file is the kernel's, nothing inside the container can write it. Docker's
 * `State.OOMKilled` is no substitute: it flips once and stays set, so a second kill would go
 * unseen, and on an executor path the container itself never stops.
 *
 * The cgroup is found from the container's first process (`/proc/<pid>/cgroup`), so it holds for
 * either cgroup driver and any `CgroupParent`. Where the engine is not on this host (a remote
 * `DOCKER_HOST`) or the files cannot be read, the count is unknown (`null`) and nothing is marked.
 */
export class ContainerOomCounter {
  private file?: Promise<string | null>;

  constructor(private readonly container: Docker.Container) {}

  /** The kill count now, or null when it cannot be read here. */
  async count(): Promise<number | null> {
    this.file ??= this.locate();
    const file = await this.file;
    if (!file) return null;
    try {
      // Read synchronously, as the local backend's cgroup counts: a small kernel file, read twice per
      // command; through the thread pool it was a third of the server's busy time on a Docker step.
      return oomKillsOf(readFileSync(file, 'utf8'));
    } catch {
      return null;
    }
  }

  private async locate(): Promise<string | null> {
    try {
      const pid = (await this.container.inspect()).State?.Pid;
      if (!pid) return null;
      const file = memoryCgroupFile(await fs.readFile(`/proc/${pid}/cgroup`, 'utf8'));
      if (!file) return null;
      await fs.access(file);
      return file;
    } catch {
      return null;
    }
  }
}

/** The file holding the OOM kill count of the memory cgroup a `/proc/<pid>/cgroup` text names. */
export function memoryCgroupFile(procCgroup: string, cgroupRoot = '/sys/fs/cgroup'): string | null {
  const lines = procCgroup.split('\n').filter(Boolean);
  for (const line of lines) {
    const [, controllers, where] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (controllers?.split(',').includes('memory') && where) return path.join(cgroupRoot, 'memory', where, 'memory.oom_control');
  }
  const unified = lines.map((l) => /^0::(.*)$/.exec(l)?.[1]).find((w) => w !== undefined);
  return unified !== undefined ? path.join(cgroupRoot, unified, 'memory.events') : null;
}

/** `oom_kill N` of a `memory.oom_control` (v1) or `memory.events` (v2) text; 0 when the kernel predates the counter. */
export function oomKillsOf(text: string): number {
  return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
}
