import { readFileSync } from 'node:fs';
import os from 'node:os';

/** Who made a container: this host and process (its start time guards against pid reuse). */
export const OWNER_LABELS: Record<string, string> = {
  'benchgym.host': os.hostname(),
  'benchgym.pid': String(process.pid),
  'benchgym.started': processStart(process.pid) ?? '',
};

/** A process's start time in clock ticks since boot (/proc/PID/stat, field 22), or null. */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
