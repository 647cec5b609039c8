import { execResultOf } from '../output.ts';
import type Docker from 'dockerode';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { GymError } from '../../errors.ts';
import { PTY_ENV, PTY_PROMPT, type DirEntry, type ExecOptions, type ExecResult, type FileStat, type PtySession, type Sandbox, type ApplyPatchOptions, type PatchApplied } from '../types.ts';
import { applyPatchBy } from '../patch_apply.ts';
import { BASELINE_COMMIT_ARGS, BASELINE_DIFF_ARGS, BASELINE_EXCLUDES, BASELINE_IDENTITY } from '../baseline.ts';
import { dockerError } from './client.ts';
import { dockerExec, killLeftovers, killMarkedProcesses, trackMarker } from './exec.ts';
import { readScript, specialFileError, SPECIAL_FILE_EXIT, WRITE_SCRIPT } from './files.ts';
import { isolatedGitShell, NEUTRAL_ATTRIBUTES } from '../git_isolation.ts';
import { diffTooLarge } from '../diff_limit.ts';
import { fileTooLarge } from '../read_limit.ts';
import type { DockerLimits } from './limits.ts';
import type { ExecutorClient } from '../executor/client.ts';
import { execThroughExecutor, listThroughExecutor, readThroughExecutor, statThroughExecutor } from '../executor/ops.ts';
import { shellQuote } from '../../shell_quote.ts';
import { OOM_NOTE, type MemoryLimitMark } from '../memory_limit.ts';
import { ContainerOomCounter } from './oom.ts';
import { DEFAULT_SANDBOX_USER, type SandboxUser } from '../sandbox_user.ts';

export const WORKDIR = '/workspace';
/** The sandbox container's own host name, in its /etc/hosts as SANDBOX_HOST_ADDRESS (../host_name.ts). */
export const SANDBOX_HOSTNAME = 'sandbox';
const STATE_DIR = '/tmp/.benchgym';
const BASELINE = `${STATE_DIR}/baseline.git`;

/** What a script run by the sandbox itself (git, patches) gave back. */
interface ScriptResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** Resolves a client path inside the container (symlinks too) or fails with exit 90. */
const RESOLVE = `p=$(realpath -m -- "$1") || exit 91; case "$p" in ${WORKDIR}|${WORKDIR}/*) ;; *) echo "outside" >&2; exit 90;; esac`;

export class DockerSandbox implements Sandbox {
  readonly backend = 'docker' as const;
  readonly workdir = WORKDIR;
  readonly isolation: string;
  readonly id: string;
  private destroyed = false;
  private destroying?: Promise<void>;
  /** The kernel's count of the container's OOM kills, read around each command. */
  private readonly oom: ContainerOomCounter;

  constructor(
    readonly container: Docker.Container,
    readonly volume: string,
    readonly image: string,
    private readonly limits: DockerLimits,
    private readonly vars: Record<string, string>,
    private readonly hooks: { destroy: () => Promise<void>; fork: () => Promise<Sandbox>; terminals: () => Promise<Docker.Container> },
    /** The episode's executor: every command and file operation goes through it; null: one `docker exec` each (executor 'off'). */
    readonly executor: ExecutorClient | null = null,
    /** Who commands, file operations and terminals run as; PID 1 and the executor stay root, out of their reach. */
    readonly user: SandboxUser = DEFAULT_SANDBOX_USER,
  ) {
    this.id = container.id.slice(0, 12);
    this.isolation = [
      'docker: no network, read-only root, capped memory / CPU / pids',
      `commands as uid ${user.uid} without capabilities`,
      `PID 1${executor ? ' and the in-sandbox executor (CAP_SETUID and CAP_SETGID only)' : ''} stay root, out of their reach`,
      "terminals in a container of their own (the workspace shared, not the pid namespace or /dev/pts)",
    ].join('; ');
    this.oom = new ContainerOomCounter(container);
  }

  /** `uid:gid` for `docker exec`. */
  private get execUser(): string {
    return `${this.user.uid}:${this.user.gid}`;
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

  /** An executor call; when it fails for the sandbox's sake, the container's state names the cause. */
  private async viaExecutor<T>(call: (ex: ExecutorClient) => Promise<T>): Promise<T> {
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    try {
      return await call(this.executor!);
    } catch (err) {
      if (err instanceof GymError && err.code === 'SANDBOX_UNAVAILABLE') await this.assertAlive();
      throw err;
    }
  }

  /** A script of the sandbox's own (git, patches): through the executor, else its own `docker exec`. */
  private async run(cmd: string[], opts: { stdin?: Buffer | string; timeoutMs?: number; maxBytes?: number } = {}): Promise<ScriptResult> {
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const maxOutputBytes = opts.maxBytes ?? 16 * 1024 * 1024;
    if (this.executor) {
      const r = await this.viaExecutor((ex) => ex.exec(cmd, { env: this.vars, stdin: opts.stdin, timeoutMs, maxOutputBytes }));
      if (r.signal === 'SIGKILL' && !r.timedOut) await this.assertAlive();
      return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    }
    const r = await this.dockerRun(cmd, { stdin: opts.stdin, timeoutMs, maxBytes: maxOutputBytes, raw: true });
    return { exitCode: r.exitCode, stdout: (r.raw ?? Buffer.alloc(0)).toString('utf8'), stderr: r.stderr.text() };
  }

  private async dockerRun(cmd: string[], opts: { stdin?: Buffer | string; timeoutMs?: number; raw?: boolean; maxBytes?: number; workdir?: string } = {}) {
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    try {
      const r = await dockerExec(this.container, { cmd, env: this.env(), stdin: opts.stdin, timeoutMs: opts.timeoutMs ?? 60_000, maxOutputBytes: opts.maxBytes ?? 16 * 1024 * 1024, rawStdout: opts.raw, workdir: opts.workdir ?? WORKDIR, user: this.execUser });
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
    const r = await this.dockerRun(['bash', '-c', `${RESOLVE}\n${script}`, 'benchgym', lexical], opts);
    if (r.exitCode === 90) throw new GymError('PATH_OUTSIDE_WORKSPACE', `'${rel}' leads outside the workspace through a symbolic link`);
    return r;
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    const before = await this.oom.count();
    const r = this.executor ? await this.execByExecutor(command, opts) : await this.execByDockerExec(command, opts);
    if (before === null || ((await this.oom.count()) ?? before) <= before) return r;
    // The memory limit killed a process while this command ran: marked by the backend, and said.
    const marked: ExecResult & MemoryLimitMark = { ...r, stderr: `${r.stderr}\n${OOM_NOTE}\n`, oomKilled: true };
    return marked;
  }

  /** One `docker exec` per command (executor 'off'). */
  private async execByDockerExec(command: string, opts: ExecOptions): Promise<ExecResult> {
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
        user: this.execUser,
      });
    } catch (err) {
      await this.assertAlive();
      throw err;
    }
    if (r.cancelled) throw new GymError('CANCELLED', 'the command was cancelled');
    if (r.exitCode === null || (r.exitCode === 137 && !r.timedOut)) await this.assertAlive();
    return execResultOf(r);
  }

  /** The timeout, output caps and cancel are the executor's; what a command left behind is killed after it, as by dockerExec. */
  private async execByExecutor(command: string, opts: ExecOptions): Promise<ExecResult> {
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    return execThroughExecutor(this.executor!, command, opts, {
      assertAlive: () => this.assertAlive(),
      track: (marker) => trackMarker(this.container.id, marker),
      sweepLeftovers: async () => void (await killLeftovers(this.container, this.execUser)),
      defaultTimeoutMs: this.limits.defaultTimeoutMs,
      maxOutputBytes: this.limits.maxOutputBytes,
      vars: this.vars,
    }, (f) => this.viaExecutor(f));
  }

  async readFile(rel: string, opts: { maxBytes?: number } = {}): Promise<Buffer> {
    if (this.executor) return this.viaExecutor((ex) => readThroughExecutor(ex, rel, opts.maxBytes));
    if (opts.maxBytes !== undefined) {
      const st = await this.stat(rel);
      if (st?.type === 'file' && st.size > opts.maxBytes) throw fileTooLarge(rel, st.size, opts.maxBytes);
    }
    const r = await this.fileOp(rel, readScript(256 * 1024 * 1024), { raw: true, maxBytes: 256 * 1024 * 1024 });
    if (r.exitCode === 93) throw new GymError('FILE_NOT_FOUND', `no such file: '${rel}'`);
    if (r.exitCode === 94) throw new GymError('NOT_A_FILE', `'${rel}' is a directory`);
    if (r.exitCode === SPECIAL_FILE_EXIT) throw specialFileError(rel, r.stderr.text());
    if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `reading '${rel}' failed: ${r.stderr.text()}`);
    return r.raw ?? Buffer.alloc(0);
  }

  async writeFile(rel: string, data: string | Buffer): Promise<void> {
    if (this.executor) return this.viaExecutor((ex) => ex.write(rel, data));
    const r = await this.fileOp(rel, WRITE_SCRIPT, { stdin: data });
    if (r.exitCode === 94) throw new GymError('NOT_A_FILE', `'${rel}' is a directory`);
    if (r.exitCode === SPECIAL_FILE_EXIT) throw specialFileError(rel, r.stderr.text());
    if (r.exitCode === 96) throw new GymError('NOT_A_DIRECTORY', `a parent of '${rel}' is not a directory`);
    if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `writing '${rel}' failed: ${r.stderr.text()}`);
  }

  async remove(rel: string): Promise<void> {
    if (this.executor) {
      await this.viaExecutor((ex) => ex.remove(rel));
      return;
    }
    const r = await this.fileOp(rel, `test "$p" = ${WORKDIR} && exit 95; rm -rf -- "$p"`);
    if (r.exitCode === 95) throw new GymError('INVALID_ARGUMENT', 'refusing to remove the workspace root');
  }

  async stat(rel: string): Promise<FileStat | null> {
    if (this.executor) return this.viaExecutor((ex) => statThroughExecutor(ex, rel));
    const r = await this.fileOp(rel, 'stat -c "%F\t%s" -- "$p" 2>/dev/null || exit 93');
    if (r.exitCode === 93) return null;
    const [kind, size] = r.stdout.text().trim().split('\t');
    const type = kind === 'regular file' || kind === 'regular empty file' ? 'file' : kind === 'directory' ? 'dir' : kind === 'symbolic link' ? 'symlink' : 'other';
    return { type, size: Number(size) || 0 };
  }

  async list(rel: string, opts: { depth?: number; limit?: number } = {}): Promise<{ entries: DirEntry[]; truncated: boolean }> {
    const depth = opts.depth ?? 1;
    const limit = opts.limit ?? 1000;
    if (this.executor) return this.viaExecutor((ex) => listThroughExecutor(ex, rel, depth, limit));
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
    return `${isolatedGitShell()} ${BASELINE_IDENTITY.join(' ')} --git-dir=${BASELINE} --work-tree=${WORKDIR} ${args}`;
  }

  async commitBaseline(): Promise<void> {
    const script = [
      `mkdir -p ${STATE_DIR}`,
      `${isolatedGitShell()} init -q --bare ${BASELINE} >/dev/null`,
      `printf '%s\\n' ${BASELINE_EXCLUDES.map(shellQuote).join(' ')} > ${BASELINE}/info/exclude`,
      `printf '%s' ${shellQuote(NEUTRAL_ATTRIBUTES)} > ${BASELINE}/info/attributes`,
      this.git('add -A .'),
      this.git(BASELINE_COMMIT_ARGS.map(shellQuote).join(' ')),
    ].join(' && ');
    const r = await this.run(['bash', '-c', script], { timeoutMs: 300_000 });
    if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not record the start state: ${r.stderr}`);
  }

  async diff(): Promise<string> {
    const diff = this.git(`${BASELINE_DIFF_ARGS.join(' ')} HEAD`);
    const max = this.limits.maxDiffBytes;
    // Counted in the container first: only a diff within the limit crosses into server memory.
    const script = `set -o pipefail; ${this.git('add -A .')} && n=$(${diff} | wc -c) || exit 1; if [ "$n" -gt ${max} ]; then echo "$n" >&2; exit 97; fi; ${diff}`;
    const r = await this.run(['bash', '-c', script], { maxBytes: max + 1024 * 1024, timeoutMs: 300_000 });
    if (r.exitCode === 97) throw diffTooLarge(Number(r.stderr.trim()) || max + 1, max);
    if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `git diff failed: ${r.stderr}`);
    return r.stdout;
  }

  /** Applied by a command in the container, the baseline within its reach as a start state to reset to. */
  async applyPatch(patch: string, opts: ApplyPatchOptions = {}): Promise<PatchApplied> {
    return applyPatchBy(patch, { ...opts, baselineGitDir: BASELINE }, async (script, stdin) => {
      const r = await this.run(['bash', '-c', script], { stdin, timeoutMs: 300_000 });
      return { exitCode: r.exitCode, log: r.stdout + r.stderr };
    });
  }

  /**
   * A TTY exec as the commands' uid in the sandbox's terminal container (factory.ts,
   * startTerminalContainer): the same workspace, but a pid namespace and /dev/pts the sandbox's
   * commands do not share. Raw bytes both ways (no multiplexing with a TTY), resized through the API.
   */
  async pty(opts: { cols: number; rows: number; env?: Record<string, string> }): Promise<PtySession> {
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    let host: Docker.Container;
    try {
      host = await this.hooks.terminals();
    } catch (err) {
      await this.assertAlive();
      throw dockerError(err, 'could not open a terminal in the sandbox');
    }
    const marker = randomBytes(6).toString('hex');
    // While it is open, its processes are no command's leftovers (see killLeftovers).
    const untrack = trackMarker(host.id, marker);
    let exec: Docker.Exec;
    let stream: NodeJS.ReadWriteStream;
    try {
      exec = await host.exec({
        Cmd: ['bash', '--norc', '-i'],
        Env: this.env({ TERM: 'xterm-256color', PS1: PTY_PROMPT, ...PTY_ENV, ...opts.env, BENCHGYM_EXEC: marker }),
        WorkingDir: WORKDIR,
        User: this.execUser,
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
      await killMarkedProcesses(host, marker, this.execUser);
      await killLeftovers(host, this.execUser);
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
        await killMarkedProcesses(host, marker, this.execUser);
        (stream as unknown as { destroy(): void }).destroy();
      },
    };
  }

  fork(): Promise<Sandbox> {
    if (this.destroyed) return Promise.reject(new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`));
    return this.hooks.fork();
  }

  /** Copies the workspace out as a tar stream (for snapshots); entries are checked by unpackTar. */
  async archiveWorkspace(): Promise<NodeJS.ReadableStream> {
    return this.container.getArchive({ path: `${WORKDIR}/.` });
  }

  destroy(): Promise<void> {
    if (!this.destroying) {
      this.destroyed = true;
      // The channel first: its pending calls end as "closed", not as a container that vanished.
      this.destroying = Promise.resolve(this.executor?.close())
        .catch(() => {})
        .then(() => this.hooks.destroy());
    }
    return this.destroying;
  }
}
