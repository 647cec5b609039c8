import type Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { GymError } from '../../errors.ts';
import type { SandboxCreateOptions } from '../types.ts';
import type { ExecutorClient } from '../executor/client.ts';
import { ContainerSandboxFactory, type ContainerFactoryOptions } from '../container/factory.ts';
import { OWNER_LABELS } from '../container/labels.ts';
import { DEFAULT_CONTAINER_LIMITS, type ContainerLimits } from '../container/limits.ts';
import type { Pooled } from '../container/pool.ts';
import { LAYOUT, WORKDIR } from '../container/workspace.ts';
import { assertDockerReachable, dockerError } from './client.ts';
import { SANDBOX_HOST_ADDRESS } from '../host_name.ts';
import { executorMount, startDockerExecutor } from './executor.ts';
import { reapStale } from './reaper.ts';
import { DockerTransport, SANDBOX_HOSTNAME } from './transport.ts';

export interface DockerSandboxOptions extends ContainerFactoryOptions {
  limits?: Partial<ContainerLimits>;
  /** Containers of ours alive at once (episodes, scorers, pool); more wait, then fail with CAPACITY. */
  maxContainers?: number;
  readOnlyRoot?: boolean;
}

/** A started container: in the warm pool, or an episode's. */
export interface StartedContainer extends Pooled {
  container: Docker.Container;
  volume: string;
}

/** The workspace volume, mounted as it is: no copy of the image's /workspace (owned by root) over its root. */
function workspaceMount(volume: string): Docker.MountSettings {
  return { Type: 'volume', Source: volume, Target: WORKDIR, VolumeOptions: { NoCopy: true } as Docker.MountSettings['VolumeOptions'] };
}

/** What every sandbox container (and its terminals' container) starts with in its environment. */
const CONTAINER_ENV = ['HOME=/tmp', 'LANG=C.UTF-8', 'LC_ALL=C.UTF-8', 'PYTHONDONTWRITEBYTECODE=1', 'PYTHONUNBUFFERED=1', 'TERM=dumb'];

/** One hardened container per episode: no network, bounded memory, CPU, pids, disk, output, time. */
export class DockerSandboxFactory extends ContainerSandboxFactory<StartedContainer, DockerTransport, ContainerLimits> {
  readonly backend = 'docker' as const;

  constructor(private readonly opts: DockerSandboxOptions = {}) {
    super(opts, { title: 'Docker', limits: { ...DEFAULT_CONTAINER_LIMITS, ...opts.limits }, maxSandboxes: opts.maxContainers });
  }

  /** One line for `benchgym serve`'s banner: the executor, the network, the limits. */
  async describe(): Promise<string> {
    const l = this.limits;
    const gib = (bytes: number) => `${+(bytes / 1024 ** 3).toFixed(1)} GiB`;
    // 'missing': no sandbox can start (the first one's error says how to get an executor).
    const executor = await this.executorBinaryPath().then(
      () => 'on',
      () => 'missing',
    );
    return (
      `isolation: docker (one hardened container per episode; bubblewrap n/a), executor ${executor}, network none, ` +
      `limits: memory ${gib(l.memoryBytes)}, ${l.nanoCpus / 1e9} CPU, ${l.pids} pids, workspace ${gib(l.workspaceBytes)}, ` +
      `command timeout ${l.defaultTimeoutMs / 1000} s, output ${Math.round(l.maxOutputBytes / 1024)} KiB`
    );
  }

  get labels(): Record<string, string> {
    return { 'benchgym.server': this.serverId, 'benchgym.instance': this.instanceId, ...OWNER_LABELS };
  }

  /** Checks the daemon and removes everything an earlier instance of this server left. */
  protected async setUp(): Promise<void> {
    await assertDockerReachable(this.docker);
    await reapStale(this.docker, this.serverId, this.instanceId);
  }

  /** The binary is bind-mounted from this host: a daemon reached over TCP or SSH may not see it. */
  protected executorUnreachable(): string | null {
    if ((this.docker.modem as { socketPath?: string }).socketPath) return null;
    return 'the daemon is not on a local socket, so the host-built binary cannot be mounted';
  }

  protected transportOf(started: StartedContainer, image: string, create: SandboxCreateOptions): DockerTransport {
    return new DockerTransport(started.container, started.volume, this.user, () => this.startTerminalContainer(started, image, create));
  }

  protected start(image: string, labels: Record<string, string>, memoryBytes?: number, pids?: number): Promise<StartedContainer> {
    return this.startContainer(image, labels, memoryBytes, pids);
  }

  protected remove(started: StartedContainer): Promise<void> {
    return this.removeContainer(started.container, started.volume, started.executor);
  }

  /**
   * The container a sandbox's terminals run in: the same image and workspace volume, the
   * sandbox's loopback network, but a pid namespace, /dev/pts and /tmp of its own, so the
   * sandbox's commands can neither see, signal nor open a person's shell and terminal (the
   * shell runs as the commands' uid, editing the same files). Removed with the sandbox.
   */
  private async startTerminalContainer(of: StartedContainer, image: string, create: SandboxCreateOptions): Promise<Docker.Container> {
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

  /** Creates and starts a container (and its tmpfs workspace volume) from an instance image. */
  async startContainer(
    image: string,
    labels: Record<string, string>,
    memoryBytes = this.limits.memoryBytes,
    pids = this.limits.pids,
  ): Promise<StartedContainer> {
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
          CapAdd: ['SETUID', 'SETGID'],
          SecurityOpt: ['no-new-privileges'],
          Init: true,
          ReadonlyRootfs: this.opts.readOnlyRoot ?? true,
          Ulimits: [{ Name: 'nofile', Soft: l.openFiles, Hard: l.openFiles }],
          LogConfig: { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '1' } },
          Tmpfs: { '/tmp': `rw,exec,nosuid,size=${l.tmpBytes}` },
          Mounts: [workspaceMount(volume), executorMount(binary)],
        },
      });
      await container.start();
      // Not PID 1 (docker-init is, with sleep as its child): the executor reaps only what it started.
      executor = await startDockerExecutor(container, { root: WORKDIR, user: this.user });
      const seeded = await executor.exec(['sh', '-c', LAYOUT], { timeoutMs: 300_000, maxOutputBytes: 64 * 1024 });
      if (seeded.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not lay out the workspace: ${seeded.stderr}`);
      return { container, volume, executor };
    } catch (err) {
      await executor?.close().catch(() => {});
      const created = await this.docker.listContainers({ all: true, filters: JSON.stringify({ volume: [volume] }) }).catch(() => []);
      await Promise.all(
        created.map((c) =>
          this.docker
            .getContainer(c.Id)
            .remove({ force: true })
            .catch(() => {}),
        ),
      );
      await this.docker
        .getVolume(volume)
        .remove()
        .catch(() => {});
      throw dockerError(err, `could not start a container from ${image}`);
    }
  }

  async removeContainer(container: Docker.Container, volume: string, executor?: ExecutorClient): Promise<void> {
    await executor?.close().catch(() => {});
    await container.remove({ force: true, v: true }).catch(() => {});
    await this.docker
      .getVolume(volume)
      .remove({ force: true })
      .catch(() => {});
  }
}
