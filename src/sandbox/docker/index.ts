import type Docker from 'dockerode';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { processAlive } from '../../env/lock.ts';
import { GymError } from '../../errors.ts';
import { ImageBuilder, START_STATE, type ImageBuilderOptions } from '../../env/images.ts';
import type { PreparedEnv } from '../../env/types.ts';
import type { Task } from '../../tasks/schema.ts';
import { PTY_PROMPT, type DirEntry, type ExecOptions, type ExecResult, type FileStat, type PtySession, type Sandbox, type SandboxCreateOptions, type SandboxFactory } from '../types.ts';
import { assertDockerReachable, dockerClient, dockerError } from './client.ts';
import { dockerExec, killLeftovers, killMarkedProcesses, trackMarker } from './exec.ts';
import { packTar } from './tar.ts';
import { readScript, specialFileError, SPECIAL_FILE_EXIT, WRITE_SCRIPT } from './files.ts';
import { applyPatchScript, isolatedGitShell, NEUTRAL_ATTRIBUTES } from '../git_isolation.ts';
import { WarmPool } from './pool.ts';
import { DEFAULT_MAX_DIFF_BYTES, diffTooLarge } from '../diff_limit.ts';

export const WORKDIR = '/workspace';
const STATE_DIR = '/tmp/.benchgym';
const BASELINE = `${STATE_DIR}/baseline.git`;
const BASELINE_EXCLUDES = ['__pycache__/', '*.pyc', '.pytest_cache/', 'target/', '.gradle/', '*.class', '.benchgym-*'];

export interface DockerLimits {
  memoryBytes: number;
  nanoCpus: number;
  pids: number;
  openFiles: number;
  /** Size of the tmpfs workspace volume and of /tmp: a full disk stays inside the sandbox. */
  workspaceBytes: number;
  tmpBytes: number;
  defaultTimeoutMs: number;
  maxOutputBytes: number;
  /** The largest diff() returns; a bigger one is DIFF_TOO_LARGE. */
  maxDiffBytes: number;
}

export const DEFAULT_DOCKER_LIMITS: DockerLimits = {
  memoryBytes: 2 * 1024 ** 3,
  nanoCpus: 1e9,
  pids: 512,
  openFiles: 4096,
  workspaceBytes: 1024 ** 3,
  tmpBytes: 512 * 1024 ** 2,
  defaultTimeoutMs: 120_000,
  maxOutputBytes: 256 * 1024,
  maxDiffBytes: DEFAULT_MAX_DIFF_BYTES,
};

export interface DockerSandboxOptions {
  docker?: Docker;
  /** Names this server in container labels; a restarted server removes what its predecessor left. */
  serverId?: string;
  limits?: Partial<DockerLimits>;
  /** Started containers kept ready per hot image. */
  poolSize?: number;
  /** Containers of ours alive at once (episodes, scorers, pool); more wait, then fail with CAPACITY. */
  maxContainers?: number;
  /** How long a request waits for a container slot before CAPACITY. */
  capacityWaitMs?: number;
  readOnlyRoot?: boolean;
  images?: ImageBuilderOptions;
}

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
  private ready?: Promise<void>;
  private slotsInUse = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly opts: DockerSandboxOptions = {}) {
    this.docker = opts.docker ?? dockerClient();
    this.serverId = opts.serverId ?? 'default';
    this.limits = { ...DEFAULT_DOCKER_LIMITS, ...opts.limits };
    this.images = new ImageBuilder(this.docker, opts.images);
    this.pool = new WarmPool(opts.poolSize ?? 0, (image) => this.startContainer(image, { 'benchgym.pool': 'true' }), (c) => this.removeContainer(c.container, c.volume));
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
    await this.acquireSlot();
    try {
      // A task that needs more memory than the pool's containers have gets a container of its own.
      const memory = Math.max(create.env?.memoryBytes ?? 0, this.limits.memoryBytes);
      const started = (memory === this.limits.memoryBytes ? this.pool.take(image) : undefined) ?? (await this.startContainer(image, create.labels ?? {}, memory));
      const sandbox = this.wrap(started, image, create);
      this.pool.refill(image);
      return sandbox;
    } catch (err) {
      this.releaseSlot();
      throw err;
    }
  }

  private wrap(started: { container: Docker.Container; volume: string }, image: string, create: SandboxCreateOptions): DockerSandbox {
    const sandbox: DockerSandbox = new DockerSandbox(started.container, started.volume, image, this.limits, create.env?.vars ?? {}, {
      destroy: () => {
        this.live.delete(sandbox);
        this.releaseSlot();
        return this.removeContainer(started.container, started.volume);
      },
      fork: (): Promise<Sandbox> => this.fork(sandbox, create),
    });
    this.live.add(sandbox);
    return sandbox;
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
      const tar = await dockerExec(from.container, { cmd: ['tar', '-C', WORKDIR, '-cf', '-', '.'], rawStdout: true, maxOutputBytes: this.limits.workspaceBytes + 64 * 1024 ** 2, timeoutMs: 300_000 });
      if (tar.exitCode !== 0 || tar.stdout.total > this.limits.workspaceBytes + 64 * 1024 ** 2) throw new GymError('SANDBOX_UNAVAILABLE', `could not copy the workspace: ${tar.stderr.text()}`);
      const put = await dockerExec(copy.container, { cmd: ['sh', '-c', `find ${WORKDIR} -mindepth 1 -delete && tar -C ${WORKDIR} -xf -`], stdin: tar.raw, maxOutputBytes: 64 * 1024, timeoutMs: 300_000 });
      if (put.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not unpack the workspace copy: ${put.stderr.text()}`);
      return copy;
    } catch (err) {
      await copy.destroy();
      throw err;
    }
  }

  private async acquireSlot(): Promise<void> {
    const max = this.opts.maxContainers ?? 32;
    const deadline = Date.now() + (this.opts.capacityWaitMs ?? 30_000);
    while (this.slotsInUse + this.pool.size >= max) {
      if (this.pool.size > 0) {
        await this.pool.evictOne();
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new GymError('CAPACITY', `all ${max} containers this server may run are in use; try again later`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    this.slotsInUse++;
  }

  private releaseSlot(): void {
    this.slotsInUse = Math.max(0, this.slotsInUse - 1);
    this.waiters.shift()?.();
  }

  /** Creates and starts a container (and its tmpfs workspace volume) from an instance image. */
  async startContainer(image: string, labels: Record<string, string>, memoryBytes = this.limits.memoryBytes): Promise<{ container: Docker.Container; volume: string }> {
    const l = this.limits;
    const volume = `benchgym-ws-${randomBytes(8).toString('hex')}`;
    try {
      await this.docker.createVolume({
        Name: volume,
        Labels: { ...this.labels },
        DriverOpts: { type: 'tmpfs', device: 'tmpfs', o: `size=${l.workspaceBytes}` },
      });
      const container = await this.docker.createContainer({
        Image: image,
        Cmd: ['sleep', 'infinity'],
        WorkingDir: WORKDIR,
        Env: ['HOME=/tmp', 'LANG=C.UTF-8', 'LC_ALL=C.UTF-8', 'PYTHONDONTWRITEBYTECODE=1', 'PYTHONUNBUFFERED=1', 'TERM=dumb'],
        Labels: { ...this.labels, ...labels },
        HostConfig: {
          // Its own network namespace with loopback only: nothing outside is reachable, and
          // Docker still writes /etc/hosts, so `localhost` resolves (NetworkDisabled would
          // leave it empty: tests that bind "localhost" failed).
          NetworkMode: 'none',
          Memory: memoryBytes,
          MemorySwap: memoryBytes,
          NanoCpus: l.nanoCpus,
          PidsLimit: l.pids,
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges'],
          Init: true,
          ReadonlyRootfs: this.opts.readOnlyRoot ?? true,
          Ulimits: [{ Name: 'nofile', Soft: l.openFiles, Hard: l.openFiles }],
          LogConfig: { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '1' } },
          Tmpfs: { '/tmp': `rw,exec,nosuid,size=${l.tmpBytes}` },
          Mounts: [{ Type: 'volume', Source: volume, Target: WORKDIR }],
        },
      });
      await container.start();
      const seeded = await dockerExec(container, { cmd: ['sh', '-c', `if [ -d ${START_STATE} ]; then cp -a ${START_STATE}/. ${WORKDIR}/; fi; rm -f ${WORKDIR}/.benchgym-keep`], timeoutMs: 300_000, maxOutputBytes: 64 * 1024 });
      if (seeded.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not lay out the workspace: ${seeded.stderr.text()}`);
      return { container, volume };
    } catch (err) {
      const created = await this.docker.listContainers({ all: true, filters: JSON.stringify({ volume: [volume] }) }).catch(() => []);
      await Promise.all(created.map((c) => this.docker.getContainer(c.Id).remove({ force: true }).catch(() => {})));
      await this.docker.getVolume(volume).remove().catch(() => {});
      throw dockerError(err, `could not start a container from ${image}`);
    }
  }

  /** Containers in use and ready in the pool (for health checks, tests and benchmarks). */
  stats(): { live: number; pooled: number; slotsInUse: number } {
    return { live: this.live.size, pooled: this.pool.size, slotsInUse: this.slotsInUse };
  }

  /** Fills the pool for an image now (warm-up before a run). */
  warm(image: string): Promise<void> {
    return this.pool.warm(image);
  }

  async removeContainer(container: Docker.Container, volume: string): Promise<void> {
    await container.remove({ force: true, v: true }).catch(() => {});
    await this.docker.getVolume(volume).remove({ force: true }).catch(() => {});
  }

  async close(): Promise<void> {
    await Promise.all([...this.live].map((s) => s.destroy()));
    await this.pool.close();
  }
}

/** Who made a container: this host and process (its start time guards against pid reuse). */
const OWNER_LABELS: Record<string, string> = { 'benchgym.host': os.hostname(), 'benchgym.pid': String(process.pid), 'benchgym.started': processStart(process.pid) ?? '' };

/** A process's start time in clock ticks since boot (/proc/PID/stat, field 22), or null. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Is the process that labelled this object still running here? Two servers (or a server and
 * a `benchgym validate`) that share a server id must not reap each other's live episodes.
 * Objects from another host, or from before owners were labelled, count as not alive.
 */
function ownerAlive(labels: Record<string, string> | undefined): boolean {
  const pid = Number(labels?.['benchgym.pid']);
  if (!labels || labels['benchgym.host'] !== os.hostname() || !pid || !processAlive(pid)) return false;
  return !labels['benchgym.started'] || processStart(pid) === labels['benchgym.started'];
}

/**
 * Removes every container and volume labelled by an earlier instance of this server, in any
 * state, unless the process that made it is still running on this host.
 */
export async function reapStale(docker: Docker, serverId: string, keepInstance?: string): Promise<{ containers: number; volumes: number }> {
  const filters = JSON.stringify({ label: [`benchgym.server=${serverId}`] });
  const stale = (labels: Record<string, string> | undefined) => labels?.['benchgym.instance'] !== keepInstance && !ownerAlive(labels);
  const containers = (await docker.listContainers({ all: true, filters })).filter((c) => stale(c.Labels));
  await Promise.all(containers.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => {})));
  const { Volumes } = await docker.listVolumes({ filters });
  const volumes = (Volumes ?? []).filter((v) => stale(v.Labels ?? undefined));
  await Promise.all(volumes.map((v) => docker.getVolume(v.Name).remove({ force: true }).catch(() => {})));
  return { containers: containers.length, volumes: volumes.length };
}

function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Resolves a client path inside the container (symlinks too) or fails with exit 90. */
const RESOLVE = `p=$(realpath -m -- "$1") || exit 91; case "$p" in ${WORKDIR}|${WORKDIR}/*) ;; *) echo "outside" >&2; exit 90;; esac`;

export class DockerSandbox implements Sandbox {
  readonly backend = 'docker' as const;
  readonly workdir = WORKDIR;
  readonly isolation = 'docker: no network, read-only root, capped memory / CPU / pids, all capabilities dropped';
  readonly id: string;
  private destroyed = false;
  private destroying?: Promise<void>;

  constructor(
    readonly container: Docker.Container,
    readonly volume: string,
    readonly image: string,
    private readonly limits: DockerLimits,
    private readonly vars: Record<string, string>,
    private readonly hooks: { destroy: () => Promise<void>; fork: () => Promise<Sandbox> },
  ) {
    this.id = container.id.slice(0, 12);
  }

  private env(extra?: Record<string, string>): string[] {
    return Object.entries({ ...this.vars, ...extra }).map(([k, v]) => `${k}=${v}`);
  }

  /** After a failed exec: is the container gone? Then the episode's sandbox is, too. */
  private async assertAlive(): Promise<void> {
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    let state: { Running?: boolean; OOMKilled?: boolean; ExitCode?: number; Status?: string } | undefined;
    try {
      state = (await this.container.inspect()).State;
    } catch {
      throw new GymError('SANDBOX_UNAVAILABLE', `the sandbox container ${this.id} no longer exists`, { sandboxLost: true });
    }
    if (!state?.Running) {
      const why = state?.OOMKilled ? 'it was killed for running out of memory (OOM)' : `it is ${state?.Status ?? 'not running'} (exit code ${state?.ExitCode})`;
      throw new GymError('SANDBOX_UNAVAILABLE', `the sandbox container ${this.id} stopped: ${why}`, { oomKilled: Boolean(state?.OOMKilled), sandboxLost: true });
    }
  }

  private async run(cmd: string[], opts: { stdin?: Buffer | string; timeoutMs?: number; raw?: boolean; maxBytes?: number; workdir?: string } = {}) {
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    try {
      const r = await dockerExec(this.container, { cmd, env: this.env(), stdin: opts.stdin, timeoutMs: opts.timeoutMs ?? 60_000, maxOutputBytes: opts.maxBytes ?? 16 * 1024 * 1024, rawStdout: opts.raw, workdir: opts.workdir ?? WORKDIR });
      if (r.exitCode === null || r.exitCode === 137 || r.exitCode === 126) await this.assertAlive();
      return r;
    } catch (err) {
      if (err instanceof GymError && err.code !== 'SANDBOX_UNAVAILABLE') throw err;
      await this.assertAlive();
      throw err;
    }
  }

  /** Runs a file-operation script with the resolved path as $p; maps exit 90 to PATH_OUTSIDE_WORKSPACE. */
  private async fileOp(rel: string, script: string, opts: { stdin?: Buffer | string; raw?: boolean; maxBytes?: number } = {}) {
    const candidate = rel.trim() === '' ? '.' : rel;
    const lexical = path.posix.resolve(WORKDIR, candidate);
    if (lexical !== WORKDIR && !lexical.startsWith(WORKDIR + '/')) {
      throw new GymError('PATH_OUTSIDE_WORKSPACE', `'${rel}' is outside the workspace; use a path relative to the workspace root`);
    }
    const r = await this.run(['bash', '-c', `${RESOLVE}\n${script}`, 'benchgym', lexical], opts);
    if (r.exitCode === 90) throw new GymError('PATH_OUTSIDE_WORKSPACE', `'${rel}' leads outside the workspace through a symbolic link`);
    return r;
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    let workdir = WORKDIR;
    if (opts.cwd) {
      const r = await this.fileOp(opts.cwd, 'test -d "$p" || exit 92; printf %s "$p"');
      if (r.exitCode === 92) throw new GymError('NOT_A_DIRECTORY', `'${opts.cwd}' is not a directory`);
      workdir = r.stdout.text();
    }
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    let r;
    try {
      r = await dockerExec(this.container, {
        cmd: ['bash', '-c', command],
        env: this.env(opts.env),
        workdir,
        stdin: opts.stdin,
        timeoutMs: opts.timeoutMs ?? this.limits.defaultTimeoutMs,
        maxOutputBytes: opts.maxOutputBytes ?? this.limits.maxOutputBytes,
        signal: opts.signal,
        onOutput: opts.onOutput,
        reapLeftovers: true,
      });
    } catch (err) {
      await this.assertAlive();
      throw err;
    }
    if (r.cancelled) throw new GymError('CANCELLED', 'the command was cancelled');
    if (r.exitCode === null || (r.exitCode === 137 && !r.timedOut)) await this.assertAlive();
    return {
      exitCode: r.exitCode,
      signal: null,
      stdout: r.stdout.text(),
      stderr: r.stderr.text(),
      timedOut: r.timedOut,
      truncated: { stdout: r.stdout.dropped, stderr: r.stderr.dropped },
      totalBytes: { stdout: r.stdout.total, stderr: r.stderr.total },
      durationMs: r.durationMs,
    };
  }

  async readFile(rel: string): Promise<Buffer> {
    const r = await this.fileOp(rel, readScript(256 * 1024 * 1024), { raw: true, maxBytes: 256 * 1024 * 1024 });
    if (r.exitCode === 93) throw new GymError('FILE_NOT_FOUND', `no such file: '${rel}'`);
    if (r.exitCode === 94) throw new GymError('NOT_A_FILE', `'${rel}' is a directory`);
    if (r.exitCode === SPECIAL_FILE_EXIT) throw specialFileError(rel, r.stderr.text());
    if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `reading '${rel}' failed: ${r.stderr.text()}`);
    return r.raw ?? Buffer.alloc(0);
  }

  async writeFile(rel: string, data: string | Buffer): Promise<void> {
    const r = await this.fileOp(rel, WRITE_SCRIPT, { stdin: data });
    if (r.exitCode === 94) throw new GymError('NOT_A_FILE', `'${rel}' is a directory`);
    if (r.exitCode === SPECIAL_FILE_EXIT) throw specialFileError(rel, r.stderr.text());
    if (r.exitCode === 96) throw new GymError('NOT_A_DIRECTORY', `a parent of '${rel}' is not a directory`);
    if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `writing '${rel}' failed: ${r.stderr.text()}`);
  }

  async remove(rel: string): Promise<void> {
    const r = await this.fileOp(rel, `test "$p" = ${WORKDIR} && exit 95; rm -rf -- "$p"`);
    if (r.exitCode === 95) throw new GymError('INVALID_ARGUMENT', 'refusing to remove the workspace root');
  }

  async stat(rel: string): Promise<FileStat | null> {
    const r = await this.fileOp(rel, 'stat -c "%F\t%s" -- "$p" 2>/dev/null || exit 93');
    if (r.exitCode === 93) return null;
    const [kind, size] = r.stdout.text().trim().split('\t');
    const type = kind === 'regular file' || kind === 'regular empty file' ? 'file' : kind === 'directory' ? 'dir' : kind === 'symbolic link' ? 'symlink' : 'other';
    return { type, size: Number(size) || 0 };
  }

  async list(rel: string, opts: { depth?: number; limit?: number } = {}): Promise<{ entries: DirEntry[]; truncated: boolean }> {
    const depth = opts.depth ?? 1;
    const limit = opts.limit ?? 1000;
    const r = await this.fileOp(
      rel,
      `test -e "$p" || exit 93; test -d "$p" || exit 92; find "$p" -mindepth 1 -maxdepth ${depth} \\( -name .git -o -name __pycache__ \\) -prune -o -printf '%d\\t%y\\t%s\\t%P\\n' | head -n ${limit + 1}`,
    );
    if (r.exitCode === 93) throw new GymError('FILE_NOT_FOUND', `no such file: '${rel}'`);
    if (r.exitCode === 92) throw new GymError('NOT_A_DIRECTORY', `'${rel}' is not a directory`);
    const prefix = path.posix.relative(WORKDIR, path.posix.resolve(WORKDIR, rel));
    const rows = r.stdout.text().split('\n').filter(Boolean).map((line) => {
      const [d, y, s, p] = line.split('\t');
      const type: DirEntry['type'] = y === 'f' ? 'file' : y === 'd' ? 'dir' : y === 'l' ? 'symlink' : 'other';
      return { depth: Number(d), entry: { path: prefix ? `${prefix}/${p}` : p!, type, size: type === 'file' ? Number(s) : 0 } };
    });
    rows.sort((a, b) => a.depth - b.depth || a.entry.path.localeCompare(b.entry.path));
    const truncated = rows.length > limit;
    return { entries: rows.slice(0, limit).map((x) => x.entry), truncated };
  }

  /** git over the workspace with the host's isolation: the agent's HOME (/tmp) and .gitattributes cannot change the diff. */
  private git(args: string): string {
    return `${isolatedGitShell()} -c user.name=benchgym -c user.email=benchgym@localhost --git-dir=${BASELINE} --work-tree=${WORKDIR} ${args}`;
  }

  async commitBaseline(): Promise<void> {
    const script = [
      `mkdir -p ${STATE_DIR}`,
      `${isolatedGitShell()} init -q --bare ${BASELINE} >/dev/null`,
      `printf '%s\\n' ${BASELINE_EXCLUDES.map(shq).join(' ')} > ${BASELINE}/info/exclude`,
      `printf '%s' ${shq(NEUTRAL_ATTRIBUTES)} > ${BASELINE}/info/attributes`,
      this.git('add -A .'),
      this.git("commit -q --allow-empty --no-verify -m 'start state'"),
    ].join(' && ');
    const r = await this.run(['bash', '-c', script], { timeoutMs: 300_000 });
    if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not record the start state: ${r.stderr.text()}`);
  }

  async diff(): Promise<string> {
    const diff = this.git('diff --cached --binary --no-color --no-ext-diff --no-textconv HEAD');
    const max = this.limits.maxDiffBytes;
    // Counted in the container first: only a diff within the limit crosses into server memory.
    const script = `set -o pipefail; ${this.git('add -A .')} && n=$(${diff} | wc -c) || exit 1; if [ "$n" -gt ${max} ]; then echo "$n" >&2; exit 97; fi; ${diff}`;
    const r = await this.run(['bash', '-c', script], { raw: true, maxBytes: max + 1024 * 1024, timeoutMs: 300_000 });
    if (r.exitCode === 97) throw diffTooLarge(Number(r.stderr.text().trim()) || max + 1, max);
    if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `git diff failed: ${r.stderr.text()}`);
    return (r.raw ?? Buffer.alloc(0)).toString('utf8');
  }

  async applyPatch(patch: string): Promise<{ ok: boolean; method?: string; log: string }> {
    if (!patch.trim()) return { ok: true, method: 'empty', log: '' };
    const file = `${STATE_DIR}/patch-${randomBytes(4).toString('hex')}.diff`;
    const script = [`mkdir -p ${STATE_DIR} && cat > ${file}`, applyPatchScript(file)].join('\n');
    const r = await this.run(['bash', '-c', script], { stdin: patch.endsWith('\n') ? patch : patch + '\n', timeoutMs: 300_000 });
    const log = r.stdout.text();
    const method = /@@method (.+)/.exec(log)?.[1];
    return { ok: r.exitCode === 0 && Boolean(method), method, log };
  }

  /** Copies the workspace out as a tar stream (for snapshots); entries are checked by unpackTar. */
  /** A TTY exec: raw bytes both ways (no multiplexing with a TTY), resized through the API. */
  async pty(opts: { cols: number; rows: number; env?: Record<string, string> }): Promise<PtySession> {
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    const marker = randomBytes(6).toString('hex');
    // While it is open, its processes are no command's leftovers (see killLeftovers).
    const untrack = trackMarker(this.container.id, marker);
    let exec: Docker.Exec;
    let stream: NodeJS.ReadWriteStream;
    try {
      exec = await this.container.exec({
        Cmd: ['bash', '--norc', '-i'],
        Env: this.env({ TERM: 'xterm-256color', PS1: PTY_PROMPT, ...opts.env, BENCHGYM_EXEC: marker }),
        WorkingDir: WORKDIR,
        Tty: true,
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
      });
      stream = (await exec.start({ hijack: true, stdin: true, Tty: true })) as unknown as NodeJS.ReadWriteStream;
      await exec.resize({ h: opts.rows, w: opts.cols }).catch(() => {});
    } catch (err) {
      untrack();
      await this.assertAlive();
      throw dockerError(err, 'could not open a terminal in the sandbox');
    }
    const exitListeners: ((code: number | null) => void)[] = [];
    let exited = false;
    const onEnd = async () => {
      if (exited) return;
      exited = true;
      untrack();
      // What the shell left in the background (its jobs, reparented to init) goes with it.
      await killMarkedProcesses(this.container, marker);
      await killLeftovers(this.container);
      const info = await exec.inspect().catch(() => null);
      for (const l of exitListeners) l(info?.ExitCode ?? null);
    };
    stream.on('end', onEnd);
    stream.on('close', onEnd);
    return {
      write: (data) => void stream.write(data),
      resize: async (cols, rows) => {
        await exec.resize({ h: rows, w: cols });
      },
      onData: (listener) => void stream.on('data', listener),
      onExit: (listener) => void exitListeners.push(listener),
      pause: () => void stream.pause(),
      resume: () => void stream.resume(),
      kill: async () => {
        await killMarkedProcesses(this.container, marker);
        (stream as unknown as { destroy(): void }).destroy();
      },
    };
  }

  fork(): Promise<Sandbox> {
    if (this.destroyed) return Promise.reject(new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`));
    return this.hooks.fork();
  }

  async archiveWorkspace(): Promise<NodeJS.ReadableStream> {
    return this.container.getArchive({ path: `${WORKDIR}/.` });
  }

  async putFiles(files: Record<string, string | Buffer>): Promise<void> {
    await this.container.putArchive(packTar(files), { path: WORKDIR });
  }

  destroy(): Promise<void> {
    if (!this.destroying) {
      this.destroyed = true;
      this.destroying = this.hooks.destroy();
    }
    return this.destroying;
  }
}
