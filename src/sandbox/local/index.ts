import { spawn, execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { StringDecoder } from 'node:string_decoder';
import { spawn as spawnPty, type IPty } from 'node-pty';
import { GymError } from '../../errors.ts';
import { CappedOutput } from '../output.ts';
import { killByEnvMarker, killGroup, killGroupIfMarked } from '../processes.ts';
import { resolveInWorkspace } from '../paths.ts';
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
}

const DEFAULT_LIMITS: LocalLimits = {
  cpuSeconds: 900,
  fileSizeBytes: 1 << 30,
  processes: 4096,
  openFiles: 4096,
  defaultTimeoutMs: 120_000,
  maxOutputBytes: 256 * 1024,
  killGraceMs: 1000,
};

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

  constructor(private readonly opts: LocalSandboxOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
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
    const id = `lsb-${randomBytes(6).toString('hex')}`;
    const dir = path.join(this.opts.baseDir, id);
    await fs.mkdir(path.join(dir, 'workspace'), { recursive: true });
    await fs.mkdir(path.join(dir, 'home'), { recursive: true });
    await fs.mkdir(path.join(dir, 'tmp'), { recursive: true });
    const sandbox = new LocalSandbox(id, dir, useBwrap, this.limits, create, [this.opts.baseDir, ...(this.opts.privatePaths ?? [])], () => this.live.delete(sandbox), (from) => this.fork(from, create));
    try {
      if (create.seed.dir) {
        await fs.cp(create.seed.dir, sandbox.root, {
          recursive: true,
          verbatimSymlinks: true,
          filter: (src) => !SEED_SKIP.has(path.basename(src)),
        });
      }
      for (const [rel, content] of Object.entries(create.seed.files ?? {})) await sandbox.writeFile(rel, content);
    } catch (err) {
      await sandbox.destroy();
      throw err instanceof GymError ? err : new GymError('SANDBOX_UNAVAILABLE', `could not lay out the workspace: ${(err as Error).message}`);
    }
    this.live.add(sandbox);
    return sandbox;
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
  readonly workdir: string;
  readonly isolation: string;
  private destroyed = false;
  /** Open terminals: destroy() ends them (their processes carry their own marker, not the sandbox's). */
  private readonly ptys = new Set<PtySession>();

  constructor(
    readonly id: string,
    private readonly dir: string,
    private readonly bwrap: boolean,
    private readonly limits: LocalLimits,
    private readonly create: SandboxCreateOptions,
    private readonly hiddenPaths: string[],
    private readonly onDestroy: () => void,
    private readonly forkFrom: (from: LocalSandbox) => Promise<Sandbox>,
  ) {
    this.root = path.join(dir, 'workspace');
    this.workdir = this.root;
    this.isolation = bwrap
      ? 'local + bubblewrap: no network, read-only system, only the workspace writable'
      : 'local process groups + rlimits (no bubblewrap: commands share the host network and file system)';
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
  private argv(command: string, cwd: string, { shell = ['/bin/bash', '-c', command], newSession = true }: { shell?: string[]; newSession?: boolean } = {}): string[] {
    const l = this.limits;
    const prlimit = ['prlimit', `--cpu=${l.cpuSeconds}`, `--fsize=${l.fileSizeBytes}`, `--nofile=${l.openFiles}`, `--nproc=${l.processes}`, '--'];
    if (!this.bwrap) return [...prlimit, ...shell];
    const binds: string[] = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
    for (const hidden of this.hiddenPaths) if (existsSync(hidden)) binds.push('--tmpfs', hidden);
    for (const ro of this.create.env?.readOnlyPaths ?? []) if (existsSync(ro)) binds.push('--ro-bind', ro, ro);
    binds.push('--bind', this.root, this.root, '--bind', path.join(this.dir, 'home'), path.join(this.dir, 'home'));
    return [...prlimit, 'bwrap', '--unshare-all', '--die-with-parent', ...(newSession ? ['--new-session'] : []), ...binds, '--chdir', cwd, ...shell];
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
    const [file, ...args] = this.argv('', this.root, { shell: ['/bin/bash', '--norc', '-i'], newSession: false });
    let proc: IPty;
    try {
      proc = spawnPty(file!, args, { name: env.TERM ?? 'xterm-256color', cols: clampSize(opts.cols, 80), rows: clampSize(opts.rows, 24), cwd: this.root, env, encoding: null });
    } catch (err) {
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
    const [file, ...args] = this.argv(command, cwd);
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
        void killByEnvMarker('BENCHGYM_SANDBOX', this.id);
      }, this.limits.killGraceMs);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      terminate();
    }, timeoutMs);
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
      if (killTimer) clearTimeout(killTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      // Nothing a command started outlives it: not its process group, and not what left
      // the group with setsid() and let go of the pipes (found by the inherited marker).
      await killGroupIfMarked(child.pid, 'BENCHGYM_SANDBOX', this.id);
      await killByEnvMarker('BENCHGYM_SANDBOX', this.id);
    });
    if (cancelled && !timedOut) throw new GymError('CANCELLED', 'the command was cancelled');
    return {
      exitCode: code,
      signal,
      stdout: out.text(),
      stderr: err.text(),
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
    const abs = (await resolveInWorkspace(this.root, rel)).abs;
    const st = await fs.stat(abs).catch(() => null);
    if (!st) throw new GymError('FILE_NOT_FOUND', `invalid 'cwd': no such directory '${rel}'`);
    if (!st.isDirectory()) throw new GymError('NOT_A_DIRECTORY', `invalid 'cwd': '${rel}' is not a directory`);
    return abs;
  }

  private async resolve(rel: string): Promise<string> {
    this.assertLive();
    return (await resolveInWorkspace(this.root, rel)).abs;
  }

  async readFile(rel: string): Promise<Buffer> {
    const abs = await this.resolve(rel);
    try {
      return await fs.readFile(abs);
    } catch (err) {
      throw fileError(err, rel);
    }
  }

  async writeFile(rel: string, data: string | Buffer): Promise<void> {
    const abs = await this.resolve(rel);
    try {
      await fs.mkdir(path.dirname(abs), { recursive: true });
      // Re-check after mkdir: the parent chain now exists and must still be inside.
      await resolveInWorkspace(this.root, rel);
      await fs.writeFile(abs, data);
    } catch (err) {
      throw fileError(err, rel);
    }
  }

  async remove(rel: string): Promise<void> {
    const abs = await this.resolve(rel);
    if (abs === this.root) throw new GymError('INVALID_ARGUMENT', 'refusing to remove the workspace root');
    await fs.rm(abs, { recursive: true, force: true });
  }

  async stat(rel: string): Promise<FileStat | null> {
    const abs = await this.resolve(rel);
    try {
      const st = await fs.lstat(abs);
      return { type: st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'other', size: st.size };
    } catch {
      return null;
    }
  }

  async list(rel: string, opts: { depth?: number; limit?: number } = {}): Promise<{ entries: DirEntry[]; truncated: boolean }> {
    const abs = await this.resolve(rel);
    const depth = opts.depth ?? 1;
    const limit = opts.limit ?? 1000;
    const st = await fs.stat(abs).catch((e) => {
      throw fileError(e, rel);
    });
    if (!st.isDirectory()) throw new GymError('NOT_A_DIRECTORY', `'${rel}' is not a directory`);
    const entries: DirEntry[] = [];
    let queue: { abs: string; rel: string }[] = [{ abs, rel: path.relative(this.root, abs).split(path.sep).join('/') }];
    for (let level = 0; level < depth && queue.length; level++) {
      const next: typeof queue = [];
      for (const dir of queue) {
        const children = await fs.readdir(dir.abs, { withFileTypes: true }).catch(() => []);
        children.sort((a, b) => a.name.localeCompare(b.name));
        for (const c of children) {
          if (c.name === '.git' || c.name === '__pycache__') continue;
          if (entries.length >= limit) return { entries, truncated: true };
          const childRel = dir.rel ? `${dir.rel}/${c.name}` : c.name;
          const childAbs = path.join(dir.abs, c.name);
          const type = c.isFile() ? 'file' : c.isDirectory() ? 'dir' : c.isSymbolicLink() ? 'symlink' : 'other';
          const size = type === 'file' ? (await fs.stat(childAbs).catch(() => ({ size: 0 }))).size : 0;
          entries.push({ path: childRel, type, size });
          if (type === 'dir') next.push({ abs: childAbs, rel: childRel });
        }
      }
      queue = next;
    }
    return { entries, truncated: false };
  }

  private async git(args: string[], input?: string): Promise<string> {
    const env = { ...process.env, GIT_DIR: this.gitDir, GIT_WORK_TREE: this.root, GIT_CONFIG_NOSYSTEM: '1', HOME: path.join(this.dir, 'home') };
    return new Promise((resolve, reject) => {
      const child = execFile('git', ['-c', 'core.autocrlf=false', '-c', 'core.quotepath=false', ...args], { cwd: this.root, env, maxBuffer: 512 * 1024 * 1024 }, (error, stdout, stderr) => {
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
    await this.git(['add', '-A', '-f', '.']).catch(() => this.git(['add', '-A', '.']));
    await this.git(['-c', 'user.name=benchgym', '-c', 'user.email=benchgym@localhost', 'commit', '-q', '--allow-empty', '--no-verify', '-m', 'start state']);
  }

  async diff(): Promise<string> {
    this.assertLive();
    await this.git(['add', '-A', '.']);
    return this.git(['diff', '--cached', '--binary', '--no-color', '--no-ext-diff', 'HEAD']);
  }

  async applyPatch(patch: string): Promise<{ ok: boolean; method?: string; log: string }> {
    this.assertLive();
    if (!patch.trim()) return { ok: true, method: 'empty', log: '' };
    const file = path.join(this.dir, `patch-${randomBytes(4).toString('hex')}.diff`);
    await fs.writeFile(file, patch.endsWith('\n') ? patch : patch + '\n');
    const attempts: [string, string, string[]][] = [
      ['git apply', 'git', ['apply', '--whitespace=nowarn', '--verbose', file]],
      ['git apply --recount', 'git', ['apply', '--whitespace=nowarn', '--recount', '--verbose', file]],
      ['patch --fuzz=3', 'patch', ['--batch', '--forward', '-p1', '--fuzz=3', '-i', file]],
    ];
    let log = '';
    try {
      for (const [method, cmd, args] of attempts) {
        try {
          const { stdout, stderr } = await execFileP(cmd, args, { cwd: this.root, env: { ...process.env, GIT_DIR: path.join(this.dir, 'no-repo') }, maxBuffer: 64 * 1024 * 1024 });
          return { ok: true, method, log: log + stdout + stderr };
        } catch (err) {
          const e = err as { stdout?: string; stderr?: string; message: string };
          log += `$ ${method}\n${e.stdout ?? ''}${e.stderr ?? e.message}\n`;
        }
      }
      return { ok: false, log };
    } finally {
      await fs.rm(file, { force: true });
    }
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.all([...this.ptys].map((p) => p.kill().catch(() => {})));
    await killByEnvMarker('BENCHGYM_SANDBOX', this.id);
    await fs.rm(this.dir, { recursive: true, force: true, maxRetries: 3 });
    this.onDestroy();
  }
}

/** A terminal dimension: a whole number from 1 to 1000 (else the default). */
function clampSize(n: number, fallback: number): number {
  return Number.isInteger(n) && n >= 1 ? Math.min(n, 1000) : fallback;
}

function fileError(err: unknown, rel: string): GymError {
  if (err instanceof GymError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new GymError('FILE_NOT_FOUND', `no such file: '${rel}'`);
  if (code === 'EISDIR') return new GymError('NOT_A_FILE', `'${rel}' is a directory`);
  if (code === 'ENOTDIR' || code === 'EEXIST') return new GymError('NOT_A_DIRECTORY', `a parent of '${rel}' is not a directory`);
  return new GymError('SANDBOX_UNAVAILABLE', `file operation on '${rel}' failed: ${(err as Error).message}`);
}
