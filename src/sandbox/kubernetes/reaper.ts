import type { CoreV1Api } from '@kubernetes/client-node';
import os from 'node:os';
import { processAlive } from '../../lock.ts';
import { OWNER_LABELS, processStart } from '../container/labels.ts';
import { labelValue } from './client.ts';

/** This host and process, as pod labels (the Docker backend's owner labels, made valid label values). */
export const POD_OWNER_LABELS: Record<string, string> = Object.fromEntries(
  Object.entries(OWNER_LABELS).map(([k, v]) => [k, labelValue(v)]),
);

/** Is the process that labelled this pod still running on this host? Pods of other hosts count as alive (their server may be). */
export function podOwnerAlive(labels: Record<string, string> | undefined): boolean {
  if (!labels) return false;
  if (labels['benchgym.host'] !== labelValue(os.hostname())) return true;
  const pid = Number(labels['benchgym.pid']);
  if (!pid || !processAlive(pid)) return false;
  return !labels['benchgym.started'] || labels['benchgym.started'] === 'x' || processStart(pid) === labels['benchgym.started'];
}

/**
 * Deletes the pods of this server id in the namespace that a dead process of this host made
 * (any phase), keeping this instance's. Pods of other hosts are theirs to reap.
 */
export async function reapStalePods(core: CoreV1Api, namespace: string, serverId: string, keepInstance?: string): Promise<number> {
  const list = await core.listNamespacedPod({ namespace, labelSelector: `benchgym.server=${labelValue(serverId)}` });
  const stale = list.items.filter((p) => p.metadata?.labels?.['benchgym.instance'] !== keepInstance && !podOwnerAlive(p.metadata?.labels));
  await Promise.all(
    stale.map((p) => core.deleteNamespacedPod({ name: p.metadata!.name!, namespace, gracePeriodSeconds: 0 }).catch(() => {})),
  );
  return stale.length;
}
