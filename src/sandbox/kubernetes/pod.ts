import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { GymError } from '../../errors.ts';
import { START_STATE } from '../../env/images.ts';
import { CONTAINER } from './exec.ts';
import type { KubernetesLimits } from './limits.ts';

export const WORKDIR = '/workspace';
/**
 * The ConfigMap mounted read-only at /etc/hosts in every sandbox pod: the kubelet otherwise
 * bind-mounts a writable file from the node's disk there. Its text is what Docker writes for a
 * container without a network.
 */
export const HOSTS_CONFIGMAP = 'benchgym-sandbox-hosts';
export const HOSTS_TEXT = '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nff00::0\tip6-mcastprefix\nff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n';
/** Where the in-sandbox executor's binary is copied at pod start: an emptyDir of its own, not the agent's /tmp. */
export const EXECUTOR_DIR = '/.benchgym-executor';
/** Room for the executor's binary (a static Go program of a few MiB). */
const EXECUTOR_DIR_BYTES = 32 * 1024 ** 2;

export interface PodSpecOptions {
  name: string;
  image: string;
  labels: Record<string, string>;
  limits: KubernetesLimits;
  memoryBytes: number;
  /** 'Never' for images already on the nodes, 'IfNotPresent' for images in a registry. */
  pullPolicy: 'Never' | 'IfNotPresent' | 'Always';
  runtimeClassName?: string;
  /** Mount an emptyDir at EXECUTOR_DIR for the in-sandbox executor's binary. */
  executor?: boolean;
}

/**
 * One hardened pod: no service-account token, no capabilities, no privilege escalation, a
 * read-only root with the workspace and /tmp on size-limited in-memory emptyDirs, CPU / memory /
 * ephemeral-storage limits, a deadline. PID 1 is a shell whose one child sleeps: commands
 * come in through exec, and what they leave behind is reparented to the shell (see leftoverScript).
 */
export function podManifest(o: PodSpecOptions): V1Pod {
  const l = o.limits;
  const cpu = `${Math.max(1, Math.round(l.nanoCpus / 1e6))}m`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name, labels: { ...o.labels, 'benchgym.sandbox': 'true' } },
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: 'Never',
      dnsPolicy: 'Default',
      terminationGracePeriodSeconds: 0,
      activeDeadlineSeconds: l.activeDeadlineSeconds,
      ...(o.runtimeClassName ? { runtimeClassName: o.runtimeClassName } : {}),
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: CONTAINER,
          image: o.image,
          imagePullPolicy: o.pullPolicy,
          command: ['sh', '-c', 'sleep infinity & wait'],
          workingDir: WORKDIR,
          env: Object.entries({ HOME: '/tmp', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1', TERM: 'dumb' }).map(([name, value]) => ({ name, value })),
          securityContext: { allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
          resources: {
            // Requests small, limits as the Docker backend's: the scheduler packs, the kernel caps.
            requests: { cpu: `${l.requestCpuMillis}m`, memory: '128Mi', 'ephemeral-storage': '64Mi' },
            limits: { cpu, memory: String(o.memoryBytes), 'ephemeral-storage': String(l.ephemeralBytes) },
          },
          volumeMounts: [
            { name: 'workspace', mountPath: WORKDIR },
            { name: 'tmp', mountPath: '/tmp' },
            // A mount of /etc/hosts of the pod's own: the kubelet then leaves its writable one out.
            { name: 'hosts', mountPath: '/etc/hosts', subPath: 'hosts', readOnly: true },
            ...(o.executor ? [{ name: 'executor', mountPath: EXECUTOR_DIR }] : []),
          ],
        },
      ],
      volumes: [
        { name: 'workspace', emptyDir: { medium: 'Memory', sizeLimit: String(l.workspaceBytes) } },
        { name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: String(l.tmpBytes) } },
        { name: 'hosts', configMap: { name: HOSTS_CONFIGMAP } },
        // In memory, as /tmp: a tmpfs the kubelet mounts without noexec, whatever the node's disk is mounted with.
        ...(o.executor ? [{ name: 'executor', emptyDir: { medium: 'Memory', sizeLimit: String(EXECUTOR_DIR_BYTES) } }] : []),
      ],
    },
  };
}

/** The shell command that lays the start state baked into an instance image out in the workspace. */
export const LAYOUT = `if [ -d ${START_STATE} ]; then cp -a ${START_STATE}/. ${WORKDIR}/; fi; rm -f ${WORKDIR}/.benchgym-keep`;

/** Container waiting reasons that will not resolve by waiting. */
const FATAL_WAITING = new Set(['ErrImageNeverPull', 'ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError', 'RunContainerError', 'CrashLoopBackOff']);

/** The newest event of a pod, as "Reason: message", or undefined. */
export async function lastPodEvent(core: CoreV1Api, namespace: string, pod: string): Promise<string | undefined> {
  const events = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${pod}` }).catch(() => null);
  const items = [...(events?.items ?? [])].sort((a, b) => Date.parse(String(a.lastTimestamp ?? a.eventTime ?? 0)) - Date.parse(String(b.lastTimestamp ?? b.eventTime ?? 0)));
  const warn = items.filter((e) => e.type === 'Warning');
  const e = (warn.length ? warn : items).at(-1);
  return e ? `${e.reason}: ${e.message}` : undefined;
}

/**
 * Waits until the pod's container runs. A pod that cannot pull or start fails at once, one that
 * stays unscheduled or pending fails at the deadline: SANDBOX_UNAVAILABLE naming the pod's event.
 */
export async function waitRunning(core: CoreV1Api, namespace: string, name: string, timeoutMs: number): Promise<V1Pod> {
  const deadline = Date.now() + timeoutMs;
  let delay = 100;
  for (;;) {
    const pod = await core.readNamespacedPod({ name, namespace });
    const cs = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER);
    if (pod.status?.phase === 'Running' && cs?.state?.running) return pod;
    const waiting = cs?.state?.waiting;
    const why = async (fallback: string) => (await lastPodEvent(core, namespace, name)) ?? fallback;
    if (waiting?.reason && FATAL_WAITING.has(waiting.reason)) {
      throw new GymError('SANDBOX_UNAVAILABLE', `pod ${name} cannot start: ${await why(`${waiting.reason}: ${waiting.message ?? ''}`)}`, { event: waiting.reason });
    }
    if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded' || cs?.state?.terminated) {
      throw new GymError('SANDBOX_UNAVAILABLE', `pod ${name} ended before it was ready (${pod.status?.phase}): ${await why(pod.status?.message ?? cs?.state?.terminated?.reason ?? 'no event')}`);
    }
    if (Date.now() > deadline) {
      const cond = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
      const fallback = cond ? `${cond.reason}: ${cond.message}` : `phase ${pod.status?.phase ?? 'unknown'}`;
      throw new GymError('SANDBOX_UNAVAILABLE', `pod ${name} was not running after ${Math.round(timeoutMs / 1000)} s: ${await why(fallback)}`);
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 1000);
  }
}
