import path from 'node:path';
import { GymError } from '../../errors.ts';
import { shellQuote } from '../../shell_quote.ts';
import { execResultOf } from '../output.ts';
import {
  PTY_ENV,
  PTY_PROMPT,
  type ApplyPatchOptions,
  type DirEntry,
  type ExecOptions,
  type ExecResult,
  type FileStat,
  type PatchApplied,
  type PtySession,
  type Sandbox,
} from '../types.ts';
import { applyPatchBy } from '../patch_apply.ts';
import { BASELINE_COMMIT_ARGS, BASELINE_DIFF_ARGS, BASELINE_EXCLUDES, BASELINE_IDENTITY } from '../baseline.ts';
import { isolatedGitShell, NEUTRAL_ATTRIBUTES } from '../git_isolation.ts';
import { diffTooLarge } from '../diff_limit.ts';
import { fileTooLarge } from '../read_limit.ts';
import type { ExecutorClient } from '../executor/client.ts';
import {
  execThroughExecutor,
  listThroughExecutor,
  readThroughExecutor,
  statThroughExecutor,
  type ExecutorSandboxHooks,
} from '../executor/ops.ts';
import { readScript, specialFileError, SPECIAL_FILE_EXIT, WRITE_SCRIPT } from './files.ts';
import type { ContainerLimits } from './limits.ts';
import type { ContainerTransport, RunOptions } from './transport.ts';
import { WORKDIR } from './workspace.ts';

const STATE_DIR = '/tmp/.benchgym';
const BASELINE = `${STATE_DIR}/baseline.git`;

/** Resolves a client path inside the container (symlinks too) or fails with exit 90. */
const RESOLVE = `p=$(realpath -m -- "$1") || exit 91; case "$p" in ${WORKDIR}|${WORKDIR}/*) ;; *) echo "outside" >&2; exit 90;; esac`;

/** What the factory does for one of its sandboxes. */
export interface ContainerSandboxHooks {
  destroy(): Promise<void>;
  fork(): Promise<Sandbox>;
}

/**
 * An episode's container, whichever backend started it. With an executor (the default), every
 * command and file operation is a frame on its one long-lived channel; without one, each is a
 * process the transport starts. The transport is the backend's part (transport.ts).
 */
export class ContainerSandbox<T extends ContainerTransport = ContainerTransport> implements Sandbox {
  readonly workdir = WORKDIR;
  readonly id: string;
  private destroyed = false;
  private destroying?: Promise<void>;
  /** Set when the backend saw the sandbox deleted (markLost): every later operation fails with it. */
  private lost?: GymError;

  constructor(
    readonly transport: T,
    readonly image: string,
    private readonly limits: ContainerLimits,
    private readonly vars: Record<string, string>,
    private readonly hooks: ContainerSandboxHooks,
    /** The sandbox's executor: every command and file operation goes through it; null: one process each (executor 'off'). */
    readonly executor: ExecutorClient | null = null,
  ) {
    this.id = transport.id;
  }

  get backend(): T['backend'] {
    return this.transport.backend;
  }

  get isolation(): string {
    return this.transport.isolation;
  }

  /** The backend saw the container deleted: the sandbox is lost, whatever the container still answers. */
  markLost(reason: string): void {
    if (this.destroyed || this.lost) return;
    this.lost = new GymError('SANDBOX_UNAVAILABLE', reason, { sandboxLost: true });
    void this.executor?.close().catch(() => {});
  }

  /** Throws when the sandbox was destroyed or lost. */
  private usable(): void {
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    if (this.lost) throw this.lost;
  }

  /** After a failed call: is the container gone or stopped? Then the episode's sandbox is, too. */
  private async assertAlive(): Promise<void> {
    this.usable();
    await this.transport.probe();
  }

  /**
   * An executor call; when it fails for the sandbox's sake, the container's state names the cause.
   * A dead executor with the container still up loses the sandbox as well: nothing can run in it any more.
   */
  private async viaExecutor<R>(call: (ex: ExecutorClient) => Promise<R>): Promise<R> {
    this.usable();
    try {
      return await call(this.executor!);
    } catch (err) {
      if (!(err instanceof GymError) || err.code !== 'SANDBOX_UNAVAILABLE') throw err;
      await this.assertAlive();
      if (this.executor!.closedReason) throw new GymError('SANDBOX_UNAVAILABLE', err.message, { ...err.details, sandboxLost: true });
      throw err;
    }
  }

  private get executorHooks(): ExecutorSandboxHooks {
    return {
      assertAlive: () => this.assertAlive(),
      track: (marker) => this.transport.track(marker),
      sweepLeftovers: async () => {
        if (this.destroyed || this.executor?.closedReason) return;
        await this.transport.sweepLeftovers(this.executor!).catch(() => {});
      },
      defaultTimeoutMs: this.limits.defaultTimeoutMs,
      maxOutputBytes: this.limits.maxOutputBytes,
      vars: this.vars,
    };
  }

  /** One process of the transport's (executor 'off', archives); a lost container is named as such. */
  private async run(cmd: string[], opts: Partial<RunOptions> = {}) {
    this.usable();
    try {
      const r = await this.transport.run({
        env: this.vars,
        workdir: WORKDIR,
        timeoutMs: 60_000,
        maxOutputBytes: 16 * 1024 * 1024,
        ...opts,
        cmd,
      });
      if (r.exitCode === null || r.exitCode === 137 || r.exitCode === 126) await this.assertAlive();
      return r;
    } catch (err) {
      if (err instanceof GymError && err.code !== 'SANDBOX_UNAVAILABLE') throw err;
      await this.assertAlive();
      throw err;
    }
  }

  /** A script of the sandbox itself (git, patches): text out, through the executor when there is one. */
  private async script(script: string, opts: { stdin?: string; timeoutMs?: number; maxBytes?: number } = {}) {
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const maxOutputBytes = opts.maxBytes ?? 16 * 1024 * 1024;
    if (this.executor) {
      const r = await this.viaExecutor((ex) =>
        ex.exec(['bash', '-c', script], { env: this.vars, stdin: opts.stdin, timeoutMs, maxOutputBytes }),
      );
      if (r.signal === 'SIGKILL' && !r.timedOut) await this.assertAlive();
      return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    }
    const r = await this.run(['bash', '-c', script], { stdin: opts.stdin, timeoutMs, maxOutputBytes, rawStdout: true });
    return { exitCode: r.exitCode, stdout: (r.raw ?? Buffer.alloc(0)).toString('utf8'), stderr: r.stderr.text() };
  }

  /** Runs a file-operation script with the resolved path as $p; maps exit 90 to PATH_OUTSIDE_WORKSPACE. */
  private async fileOp(rel: string, script: string, opts: { stdin?: Buffer | string; raw?: boolean; maxBytes?: number } = {}) {
    const candidate = rel.trim() === '' ? '.' : rel;
    const lexical = path.posix.resolve(WORKDIR, candidate);
    if (lexical !== WORKDIR && !lexical.startsWith(WORKDIR + '/')) {
      throw new GymError('PATH_OUTSIDE_WORKSPACE', `'${rel}' is outside the workspace; use a path relative to the workspace root`);
    }
    const r = await this.run(['bash', '-c', `${RESOLVE}\n${script}`, 'benchgym', lexical], {
      stdin: opts.stdin,
      rawStdout: opts.raw,
      ...(opts.maxBytes ? { maxOutputBytes: opts.maxBytes } : {}),
    });
    if (r.exitCode === 90) throw new GymError('PATH_OUTSIDE_WORKSPACE', `'${rel}' leads outside the workspace through a symbolic link`);
    return r;
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    this.usable();
    let r: ExecResult;
    try {
      r = await this.transport.observe(() => (this.executor ? this.execByExecutor(command, opts) : this.execByProcess(command, opts)));
    } catch (err) {
      throw this.lost ?? err;
    }
    if (this.lost) throw this.lost;
    return r;
  }

  /** The timeout, output caps and cancel are the executor's; what a command left behind is swept after it. */
  private execByExecutor(command: string, opts: ExecOptions): Promise<ExecResult> {
    return execThroughExecutor(this.executor!, command, opts, this.executorHooks, (f) => this.viaExecutor(f));
  }

  /** One process per command (executor 'off'). */
  private async execByProcess(command: string, opts: ExecOptions): Promise<ExecResult> {
    let workdir = WORKDIR;
    if (opts.cwd) {
      const r = await this.fileOp(opts.cwd, 'test -d "$p" || exit 92; printf %s "$p"');
      if (r.exitCode === 92) throw new GymError('NOT_A_DIRECTORY', `'${opts.cwd}' is not a directory`);
      workdir = r.stdout.text();
    }
    this.usable();
    let r;
    try {
      r = await this.transport.run({
        cmd: ['bash', '-c', command],
        env: { ...this.vars, ...opts.env },
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
    return execResultOf(r);
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
    const type =
      kind === 'regular file' || kind === 'regular empty file'
        ? 'file'
        : kind === 'directory'
          ? 'dir'
          : kind === 'symbolic link'
            ? 'symlink'
            : 'other';
    return { type, size: Number(size) || 0 };
  }

  async list(rel: string, opts: { depth?: number; limit?: number } = {}): Promise<{ entries: DirEntry[]; truncated: boolean }> {
    const depth = opts.depth ?? 1;
    const limit = opts.limit ?? 1000;
    if (this.executor) return this.viaExecutor((ex) => listThroughExecutor(ex, rel, depth, limit));
    const r = await this.fileOp(
      rel,
      `test -e "$p" || exit 93; test -d "$p" || exit 92; find "$p" -mindepth 1 -maxdepth ${depth} \\( ` +
        `-name .git -o -name __pycache__ \\) -prune -o -printf '%d\\t%y\\t%s\\t%P\\n' | head -n ${limit + 1}`,
    );
    if (r.exitCode === 93) throw new GymError('FILE_NOT_FOUND', `no such file: '${rel}'`);
    if (r.exitCode === 92) throw new GymError('NOT_A_DIRECTORY', `'${rel}' is not a directory`);
    const prefix = path.posix.relative(WORKDIR, path.posix.resolve(WORKDIR, rel));
    const rows = r.stdout
      .text()
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [d, y, s, p] = line.split('\t');
        const type: DirEntry['type'] = y === 'f' ? 'file' : y === 'd' ? 'dir' : y === 'l' ? 'symlink' : 'other';
        return { depth: Number(d), entry: { path: prefix ? `${prefix}/${p}` : p!, type, size: type === 'file' ? Number(s) : 0 } };
      });
    rows.sort((a, b) => a.depth - b.depth || a.entry.path.localeCompare(b.entry.path));
    return { entries: rows.slice(0, limit).map((x) => x.entry), truncated: rows.length > limit };
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
    const r = await this.script(script, { timeoutMs: 300_000 });
    if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not record the start state: ${r.stderr}`);
  }

  async diff(): Promise<string> {
    const diff = this.git(`${BASELINE_DIFF_ARGS.join(' ')} HEAD`);
    const max = this.limits.maxDiffBytes;
    // Counted in the container first: only a diff within the limit crosses into server memory.
    const script =
      `set -o pipefail; ${this.git('add -A .')} && n=$(${diff} | wc -c) || ` +
      `exit 1; if [ "$n" -gt ${max} ]; then echo "$n" >&2; exit 97; fi; ${diff}`;
    const r = await this.script(script, { maxBytes: max + 1024 * 1024, timeoutMs: 300_000 });
    if (r.exitCode === 97) throw diffTooLarge(Number(r.stderr.trim()) || max + 1, max);
    if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `git diff failed: ${r.stderr}`);
    return r.stdout;
  }

  /** Applied by a command in the container, the baseline within its reach as a start state to reset to. */
  async applyPatch(patch: string, opts: ApplyPatchOptions = {}): Promise<PatchApplied> {
    return applyPatchBy(patch, { ...opts, baselineGitDir: BASELINE }, async (script, stdin) => {
      const r = await this.script(script, { stdin, timeoutMs: 300_000 });
      return { exitCode: r.exitCode, log: r.stdout + r.stderr };
    });
  }

  /** A person's terminal in the transport's terminal container: the workspace shared, not the commands' processes. */
  async pty(opts: { cols: number; rows: number; env?: Record<string, string> }): Promise<PtySession> {
    this.usable();
    try {
      return await this.transport.terminal({
        cols: opts.cols,
        rows: opts.rows,
        env: { ...this.vars, TERM: 'xterm-256color', PS1: PTY_PROMPT, ...PTY_ENV, ...opts.env },
      });
    } catch (err) {
      await this.assertAlive();
      throw err;
    }
  }

  fork(): Promise<Sandbox> {
    if (this.destroyed) return Promise.reject(new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`));
    return this.hooks.fork();
  }

  /** The workspace as a tar archive (for fork), at most `maxBytes`. */
  async packWorkspace(maxBytes: number): Promise<Buffer> {
    // Its entries, not '.': the copy's root is the container's, whose mode only root could set.
    const r = await this.run(['sh', '-c', `cd ${WORKDIR} && find . -mindepth 1 -maxdepth 1 -print0 | tar --null -T - -cf -`], {
      rawStdout: true,
      maxOutputBytes: maxBytes,
      timeoutMs: 300_000,
    });
    if (r.exitCode !== 0 || r.stdout.total > maxBytes)
      throw new GymError('SANDBOX_UNAVAILABLE', `could not copy the workspace: ${r.stderr.text() || `${r.stdout.total} bytes`}`);
    return r.raw ?? Buffer.alloc(0);
  }

  /** Replaces the workspace with a tar archive from packWorkspace. */
  async unpackWorkspace(tar: Buffer): Promise<void> {
    const r = await this.run(['sh', '-c', `find ${WORKDIR} -mindepth 1 -delete && tar -C ${WORKDIR} -xf -`], {
      stdin: tar,
      maxOutputBytes: 64 * 1024,
      timeoutMs: 300_000,
    });
    if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not unpack the workspace copy: ${r.stderr.text()}`);
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
