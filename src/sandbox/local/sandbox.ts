import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { IPty } from 'node-pty';
import { GymError } from '../../errors.ts';
import { diskUsage, formatBytes, watchDisk } from './disk_guard.ts';
import { killByEnvMarker, killGroup } from '../processes.ts';
import { WorkspaceFiles } from './files.ts';
import { diffTooLarge } from '../diff_limit.ts';
import type { Cgroup } from './cgroup.ts';
import { isolatedGitEnv, ISOLATED_GIT_FLAGS, NEUTRAL_ATTRIBUTES } from '../git_isolation.ts';
import {
  PTY_ENV,
  PTY_PROMPT,
  type DirEntry,
  type ExecOptions,
  type ExecResult,
  type FileStat,
  type PtySession,
  type Sandbox,
  type SandboxCreateOptions,
  type ApplyPatchOptions,
  type PatchApplied,
} from '../types.ts';
import { applyPatchBy } from '../patch_apply.ts';
import { BASELINE_COMMIT_ARGS, BASELINE_DIFF_ARGS, BASELINE_EXCLUDES, BASELINE_IDENTITY } from '../baseline.ts';
import { confinedArgv, untraversableDirs, type SandboxMounts } from './bubblewrap.ts';
import { executorIsolationFlags, type Confinement } from './confinement.ts';
import type { LocalLimits } from './limits.ts';
import { jvmMemoryVars } from './jvm_memory.ts';
import { OOM_NOTE, type MemoryLimitMark } from '../memory_limit.ts';
import { EXECUTOR_MARKER, executorStartFailed, LocalExecutor, placeExecutorBinary } from './executor.ts';

const execFileP = promisify(execFile);

const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/**
 * node-pty, imported at the first terminal: an optional dependency compiled at install (it needs
 * a compiler), so a machine without one still installs and serves, terminals then refused clearly.
 */
async function loadPty(): Promise<typeof import('node-pty').spawn> {
  try {
    return (await import('node-pty')).spawn;
  } catch (err) {
    throw new Error(
      `terminals need the optional dependency node-pty, which is not installed ` +
        `or did not build here (npm install node-pty): ${(err as Error).message}`,
    );
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
  /** The sandbox's executor, started once (the first exec, or the factory right after create). */
  private executorStart?: Promise<LocalExecutor>;
  /** Commands running through the executor: leftovers are swept when the last one ends. */
  private inFlight = 0;
  /** That sweep, while it runs: no command starts meanwhile (it would be taken for a leftover). */
  private sweeping?: Promise<void>;

  /** The env's variables, with what the sandbox's limits add to them (jvm_memory.ts): fixed for its life. */
  private readonly envVars: Record<string, string>;

  constructor(
    readonly id: string,
    private readonly dir: string,
    private readonly bwrap: boolean,
    private readonly limits: LocalLimits,
    private readonly create: SandboxCreateOptions,
    private readonly hiddenPaths: string[],
    private readonly onDestroy: () => void,
    private readonly forkFrom: (from: LocalSandbox) => Promise<Sandbox>,
    private readonly confinement: Confinement,
    /** The executor binary: one process of it per sandbox forks every command (startExecutor). */
    private readonly executorBinary: string,
  ) {
    this.root = path.join(dir, 'workspace');
    this.files = new WorkspaceFiles(this.root, confinement.user);
    this.envVars = { ...create.env?.vars, ...jvmMemoryVars(create.env?.vars, confinement.memoryBytes, { namespacedCgroup: bwrap }) };
    this.workdir = this.root;
    this.isolation = `${
      bwrap
        ? 'local + bubblewrap: no network, read-only system, only the workspace writable'
        : 'local process groups + rlimits (no bubblewrap: commands share the host network and file system)'
    }${confinement.describe ? `; ${confinement.describe}` : ''}; commands forked by one executor process per sandbox`;
  }

  /**
   * Gives the seeded workspace and home to the sandbox's uid, once, before any command runs (a
   * root server copies the seed as root; later files the file tools create are the uid's from
   * the start). Links themselves are changed (-h), never followed (-P).
   */
  async handOver(): Promise<void> {
    const user = this.confinement.user;
    if (!user) return;
    await execFileP(
      'find',
      [
        '-P',
        this.root,
        path.join(this.dir, 'home'),
        path.join(this.dir, 'tmp'),
        '(',
        '!',
        '-uid',
        String(user.uid),
        '-o',
        '!',
        '-gid',
        String(user.gid),
        ')',
        '-exec',
        'chown',
        '-h',
        `${user.uid}:${user.gid}`,
        '{}',
        '+',
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    ).catch(() => {});
  }

  /** See untraversableDirs (bubblewrap.ts). */
  private untraversable(): Promise<string[]> {
    const user = this.confinement.user;
    if (!user) return Promise.resolve([]);
    this.traversal ??= untraversableDirs(
      [this.root, path.join(this.dir, 'home'), this.executorDir, ...(this.create.env?.readOnlyPaths ?? [])],
      user,
    );
    return this.traversal;
  }

  /** Where the sandbox's link to the executor binary lives (read-only to it). */
  private get executorDir(): string {
    return path.join(this.dir, 'executor');
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
      ...this.envVars,
      ...extra,
      BENCHGYM_SANDBOX: this.id,
    };
  }

  /** The command line that runs `command` (or `shell`) in this sandbox (bubblewrap.ts). */
  private async argv(
    command: string,
    cwd: string,
    {
      shell = ['/bin/bash', '-c', command],
      newSession = true,
      cgroup,
      readOnly = [],
      executor = false,
    }: { shell?: string[]; newSession?: boolean; cgroup?: Cgroup; readOnly?: string[]; executor?: boolean } = {},
  ): Promise<string[]> {
    const mounts: SandboxMounts = {
      limits: this.limits,
      confinement: this.confinement,
      bwrap: this.bwrap,
      writable: [this.root, path.join(this.dir, 'home')],
      readOnlyPaths: [...(this.create.env?.readOnlyPaths ?? []), ...readOnly],
      hiddenPaths: this.hiddenPaths,
      covered: this.bwrap ? await this.untraversable() : [],
    };
    return confinedArgv(mounts, cwd, { shell, newSession, cgroup, executor });
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
    const { BENCHGYM_SANDBOX: _sandboxMarker, ...env } = this.environment({
      TERM: 'xterm-256color',
      PS1: PTY_PROMPT,
      ...PTY_ENV,
      ...opts.env,
    });
    env.BENCHGYM_PTY = marker;
    // A cgroup of its own: commands ending do not touch it, its kill() and destroy() end all of it.
    const cgroup = await this.confinement.cgroup?.child(`pty-${randomBytes(4).toString('hex')}`);
    const [file, ...args] = await this.argv('', this.root, { shell: ['/bin/bash', '--norc', '-i'], newSession: false, cgroup });
    let proc: IPty;
    try {
      const spawnPty = await loadPty();
      proc = spawnPty(file!, args, {
        name: env.TERM ?? 'xterm-256color',
        cols: clampSize(opts.cols, 80),
        rows: clampSize(opts.rows, 24),
        cwd: this.root,
        env,
        encoding: null,
      });
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
    return this.execThroughExecutor(command, opts);
  }

  /**
   * Starts the sandbox's executor, once: inside the confinement a command had (bubblewrap's
   * binds and hidden paths, the uid drop, prlimit's rlimits, which every command it forks
   * inherits, RLIMIT_CPU per process), in a leaf cgroup of its own below the sandbox's.
   */
  startExecutor(): Promise<LocalExecutor> {
    this.executorStart ??= (async () => {
      const binary = await placeExecutorBinary(this.executorBinary, this.executorDir);
      const cgroup = await this.confinement.cgroup?.child('executor');
      try {
        const argv = await this.argv('', this.root, {
          shell: [binary, '--root', this.root, ...executorIsolationFlags(this.confinement)],
          cgroup,
          readOnly: [binary],
          executor: true,
        });
        return await LocalExecutor.start({
          argv,
          env: { PATH: SYSTEM_PATH.join(':'), LANG: 'C.UTF-8', [EXECUTOR_MARKER]: this.id },
          cgroup,
          label: `the executor of sandbox ${this.id}`,
        });
      } catch (err) {
        await cgroup?.remove();
        throw err;
      }
    })();
    return this.executorStart;
  }

  /** The executor's host pid and the pid it has inside the sandbox (for tests and diagnostics). */
  async executorPids(): Promise<{ host: number; inside: number }> {
    const ex = await this.startExecutor();
    return { host: ex.pid, inside: ex.client.info!.pid };
  }

  /**
   * A command forked by the executor: the timeout, output caps, streaming and cancel are the
   * executor's; the disk watch, the cgroup's limits and the sweep of leftovers stay here.
   */
  private async execThroughExecutor(command: string, opts: ExecOptions): Promise<ExecResult> {
    const cwd = opts.cwd ? await this.directory(opts.cwd) : this.root;
    let ex: LocalExecutor;
    try {
      ex = await this.startExecutor();
    } catch (err) {
      throw err instanceof GymError && err.code === 'SANDBOX_UNAVAILABLE' ? err : executorStartFailed(this.id, err);
    }
    this.assertLive();
    const timeoutMs = opts.timeoutMs ?? this.limits.defaultTimeoutMs;
    const oomBefore = (await this.confinement.cgroup?.oomKills()) ?? 0;
    while (this.sweeping) await this.sweeping;
    this.assertLive();
    this.inFlight++;
    let diskExceeded: number | undefined;
    let stopDiskWatch = () => {};
    let killTimer: NodeJS.Timeout | undefined;
    let r: ExecResult;
    try {
      const running = ex.client.startExec(['/bin/bash', '-c', command], {
        cwd: path.relative(this.root, cwd) || '.',
        env: this.environment(opts.env),
        clearEnv: true,
        stdin: opts.stdin ?? '',
        timeoutMs,
        graceMs: this.limits.killGraceMs,
        maxOutputBytes: opts.maxOutputBytes ?? this.limits.maxOutputBytes,
        ...(opts.signal ? { signal: opts.signal } : {}),
        // Every byte is streamed, as a spawned command's was: the protocol decides what a slow reader drops.
        ...(opts.onOutput ? { onOutput: opts.onOutput, streamLimitBytes: Number.MAX_SAFE_INTEGER } : {}),
      });
      // A workspace already over the limit (the command before was stopped there) may shrink: only growth past it stops this one.
      const allowed = Math.max(this.limits.diskBytes, this.diskUsed);
      stopDiskWatch = watchDisk(
        [this.root, path.join(this.dir, 'home')],
        allowed,
        this.limits.diskCheckMs,
        (bytes) => {
          diskExceeded = bytes;
          // Signals, not cancel: the command's output still comes back, with the reason.
          running.signal('SIGTERM').catch(() => {});
          killTimer = setTimeout(() => running.signal('SIGKILL').catch(() => {}), this.limits.killGraceMs);
        },
        (bytes) => (this.diskUsed = bytes),
      );
      r = await running.result;
    } finally {
      stopDiskWatch();
      if (killTimer) clearTimeout(killTimer);
      if (diskExceeded !== undefined) this.diskUsed = await diskUsage([this.root, path.join(this.dir, 'home')]);
      // Nothing a command started outlives it; with others running, the last one to end sweeps.
      if (--this.inFlight === 0) {
        this.sweeping ??= ex.sweep(this.id).finally(() => (this.sweeping = undefined));
        await this.sweeping;
      }
    }
    const oom = ((await this.confinement.cgroup?.oomKills()) ?? 0) > oomBefore;
    const notes =
      (oom ? `\n${OOM_NOTE}\n` : '') +
      (diskExceeded !== undefined
        ? `\nbenchgym: the command was stopped: the workspace and home hold ${formatBytes(diskExceeded)}, ` +
          `past the sandbox's disk limit of ${formatBytes(this.limits.diskBytes)}\n`
        : '');
    const res: ExecResult & MemoryLimitMark = notes ? { ...r, stderr: r.stderr + notes } : { ...r };
    if (oom) res.oomKilled = true;
    return res;
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
  async readFile(rel: string, opts: { maxBytes?: number } = {}): Promise<Buffer> {
    this.assertLive();
    return this.files.readFile(rel, opts);
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
      const child = execFile(
        'git',
        [...ISOLATED_GIT_FLAGS, ...args],
        { cwd: this.root, env, maxBuffer: 512 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (error) reject(new GymError('SANDBOX_UNAVAILABLE', `git ${args[0]} failed: ${stderr || error.message}`));
          else resolve(stdout);
        },
      );
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
    await this.git([...BASELINE_IDENTITY, ...BASELINE_COMMIT_ARGS]);
  }

  async diff(): Promise<string> {
    this.assertLive();
    await this.git(['add', '-A', '.']);
    // Into a file, not a pipe: its size is known before any of it is in memory.
    const out = path.join(this.dir, `diff-${randomBytes(4).toString('hex')}.patch`);
    try {
      await this.git([...BASELINE_DIFF_ARGS, `--output=${out}`, 'HEAD']);
      const { size } = await fs.stat(out);
      if (size > this.limits.maxDiffBytes) throw diffTooLarge(size, this.limits.maxDiffBytes);
      return await fs.readFile(out, 'utf8');
    } finally {
      await fs.rm(out, { force: true });
    }
  }

  /** Applied by a command in the sandbox: nothing the patch creates (a symlink out, say) is followed by a host process. */
  async applyPatch(patch: string, opts: ApplyPatchOptions = {}): Promise<PatchApplied> {
    this.assertLive();
    return applyPatchBy(patch, opts, async (script, stdin) => {
      const r = await this.exec(script, { stdin, timeoutMs: 300_000, maxOutputBytes: 1024 * 1024, env: { PATH: SYSTEM_PATH.join(':') } });
      return { exitCode: r.exitCode, log: r.stdout + r.stderr };
    });
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.all([...this.ptys].map((p) => p.kill().catch(() => {})));
    const ex = await this.executorStart?.catch(() => undefined);
    if (ex) {
      // The commands first, so that their callers get their results (killed), then the executor.
      await ex.sweep(this.id);
      for (let i = 0; i < 100 && this.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 20));
      await ex.close();
    }
    await this.confinement.cgroup?.remove();
    await killByEnvMarker('BENCHGYM_SANDBOX', this.id);
    await fs.rm(this.dir, { recursive: true, force: true, maxRetries: 3 });
    this.onDestroy();
  }
}

/** A terminal dimension: a whole number from 1 to 1000 (else the default). */
function clampSize(n: number, fallback: number): number {
  return Number.isInteger(n) && n >= 1 ? Math.min(n, 1000) : fallback;
}
