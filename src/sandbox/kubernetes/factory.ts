import { CoreV1Api, NetworkingV1Api, Watch, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type Docker from 'dockerode';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { GymError } from '../../errors.ts';
import { ImageBuilder, type ImageBuilderOptions } from '../../env/images.ts';
import type { PreparedEnv } from '../../env/types.ts';
import type { Task } from '../../tasks/schema.ts';
import type { Sandbox, SandboxCreateOptions, SandboxFactory } from '../types.ts';
import { dockerClient } from '../docker/client.ts';
import { ContainerCapacity } from '../docker/capacity.ts';
import { WarmPool, type Pooled } from '../docker/pool.ts';
import { ensureExecutorBinary } from '../executor/build.ts';
import type { ExecutorClient } from '../executor/client.ts';
import { installPodExecutor, startPodExecutor } from './executor.ts';
import { apiStatus, kubeError, labelValue, loadKubeConfig } from './client.ts';
import { podExec, type PodRef } from './exec.ts';
import { DEFAULT_KUBERNETES_LIMITS, type KubernetesLimits } from './limits.ts';
import { HOSTS_CONFIGMAP, HOSTS_TEXT, LAYOUT, podManifest, waitRunning, WORKDIR } from './pod.ts';
import { POD_OWNER_LABELS, reapStalePods } from './reaper.ts';
import { KubernetesSandbox } from './sandbox.ts';
import { pushImage } from './registry.ts';
import { sandboxUserFromEnv, type SandboxUser } from '../sandbox_user.ts';

export const DEFAULT_NAMESPACE = 'benchgym';
/** The NetworkPolicy every sandbox pod falls under: no ingress, no egress. */
export const DENY_ALL_POLICY = 'benchgym-sandbox-deny-all';

export interface KubernetesSandboxOptions {
  /** Path of a kubeconfig; default $KUBECONFIG, ~/.kube/config, or the in-cluster service account. */
  kubeconfig?: string;
  kc?: KubeConfig;
  namespace?: string;
  /** HOST/PREFIX: env images (built by the local Docker engine) are pushed there and pulled by the nodes. Without it they must be on the nodes already. */
  registry?: string;
  runtimeClassName?: string;
  serverId?: string;
  limits?: Partial<KubernetesLimits>;
  /** Pods of ours alive at once; more wait, then fail with CAPACITY. */
  maxPods?: number;
  capacityWaitMs?: number;
  images?: ImageBuilderOptions;
  docker?: Docker;
  /** Called with each prepared image when there is no registry (tests: copy it into the cluster's containerd). */
  loadImage?: (image: string) => Promise<void>;
  /** Started pods kept ready per hot image (workspace laid out, executor up); default 0. */
  poolSize?: number;
  /** How long a pooled pod may wait unused before it is removed (default 10 min). */
  poolIdleMs?: number;
  /**
   * 'auto' (default): the host-built in-sandbox executor is copied into each pod and started
   * with one long-lived exec that carries every command and file operation; when it cannot be
   * built or started the backend says so once and uses one API exec per operation ('off').
   * Default: 'off' when $BENCHGYM_KUBERNETES_EXECUTOR is 'off', else 'auto'.
   */
  executor?: 'auto' | 'off';
  /**
   * The uid and gid commands, file operations and terminals run as in the pod (default nobody,
   * or $BENCHGYM_SANDBOX_UID): the container's PID 1 and the executor stay root, out of their reach.
   */
  sandboxUser?: SandboxUser;
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
      throw new GymError('SANDBOX_UNAVAILABLE', `could not put ${image} on the cluster's nodes with ${command}: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`);
    }
  };
}

/** One hardened pod per episode in a namespace of the user's cluster; the cluster schedules. */
export class KubernetesSandboxFactory implements SandboxFactory {
  readonly backend = 'kubernetes' as const;
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly namespace: string;
  readonly serverId: string;
  readonly instanceId = randomBytes(6).toString('hex');
  readonly limits: KubernetesLimits;
  readonly images: ImageBuilder;
  private readonly docker: Docker;
  private readonly live = new Set<KubernetesSandbox>();
  private readonly pool: WarmPool<PooledPod>;
  private readonly capacity: ContainerCapacity;
  private readonly loaded = new Map<string, Promise<string>>();
  private ready?: Promise<void>;
  private executorBinary?: Promise<string | null>;
  private executorNoticed = false;
  /** Every pod this factory started and has not deleted, by name (pooled ones too). */
  private readonly started = new Map<string, PooledPod>();
  private watchAbort?: AbortController;
  /** True while the watch of this instance's pods is up: a deletion is then seen without a request per command. */
  private watching = false;
  private closed = false;
  readonly user: SandboxUser;

  constructor(private readonly opts: KubernetesSandboxOptions = {}) {
    this.kc = opts.kc ?? loadKubeConfig(opts.kubeconfig);
    this.user = opts.sandboxUser ?? sandboxUserFromEnv();
    this.core = this.kc.makeApiClient(CoreV1Api);
    this.namespace = opts.namespace ?? DEFAULT_NAMESPACE;
    this.serverId = opts.serverId ?? 'default';
    this.limits = { ...DEFAULT_KUBERNETES_LIMITS, ...opts.limits };
    this.docker = opts.docker ?? dockerClient();
    this.images = new ImageBuilder(this.docker, opts.images);
    this.pool = new WarmPool<PooledPod>(opts.poolSize ?? 0, (image) => this.startPod(image, { 'benchgym.pool': 'true' }), (p) => this.removePod(p), opts.poolIdleMs);
    // The gate reads only the pool's size and evicts from it: any pool's items will do.
    this.capacity = new ContainerCapacity(opts.maxPods ?? 32, opts.capacityWaitMs ?? 30_000, this.pool as unknown as WarmPool);
  }

  get labels(): Record<string, string> {
    return { 'benchgym.server': labelValue(this.serverId), 'benchgym.instance': this.instanceId, ...POD_OWNER_LABELS };
  }

  /** Checks the cluster, makes the namespace and the deny-all policy, removes what dead servers of this host left. */
  init(): Promise<void> {
    this.ready ??= (async () => {
      try {
        await this.core.readNamespace({ name: this.namespace });
      } catch (err) {
        if (apiStatus(err) !== 404) throw kubeError(err, `the Kubernetes cluster is not reachable or namespace '${this.namespace}' cannot be read`);
        await this.core.createNamespace({ body: { metadata: { name: this.namespace } } }).catch((e: unknown) => {
          if (apiStatus(e) !== 409) throw kubeError(e, `could not create namespace '${this.namespace}'`);
        });
      }
      await this.kc
        .makeApiClient(NetworkingV1Api)
        .createNamespacedNetworkPolicy({
          namespace: this.namespace,
          body: { metadata: { name: DENY_ALL_POLICY }, spec: { podSelector: { matchLabels: { 'benchgym.sandbox': 'true' } }, policyTypes: ['Ingress', 'Egress'] } },
        })
        .catch((e: unknown) => {
          if (apiStatus(e) !== 409) throw kubeError(e, `could not create the deny-all NetworkPolicy in '${this.namespace}'`);
        });
      await this.core.createNamespacedConfigMap({ namespace: this.namespace, body: { metadata: { name: HOSTS_CONFIGMAP }, data: { hosts: HOSTS_TEXT } } }).catch((e: unknown) => {
        if (apiStatus(e) !== 409) throw kubeError(e, `could not create the ConfigMap ${HOSTS_CONFIGMAP} (the sandboxes' read-only /etc/hosts) in '${this.namespace}'`);
      });
      await reapStalePods(this.core, this.namespace, this.serverId, this.instanceId);
      void this.watchPods();
    })();
    this.ready.catch(() => (this.ready = undefined));
    return this.ready;
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
        process.stderr.write(`benchgym: cannot watch pods in '${this.namespace}' (HTTP ${status}): each command reads its pod instead; grant the 'watch' verb on pods\n`);
        return;
      }
      setTimeout(() => void this.watchPods(), 1000).unref();
    };
    try {
      this.watchAbort = await new Watch(this.kc).watch(`/api/v1/namespaces/${this.namespace}/pods`, { labelSelector: `benchgym.instance=${this.instanceId}` }, (type, pod: V1Pod) => this.onPodEvent(type, pod), again);
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
    for (const s of this.live) if (s.ref.pod === name) s.markLost(reason);
    // A pooled pod: its closed executor keeps it from being handed out.
    void this.started.get(name)?.executor?.close().catch(() => {});
  }

  /** The env image built by the local Docker engine, then pushed to the registry or loaded onto the nodes. */
  async prepare(task: Task): Promise<PreparedEnv> {
    await this.init();
    const env = await this.images.prepare(task);
    if (!env.image) return env;
    const local = env.image;
    let p = this.loaded.get(local);
    if (!p) {
      p = this.opts.registry ? pushImage(this.docker, local, this.opts.registry) : this.opts.loadImage ? this.opts.loadImage(local).then(() => local) : Promise.resolve(local);
      this.loaded.set(local, p);
      p.catch(() => this.loaded.delete(local));
    }
    return { ...env, image: await p };
  }

  async create(create: SandboxCreateOptions): Promise<Sandbox> {
    await this.init();
    const image = create.env?.image;
    if (!image) throw new GymError('INTERNAL', 'a Kubernetes sandbox needs an image: prepare() the task first');
    await this.capacity.acquire();
    try {
      // A task that needs more memory than the pool's pods have gets a pod of its own.
      const memory = Math.max(create.env?.memoryBytes ?? 0, this.limits.memoryBytes);
      const started = (memory === this.limits.memoryBytes ? this.pool.take(image) : undefined) ?? (await this.startPod(image, create.labels ?? {}, memory));
      const { ref } = started;
      const sandbox: KubernetesSandbox = new KubernetesSandbox(ref, this.core, image, this.limits, create.env?.vars ?? {}, {
        destroy: async () => {
          this.live.delete(sandbox);
          this.capacity.release();
          await this.deletePod(ref.pod);
        },
        fork: () => this.fork(sandbox, create),
        watched: () => this.watching,
      }, this.opts.runtimeClassName, started.executor ?? null);
      this.live.add(sandbox);
      // Only what the pool could hand out is refilled: a task of its own memory never takes from it.
      if (memory === this.limits.memoryBytes) void this.pool.refill(image);
      return sandbox;
    } catch (err) {
      this.capacity.release();
      throw err;
    }
  }

  /** A new pod from the same image with the same start state as baseline, then the workspace copied across as tar. */
  private async fork(from: KubernetesSandbox, create: SandboxCreateOptions): Promise<Sandbox> {
    const copy = (await this.create({ ...create, env: { ...create.env, image: from.image } })) as KubernetesSandbox;
    try {
      await copy.commitBaseline();
      await copy.unpackWorkspace(await from.packWorkspace(this.limits.workspaceBytes + 64 * 1024 ** 2));
      return copy;
    } catch (err) {
      await copy.destroy();
      throw err;
    }
  }

  /** The executor binary to copy into pods, or null when the backend runs without one ('off', or it could not be built). */
  executorBinaryPath(): Promise<string | null> {
    if ((this.opts.executor ?? (process.env.BENCHGYM_KUBERNETES_EXECUTOR === 'off' ? 'off' : 'auto')) === 'off') return Promise.resolve(null);
    this.executorBinary ??= ensureExecutorBinary({ cacheDir: this.opts.images?.cacheDir ?? process.env.BENCHGYM_CACHE ?? path.join(os.tmpdir(), 'benchgym-cache') }).catch((err: unknown) => {
      this.noticeNoExecutor((err as Error).message);
      return null;
    });
    return this.executorBinary;
  }

  /** One line on stderr, once per factory, when pods run without their executor. */
  private noticeNoExecutor(why: string): void {
    if (this.executorNoticed) return;
    this.executorNoticed = true;
    process.stderr.write(`benchgym: the Kubernetes backend runs without its in-sandbox executor (one API exec per operation): ${why}\n`);
  }

  /** Creates the pod, waits until it runs (or fails naming its event), starts its executor, lays out the start state. */
  async startPod(image: string, labels: Record<string, string>, memoryBytes = this.limits.memoryBytes): Promise<PooledPod> {
    const binary = await this.executorBinaryPath();
    const name = `benchgym-${randomBytes(6).toString('hex')}`;
    const extra = Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, labelValue(v)]));
    const body = podManifest({ name, image, labels: { ...extra, ...this.labels }, limits: this.limits, memoryBytes, pullPolicy: this.opts.registry ? 'IfNotPresent' : 'Never', runtimeClassName: this.opts.runtimeClassName, executor: binary !== null, user: this.user });
    try {
      await this.core.createNamespacedPod({ namespace: this.namespace, body });
    } catch (err) {
      throw kubeError(err, `could not create a pod from ${image} in '${this.namespace}'`);
    }
    const ref = { kc: this.kc, namespace: this.namespace, pod: name, maxFileBytes: this.limits.maxFileBytes, user: this.user };
    let executor: ExecutorClient | null = null;
    try {
      await waitRunning(this.core, this.namespace, name, this.limits.startTimeoutMs);
      if (binary) executor = await this.startExecutor(ref, binary);
      if (executor) {
        const seeded = await executor.exec(['sh', '-c', LAYOUT], { timeoutMs: 300_000, maxOutputBytes: 64 * 1024 });
        if (seeded.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not lay out the workspace: ${seeded.stderr}`);
      } else {
        const seeded = await podExec(ref, { cmd: ['sh', '-c', LAYOUT], workdir: WORKDIR, timeoutMs: 300_000, maxOutputBytes: 64 * 1024 });
        if (seeded.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not lay out the workspace: ${seeded.stderr.text()}`);
      }
      const pod = { ref, executor };
      this.started.set(name, pod);
      return pod;
    } catch (err) {
      await executor?.close().catch(() => {});
      await this.deletePod(name);
      throw kubeError(err, `could not start a pod from ${image}`);
    }
  }

  /** The executor copied into the running pod and started; null (and a notice) when it cannot run there: that pod uses one exec per operation. */
  private async startExecutor(ref: PodRef, binary: string): Promise<ExecutorClient | null> {
    try {
      await installPodExecutor(ref, binary);
      return await startPodExecutor(ref, { root: WORKDIR });
    } catch (err) {
      // A pod that is gone is no reason to run without the executor: the start fails.
      await waitRunning(this.core, this.namespace, ref.pod, 1000);
      this.noticeNoExecutor(`it did not start in pod ${ref.pod}: ${(err as Error).message}`);
      return null;
    }
  }

  private async removePod(p: PooledPod): Promise<void> {
    await p.executor?.close().catch(() => {});
    await this.deletePod(p.ref.pod);
  }

  async deletePod(name: string): Promise<void> {
    this.started.delete(name);
    await this.core.deleteNamespacedPod({ name, namespace: this.namespace, gracePeriodSeconds: 0 }).catch(() => {});
  }

  /** Pods in use and ready in the pool (for health checks, tests and benchmarks). */
  stats(): { live: number; pooled: number; refilling: number; slotsInUse: number } {
    return { live: this.live.size, pooled: this.pool.size, refilling: this.pool.refilling, slotsInUse: this.capacity.slotsInUse };
  }

  /** Fills the pool for an image now (warm-up before a run). */
  warm(image: string): Promise<void> {
    return this.pool.warm(image);
  }

  async close(): Promise<void> {
    await Promise.all([...this.live].map((s) => s.destroy()));
    await this.pool.close();
    this.closed = true;
    this.watching = false;
    this.watchAbort?.abort();
  }
}
