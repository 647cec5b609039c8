import { CoreV1Api, NetworkingV1Api, type KubeConfig } from '@kubernetes/client-node';
import type Docker from 'dockerode';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { GymError } from '../../errors.ts';
import { ImageBuilder, type ImageBuilderOptions } from '../../env/images.ts';
import type { PreparedEnv } from '../../env/types.ts';
import type { Task } from '../../tasks/schema.ts';
import type { Sandbox, SandboxCreateOptions, SandboxFactory } from '../types.ts';
import { dockerClient } from '../docker/client.ts';
import { ContainerCapacity } from '../docker/capacity.ts';
import { WarmPool } from '../docker/pool.ts';
import { apiStatus, kubeError, labelValue, loadKubeConfig } from './client.ts';
import { podExec, type PodRef } from './exec.ts';
import { DEFAULT_KUBERNETES_LIMITS, type KubernetesLimits } from './limits.ts';
import { LAYOUT, podManifest, waitRunning, WORKDIR } from './pod.ts';
import { POD_OWNER_LABELS, reapStalePods } from './reaper.ts';
import { KubernetesSandbox } from './sandbox.ts';
import { pushImage } from './registry.ts';

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
  private readonly capacity: ContainerCapacity;
  private readonly loaded = new Map<string, Promise<string>>();
  private ready?: Promise<void>;

  constructor(private readonly opts: KubernetesSandboxOptions = {}) {
    this.kc = opts.kc ?? loadKubeConfig(opts.kubeconfig);
    this.core = this.kc.makeApiClient(CoreV1Api);
    this.namespace = opts.namespace ?? DEFAULT_NAMESPACE;
    this.serverId = opts.serverId ?? 'default';
    this.limits = { ...DEFAULT_KUBERNETES_LIMITS, ...opts.limits };
    this.docker = opts.docker ?? dockerClient();
    this.images = new ImageBuilder(this.docker, opts.images);
    // No warm pool yet: the capacity gate only needs something with a size.
    this.capacity = new ContainerCapacity(opts.maxPods ?? 32, opts.capacityWaitMs ?? 30_000, new WarmPool(0, () => Promise.reject(new Error('no pool')), async () => {}));
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
      await reapStalePods(this.core, this.namespace, this.serverId, this.instanceId);
    })();
    this.ready.catch(() => (this.ready = undefined));
    return this.ready;
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
      const memory = Math.max(create.env?.memoryBytes ?? 0, this.limits.memoryBytes);
      const ref = await this.startPod(image, create.labels ?? {}, memory);
      const sandbox: KubernetesSandbox = new KubernetesSandbox(ref, this.core, image, this.limits, create.env?.vars ?? {}, {
        destroy: async () => {
          this.live.delete(sandbox);
          this.capacity.release();
          await this.deletePod(ref.pod);
        },
        fork: () => this.fork(sandbox, create),
      }, this.opts.runtimeClassName);
      this.live.add(sandbox);
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

  /** Creates the pod, waits until it runs (or fails naming its event), lays out the start state. */
  async startPod(image: string, labels: Record<string, string>, memoryBytes = this.limits.memoryBytes): Promise<PodRef> {
    const name = `benchgym-${randomBytes(6).toString('hex')}`;
    const extra = Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, labelValue(v)]));
    const body = podManifest({ name, image, labels: { ...extra, ...this.labels }, limits: this.limits, memoryBytes, pullPolicy: this.opts.registry ? 'IfNotPresent' : 'Never', runtimeClassName: this.opts.runtimeClassName });
    try {
      await this.core.createNamespacedPod({ namespace: this.namespace, body });
    } catch (err) {
      throw kubeError(err, `could not create a pod from ${image} in '${this.namespace}'`);
    }
    const ref = { kc: this.kc, namespace: this.namespace, pod: name };
    try {
      await waitRunning(this.core, this.namespace, name, this.limits.startTimeoutMs);
      const seeded = await podExec(ref, { cmd: ['sh', '-c', LAYOUT], workdir: WORKDIR, timeoutMs: 300_000, maxOutputBytes: 64 * 1024 });
      if (seeded.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not lay out the workspace: ${seeded.stderr.text()}`);
      return ref;
    } catch (err) {
      await this.deletePod(name);
      throw kubeError(err, `could not start a pod from ${image}`);
    }
  }

  async deletePod(name: string): Promise<void> {
    await this.core.deleteNamespacedPod({ name, namespace: this.namespace, gracePeriodSeconds: 0 }).catch(() => {});
  }

  stats(): { live: number; slotsInUse: number } {
    return { live: this.live.size, slotsInUse: this.capacity.slotsInUse };
  }

  async close(): Promise<void> {
    await Promise.all([...this.live].map((s) => s.destroy()));
  }
}
