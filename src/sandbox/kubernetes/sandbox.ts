import { execResultOf } from '../output.ts';
import type { CoreV1Api } from '@kubernetes/client-node';
import path from 'node:path';
import { GymError } from '../../errors.ts';
import { Exec } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { PassThrough, Writable } from 'node:stream';
import { PTY_ENV, PTY_PROMPT, type ApplyPatchOptions, type DirEntry, type ExecOptions, type ExecResult, type FileStat, type PatchApplied, type PtySession, type Sandbox } from '../types.ts';
import { killMarkerScript, leftoverScript } from '../docker/exec.ts';
import { kubeError } from './client.ts';
import { applyPatchBy } from '../patch_apply.ts';
import { BASELINE_COMMIT_ARGS, BASELINE_DIFF_ARGS, BASELINE_EXCLUDES, BASELINE_IDENTITY } from '../baseline.ts';
import { readScript, specialFileError, SPECIAL_FILE_EXIT, WRITE_SCRIPT } from '../docker/files.ts';
import { isolatedGitShell, NEUTRAL_ATTRIBUTES } from '../git_isolation.ts';
import { diffTooLarge } from '../diff_limit.ts';
import { fileTooLarge } from '../read_limit.ts';
import { shellQuote } from '../../shell_quote.ts';
import { exitCodeOf, fileCapOf, liveMarkersOf, podExec, podQuiet, trackPodMarker, type PodExecOptions, type PodRef } from './exec.ts';
import { TERMINAL_CONTAINER, terminalContainer, waitContainerRunning, WORKDIR } from './pod.ts';
import { DEFAULT_SANDBOX_USER } from '../sandbox_user.ts';
import type { KubernetesLimits } from './limits.ts';
import type { ExecutorClient } from '../executor/client.ts';
import { podSweepScript } from './executor.ts';
import { execThroughExecutor, listThroughExecutor, readThroughExecutor, statThroughExecutor, type ExecutorSandboxHooks } from '../executor/ops.ts';

const STATE_DIR = '/tmp/.benchgym';
const BASELINE = `${STATE_DIR}/baseline.git`;

/** Resolves a client path inside the pod (symlinks too) or fails with exit 90. */
const RESOLVE = `p=$(realpath -m -- "$1") || exit 91; case "$p" in ${WORKDIR}|${WORKDIR}/*) ;; *) echo "outside" >&2; exit 90;; esac`;

/**
 * An episode's pod. With an executor (the default), every command and file operation is a frame
 * on its one long-lived exec channel; without one, each is an exec through the API server.
 */
export class KubernetesSandbox implements Sandbox {
  readonly backend = 'kubernetes' as const;
  readonly workdir = WORKDIR;
  readonly isolation: string;
  readonly id: string;
  private destroyed = false;
  private destroying?: Promise<void>;
  /** Set when the factory's watch saw the pod deleted: every later operation fails with it. */
  private lost?: GymError;
  /** The pod's terminal container, once added (terminals()). */
  private terminalRef?: Promise<PodRef>;

  constructor(
    readonly ref: PodRef,
    private readonly core: CoreV1Api,
    readonly image: string,
    private readonly limits: KubernetesLimits,
    private readonly vars: Record<string, string>,
    private readonly hooks: { destroy: () => Promise<void>; fork: () => Promise<Sandbox>; watched?: () => boolean },
    runtimeClass?: string,
    /** The pod's executor; null: one API exec per operation. */
    readonly executor: ExecutorClient | null = null,
  ) {
    this.id = ref.pod;
    const user = ref.user
      ? `commands as uid ${ref.user.uid} without capabilities; PID 1${executor ? ' and the in-sandbox executor' : ''} root with only CAP_SETUID and CAP_SETGID, out of their reach`
      : "commands as the container's user";
    this.isolation = [
      `kubernetes pod ${ref.namespace}/${ref.pod}: read-only root, capped memory / CPU / ephemeral storage, kubelet pids cap, no service-account token, deny-all NetworkPolicy${runtimeClass ? `, runtime class ${runtimeClass}` : ''}`,
      user,
      'terminals in a container of their own',
      ...(executor ? ['one in-sandbox executor'] : []),
    ].join('; ');
  }

  /**
   * An executor call; when it fails for the sandbox's sake, the pod's state names the cause.
   * A dead executor with the pod still up loses the sandbox as well: nothing can run in it any more.
   */
  private async viaExecutor<T>(call: (ex: ExecutorClient) => Promise<T>): Promise<T> {
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    if (this.lost) throw this.lost;
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
      track: (marker) => trackPodMarker(this.ref.pod, marker),
      sweepLeftovers: () => this.sweepLeftovers(),
      defaultTimeoutMs: this.limits.defaultTimeoutMs,
      maxOutputBytes: this.limits.maxOutputBytes,
      vars: this.vars,
    };
  }

  /** What finished commands left (reparented to the pod's PID 1), killed by a script the executor runs: no API exec. */
  private async sweepLeftovers(): Promise<void> {
    if (this.destroyed || this.executor?.closedReason) return;
    await this.executor!.exec(['sh', '-c', podSweepScript(liveMarkersOf(this.ref.pod))], { timeoutMs: 30_000, maxOutputBytes: 4096 }).catch(() => {});
  }

  /** The pod was deleted (seen by the factory's watch): the sandbox is lost, whatever the pod still answers. */
  markLost(reason: string): void {
    if (this.destroyed || this.lost) return;
    this.lost = new GymError('SANDBOX_UNAVAILABLE', reason, { sandboxLost: true });
    void this.executor?.close().catch(() => {});
  }

  /** After a failed exec: is the pod gone or stopped? Then the episode's sandbox is, too. */
  private async assertAlive(): Promise<void> {
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    if (this.lost) throw this.lost;
    let pod;
    try {
      pod = await this.core.readNamespacedPod({ name: this.ref.pod, namespace: this.ref.namespace });
    } catch {
      throw new GymError('SANDBOX_UNAVAILABLE', `the sandbox pod ${this.id} no longer exists`, { sandboxLost: true });
    }
    if (pod.metadata?.deletionTimestamp) throw new GymError('SANDBOX_UNAVAILABLE', `the sandbox pod ${this.id} is being deleted`, { sandboxLost: true });
    const cs = pod.status?.containerStatuses?.[0];
    if (pod.status?.phase !== 'Running' || !cs?.state?.running) {
      const term = cs?.state?.terminated ?? cs?.lastState?.terminated;
      const oom = term?.reason === 'OOMKilled';
      const why = oom ? 'it was killed for running out of memory (OOM)' : `it is ${pod.status?.phase ?? 'unknown'}${pod.status?.reason ? ` (${pod.status.reason}: ${pod.status.message ?? ''})` : ''}${term ? ` (exit code ${term.exitCode})` : ''}`;
      throw new GymError('SANDBOX_UNAVAILABLE', `the sandbox pod ${this.id} stopped: ${why}`, { oomKilled: oom, sandboxLost: true });
    }
  }

  private async run(cmd: string[], opts: Partial<PodExecOptions> & { raw?: boolean; maxBytes?: number } = {}) {
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    try {
      const r = await podExec(this.ref, { cmd, env: this.vars, stdin: opts.stdin, timeoutMs: opts.timeoutMs ?? 60_000, maxOutputBytes: opts.maxBytes ?? 16 * 1024 * 1024, rawStdout: opts.raw, workdir: opts.workdir ?? WORKDIR });
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
    if (this.executor) {
      const r = await this.viaExecutor((ex) => ex.exec(['bash', '-c', script], { env: this.vars, stdin: opts.stdin, timeoutMs: opts.timeoutMs ?? 60_000, maxOutputBytes: opts.maxBytes ?? 16 * 1024 * 1024 }));
      if (r.signal === 'SIGKILL' && !r.timedOut) await this.assertAlive();
      return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    }
    const r = await this.run(['bash', '-c', script], { ...opts, raw: true });
    return { exitCode: r.exitCode, stdout: (r.raw ?? Buffer.alloc(0)).toString('utf8'), stderr: r.stderr.text() };
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
    if (this.executor) {
      if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
      if (this.lost) throw this.lost;
      // A pod deleted through the API runs on for a moment (the kubelet kills it later), and what
      // it answers then must not count: the factory's watch marks it lost; without a watch, the
      // pod is read while the command runs.
      const gone = this.hooks.watched?.() ? Promise.resolve(null) : this.assertAlive().then(() => null, (e: unknown) => e);
      const ran = execThroughExecutor(this.executor, command, opts, this.executorHooks, (f) => this.viaExecutor(f));
      const [result, lost] = await Promise.all([ran.then((r) => ({ r }), (err: unknown) => ({ err })), gone]);
      if (this.lost) throw this.lost;
      if (lost instanceof GymError && lost.details?.sandboxLost) throw lost;
      if ('err' in result) throw result.err;
      return result.r;
    }
    let workdir = WORKDIR;
    if (opts.cwd) {
      const r = await this.fileOp(opts.cwd, 'test -d "$p" || exit 92; printf %s "$p"');
      if (r.exitCode === 92) throw new GymError('NOT_A_DIRECTORY', `'${opts.cwd}' is not a directory`);
      workdir = r.stdout.text();
    }
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    let r;
    try {
      r = await podExec(this.ref, {
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
    // Counted in the pod first: only a diff within the limit crosses into server memory.
    const script = `set -o pipefail; ${this.git('add -A .')} && n=$(${diff} | wc -c) || exit 1; if [ "$n" -gt ${max} ]; then echo "$n" >&2; exit 97; fi; ${diff}`;
    const r = await this.script(script, { maxBytes: max + 1024 * 1024, timeoutMs: 300_000 });
    if (r.exitCode === 97) throw diffTooLarge(Number(r.stderr.trim()) || max + 1, max);
    if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `git diff failed: ${r.stderr}`);
    return r.stdout;
  }

  async applyPatch(patch: string, opts: ApplyPatchOptions = {}): Promise<PatchApplied> {
    return applyPatchBy(patch, { ...opts, baselineGitDir: BASELINE }, async (script, stdin) => {
      const r = await this.script(script, { stdin, timeoutMs: 300_000 });
      return { exitCode: r.exitCode, log: r.stdout + r.stderr };
    });
  }

  /**
   * The pod's terminal container (pod.ts, terminalContainer), added on the first terminal and
   * kept for the next (an ephemeral container cannot be removed; it goes with the pod).
   */
  private terminals(): Promise<PodRef> {
    this.terminalRef ??= (async () => {
      const { namespace, pod: name } = this.ref;
      const pod = await this.core.readNamespacedPod({ name, namespace });
      if (!pod.spec?.ephemeralContainers?.some((c) => c.name === TERMINAL_CONTAINER)) {
        pod.spec!.ephemeralContainers = [...(pod.spec!.ephemeralContainers ?? []), terminalContainer(this.image, this.ref.user ?? DEFAULT_SANDBOX_USER)];
        await this.core.replaceNamespacedPodEphemeralcontainers({ name, namespace, body: pod });
      }
      await waitContainerRunning(this.core, namespace, name, TERMINAL_CONTAINER, this.limits.startTimeoutMs);
      // It runs as the commands' uid already: nothing to drop to.
      return { ...this.ref, container: TERMINAL_CONTAINER, user: undefined };
    })().catch((err: unknown) => {
      this.terminalRef = undefined;
      throw kubeError(err, `could not add the terminal container to pod ${this.ref.pod} (the server needs 'update' on pods/ephemeralcontainers)`);
    });
    return this.terminalRef;
  }

  /**
   * A TTY exec in the pod's terminal container: the workspace shared, but not the commands'
   * pid namespace or /dev/pts. Raw bytes both ways, resized through the exec channel's resize stream.
   */
  async pty(opts: { cols: number; rows: number; env?: Record<string, string> }): Promise<PtySession> {
    if (this.destroyed) throw new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`);
    let ref: PodRef;
    try {
      ref = await this.terminals();
    } catch (err) {
      await this.assertAlive();
      throw err;
    }
    const marker = randomBytes(6).toString('hex');
    const untrack = trackPodMarker(`${ref.pod}/${TERMINAL_CONTAINER}`, marker);
    const dataListeners: ((data: Buffer) => void)[] = [];
    const exitListeners: ((code: number | null) => void)[] = [];
    // A terminal-like sink: the client sends its size on the resize channel, and again on 'resize'.
    const out = Object.assign(
      new Writable({
        write(b: Buffer, _enc, cb) {
          for (const l of dataListeners) l(Buffer.from(b));
          cb();
        },
      }),
      { columns: opts.cols, rows: opts.rows },
    );
    const stdin = new PassThrough();
    const vars = Object.entries({ ...this.vars, TERM: 'xterm-256color', PS1: PTY_PROMPT, ...PTY_ENV, ...opts.env, BENCHGYM_EXEC: marker }).map(([k, v]) => `${k}=${v}`);
    let status: Parameters<typeof exitCodeOf>[0];
    let ws;
    try {
      // The kubelet applies the client's first size asynchronously (its channel is not ordered with
      // stdin's): the terminal is sized here first, so the shell's first command already sees it.
      const size = `stty rows ${Math.trunc(opts.rows)} cols ${Math.trunc(opts.cols)} 2>/dev/null; `;
      ws = await new Exec(ref.kc).exec(ref.namespace, ref.pod, TERMINAL_CONTAINER, ['env', ...vars, 'sh', '-c', `${fileCapOf(ref)}${size}cd ${WORKDIR} && exec bash --norc -i`], out, null, stdin, true, (s) => (status = s));
    } catch (err) {
      untrack();
      await this.assertAlive();
      throw kubeError(err, 'could not open a terminal in the sandbox');
    }
    let exited = false;
    ws.on('close', async () => {
      if (exited) return;
      exited = true;
      untrack();
      // What the shell left in the background goes with it.
      await podQuiet(ref, ['sh', '-c', `${killMarkerScript(marker)}\n${leftoverScript(liveMarkersOf(`${ref.pod}/${TERMINAL_CONTAINER}`))}`]);
      for (const l of exitListeners) l(exitCodeOf(status));
    });
    return {
      write: (data) => void stdin.write(data),
      resize: async (cols, rows) => {
        out.columns = cols;
        out.rows = rows;
        out.emit('resize');
      },
      onData: (listener) => void dataListeners.push(listener),
      onExit: (listener) => void exitListeners.push(listener),
      kill: async () => {
        await podQuiet(ref, ['sh', '-c', killMarkerScript(marker)]);
        ws.close();
      },
    };
  }

  fork(): Promise<Sandbox> {
    if (this.destroyed) return Promise.reject(new GymError('SANDBOX_UNAVAILABLE', `sandbox ${this.id} has been destroyed`));
    return this.hooks.fork();
  }

  /** The workspace as a tar archive (for fork), at most `maxBytes`. */
  async packWorkspace(maxBytes: number): Promise<Buffer> {
    // Its entries, not '.': the copy's root is the emptyDir's, whose mode only root could set.
    const r = await this.run(['sh', '-c', `cd ${WORKDIR} && find . -mindepth 1 -maxdepth 1 -print0 | tar --null -T - -cf -`], { raw: true, maxBytes, timeoutMs: 300_000 });
    if (r.exitCode !== 0 || r.stdout.total > maxBytes) throw new GymError('SANDBOX_UNAVAILABLE', `could not copy the workspace: ${r.stderr.text() || `${r.stdout.total} bytes`}`);
    return r.raw ?? Buffer.alloc(0);
  }

  /** Replaces the workspace with a tar archive from packWorkspace. */
  async unpackWorkspace(tar: Buffer): Promise<void> {
    const r = await this.run(['sh', '-c', `find ${WORKDIR} -mindepth 1 -delete && tar -C ${WORKDIR} -xf -`], { stdin: tar, maxBytes: 64 * 1024, timeoutMs: 300_000 });
    if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not unpack the workspace copy: ${r.stderr.text()}`);
  }

  destroy(): Promise<void> {
    if (!this.destroying) {
      this.destroyed = true;
      // The channel first: its pending calls end as "closed", not as a pod that vanished.
      this.destroying = Promise.resolve(this.executor?.close())
        .catch(() => {})
        .then(() => this.hooks.destroy());
    }
    return this.destroying;
  }
}
