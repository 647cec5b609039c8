import type Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { GymError } from '../../errors.ts';
import { ImageBuilder, START_STATE, type ImageBuilderOptions } from '../../env/images.ts';
import type { PreparedEnv } from '../../env/types.ts';
import type { Task } from '../../tasks/schema.ts';
import type { Sandbox, SandboxCreateOptions, SandboxFactory } from '../types.ts';
import { assertDockerReachable, dockerClient, dockerError } from './client.ts';
import { dockerExec } from './exec.ts';
import { WarmPool, type PooledContainer } from './pool.ts';
import { ContainerCapacity } from './capacity.ts';
import { DEFAULT_DOCKER_LIMITS, type DockerLimits } from './limits.ts';
import { OWNER_LABELS, reapStale } from './reaper.ts';
import { SANDBOX_HOST_ADDRESS } from '../host_name.ts';
import { DockerSandbox, SANDBOX_HOSTNAME, WORKDIR } from './sandbox.ts';
import { executorMount, startDockerExecutor } from './executor.ts';
import { ensureExecutorBinary } from '../executor/build.ts';
import type { ExecutorClient } from '../executor/client.ts';
import { sandboxUserFromEnv, type SandboxUser } from '../sandbox_user.ts';

export interface DockerSandboxOptions {
  docker?: Docker;
  /** Names this server in container labels; a restarted server removes what its predecessor left. */
  serverId?: string;
  limits?: Partial<DockerLimits>;
  /** Started containers kept ready per hot image. */
  poolSize?: number;
  /** How long a pooled container may wait unused before it is removed (default 10 min). */
  poolIdleMs?: number;
  /** Containers of ours alive at once (episodes, scorers, pool); more wait, then fail with CAPACITY. */
  maxContainers?: number;
  /** How long a request waits for a container slot before CAPACITY. */
  capacityWaitMs?: number;
  readOnlyRoot?: boolean;
  images?: ImageBuilderOptions;
  /**
   * 'auto' (default): one in-sandbox executor per container runs every command and file
   * operation over one attached exec; when it cannot be built (no Go toolchain) the backend
   * says so once and uses 'off'. 'off': one `docker exec` per operation. Default: 'off' when
   * $BENCHGYM_DOCKER_EXECUTOR is 'off', else 'auto'.
   */
  executor?: 'auto' | 'off';
  /**
   * The uid and gid commands, file operations and terminals run as in the container (default
   * nobody, or $BENCHGYM_SANDBOX_UID): PID 1 and the executor stay root, out of their reach.
   */
  sandboxUser?: SandboxUser;
}

/** The workspace volume, mounted as it is: no copy of the image's /workspace (owned by root) over its root. */
function workspaceMount(volume: string): Docker.MountSettings {
  return { Type: 'volume', Source: volume, Target: WORKDIR, VolumeOptions: { NoCopy: true } as Docker.MountSettings['VolumeOptions'] };
}

/** What every sandbox container (and its terminals' container) starts with in its environment. */
const CONTAINER_ENV = ['HOME=/tmp', 'LANG=C.UTF-8', 'LC_ALL=C.UTF-8', 'PYTHONDONTWRITEBYTECODE=1', 'PYTHONUNBUFFERED=1', 'TERM=dumb'];

/** One hardened container per episode: no network, bounded memory, CPU, pids, disk, output, time. */
export class DockerSandboxFactory implements SandboxFactory {
  readonly backend = 'docker' as const;
  readonly docker: Docker;
  readonly serverId: string;
  readonly instanceId = randomBytes(6).toString('hex');
  readonly limits: DockerLimits;
  readonly images: ImageBuilder;
  private readonly live = new Set<DockerSandbox>();
  private readonly pool: WarmPool;
  private readonly capacity: ContainerCapacity;
  private ready?: Promise<void>;
  private executorBinary?: Promise<string | null>;
  readonly user: SandboxUser;

  constructor(private readonly opts: DockerSandboxOptions = {}) {
    this.docker = opts.docker ?? dockerClient();
    this.user = opts.sandboxUser ?? sandboxUserFromEnv();
    this.serverId = opts.serverId ?? 'default';
    this.limits = { ...DEFAULT_DOCKER_LIMITS, ...opts.limits };
    this.images = new ImageBuilder(this.docker, opts.images);
    this.pool = new WarmPool(opts.poolSize ?? 0, (image) => this.startContainer(image, { 'benchgym.pool': 'true' }), (c) => this.removeContainer(c.container, c.volume, c.executor), opts.poolIdleMs);
    this.capacity = new ContainerCapacity(opts.maxContainers ?? 32, opts.capacityWaitMs ?? 30_000, this.pool);
  }

  get labels(): Record<string, string> {
    return { 'benchgym.server': this.serverId, 'benchgym.instance': this.instanceId, ...OWNER_LABELS };
  }

  /** Checks the daemon and removes everything an earlier instance of this server left. */
  init(): Promise<void> {
    this.ready ??= (async () => {
      await assertDockerReachable(this.docker);
      await reapStale(this.docker, this.serverId, this.instanceId);
    })();
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
    if (!image) throw new GymError('INTERNAL', 'a Docker sandbox needs an image: prepare() the task first');
    await this.capacity.acquire();
    try {
      // A task that needs more memory or pids than the pool's containers have gets a container of its own.
      const memory = Math.max(create.env?.memoryBytes ?? 0, this.limits.memoryBytes);
      const pids = Math.max(create.env?.pids ?? 0, this.limits.pids);
      const own = memory !== this.limits.memoryBytes || pids !== this.limits.pids;
      const started = (own ? undefined : this.pool.take(image)) ?? (await this.startContainer(image, create.labels ?? {}, memory, pids));
      const sandbox = this.wrap(started, image, create);
      // Only what the pool could hand out is refilled: a task of its own memory or pids never takes from it.
      if (!own) this.pool.refill(image);
      return sandbox;
    } catch (err) {
      this.capacity.release();
      throw err;
    }
  }

  /** The executor binary to mount, or null when the backend runs without one ('off', or it could not be built). */
  executorBinaryPath(): Promise<string | null> {
    // BENCHGYM_DOCKER_EXECUTOR=off: the whole server (or test run) on the exec-per-operation path.
    if ((this.opts.executor ?? (process.env.BENCHGYM_DOCKER_EXECUTOR === 'off' ? 'off' : 'auto')) === 'off') return Promise.resolve(null);
    // The binary is bind-mounted from this host: a daemon reached over TCP or SSH may not see it.
    if (!(this.docker.modem as { socketPath?: string }).socketPath) {
      this.executorBinary ??= Promise.resolve(null).then(() => {
        process.stderr.write('benchgym: the Docker backend runs without its in-sandbox executor (one docker exec per operation): the daemon is not on a local socket, so the host-built binary cannot be mounted\n');
        return null;
      });
      return this.executorBinary;
    }
    this.executorBinary ??= ensureExecutorBinary({ cacheDir: this.opts.images?.cacheDir ?? process.env.BENCHGYM_CACHE ?? path.join(os.tmpdir(), 'benchgym-cache') }).catch((err: unknown) => {
      process.stderr.write(`benchgym: the Docker backend runs without its in-sandbox executor (one docker exec per operation): ${(err as Error).message}\n`);
      return null;
    });
    return this.executorBinary;
  }

  private wrap(started: PooledContainer, image: string, create: SandboxCreateOptions): DockerSandbox {
    // People's terminals get a container of their own on the first pty(): see startTerminalContainer.
    let terminals: Promise<Docker.Container> | undefined;
    const sandbox: DockerSandbox = new DockerSandbox(started.container, started.volume, image, this.limits, create.env?.vars ?? {}, {
      destroy: async () => {
        this.live.delete(sandbox);
        this.capacity.release();
        const host = await terminals?.catch(() => undefined);
        await host?.remove({ force: true }).catch(() => {});
        return this.removeContainer(started.container, started.volume);
      },
      fork: (): Promise<Sandbox> => this.fork(sandbox, create),
      terminals: () => {
        terminals ??= this.startTerminalContainer(started, image, create).catch((err: unknown) => {
          terminals = undefined;
          throw err;
        });
        return terminals;
      },
    }, started.executor ?? null, this.user);
    this.live.add(sandbox);
    return sandbox;
  }

  /**
   * The container a sandbox's terminals run in: the same image and workspace volume, the
   * sandbox's loopback network, but a pid namespace, /dev/pts and /tmp of its own, so the
   * sandbox's commands can neither see, signal nor open a person's shell and terminal (the
   * shell runs as the commands' uid, editing the same files). Removed with the sandbox.
   */
  private async startTerminalContainer(of: PooledContainer, image: string, create: SandboxCreateOptions): Promise<Docker.Container> {
    const l = this.limits;
    const memory = Math.max(create.env?.memoryBytes ?? 0, l.memoryBytes);
    let container: Docker.Container;
    try {
      container = await this.docker.createContainer({
        Image: image,
        Cmd: ['sleep', 'infinity'],
        WorkingDir: WORKDIR,
        Env: CONTAINER_ENV,
        Labels: { ...this.labels, ...create.labels, 'benchgym.role': 'terminal', 'benchgym.terminal-of': of.container.id },
        HostConfig: {
          NetworkMode: `container:${of.container.id}`,
          Memory: memory,
          MemorySwap: memory,
          NanoCpus: l.nanoCpus,
          PidsLimit: Math.max(create.env?.pids ?? 0, l.pids),
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges'],
          Init: true,
          ReadonlyRootfs: this.opts.readOnlyRoot ?? true,
          Ulimits: [{ Name: 'nofile', Soft: l.openFiles, Hard: l.openFiles }],
          LogConfig: { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '1' } },
          Tmpfs: { '/tmp': `rw,exec,nosuid,size=${l.tmpBytes}` },
          Mounts: [workspaceMount(of.volume)],
        },
      });
    } catch (err) {
      throw dockerError(err, 'could not create the terminal container');
    }
    try {
      await container.start();
      return container;
    } catch (err) {
      await container.remove({ force: true }).catch(() => {});
      throw dockerError(err, 'could not start the terminal container');
    }
  }

  /**
   * A new container from the same instance image whose baseline is the same start state,
   * then the workspace copied across as a tar stream (container to container, never
   * unpacked on the host). The read-only root and tmpfs mounts hold nothing else to copy.
   */
  private async fork(from: DockerSandbox, create: SandboxCreateOptions): Promise<Sandbox> {
    const copy = (await this.create({ ...create, env: { ...create.env, image: from.image } })) as DockerSandbox;
    try {
      await copy.commitBaseline();
      // Both ends as the commands' uid: the copy's files are theirs, as the original's were.
      const user = `${this.user.uid}:${this.user.gid}`;
      const tar = await dockerExec(from.container, { cmd: ['tar', '-C', WORKDIR, '-cf', '-', '.'], rawStdout: true, maxOutputBytes: this.limits.workspaceBytes + 64 * 1024 ** 2, timeoutMs: 300_000, user });
      if (tar.exitCode !== 0 || tar.stdout.total > this.limits.workspaceBytes + 64 * 1024 ** 2) throw new GymError('SANDBOX_UNAVAILABLE', `could not copy the workspace: ${tar.stderr.text()}`);
      const put = await dockerExec(copy.container, { cmd: ['sh', '-c', `find ${WORKDIR} -mindepth 1 -delete && tar -C ${WORKDIR} -xf -`], stdin: tar.raw, maxOutputBytes: 64 * 1024, timeoutMs: 300_000, user });
      if (put.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not unpack the workspace copy: ${put.stderr.text()}`);
      return copy;
    } catch (err) {
      await copy.destroy();
      throw err;
    }
  }

  /** Creates and starts a container (and its tmpfs workspace volume) from an instance image. */
  async startContainer(image: string, labels: Record<string, string>, memoryBytes = this.limits.memoryBytes, pids = this.limits.pids): Promise<PooledContainer> {
    const l = this.limits;
    const binary = await this.executorBinaryPath();
    let executor: ExecutorClient | null = null;
    const volume = `benchgym-ws-${randomBytes(8).toString('hex')}`;
    try {
      // The workspace's root belongs to the commands' uid from the start (no copy of the image's /workspace over it).
      await this.docker.createVolume({
        Name: volume,
        Labels: { ...this.labels },
        DriverOpts: { type: 'tmpfs', device: 'tmpfs', o: `size=${l.workspaceBytes},uid=${this.user.uid},gid=${this.user.gid},mode=0755` },
      });
      const container = await this.docker.createContainer({
        Image: image,
        // Run by root under docker-init: the commands' uid can signal neither, so the container lives.
        Cmd: ['sleep', 'infinity'],
        WorkingDir: WORKDIR,
        Env: CONTAINER_ENV,
        Labels: { ...this.labels, ...labels },
        // A name that resolves to the sandbox itself, as a machine's own name does (glibc then
        // never asks DNS, which a sandbox without network cannot reach): `gethostbyaddr(gethostname())`.
        Hostname: SANDBOX_HOSTNAME,
        HostConfig: {
          ExtraHosts: [`${SANDBOX_HOSTNAME}:${SANDBOX_HOST_ADDRESS}`],
          // Its own network namespace with loopback only: nothing outside is reachable, and
          // Docker still writes /etc/hosts, so `localhost` resolves (NetworkDisabled would
          // leave it empty: tests that bind "localhost" failed).
          NetworkMode: 'none',
          Memory: memoryBytes,
          MemorySwap: memoryBytes,
          NanoCpus: l.nanoCpus,
          PidsLimit: pids,
          // The executor's two: it runs each command and file operation as the sandbox uid (executor.ts).
          CapDrop: ['ALL'],
          CapAdd: binary ? ['SETUID', 'SETGID'] : [],
          SecurityOpt: ['no-new-privileges'],
          Init: true,
          ReadonlyRootfs: this.opts.readOnlyRoot ?? true,
          Ulimits: [{ Name: 'nofile', Soft: l.openFiles, Hard: l.openFiles }],
          LogConfig: { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '1' } },
          Tmpfs: { '/tmp': `rw,exec,nosuid,size=${l.tmpBytes}` },
          Mounts: [workspaceMount(volume), ...(binary ? [executorMount(binary)] : [])],
        },
      });
      await container.start();
      const layout = `if [ -d ${START_STATE} ]; then cp -a ${START_STATE}/. ${WORKDIR}/; fi; rm -f ${WORKDIR}/.benchgym-keep`;
      if (binary) {
        // Not PID 1 (docker-init is, with sleep as its child): the executor reaps only what it started.
        executor = await startDockerExecutor(container, { root: WORKDIR, user: this.user });
        const seeded = await executor.exec(['sh', '-c', layout], { timeoutMs: 300_000, maxOutputBytes: 64 * 1024 });
        if (seeded.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not lay out the workspace: ${seeded.stderr}`);
      } else {
        const seeded = await dockerExec(container, { cmd: ['sh', '-c', layout], timeoutMs: 300_000, maxOutputBytes: 64 * 1024, user: `${this.user.uid}:${this.user.gid}` });
        if (seeded.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not lay out the workspace: ${seeded.stderr.text()}`);
      }
      return { container, volume, executor };
    } catch (err) {
      await executor?.close().catch(() => {});
      const created = await this.docker.listContainers({ all: true, filters: JSON.stringify({ volume: [volume] }) }).catch(() => []);
      await Promise.all(created.map((c) => this.docker.getContainer(c.Id).remove({ force: true }).catch(() => {})));
      await this.docker.getVolume(volume).remove().catch(() => {});
      throw dockerError(err, `could not start a container from ${image}`);
    }
  }

  /** Containers in use and ready in the pool (for health checks, tests and benchmarks). */
  stats(): { live: number; pooled: number; refilling: number; slotsInUse: number } {
    return { live: this.live.size, pooled: this.pool.size, refilling: this.pool.refilling, slotsInUse: this.capacity.slotsInUse };
  }

  /** Fills the pool for an image now (warm-up before a run). */
  warm(image: string): Promise<void> {
    return this.pool.warm(image);
  }

  async removeContainer(container: Docker.Container, volume: string, executor?: ExecutorClient | null): Promise<void> {
    await executor?.close().catch(() => {});
    await container.remove({ force: true, v: true }).catch(() => {});
    await this.docker.getVolume(volume).remove({ force: true }).catch(() => {});
  }

  async close(): Promise<void> {
    await Promise.all([...this.live].map((s) => s.destroy()));
    await this.pool.close();
  }
}
