import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { GymError } from '../../errors.ts';
import { ImageBuilder, type ImageBuilderOptions } from '../../env/images.ts';
import type { PreparedEnv } from '../../env/types.ts';
import type { Task } from '../../tasks/schema.ts';
import type { Sandbox, SandboxCreateOptions, SandboxFactory } from '../types.ts';
import { ensureExecutorBinary } from '../executor/build.ts';
import { sandboxUserFromEnv, type SandboxUser } from '../sandbox_user.ts';
import { ContainerCapacity } from './capacity.ts';
import type { ContainerLimits } from './limits.ts';
import { WarmPool, type Pooled } from './pool.ts';
import { ContainerSandbox } from './sandbox.ts';
import type { ContainerTransport } from './transport.ts';

/** What every container backend is configured with. */
export interface ContainerFactoryOptions {
  /** Names this server in labels; a restarted server removes what its predecessor left. */
  serverId?: string;
  /** Started sandboxes kept ready per hot image (workspace laid out, executor up); default 0. */
  poolSize?: number;
  /** How long a pooled sandbox may wait unused before it is removed (default 10 min). */
  poolIdleMs?: number;
  /** How long a request waits for a slot before CAPACITY. */
  capacityWaitMs?: number;
  images?: ImageBuilderOptions;
  /**
   * The uid and gid commands, file operations and terminals run as (default nobody, or
   * $BENCHGYM_SANDBOX_UID): PID 1 and the executor stay root, out of their reach.
   */
  sandboxUser?: SandboxUser;
  /** The engine that builds env images (Kubernetes too: they are pushed or loaded from it); default the local one. */
  docker?: Docker;
}

/** What a backend tells the shared factory about itself. */
export interface ContainerBackend<L extends ContainerLimits> {
  /** For messages: 'Docker', 'Kubernetes'. */
  title: string;
  limits: L;
  /** Sandboxes of ours alive at once (episodes, scorers, pool); more wait, then fail with CAPACITY. */
  maxSandboxes?: number;
}

/**
 * The part of a container backend's factory that is the same for Docker and Kubernetes: the
 * capacity gate, the warm pool, the executor's binary, fork, and the live set. A backend starts
 * and removes its containers and gives each a transport (transport.ts).
 */
export abstract class ContainerSandboxFactory<
  S extends Pooled,
  T extends ContainerTransport,
  L extends ContainerLimits,
> implements SandboxFactory {
  abstract readonly backend: T['backend'];
  readonly serverId: string;
  readonly instanceId = randomBytes(6).toString('hex');
  readonly limits: L;
  readonly images: ImageBuilder;
  readonly user: SandboxUser;
  readonly docker: Docker;
  protected readonly live = new Set<ContainerSandbox<T>>();
  protected readonly pool: WarmPool<S>;
  protected readonly capacity: ContainerCapacity;
  private ready?: Promise<void>;
  private executorBinary?: Promise<string>;

  constructor(
    private readonly common: ContainerFactoryOptions,
    private readonly about: ContainerBackend<L>,
  ) {
    this.user = common.sandboxUser ?? sandboxUserFromEnv();
    this.serverId = common.serverId ?? 'default';
    this.limits = about.limits;
    // The local engine (DOCKER_HOST or the default socket) unless one is given; Docker's own transport uses the same.
    this.docker = common.docker ?? new Docker();
    this.images = new ImageBuilder(this.docker, common.images);
    this.pool = new WarmPool<S>(
      common.poolSize ?? 0,
      (image) => this.start(image, { 'benchgym.pool': 'true' }),
      (s) => this.remove(s),
      common.poolIdleMs,
    );
    // The gate reads only the pool's size and evicts from it: any pool's items will do.
    this.capacity = new ContainerCapacity(about.maxSandboxes ?? 32, common.capacityWaitMs ?? 30_000, this.pool as unknown as WarmPool);
  }

  /** The labels every object this factory makes carries (server, instance, owner). */
  abstract get labels(): Record<string, string>;

  /** Checks the backend and removes what earlier instances left; run once by init(). */
  protected abstract setUp(): Promise<void>;

  /** Starts a container from an image: workspace laid out, executor up (or it fails). */
  protected abstract start(image: string, labels: Record<string, string>, memoryBytes?: number, pids?: number): Promise<S>;

  /** Stops a started container and frees what it holds (its executor first). */
  protected abstract remove(started: S): Promise<void>;

  /** How the sandbox reaches a started container. */
  protected abstract transportOf(started: S, image: string, create: SandboxCreateOptions): T;

  /** Why the executor's binary cannot reach this backend's containers, or null when it can. */
  protected executorUnreachable(): string | null {
    return null;
  }

  /** Whether a sandbox of this size may come from (and refill) the pool, whose containers have the default limits. */
  protected fitsPool(memoryBytes: number, pids: number): boolean {
    return memoryBytes === this.limits.memoryBytes && pids === this.limits.pids;
  }

  init(): Promise<void> {
    this.ready ??= this.setUp();
    this.ready.catch(() => (this.ready = undefined));
    return this.ready;
  }

  async prepare(task: Task): Promise<PreparedEnv> {
    await this.init();
    return this.images.prepare(task);
  }

  async create(create: SandboxCreateOptions): Promise<Sandbox> {
    await this.init();
    const image = create.env?.image;
    if (!image) throw new GymError('INTERNAL', `a ${this.about.title} sandbox needs an image: prepare() the task first`);
    await this.capacity.acquire();
    try {
      // A task that needs more memory or pids than the pool's containers have gets a container of its own.
      const memory = Math.max(create.env?.memoryBytes ?? 0, this.limits.memoryBytes);
      const pids = Math.max(create.env?.pids ?? 0, this.limits.pids);
      const pooled = this.fitsPool(memory, pids);
      const started = (pooled ? this.pool.take(image) : undefined) ?? (await this.start(image, create.labels ?? {}, memory, pids));
      const sandbox = this.wrap(started, image, create);
      // Only what the pool could hand out is refilled.
      if (pooled) void this.pool.refill(image);
      return sandbox;
    } catch (err) {
      this.capacity.release();
      throw err;
    }
  }

  private wrap(started: S, image: string, create: SandboxCreateOptions): ContainerSandbox<T> {
    const transport = this.transportOf(started, image, create);
    const sandbox: ContainerSandbox<T> = new ContainerSandbox(
      transport,
      image,
      this.limits,
      create.env?.vars ?? {},
      {
        destroy: async () => {
          this.live.delete(sandbox);
          this.capacity.release();
          await transport.close();
          await this.remove(started);
        },
        fork: () => this.fork(sandbox, create),
      },
      started.executor,
    );
    this.live.add(sandbox);
    return sandbox;
  }

  /** A new container from the same image with the same start state as baseline, then the workspace copied across as tar. */
  private async fork(from: ContainerSandbox<T>, create: SandboxCreateOptions): Promise<Sandbox> {
    const copy = (await this.create({ ...create, env: { ...create.env, image: from.image } })) as ContainerSandbox<T>;
    try {
      await copy.commitBaseline();
      await copy.unpackWorkspace(await from.packWorkspace(this.limits.workspaceBytes + 64 * 1024 ** 2));
      return copy;
    } catch (err) {
      await copy.destroy();
      throw err;
    }
  }

  /**
   * The executor binary to put into containers (ensureExecutorBinary): every command and file
   * operation runs through it, so without one (or where the backend cannot reach it) no sandbox
   * starts; the failure is not kept, so a later start tries again.
   */
  executorBinaryPath(): Promise<string> {
    const unreachable = this.executorUnreachable();
    if (unreachable)
      return Promise.reject(
        new GymError('SANDBOX_UNAVAILABLE', `the ${this.about.title} backend cannot run its in-sandbox executor: ${unreachable}`),
      );
    const cacheDir = this.common.images?.cacheDir ?? process.env.BENCHGYM_CACHE ?? path.join(os.tmpdir(), 'benchgym-cache');
    this.executorBinary ??= ensureExecutorBinary({ cacheDir }).catch((err: unknown) => {
      this.executorBinary = undefined;
      throw err;
    });
    return this.executorBinary;
  }

  /** Sandboxes in use and ready in the pool (for health checks, tests and benchmarks). */
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
  }
}
