import { Exec, type CoreV1Api } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { PassThrough, Writable } from 'node:stream';
import { GymError } from '../../errors.ts';
import type { ExecResult, PtySession } from '../types.ts';
import { DEFAULT_SANDBOX_USER } from '../sandbox_user.ts';
import type { ExecutorClient } from '../executor/client.ts';
import { killMarkerScript, leftoverScript, liveMarkersOf, trackMarker } from '../container/processes.ts';
import type { ContainerTransport, RunOptions, RunResult, TerminalOptions } from '../container/transport.ts';
import { WORKDIR } from '../container/workspace.ts';
import { kubeError } from './client.ts';
import { exitCodeOf, fileCapOf, podExec, podQuiet, type PodRef } from './exec.ts';
import { podSweepScript } from './executor.ts';
import type { KubernetesLimits } from './limits.ts';
import { TERMINAL_CONTAINER, terminalContainer, waitContainerRunning } from './pod.ts';

/** How a container sandbox reaches its pod: execs through the API server, the pod's status, an ephemeral terminal container. */
export class PodTransport implements ContainerTransport {
  readonly backend = 'kubernetes' as const;
  readonly id: string;
  readonly isolation: string;
  /** The pod's terminal container, once added (terminals()). */
  private terminalRef?: Promise<PodRef>;

  constructor(
    readonly ref: PodRef,
    private readonly core: CoreV1Api,
    private readonly image: string,
    private readonly limits: KubernetesLimits,
    /** True while the factory's watch of its pods is up: a deletion is then seen without a read per command. */
    private readonly watched: () => boolean,
    runtimeClass?: string,
  ) {
    this.id = ref.pod;
    const user = ref.user
      ? `commands as uid ${ref.user.uid} without capabilities; ` +
        'PID 1 and the in-sandbox executor root with only CAP_SETUID and CAP_SETGID, out of their reach'
      : "commands as the container's user";
    this.isolation = [
      `kubernetes pod ${ref.namespace}/${ref.pod}: read-only root, capped memory / CPU / ephemeral storage, kubelet ` +
        `pids cap, no service-account token, deny-all NetworkPolicy${runtimeClass ? `, runtime class ${runtimeClass}` : ''}`,
      user,
      'terminals in a container of their own',
      'one in-sandbox executor',
    ].join('; ');
  }

  run(opts: RunOptions): Promise<RunResult> {
    return podExec(this.ref, opts);
  }

  async probe(): Promise<void> {
    let pod;
    try {
      pod = await this.core.readNamespacedPod({ name: this.ref.pod, namespace: this.ref.namespace });
    } catch {
      throw new GymError('SANDBOX_UNAVAILABLE', `the sandbox pod ${this.id} no longer exists`, { sandboxLost: true });
    }
    if (pod.metadata?.deletionTimestamp)
      throw new GymError('SANDBOX_UNAVAILABLE', `the sandbox pod ${this.id} is being deleted`, { sandboxLost: true });
    const cs = pod.status?.containerStatuses?.[0];
    if (pod.status?.phase !== 'Running' || !cs?.state?.running) {
      const term = cs?.state?.terminated ?? cs?.lastState?.terminated;
      const oom = term?.reason === 'OOMKilled';
      const status = `${pod.status?.phase ?? 'unknown'}${pod.status?.reason ? ` (${pod.status.reason}: ${pod.status.message ?? ''})` : ''}`;
      const why = oom ? 'it was killed for running out of memory (OOM)' : `it is ${status}${term ? ` (exit code ${term.exitCode})` : ''}`;
      throw new GymError('SANDBOX_UNAVAILABLE', `the sandbox pod ${this.id} stopped: ${why}`, { oomKilled: oom, sandboxLost: true });
    }
  }

  track(marker: string): () => void {
    return trackMarker(this.ref.pod, marker);
  }

  /** What finished commands left (reparented to the pod's PID 1), killed by a script the executor runs: no API exec. */
  async sweepLeftovers(executor: ExecutorClient): Promise<void> {
    await executor.exec(['sh', '-c', podSweepScript(liveMarkersOf(this.ref.pod))], { timeoutMs: 30_000, maxOutputBytes: 4096 });
  }

  /**
   * A pod deleted through the API runs on for a moment (the kubelet kills it later), and what it
   * answers then must not count: the factory's watch marks it lost; without a watch, the pod is
   * read while the command runs.
   */
  async observe(command: () => Promise<ExecResult>): Promise<ExecResult> {
    const gone = this.watched()
      ? Promise.resolve(null)
      : this.probe().then(
          () => null,
          (e: unknown) => e,
        );
    const [result, lost] = await Promise.all([
      command().then(
        (r) => ({ r }),
        (err: unknown) => ({ err }),
      ),
      gone,
    ]);
    if (lost instanceof GymError && lost.details?.sandboxLost) throw lost;
    if ('err' in result) throw result.err;
    return result.r;
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
        const terminal = terminalContainer(this.image, this.ref.user ?? DEFAULT_SANDBOX_USER);
        pod.spec!.ephemeralContainers = [...(pod.spec!.ephemeralContainers ?? []), terminal];
        await this.core.replaceNamespacedPodEphemeralcontainers({ name, namespace, body: pod });
      }
      await waitContainerRunning(this.core, namespace, name, TERMINAL_CONTAINER, this.limits.startTimeoutMs);
      // It runs as the commands' uid already: nothing to drop to.
      return { ...this.ref, container: TERMINAL_CONTAINER, user: undefined };
    })().catch((err: unknown) => {
      this.terminalRef = undefined;
      throw kubeError(
        err,
        `could not add the terminal container to pod ${this.ref.pod} (the server needs 'update' on pods/ephemeralcontainers)`,
      );
    });
    return this.terminalRef;
  }

  /**
   * A TTY exec in the pod's terminal container: the workspace shared, but not the commands'
   * pid namespace or /dev/pts. Raw bytes both ways, resized through the exec channel's resize stream.
   */
  async terminal(opts: TerminalOptions): Promise<PtySession> {
    const ref = await this.terminals();
    const marker = randomBytes(6).toString('hex');
    const where = `${ref.pod}/${TERMINAL_CONTAINER}`;
    const untrack = trackMarker(where, marker);
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
    const vars = Object.entries({ ...opts.env, BENCHGYM_EXEC: marker }).map(([k, v]) => `${k}=${v}`);
    let status: Parameters<typeof exitCodeOf>[0];
    let ws;
    try {
      // The kubelet applies the client's first size asynchronously (its channel is not ordered with
      // stdin's): the terminal is sized here first, so the shell's first command already sees it.
      const size = `stty rows ${Math.trunc(opts.rows)} cols ${Math.trunc(opts.cols)} 2>/dev/null; `;
      const shell = ['env', ...vars, 'sh', '-c', `${fileCapOf(ref)}${size}cd ${WORKDIR} && exec bash --norc -i`];
      ws = await new Exec(ref.kc).exec(ref.namespace, ref.pod, TERMINAL_CONTAINER, shell, out, null, stdin, true, (s) => (status = s));
    } catch (err) {
      untrack();
      throw kubeError(err, 'could not open a terminal in the sandbox');
    }
    let exited = false;
    ws.on('close', async () => {
      if (exited) return;
      exited = true;
      untrack();
      // What the shell left in the background goes with it.
      await podQuiet(ref, ['sh', '-c', `${killMarkerScript(marker)}\n${leftoverScript(liveMarkersOf(where))}`]);
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

  /** The terminal container goes with the pod. */
  async close(): Promise<void> {}
}
