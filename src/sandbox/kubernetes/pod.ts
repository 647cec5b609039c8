import type { CoreV1Api, V1EphemeralContainer, V1Pod } from '@kubernetes/client-node';
import type { SandboxUser } from '../sandbox_user.ts';
import { GymError } from '../../errors.ts';
import { WORKDIR } from '../container/workspace.ts';
import { CONTAINER } from './exec.ts';
import type { KubernetesLimits } from './limits.ts';

/**
 * The ConfigMap mounted read-only at /etc/hosts in every sandbox pod: the kubelet otherwise
 * bind-mounts a writable file from the node's disk there. Its text is what Docker writes for a
 * container without a network.
 */
export const HOSTS_CONFIGMAP = 'benchgym-sandbox-hosts';
export const HOSTS_TEXT =
  '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nff00::0\tip6-' +
  'mcastprefix\nff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n';
/** Where the in-sandbox executor's binary is copied at pod start: an emptyDir of its own, not the agent's /tmp. */
export const EXECUTOR_DIR = '/.benchgym-executor';
/** Room for the executor's binary (a static Go program of a few MiB). */
export const EXECUTOR_DIR_BYTES = 32 * 1024 ** 2;
/** The ephemeral container people's terminals run in (sandbox.ts, terminalContainer). */
export const TERMINAL_CONTAINER = 'terminal';
/** PID 1 of the sandbox container, and of the terminal container: its child sleeps, orphans come to it. */
const IDLE = ['sh', '-c', 'sleep infinity & wait'];
/** What every container of a sandbox pod starts with in its environment. */
const POD_ENV = Object.entries({
  HOME: '/tmp',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  PYTHONDONTWRITEBYTECODE: '1',
  PYTHONUNBUFFERED: '1',
  TERM: 'dumb',
}).map(([name, value]) => ({ name, value }));

export interface PodSpecOptions {
  name: string;
  image: string;
  labels: Record<string, string>;
  limits: KubernetesLimits;
  memoryBytes: number;
  /** 'Never' for images already on the nodes, 'IfNotPresent' for images in a registry. */
  pullPolicy: 'Never' | 'IfNotPresent' | 'Always';
  runtimeClassName?: string;
  /** The commands' uid and gid: the workspace's root is made theirs (git refuses a work tree of another owner). */
  user: SandboxUser;
}

/**
 * The ephemeral container a pod's terminals run in, added on the first pty(): the same image
 * and workspace, as the commands' uid, but a pid namespace, /dev/pts and /tmp of its own (an
 * emptyDir of the pod's no command mounts), so the sandbox's commands can neither see, signal
 * nor open a person's shell and terminal. (No ConfigMap /etc/hosts: an ephemeral container may
 * not mount a subPath; the kubelet's writable one is root's, and the shell is not.)
 */
export function terminalContainer(image: string, user: SandboxUser): V1EphemeralContainer {
  return {
    name: TERMINAL_CONTAINER,
    image,
    imagePullPolicy: 'IfNotPresent',
    command: IDLE,
    workingDir: WORKDIR,
    env: POD_ENV,
    securityContext: {
      runAsUser: user.uid,
      runAsGroup: user.gid,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    },
    volumeMounts: [
      { name: 'workspace', mountPath: WORKDIR },
      { name: 'terminal-tmp', mountPath: '/tmp' },
    ],
  };
}

/**
 * One hardened pod: no service-account token, no privilege escalation, a read-only root with the
 * workspace and /tmp on size-limited in-memory emptyDirs, CPU / memory / ephemeral-storage
 * limits, a deadline. The container runs as root with CAP_SETUID and CAP_SETGID only: PID 1 (a
 * shell whose one child sleeps) and the executor stay root, every command and script drops to
 * the sandbox uid (PodRef.user, the executor's --user), which can signal neither. Commands come
 * in through exec, and what they leave behind is reparented to the shell (see leftoverScript).
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
      // An emptyDir's root is root's: git in the sandbox (the agent's and the scorer's) would call the
      // work tree "dubious ownership". An init container with CAP_CHOWN alone gives it to the commands' uid.
      initContainers: [
        {
          name: 'workspace-owner',
          image: o.image,
          imagePullPolicy: o.pullPolicy,
          command: ['chown', `${o.user.uid}:${o.user.gid}`, WORKDIR],
          securityContext: {
            runAsUser: 0,
            runAsGroup: 0,
            runAsNonRoot: false,
            allowPrivilegeEscalation: false,
            privileged: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'], add: ['CHOWN'] },
          },
          resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '500m', memory: '64Mi' } },
          volumeMounts: [{ name: 'workspace', mountPath: WORKDIR }],
        },
      ],
      containers: [
        {
          name: CONTAINER,
          image: o.image,
          imagePullPolicy: o.pullPolicy,
          command: IDLE,
          workingDir: WORKDIR,
          env: POD_ENV,
          securityContext: {
            runAsUser: 0,
            runAsGroup: 0,
            runAsNonRoot: false,
            allowPrivilegeEscalation: false,
            privileged: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'], add: ['SETUID', 'SETGID'] },
          },
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
            { name: 'executor', mountPath: EXECUTOR_DIR },
          ],
        },
      ],
      volumes: [
        { name: 'workspace', emptyDir: { medium: 'Memory', sizeLimit: String(l.workspaceBytes) } },
        { name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: String(l.tmpBytes) } },
        { name: 'hosts', configMap: { name: HOSTS_CONFIGMAP } },
        // The terminal container's /tmp (its HOME): a person's shell shares no dotfile with the commands.
        { name: 'terminal-tmp', emptyDir: { medium: 'Memory', sizeLimit: String(l.tmpBytes) } },
        // The in-sandbox executor's binary, in memory as /tmp: a tmpfs the kubelet mounts without noexec,
        // whatever the node's disk is mounted with.
        { name: 'executor', emptyDir: { medium: 'Memory', sizeLimit: String(EXECUTOR_DIR_BYTES) } },
      ],
    },
  };
}

/** Container waiting reasons that will not resolve by waiting. */
const FATAL_WAITING = new Set([
  'ErrImageNeverPull',
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
  'CrashLoopBackOff',
]);

/** The newest event of a pod, as "Reason: message", or undefined. */
export async function lastPodEvent(core: CoreV1Api, namespace: string, pod: string): Promise<string | undefined> {
  const events = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${pod}` }).catch(() => null);
  const items = [...(events?.items ?? [])].sort(
    (a, b) => Date.parse(String(a.lastTimestamp ?? a.eventTime ?? 0)) - Date.parse(String(b.lastTimestamp ?? b.eventTime ?? 0)),
  );
  const warn = items.filter((e) => e.type === 'Warning');
  const e = (warn.length ? warn : items).at(-1);
  return e ? `${e.reason}: ${e.message}` : undefined;
}

/** Waits until one container of a running pod (an ephemeral one, say) runs; fails at once when it cannot start. */
export async function waitContainerRunning(
  core: CoreV1Api,
  namespace: string,
  pod: string,
  container: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 100;
  for (;;) {
    const p = await core.readNamespacedPod({ name: pod, namespace });
    const cs = [...(p.status?.containerStatuses ?? []), ...(p.status?.ephemeralContainerStatuses ?? [])].find((c) => c.name === container);
    if (cs?.state?.running) return;
    const waiting = cs?.state?.waiting;
    if ((waiting?.reason && FATAL_WAITING.has(waiting.reason)) || cs?.state?.terminated) {
      const ended = cs?.state?.terminated;
      const why = waiting ? `${waiting.reason}: ${waiting.message ?? ''}` : `it ended (${ended?.reason ?? `exit ${ended?.exitCode}`})`;
      throw new GymError('SANDBOX_UNAVAILABLE', `container ${container} of pod ${pod} cannot run: ${why}`);
    }
    if (Date.now() > deadline) {
      throw new GymError(
        'SANDBOX_UNAVAILABLE',
        `container ${container} of pod ${pod} was not running after ${Math.round(timeoutMs / 1000)} s`,
      );
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 1000);
  }
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
    // The init container (the workspace's owner) uses the same image: an image the node lacks shows there first.
    const init = pod.status?.initContainerStatuses?.find((c) => c.state?.waiting?.reason && FATAL_WAITING.has(c.state.waiting.reason));
    const waiting = init?.state?.waiting ?? cs?.state?.waiting;
    const why = async (fallback: string) => (await lastPodEvent(core, namespace, name)) ?? fallback;
    if (waiting?.reason && FATAL_WAITING.has(waiting.reason)) {
      throw new GymError('SANDBOX_UNAVAILABLE', `pod ${name} cannot start: ${await why(`${waiting.reason}: ${waiting.message ?? ''}`)}`, {
        event: waiting.reason,
      });
    }
    if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded' || cs?.state?.terminated) {
      throw new GymError(
        'SANDBOX_UNAVAILABLE',
        `pod ${name} ended before it was ready (${pod.status?.phase}): ` +
          `${await why(pod.status?.message ?? cs?.state?.terminated?.reason ?? 'no event')}`,
      );
    }
    if (Date.now() > deadline) {
      const cond = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
      const fallback = cond ? `${cond.reason}: ${cond.message}` : `phase ${pod.status?.phase ?? 'unknown'}`;
      throw new GymError(
        'SANDBOX_UNAVAILABLE',
        `pod ${name} was not running after ${Math.round(timeoutMs / 1000)} s: ${await why(fallback)}`,
      );
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 1000);
  }
}
