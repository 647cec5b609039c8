import { GymError } from '../../errors.ts';
import { shellQuote } from '../../shell_quote.ts';
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
import type { ExecutorClient } from '../executor/client.ts';
import {
  execThroughExecutor,
  listThroughExecutor,
  readThroughExecutor,
  statThroughExecutor,
  type ExecutorSandboxHooks,
} from '../executor/ops.ts';
import type { ContainerLimits } from './limits.ts';
import type { ContainerTransport, RunOptions } from './transport.ts';
import { WORKDIR } from './workspace.ts';

const STATE_DIR = '/tmp/.benchgym';
const BASELINE = `${STATE_DIR}/baseline.git`;

/** What the factory does for one of its sandboxes. */
export interface ContainerSandboxHooks {
  destroy(): Promise<void>;
  fork(): Promise<Sandbox>;
}

/**
 * An episode's container, whichever backend started it. Every command, file operation and
 * script is a frame on its executor's one long-lived channel; the transport (the backend's part,
 * transport.ts) starts processes of its own only to copy the workspace for fork.
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
    /** The sandbox's executor: every command and file operation goes through it. */
    readonly executor: ExecutorClient,
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
    void this.executor.close().catch(() => {});
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
      return await call(this.executor);
    } catch (err) {
      if (!(err instanceof GymError) || err.code !== 'SANDBOX_UNAVAILABLE') throw err;
      await this.assertAlive();
      if (this.executor.closedReason) throw new GymError('SANDBOX_UNAVAILABLE', err.message, { ...err.details, sandboxLost: true });
      throw err;
    }
  }

  private get executorHooks(): ExecutorSandboxHooks {
    return {
      assertAlive: () => this.assertAlive(),
      track: (marker) => this.transport.track(marker),
      sweepLeftovers: async () => {
        if (this.destroyed || this.executor.closedReason) return;
        await this.transport.sweepLeftovers(this.executor).catch(() => {});
      },
      defaultTimeoutMs: this.limits.defaultTimeoutMs,
      maxOutputBytes: this.limits.maxOutputBytes,
      vars: this.vars,
    };
  }

  /** One process of the transport's (the workspace's archives, raw bytes); a lost container is named as such. */
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

  /** A script of the sandbox itself (git, patches), through the executor: text out. */
  private async script(script: string, opts: { stdin?: string; timeoutMs?: number; maxBytes?: number } = {}) {
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const maxOutputBytes = opts.maxBytes ?? 16 * 1024 * 1024;
    const run = { env: this.vars, stdin: opts.stdin, timeoutMs, maxOutputBytes };
    const r = await this.viaExecutor((ex) => ex.exec(['bash', '-c', script], run));
    if (r.signal === 'SIGKILL' && !r.timedOut) await this.assertAlive();
    return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    this.usable();
    let r: ExecResult;
    try {
      r = await this.transport.observe(() => this.execByExecutor(command, opts));
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

  // File operations: the executor walks each path from the workspace root without following links out of it.
  async readFile(rel: string, opts: { maxBytes?: number } = {}): Promise<Buffer> {
    return this.viaExecutor((ex) => readThroughExecutor(ex, rel, opts.maxBytes));
  }

  async writeFile(rel: string, data: string | Buffer): Promise<void> {
    return this.viaExecutor((ex) => ex.write(rel, data));
  }

  async remove(rel: string): Promise<void> {
    await this.viaExecutor((ex) => ex.remove(rel));
  }

  async stat(rel: string): Promise<FileStat | null> {
    return this.viaExecutor((ex) => statThroughExecutor(ex, rel));
  }

  async list(rel: string, opts: { depth?: number; limit?: number } = {}): Promise<{ entries: DirEntry[]; truncated: boolean }> {
    return this.viaExecutor((ex) => listThroughExecutor(ex, rel, opts.depth ?? 1, opts.limit ?? 1000));
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
      this.destroying = Promise.resolve(this.executor.close())
        .catch(() => {})
        .then(() => this.hooks.destroy());
    }
    return this.destroying;
  }
}
