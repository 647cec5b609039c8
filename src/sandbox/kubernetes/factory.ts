import { CoreV1Api, NetworkingV1Api, Watch, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { GymError } from '../../errors.ts';
import type { PreparedEnv } from '../../env/types.ts';
import type { Task } from '../../tasks/schema.ts';
import type { ExecutorClient } from '../executor/client.ts';
import { ContainerSandboxFactory, type ContainerFactoryOptions } from '../container/factory.ts';
import type { Pooled } from '../container/pool.ts';
import { LAYOUT, WORKDIR } from '../container/workspace.ts';
import { installPodExecutor, startPodExecutor } from './executor.ts';
import { apiStatus, kubeError, labelValue, loadKubeConfig } from './client.ts';
import type { PodRef } from './exec.ts';
import { DEFAULT_KUBERNETES_LIMITS, type KubernetesLimits } from './limits.ts';
import { HOSTS_CONFIGMAP, HOSTS_TEXT, podManifest, waitRunning } from './pod.ts';
import { POD_OWNER_LABELS, reapStalePods } from './reaper.ts';
import { PodTransport } from './transport.ts';
import { pushImage } from './registry.ts';

export const DEFAULT_NAMESPACE = 'benchgym';
/** The NetworkPolicy every sandbox pod falls under: no ingress, no egress. */
export const DENY_ALL_POLICY = 'benchgym-sandbox-deny-all';

export interface KubernetesSandboxOptions extends ContainerFactoryOptions {
  /** Path of a kubeconfig; default $KUBECONFIG, ~/.kube/config, or the in-cluster service account. */
  kubeconfig?: string;
  kc?: KubeConfig;
  namespace?: string;
  /**
   * HOST/PREFIX: env images (built by the local Docker engine) are pushed there
   * and pulled by the nodes. Without it they must be on the nodes already.
   */
  registry?: string;
  runtimeClassName?: string;
  limits?: Partial<KubernetesLimits>;
  /** Pods of ours alive at once; more wait, then fail with CAPACITY. */
  maxPods?: number;
  /** Called with each prepared image when there is no registry (tests: copy it into the cluster's containerd). */
  loadImage?: (image: string) => Promise<void>;
}

/** A started pod: in the warm pool, or an episode's. */
export interface PooledPod extends Pooled {
  ref: PodRef;
}

/** A loadImage that runs a program of the user's with the image as its argument (e.g. docker/cluster/load-image.sh). */
export function loadImageBy(command: string): (image: string) => Promise<void> {
  return async (image) => {
    try {
      await promisify(execFile)(command, [image], { maxBuffer: 16 * 1024 * 1024, timeout: 30 * 60_000 });
    } catch (err) {
      throw new GymError(
        'SANDBOX_UNAVAILABLE',
        `could not put ${image} on the cluster's nodes ` +
          `with ${command}: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`,
      );
    }
  };
}

/** One hardened pod per episode in a namespace of the user's cluster; the cluster schedules. */
export class KubernetesSandboxFactory extends ContainerSandboxFactory<PooledPod, PodTransport, KubernetesLimits> {
  readonly backend = 'kubernetes' as const;
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly namespace: string;
  private readonly loaded = new Map<string, Promise<string>>();
  /** Every pod this factory started and has not deleted, by name (pooled ones too). */
  private readonly started = new Map<string, PooledPod>();
  private watchAbort?: AbortController;
  /** True while the watch of this instance's pods is up: a deletion is then seen without a request per command. */
  private watching = false;
  private closed = false;

  constructor(private readonly opts: KubernetesSandboxOptions = {}) {
    super(opts, { title: 'Kubernetes', limits: { ...DEFAULT_KUBERNETES_LIMITS, ...opts.limits }, maxSandboxes: opts.maxPods });
    this.kc = opts.kc ?? loadKubeConfig(opts.kubeconfig);
    this.core = this.kc.makeApiClient(CoreV1Api);
    this.namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  }

  get labels(): Record<string, string> {
    return { 'benchgym.server': labelValue(this.serverId), 'benchgym.instance': this.instanceId, ...POD_OWNER_LABELS };
  }

  /** Checks the cluster, makes the namespace and the deny-all policy, removes what dead servers of this host left. */
  protected async setUp(): Promise<void> {
    try {
      await this.core.readNamespace({ name: this.namespace });
    } catch (err) {
      if (apiStatus(err) !== 404)
        throw kubeError(err, `the Kubernetes cluster is not reachable or namespace '${this.namespace}' cannot be read`);
      await this.core.createNamespace({ body: { metadata: { name: this.namespace } } }).catch((e: unknown) => {
        if (apiStatus(e) !== 409) throw kubeError(e, `could not create namespace '${this.namespace}'`);
      });
    }
    await this.kc
      .makeApiClient(NetworkingV1Api)
      .createNamespacedNetworkPolicy({
        namespace: this.namespace,
        body: {
          metadata: { name: DENY_ALL_POLICY },
          spec: { podSelector: { matchLabels: { 'benchgym.sandbox': 'true' } }, policyTypes: ['Ingress', 'Egress'] },
        },
      })
      .catch((e: unknown) => {
        if (apiStatus(e) !== 409) throw kubeError(e, `could not create the deny-all NetworkPolicy in '${this.namespace}'`);
      });
    await this.core
      .createNamespacedConfigMap({ namespace: this.namespace, body: { metadata: { name: HOSTS_CONFIGMAP }, data: { hosts: HOSTS_TEXT } } })
      .catch((e: unknown) => {
        if (apiStatus(e) !== 409)
          throw kubeError(
            e,
            `could not create the ConfigMap ${HOSTS_CONFIGMAP} (the sandboxes' read-only /etc/hosts) in '${this.namespace}'`,
          );
      });
    await reapStalePods(this.core, this.namespace, this.serverId, this.instanceId);
    void this.watchPods();
  }

  /** pids are the kubelet's, not the pod's: only memory sets a pod apart from the pool's. */
  protected fitsPool(memoryBytes: number): boolean {
    return memoryBytes === this.limits.memoryBytes;
  }

  protected transportOf(started: PooledPod, image: string): PodTransport {
    return new PodTransport(started.ref, this.core, image, this.limits, () => this.watching, this.opts.runtimeClassName);
  }

  protected start(image: string, labels: Record<string, string>, memoryBytes?: number): Promise<PooledPod> {
    return this.startPod(image, labels, memoryBytes);
  }

  protected async remove(p: PooledPod): Promise<void> {
    await p.executor.close().catch(() => {});
    await this.deletePod(p.ref.pod);
  }

  /**
   * Watches this instance's pods: a pod deleted through the API (by a user, an eviction, the
   * cluster) runs on for a moment until the kubelet kills it, and its executor with it; the
   * watch marks its sandbox lost at once. Restarted when the server ends it; without the
   * permission to watch, each command reads its pod instead (KubernetesSandbox.exec).
   */
  private async watchPods(): Promise<void> {
    if (this.closed) return;
    const again = (err: unknown) => {
      this.watching = false;
      const status = (err as { statusCode?: number } | null)?.statusCode;
      if (this.closed) return;
      if (status === 401 || status === 403) {
        process.stderr.write(
          `benchgym: cannot watch pods in '${this.namespace}' (HTTP ${status}): ` +
            `each command reads its pod instead; grant the 'watch' verb on pods\n`,
        );
        return;
      }
      setTimeout(() => void this.watchPods(), 1000).unref();
    };
    try {
      this.watchAbort = await new Watch(this.kc).watch(
        `/api/v1/namespaces/${this.namespace}/pods`,
        { labelSelector: `benchgym.instance=${this.instanceId}` },
        (type, pod: V1Pod) => this.onPodEvent(type, pod),
        again,
      );
      // Closed while the watch was connecting: its open request would keep the process alive.
      if (this.closed) this.watchAbort.abort();
      this.watching = !this.closed;
    } catch (err) {
      again(err);
    }
  }

  private onPodEvent(type: string, pod: V1Pod): void {
    const name = pod.metadata?.name;
    if (!name || (type !== 'DELETED' && !pod.metadata?.deletionTimestamp)) return;
    const reason = `the sandbox pod ${name} ${type === 'DELETED' ? 'was deleted' : 'is being deleted'}`;
    for (const s of this.live) if (s.transport.ref.pod === name) s.markLost(reason);
    // A pooled pod: its closed executor keeps it from being handed out.
    void this.started
      .get(name)
      ?.executor?.close()
      .catch(() => {});
  }

  /** The env image built by the local Docker engine, then pushed to the registry or loaded onto the nodes. */
  async prepare(task: Task): Promise<PreparedEnv> {
    await this.init();
    const env = await this.images.prepare(task);
    if (!env.image) return env;
    const local = env.image;
    let p = this.loaded.get(local);
    if (!p) {
      p = this.opts.registry
        ? pushImage(this.docker, local, this.opts.registry)
        : this.opts.loadImage
          ? this.opts.loadImage(local).then(() => local)
          : Promise.resolve(local);
      this.loaded.set(local, p);
      p.catch(() => this.loaded.delete(local));
    }
    return { ...env, image: await p };
  }

  /** Creates the pod, waits until it runs (or fails naming its event), starts its executor, lays out the start state. */
  async startPod(image: string, labels: Record<string, string>, memoryBytes = this.limits.memoryBytes): Promise<PooledPod> {
    const binary = await this.executorBinaryPath();
    const name = `benchgym-${randomBytes(6).toString('hex')}`;
    const extra = Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, labelValue(v)]));
    const body = podManifest({
      name,
      image,
      labels: { ...extra, ...this.labels },
      limits: this.limits,
      memoryBytes,
      pullPolicy: this.opts.registry ? 'IfNotPresent' : 'Never',
      runtimeClassName: this.opts.runtimeClassName,
      user: this.user,
    });
    try {
      await this.core.createNamespacedPod({ namespace: this.namespace, body });
    } catch (err) {
      throw kubeError(err, `could not create a pod from ${image} in '${this.namespace}'`);
    }
    const ref = { kc: this.kc, namespace: this.namespace, pod: name, maxFileBytes: this.limits.maxFileBytes, user: this.user };
    let executor: ExecutorClient | undefined;
    try {
      await waitRunning(this.core, this.namespace, name, this.limits.startTimeoutMs);
      executor = await this.startExecutor(ref, binary);
      const seeded = await executor.exec(['sh', '-c', LAYOUT], { timeoutMs: 300_000, maxOutputBytes: 64 * 1024 });
      if (seeded.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not lay out the workspace: ${seeded.stderr}`);
      const pod = { ref, executor };
      this.started.set(name, pod);
      return pod;
    } catch (err) {
      await executor?.close().catch(() => {});
      await this.deletePod(name);
      throw kubeError(err, `could not start a pod from ${image}`);
    }
  }

  /** The executor copied into the running pod and started; the pod's start fails without it (naming the pod's fate when it went). */
  private async startExecutor(ref: PodRef, binary: string): Promise<ExecutorClient> {
    try {
      await installPodExecutor(ref, binary);
      return await startPodExecutor(ref, { root: WORKDIR });
    } catch (err) {
      await waitRunning(this.core, this.namespace, ref.pod, 1000);
      throw new GymError('SANDBOX_UNAVAILABLE', `the in-sandbox executor did not start in pod ${ref.pod}: ${(err as Error).message}`);
    }
  }

  async deletePod(name: string): Promise<void> {
    this.started.delete(name);
    await this.core.deleteNamespacedPod({ name, namespace: this.namespace, gracePeriodSeconds: 0 }).catch(() => {});
  }

  async close(): Promise<void> {
    await super.close();
    this.closed = true;
    this.watching = false;
    this.watchAbort?.abort();
  }
}
