import type Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { GymError } from '../../errors.ts';
import type { ExecResult, PtySession } from '../types.ts';
import { OOM_NOTE, type MemoryLimitMark } from '../memory_limit.ts';
import type { SandboxUser } from '../sandbox_user.ts';
import { trackMarker } from '../container/processes.ts';
import type { ContainerTransport, RunOptions, RunResult, TerminalOptions } from '../container/transport.ts';
import { WORKDIR } from '../container/workspace.ts';
import { dockerError } from './client.ts';
import { dockerExec, killLeftovers, killMarkedProcesses } from './exec.ts';
import { ContainerOomCounter } from './oom.ts';

/** The sandbox container's own host name, in its /etc/hosts as 127.0.0.1. */
export const SANDBOX_HOSTNAME = 'sandbox';

/** How a container sandbox reaches its Docker container: `docker exec`, inspect, and a terminal container. */
export class DockerTransport implements ContainerTransport {
  readonly backend = 'docker' as const;
  readonly id: string;
  readonly isolation: string;
  /** The kernel's count of the container's OOM kills, read around each command. */
  private readonly oom: ContainerOomCounter;
  private terminalHost?: Promise<Docker.Container>;

  constructor(
    readonly container: Docker.Container,
    readonly volume: string,
    /** Who commands, file operations and terminals run as; PID 1 and the executor stay root, out of their reach. */
    readonly user: SandboxUser,
    /** Starts the container people's terminals run in (factory.ts, startTerminalContainer). */
    private readonly startTerminalHost: () => Promise<Docker.Container>,
  ) {
    this.id = container.id.slice(0, 12);
    this.isolation = [
      'docker: no network, read-only root, capped memory / CPU / pids',
      `commands as uid ${user.uid} without capabilities`,
      'PID 1 and the in-sandbox executor (CAP_SETUID and CAP_SETGID only) stay root, out of their reach',
      'terminals in a container of their own (the workspace shared, not the pid namespace or /dev/pts)',
    ].join('; ');
    this.oom = new ContainerOomCounter(container);
  }

  /** `uid:gid` for `docker exec`. */
  private get execUser(): string {
    return `${this.user.uid}:${this.user.gid}`;
  }

  run(opts: RunOptions): Promise<RunResult> {
    const env = Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`);
    return dockerExec(this.container, { ...opts, env, user: this.execUser });
  }

  async probe(): Promise<void> {
    let state: { Running?: boolean; OOMKilled?: boolean; ExitCode?: number; Status?: string } | undefined;
    try {
      state = (await this.container.inspect()).State;
    } catch {
      throw new GymError('SANDBOX_UNAVAILABLE', `the sandbox container ${this.id} no longer exists`, { sandboxLost: true });
    }
    if (!state?.Running) {
      const why = state?.OOMKilled
        ? 'it was killed for running out of memory (OOM)'
        : `it is ${state?.Status ?? 'not running'} (exit code ${state?.ExitCode})`;
      throw new GymError('SANDBOX_UNAVAILABLE', `the sandbox container ${this.id} stopped: ${why}`, {
        oomKilled: Boolean(state?.OOMKilled),
        sandboxLost: true,
      });
    }
  }

  track(marker: string): () => void {
    return trackMarker(this.container.id, marker);
  }

  /** From the host's /proc when the daemon is local: no exec at all. */
  async sweepLeftovers(): Promise<void> {
    await killLeftovers(this.container, this.execUser);
  }

  async observe(command: () => Promise<ExecResult>): Promise<ExecResult> {
    const before = await this.oom.count();
    const r = await command();
    if (before === null || ((await this.oom.count()) ?? before) <= before) return r;
    // The memory limit killed a process while this command ran: marked by the backend, and said.
    const marked: ExecResult & MemoryLimitMark = { ...r, stderr: `${r.stderr}\n${OOM_NOTE}\n`, oomKilled: true };
    return marked;
  }

  /**
   * A TTY exec as the commands' uid in the sandbox's terminal container: the same workspace,
   * but a pid namespace and /dev/pts the sandbox's commands do not share. Raw bytes both ways
   * (no multiplexing with a TTY), resized through the API.
   */
  async terminal(opts: TerminalOptions): Promise<PtySession> {
    this.terminalHost ??= this.startTerminalHost().catch((err: unknown) => {
      this.terminalHost = undefined;
      throw err;
    });
    let host: Docker.Container;
    try {
      host = await this.terminalHost;
    } catch (err) {
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
        Env: Object.entries({ ...opts.env, BENCHGYM_EXEC: marker }).map(([k, v]) => `${k}=${v}`),
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

  /** The terminals' container goes with the sandbox. */
  async close(): Promise<void> {
    const host = await this.terminalHost?.catch(() => undefined);
    await host?.remove({ force: true }).catch(() => {});
  }
}
