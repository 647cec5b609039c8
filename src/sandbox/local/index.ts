import { spawn, execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { StringDecoder } from 'node:string_decoder';
import { spawn as spawnPty, type IPty } from 'node-pty';
import { GymError } from '../../errors.ts';
import { diskUsage, formatBytes, watchDisk } from './disk_guard.ts';
import { CappedOutput } from '../output.ts';
import { killByEnvMarker, killGroup, killGroupIfMarked } from '../processes.ts';
import { WorkspaceFiles } from './files.ts';
import { DEFAULT_MAX_DIFF_BYTES, diffTooLarge } from '../diff_limit.ts';
import { CgroupDriver, type Cgroup, type CgroupMode } from './cgroup.ts';
import { applyPatchScript, isolatedGitEnv, ISOLATED_GIT_FLAGS, NEUTRAL_ATTRIBUTES } from '../git_isolation.ts';
import { EnvBuilder } from '../../env/index.ts';
import type { PreparedEnv } from '../../env/types.ts';
import type { Task } from '../../tasks/schema.ts';
import { PTY_PROMPT, type DirEntry, type ExecOptions, type ExecResult, type FileStat, type PtySession, type Sandbox, type SandboxCreateOptions, type SandboxFactory } from '../types.ts';

const execFileP = promisify(execFile);

export interface LocalSandboxOptions {
  /** Where episode directories are made. */
  baseDir: string;
  /** 'auto' uses bubblewrap when it is installed and works. */
  isolation?: 'auto' | 'bwrap' | 'none';
  /** Host paths hidden from commands under bubblewrap (suites, datasets, other episodes). */
  privatePaths?: string[];
  limits?: Partial<LocalLimits>;
  /** Where venvs and the Maven repository are cached (needed by prepare()). */
  cacheDir?: string;
  /** Per-sandbox cgroups for pids and memory and for finding every process ('auto': v2, else v1, else none). */
  cgroups?: CgroupMode;
  /** The unprivileged uid/gid commands run as under bubblewrap when the server is root (default nobody). */
  sandboxUser?: { uid: number; gid: number };
}

export interface LocalLimits {
  cpuSeconds: number;
  fileSizeBytes: number;
  processes: number;
  openFiles: number;
  defaultTimeoutMs: number;
  maxOutputBytes: number;
  /** Between SIGTERM and SIGKILL at a timeout. */
  killGraceMs: number;
  /** The largest diff() returns; a bigger one is DIFF_TOO_LARGE. */
  maxDiffBytes: number;
  /** Processes and threads of one sandbox at once (cgroup pids.max; RLIMIT_NPROC is per uid, not per sandbox). */
  pids: number;
  /** Memory of one sandbox (cgroup), unless its task asks for more. */
  memoryBytes: number;
  /** Size of the private /tmp under bubblewrap (a tmpfs, charged to the sandbox's memory). */
  tmpBytes: number;
  /** Bytes the workspace and home may hold; a command that grows them past it is stopped (disk_guard.ts). */
  diskBytes: number;
  /** How often a running command's disk use is measured. */
  diskCheckMs: number;
}

const DEFAULT_LIMITS: LocalLimits = {
  cpuSeconds: 900,
  fileSizeBytes: 1 << 30,
  processes: 4096,
  openFiles: 4096,
  defaultTimeoutMs: 120_000,
  maxOutputBytes: 256 * 1024,
  killGraceMs: 1000,
  maxDiffBytes: DEFAULT_MAX_DIFF_BYTES,
  pids: 1024,
  memoryBytes: 2 * 1024 ** 3,
  tmpBytes: 512 * 1024 ** 2,
  diskBytes: 4 * 1024 ** 3,
  diskCheckMs: 1000,
};

/** What confines one sandbox's commands besides bubblewrap: its cgroup and the uid they run as. */
export interface Confinement {
  cgroup?: Cgroup;
  /** Set when the server is root: commands drop to this uid inside bubblewrap, the workspace is theirs. */
  user?: { uid: number; gid: number };
  /** The cgroup bounds its pids (then RLIMIT_NPROC, shared by every process of the uid, is not set). */
  pidsBounded?: boolean;
  /** The sentence for Sandbox.isolation on processes and limits. */
  describe: string;
}

/** Writes the shell's pid to each cgroup.procs given before `--`, then execs the rest. */
const JOIN_CGROUP = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
/** Build and cache output that never belongs in a diff. */
const BASELINE_EXCLUDES = ['__pycache__/', '*.pyc', '.pytest_cache/', 'target/', '.gradle/', '*.class', '.benchgym-*'];
const SEED_SKIP = new Set(['__pycache__', '.pytest_cache', 'target']);

let bwrapWorks: Promise<boolean> | undefined;
/** Probes bubblewrap once: installed is not enough, user namespaces must be allowed. */
export function bubblewrapAvailable(): Promise<boolean> {
  bwrapWorks ??= execFileP('bwrap', ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', 'true'], { timeout: 10_000 })
    .then(() => true)
    .catch(() => false);
  return bwrapWorks;
}

export class LocalSandboxFactory implements SandboxFactory {
  readonly backend = 'local' as const;
  private readonly limits: LocalLimits;
  private readonly live = new Set<LocalSandbox>();
  private envs?: EnvBuilder;
  private ready?: Promise<void>;
  private cgroups: CgroupDriver | null = null;

  constructor(private readonly opts: LocalSandboxOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
  }

  /**
   * Finds the cgroups this server may use and kills and removes what servers that are gone
   * left in them (a kill -9, a crash): every process of theirs, whatever it did to its session
   * or environment. Run by `benchgym serve` at start, else by the first create().
   */
  init(): Promise<void> {
    this.ready ??= (async () => {
      this.cgroups = await CgroupDriver.detect(this.opts.cgroups ?? 'auto');
      await this.cgroups?.reapStale();
    })();
    return this.ready;
  }

  async prepare(task: Task): Promise<PreparedEnv> {
    if (!this.opts.cacheDir) throw new GymError('ENV_UNAVAILABLE', 'this local sandbox factory has no env cache directory');
    this.envs ??= new EnvBuilder(this.opts.cacheDir);
    return this.envs.prepare(task);
  }

  async create(create: SandboxCreateOptions): Promise<Sandbox> {
    const mode = this.opts.isolation ?? 'auto';
    const useBwrap = mode === 'bwrap' || (mode === 'auto' && (await bubblewrapAvailable()));
    if (mode === 'bwrap' && !(await bubblewrapAvailable())) {
      throw new GymError('SANDBOX_UNAVAILABLE', 'bubblewrap isolation was asked for but bwrap is missing or cannot create namespaces');
    }
    await this.init();
    const id = `lsb-${randomBytes(6).toString('hex')}`;
    const dir = path.join(this.opts.baseDir, id);
    await fs.mkdir(path.join(dir, 'workspace'), { recursive: true });
    await fs.mkdir(path.join(dir, 'home'), { recursive: true });
    await fs.mkdir(path.join(dir, 'tmp'), { recursive: true });
    const confinement = await this.confinement(id, useBwrap, create).catch(async (err) => {
      await fs.rm(dir, { recursive: true, force: true });
      throw new GymError('SANDBOX_UNAVAILABLE', `could not make the sandbox's cgroup: ${(err as Error).message}`);
    });
    const sandbox = new LocalSandbox(id, dir, useBwrap, this.limits, create, [this.opts.baseDir, ...(this.opts.privatePaths ?? [])], () => this.live.delete(sandbox), (from) => this.fork(from, create), confinement);
    try {
      if (create.seed.dir) {
        await fs.cp(create.seed.dir, sandbox.root, {
          recursive: true,
          verbatimSymlinks: true,
          filter: (src) => !SEED_SKIP.has(path.basename(src)),
        });
      }
      for (const [rel, content] of Object.entries(create.seed.files ?? {})) await sandbox.writeFile(rel, content);
      await sandbox.handOver();
    } catch (err) {
      await sandbox.destroy();
      throw err instanceof GymError ? err : new GymError('SANDBOX_UNAVAILABLE', `could not lay out the workspace: ${(err as Error).message}`);
    }
    this.live.add(sandbox);
    return sandbox;
  }

  /** The sandbox's cgroup (with its limits) and, for a root server under bubblewrap, the uid it runs as. */
  private async confinement(id: string, bwrap: boolean, create: SandboxCreateOptions): Promise<Confinement> {
    const l = this.limits;
    const user = bwrap && process.getuid?.() === 0 ? (this.opts.sandboxUser ?? sandboxUserFromEnv()) : undefined;
    const who = user ? `commands as uid ${user.uid} without capabilities` : bwrap ? `commands as the server's uid ${process.getuid?.()} without capabilities` : "commands as the server's user";
    if (!this.cgroups) return { user, describe: `${who}; no writable cgroups: bounded by rlimits only, leftovers found by an environment marker (which env -i clears)` };
    const limits = { pids: l.pids, memoryBytes: Math.max(create.env?.memoryBytes ?? 0, l.memoryBytes) };
    const cgroup = await this.cgroups.createSandbox(id, limits);
    return { cgroup, user, pidsBounded: this.cgroups.limitsPids, describe: `${who}; ${this.cgroups.describe(limits)}` };
  }

  /** A new sandbox seeded with another's workspace, its baseline copied beside it. */
  private async fork(from: LocalSandbox, create: SandboxCreateOptions): Promise<Sandbox> {
    const copy = (await this.create({ ...create, seed: { dir: from.root } })) as LocalSandbox;
    await copy.adoptBaseline(from);
    return copy;
  }

  async close(): Promise<void> {
    await Promise.all([...this.live].map((s) => s.destroy()));
  }
}

export class LocalSandbox implements Sandbox {
  readonly backend = 'local' as const;
  readonly root: string;
  private readonly files: WorkspaceFiles;
  readonly workdir: string;
  readonly isolation: string;
  private destroyed = false;
  /** The workspace and home's size when a running command's disk watch last measured it. */
  private diskUsed = 0;
  /** Open terminals: destroy() ends them (their processes carry their own marker, not the sandbox's). */
  private readonly ptys = new Set<PtySession>();
  /** Host directories bubblewrap must cover for the sandbox's uid to reach its binds (computed once). */
  private traversal?: Promise<string[]>;

  constructor(
    readonly id: string,
    private readonly dir: string,
    private readonly bwrap: boolean,
    private readonly limits: LocalLimits,
    private readonly create: SandboxCreateOptions,
    private readonly hiddenPaths: string[],
    private readonly onDestroy: () => void,
    private readonly forkFrom: (from: LocalSandbox) => Promise<Sandbox>,
    private readonly confinement: Confinement = { describe: '' },
  ) {
    this.root = path.join(dir, 'workspace');
    this.files = new WorkspaceFiles(this.root, confinement.user);
    this.workdir = this.root;
    this.isolation = `${
      bwrap
        ? 'local + bubblewrap: no network, read-only system, only the workspace writable'
        : 'local process groups + rlimits (no bubblewrap: commands share the host network and file system)'
    }${confinement.describe ? `; ${confinement.describe}` : ''}`;
  }

  /**
   * Gives the seeded workspace and home to the sandbox's uid, once, before any command runs (a
   * root server copies the seed as root; later files the file tools create are the uid's from
   * the start). Links themselves are changed (-h), never followed (-P).
   */
  async handOver(): Promise<void> {
    const user = this.confinement.user;
    if (!user) return;
    await execFileP('find', ['-P', this.root, path.join(this.dir, 'home'), '(', '!', '-uid', String(user.uid), '-o', '!', '-gid', String(user.gid), ')', '-exec', 'chown', '-h', `${user.uid}:${user.gid}`, '{}', '+'], { maxBuffer: 16 * 1024 * 1024 }).catch(() => {});
  }

  /**
   * The directories bubblewrap mounts an empty tmpfs on so that the sandbox's uid can reach
   * its workspace, home and env paths: the nearest ancestor it may not traverse (a root
   * server's data dir under /root, mode 0700). What is below stays hidden, as it was.
   */
  private untraversable(): Promise<string[]> {
    const user = this.confinement.user;
    if (!user) return Promise.resolve([]);
    this.traversal ??= (async () => {
      const cover = new Set<string>();
      for (const target of [this.root, path.join(this.dir, 'home'), ...(this.create.env?.readOnlyPaths ?? [])]) {
        const parts = path.resolve(target).split(path.sep).filter(Boolean);
        for (let i = 1; i < parts.length; i++) {
          const dir = '/' + parts.slice(0, i).join('/');
          const st = await fs.stat(dir).catch(() => null);
          if (!st) break;
          const x = st.mode & 0o001 || (st.uid === user.uid && st.mode & 0o100) || (st.gid === user.gid && st.mode & 0o010);
          if (!x) {
            cover.add(dir);
            break;
          }
        }
      }
      return [...cover].sort((a, b) => a.split('/').length - b.split('/').length);
    })();
    return this.traversal;
  }

  get gitDir(): string {
    return path.join(this.dir, 'baseline.git');
  }

  private environment(extra?: Record<string, string>): Record<string, string> {
    const env = this.create.env ?? {};
    return {
      PATH: [...(env.path ?? []), ...SYSTEM_PATH].join(':'),
      HOME: path.join(this.dir, 'home'),
      TMPDIR: this.bwrap ? '/tmp' : path.join(this.dir, 'tmp'),
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TERM: 'dumb',
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONUNBUFFERED: '1',
      ...env.vars,
      ...extra,
      BENCHGYM_SANDBOX: this.id,
    };
  }

  /**
   * The command line that runs `shell` in the sandbox. `newSession` (bubblewrap's
   * --new-session, against TIOCSTI injection into the server's terminal) is off for PTYs:
   * there the controlling terminal is the sandbox's own, and job control needs it.
   */
  private async argv(command: string, cwd: string, { shell = ['/bin/bash', '-c', command], newSession = true, cgroup }: { shell?: string[]; newSession?: boolean; cgroup?: Cgroup } = {}): Promise<string[]> {
    const l = this.limits;
    const c = this.confinement;
    // RLIMIT_NPROC counts every process of the uid (all sandboxes, the server): only a fallback.
    const nproc = c.pidsBounded ? [] : [`--nproc=${l.processes}`];
    const prlimit = ['prlimit', `--cpu=${l.cpuSeconds}`, `--fsize=${l.fileSizeBytes}`, `--nofile=${l.openFiles}`, ...nproc, '--'];
    // Into its cgroup before anything runs: what it starts is born there and cannot leave.
    const join = cgroup ? ['/bin/sh', '-c', JOIN_CGROUP, 'benchgym-cgroup', ...cgroup.procsFiles, '--'] : [];
    if (!this.bwrap) return [...join, ...prlimit, ...shell];
    const user = c.user;
    const binds: string[] = ['--ro-bind', '/', '/'];
    const covered = await this.untraversable();
    for (const d of covered) binds.push('--perms', '0755', '--tmpfs', d);
    // Disk: /tmp is a capped tmpfs (charged to the memory cgroup); the workspace stays on the
    // host disk, bounded per file by RLIMIT_FSIZE only: a tmpfs per sandbox would hold whole
    // checkouts in memory, and loop-mounted images need root-only mounts a crash leaves behind.
    binds.push('--dev', '/dev', '--proc', '/proc', '--perms', '1777', '--size', String(l.tmpBytes), '--tmpfs', '/tmp');
    const mounts = [...covered, '/tmp'];
    for (const hidden of this.hiddenPaths) {
      if (!existsSync(hidden)) continue;
      binds.push('--tmpfs', hidden);
      mounts.push(hidden);
    }
    // Directories bubblewrap makes inside those tmpfs mounts are 0700: the uid must pass them.
    const made = new Set<string>();
    const parents = (target: string) => {
      if (!user) return;
      const parts = target.split('/').filter(Boolean);
      for (let i = 1; i < parts.length; i++) {
        const dir = '/' + parts.slice(0, i).join('/');
        if (made.has(dir) || mounts.includes(dir) || !mounts.some((m) => dir.startsWith(m + '/'))) continue;
        made.add(dir);
        binds.push('--perms', '0755', '--dir', dir);
      }
    };
    for (const ro of this.create.env?.readOnlyPaths ?? []) {
      if (!existsSync(ro)) continue;
      parents(path.resolve(ro));
      binds.push('--ro-bind', ro, ro);
    }
    for (const rw of [this.root, path.join(this.dir, 'home')]) {
      parents(rw);
      binds.push('--bind', rw, rw);
    }
    // A root server runs bubblewrap without a user namespace, so that the command can drop to
    // a real unprivileged host uid (a uid mapped in a namespace would still be host root,
    // reading root's 0600 files); an unprivileged server is that uid already.
    const namespaces = user ? ['--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try'] : ['--unshare-all', '--cap-drop', 'ALL'];
    const drop = user ? ['setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--'] : [];
    return [...join, ...prlimit, 'bwrap', ...namespaces, '--die-with-parent', ...(newSession ? ['--new-session'] : []), ...binds, '--chdir', cwd, ...drop, ...shell];
  }

  /**
   * An interactive bash in the workspace under the same isolation, environment and limits
   * as exec(). Its processes carry `BENCHGYM_PTY=<marker>` instead of the sandbox marker,
   * so an exec() cleaning up after itself does not end a terminal someone is using; kill()
   * ends them by that marker, and destroy() kills every open terminal.
   */
  async pty(opts: { cols: number; rows: number; env?: Record<string, string> }): Promise<PtySession> {
    this.assertLive();
    const marker = `${this.id}-pty-${randomBytes(4).toString('hex')}`;
    const { BENCHGYM_SANDBOX: _sandboxMarker, ...env } = this.environment({ TERM: 'xterm-256color', PS1: PTY_PROMPT, ...opts.env });
    env.BENCHGYM_PTY = marker;
    // A cgroup of its own: commands ending do not touch it, its kill() and destroy() end all of it.
    const cgroup = await this.confinement.cgroup?.child(`pty-${randomBytes(4).toString('hex')}`);
    const [file, ...args] = await this.argv('', this.root, { shell: ['/bin/bash', '--norc', '-i'], newSession: false, cgroup });
    let proc: IPty;
    try {
      proc = spawnPty(file!, args, { name: env.TERM ?? 'xterm-256color', cols: clampSize(opts.cols, 80), rows: clampSize(opts.rows, 24), cwd: this.root, env, encoding: null });
    } catch (err) {
      await cgroup?.remove();
      throw new GymError('SANDBOX_UNAVAILABLE', `could not open a terminal in the sandbox: ${(err as Error).message}`);
    }
    const exitListeners: ((code: number | null) => void)[] = [];
    let exitCode: number | null | undefined;
    const exited = new Promise<void>((resolve) => {
      proc.onExit(({ exitCode: code, signal }) => {
        exitCode = signal ? null : code;
        this.ptys.delete(session);
        // What the shell left running in the background goes with it.
        void killByEnvMarker('BENCHGYM_PTY', marker);
        void cgroup?.remove();
        for (const l of exitListeners) l(exitCode);
        resolve();
      });
    });
    const session: PtySession = {
      write: (data) => {
        if (exitCode !== undefined) return;
        try {
          proc.write(data);
        } catch {
          // the terminal is closing
        }
      },
      resize: async (cols, rows) => {
        if (exitCode === undefined) proc.resize(clampSize(cols, 80), clampSize(rows, 24));
      },
      onData: (listener) => void proc.onData((chunk) => listener(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer))),
      onExit: (listener) => {
        if (exitCode !== undefined) listener(exitCode);
        else exitListeners.push(listener);
      },
      pause: () => proc.pause(),
      resume: () => proc.resume(),
      kill: async () => {
        if (exitCode === undefined) {
          // A hangup first (bash passes it on to its jobs), then nothing survives.
          killGroup(proc.pid, 'SIGHUP');
          await Promise.race([exited, new Promise((r) => setTimeout(r, 300))]);
          // Only while the shell lives: an exited leader's group number may be someone else's now.
          if (exitCode === undefined) killGroup(proc.pid, 'SIGKILL');
        }
        await cgroup?.killAll();
        await killByEnvMarker('BENCHGYM_PTY', marker);
        await Promise.race([exited, new Promise((r) => setTimeout(r, 2000))]);
      },
    };
    this.ptys.add(session);
    return session;
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    this.assertLive();
    const cwd = opts.cwd ? await this.directory(opts.cwd) : this.root;
    const timeoutMs = opts.timeoutMs ?? this.limits.defaultTimeoutMs;
    const cap = opts.maxOutputBytes ?? this.limits.maxOutputBytes;
    // Each command in a leaf cgroup of its own: at its end, everything it started is killed.
    const cgroup = await this.confinement.cgroup?.child();
    const oomBefore = (await this.confinement.cgroup?.oomKills()) ?? 0;
    const [file, ...args] = await this.argv(command, cwd, { cgroup });
    const started = Date.now();
    const child = spawn(file!, args, { cwd, env: this.environment(opts.env), detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const out = new CappedOutput(cap);
    const err = new CappedOutput(cap);
    const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    child.stdout!.on('data', (b: Buffer) => {
      out.push(b);
      if (opts.onOutput) opts.onOutput(decoders.stdout.write(b), 'stdout');
    });
    child.stderr!.on('data', (b: Buffer) => {
      err.push(b);
      if (opts.onOutput) opts.onOutput(decoders.stderr.write(b), 'stderr');
    });
    child.stdin!.on('error', () => {});
    child.stdin!.end(opts.stdin ?? '');

    let timedOut = false;
    let cancelled = false;
    let killTimer: NodeJS.Timeout | undefined;
    // Until the command's leader exits, its group is surely ours; after that the group is
    // signalled only while a member of it still carries this sandbox's marker (see
    // killGroupIfMarked: a freed group number can lead someone else's group a moment later).
    let leaderExited = false;
    const killOurGroup = (signal: NodeJS.Signals) => (leaderExited ? void killGroupIfMarked(child.pid, 'BENCHGYM_SANDBOX', this.id, signal) : killGroup(child.pid, signal));
    const terminate = () => {
      killOurGroup('SIGTERM');
      killTimer ??= setTimeout(() => {
        killOurGroup('SIGKILL');
        void cgroup?.killAll();
        void killByEnvMarker('BENCHGYM_SANDBOX', this.id);
      }, this.limits.killGraceMs);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      terminate();
    }, timeoutMs);
    let diskExceeded: number | undefined;
    // A workspace already over the limit (the command before was stopped there) may shrink: only growth past it stops this one.
    const allowed = Math.max(this.limits.diskBytes, this.diskUsed);
    const stopDiskWatch = watchDisk([this.root, path.join(this.dir, 'home')], allowed, this.limits.diskCheckMs, (bytes) => {
      diskExceeded = bytes;
      terminate();
    }, (bytes) => (this.diskUsed = bytes));
    const onAbort = () => {
      cancelled = true;
      terminate();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();

    const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      let drainTimer: NodeJS.Timeout | undefined;
      child.on('error', (e) => reject(new GymError('SANDBOX_UNAVAILABLE', `could not start the command: ${e.message}`)));
      child.on('exit', (c, s) => {
        exited = { code: c, signal: s };
        leaderExited = true;
        // Background children may hold the pipes open: give them a moment, then end them.
        // Killing the writers closes the pipes after what they wrote is read, so no output
        // is lost however slow the machine is; only a holder we cannot kill is cut off.
        drainTimer = setTimeout(() => {
          killOurGroup('SIGKILL');
          void cgroup?.killAll();
          void killByEnvMarker('BENCHGYM_SANDBOX', this.id);
          drainTimer = setTimeout(() => {
            child.stdout!.destroy();
            child.stderr!.destroy();
            resolve(exited!);
          }, 5000);
        }, 300);
      });
      child.on('close', (c, s) => {
        if (drainTimer) clearTimeout(drainTimer);
        resolve(exited ?? { code: c, signal: s });
      });
    }).finally(async () => {
      clearTimeout(timer);
      stopDiskWatch();
      // What a stopped writer had in flight is on disk now: the next command's allowance starts there.
      if (diskExceeded !== undefined) this.diskUsed = await diskUsage([this.root, path.join(this.dir, 'home')]);
      if (killTimer) clearTimeout(killTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      // Nothing a command started outlives it: not its process group, and not what left
      // the group with setsid() and let go of the pipes (found by the inherited marker).
      await killGroupIfMarked(child.pid, 'BENCHGYM_SANDBOX', this.id);
      // The cgroup finds the rest, whatever they did to their session, environment or parent.
      await cgroup?.remove();
      await killByEnvMarker('BENCHGYM_SANDBOX', this.id);
    });
    if (cancelled && !timedOut) throw new GymError('CANCELLED', 'the command was cancelled');
    const oom = ((await this.confinement.cgroup?.oomKills()) ?? 0) > oomBefore;
    return {
      exitCode: code,
      signal,
      stdout: out.text(),
      stderr:
        err.text() +
        (oom ? `\nbenchgym: a process was killed by the sandbox's memory limit\n` : '') +
        (diskExceeded !== undefined ? `\nbenchgym: the command was stopped: the workspace and home hold ${formatBytes(diskExceeded)}, past the sandbox's disk limit of ${formatBytes(this.limits.diskBytes)}\n` : ''),
      timedOut,
      truncated: { stdout: out.dropped, stderr: err.dropped },
      totalBytes: { stdout: out.total, stderr: err.total },
      durationMs: Date.now() - started,
    };
  }

  private assertLive(): void {
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
  }

  /** A working directory for a command: inside the workspace, existing, a directory. */
  private async directory(rel: string): Promise<string> {
    this.assertLive();
    return this.files.directory(rel);
  }

  // File operations walk each path without following links and use what they opened (files.ts).
  async readFile(rel: string): Promise<Buffer> {
    this.assertLive();
    return this.files.readFile(rel);
  }

  async writeFile(rel: string, data: string | Buffer): Promise<void> {
    this.assertLive();
    return this.files.writeFile(rel, data);
  }

  async remove(rel: string): Promise<void> {
    this.assertLive();
    return this.files.remove(rel);
  }

  async stat(rel: string): Promise<FileStat | null> {
    this.assertLive();
    return this.files.stat(rel);
  }

  async list(rel: string, opts: { depth?: number; limit?: number } = {}): Promise<{ entries: DirEntry[]; truncated: boolean }> {
    this.assertLive();
    return this.files.list(rel, opts);
  }

  /** Host git over the workspace, isolated from everything the agent can write (see git_isolation.ts). */
  private async git(args: string[], input?: string): Promise<string> {
    // HOME: beside the baseline, out of the sandbox's reach under bubblewrap (never its home/).
    const home = path.join(this.dir, 'git-home');
    await fs.mkdir(home, { recursive: true });
    const env = isolatedGitEnv(home, { GIT_DIR: this.gitDir, GIT_WORK_TREE: this.root });
    return new Promise((resolve, reject) => {
      const child = execFile('git', [...ISOLATED_GIT_FLAGS, ...args], { cwd: this.root, env, maxBuffer: 512 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (error) reject(new GymError('SANDBOX_UNAVAILABLE', `git ${args[0]} failed: ${stderr || error.message}`));
        else resolve(stdout);
      });
      if (input !== undefined) child.stdin!.end(input);
    });
  }

  fork(): Promise<Sandbox> {
    this.assertLive();
    return this.forkFrom(this);
  }

  /** Takes another sandbox's baseline, so diffs are against the same start state. */
  async adoptBaseline(from: LocalSandbox): Promise<void> {
    await fs.rm(this.gitDir, { recursive: true, force: true });
    await fs.cp(from.gitDir, this.gitDir, { recursive: true });
  }

  async commitBaseline(): Promise<void> {
    this.assertLive();
    await this.git(['init', '-q']);
    await fs.writeFile(path.join(this.gitDir, 'info', 'exclude'), BASELINE_EXCLUDES.join('\n') + '\n');
    await fs.writeFile(path.join(this.gitDir, 'info', 'attributes'), NEUTRAL_ATTRIBUTES);
    await this.git(['add', '-A', '-f', '.']).catch(() => this.git(['add', '-A', '.']));
    await this.git(['-c', 'user.name=benchgym', '-c', 'user.email=benchgym@localhost', 'commit', '-q', '--allow-empty', '--no-verify', '-m', 'start state']);
  }

  async diff(): Promise<string> {
    this.assertLive();
    await this.git(['add', '-A', '.']);
    // Into a file, not a pipe: its size is known before any of it is in memory.
    const out = path.join(this.dir, `diff-${randomBytes(4).toString('hex')}.patch`);
    try {
      await this.git(['diff', '--cached', '--binary', '--no-color', '--no-ext-diff', '--no-textconv', `--output=${out}`, 'HEAD']);
      const { size } = await fs.stat(out);
      if (size > this.limits.maxDiffBytes) throw diffTooLarge(size, this.limits.maxDiffBytes);
      return await fs.readFile(out, 'utf8');
    } finally {
      await fs.rm(out, { force: true });
    }
  }

  /** Applied by a command in the sandbox: nothing the patch creates (a symlink out, say) is followed by a host process. */
  async applyPatch(patch: string): Promise<{ ok: boolean; method?: string; log: string }> {
    this.assertLive();
    if (!patch.trim()) return { ok: true, method: 'empty', log: '' };
    const script = ['set -u', 'f=$(mktemp "${TMPDIR:-/tmp}/benchgym-patch-XXXXXX") || exit 1', 'cat > "$f"', applyPatchScript('"$f"')].join('\n');
    const r = await this.exec(script, { stdin: patch.endsWith('\n') ? patch : patch + '\n', timeoutMs: 300_000, maxOutputBytes: 1024 * 1024, env: { PATH: SYSTEM_PATH.join(':') } });
    const log = r.stdout + r.stderr;
    const method = /^@@method (.+)$/m.exec(log)?.[1];
    return { ok: r.exitCode === 0 && Boolean(method), ...(method ? { method } : {}), log };
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.all([...this.ptys].map((p) => p.kill().catch(() => {})));
    await this.confinement.cgroup?.remove();
    await killByEnvMarker('BENCHGYM_SANDBOX', this.id);
    await fs.rm(this.dir, { recursive: true, force: true, maxRetries: 3 });
    this.onDestroy();
  }
}

/** BENCHGYM_SANDBOX_UID=uid[:gid] (gid defaults to the uid), else nobody (65534). */
function sandboxUserFromEnv(): { uid: number; gid: number } {
  const m = /^(\d+)(?::(\d+))?$/.exec(process.env.BENCHGYM_SANDBOX_UID ?? '');
  const uid = m ? Number(m[1]) : 65534;
  const gid = m?.[2] !== undefined ? Number(m[2]) : m ? uid : 65534;
  // Never root: that would undo the point of dropping privileges.
  return uid === 0 || gid === 0 ? { uid: 65534, gid: 65534 } : { uid, gid };
}

/** A terminal dimension: a whole number from 1 to 1000 (else the default). */
function clampSize(n: number, fallback: number): number {
  return Number.isInteger(n) && n >= 1 ? Math.min(n, 1000) : fallback;
}
