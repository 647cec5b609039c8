import type { CappedOutput } from '../output.ts';
import type { ExecResult, PtySession } from '../types.ts';
import type { ExecutorClient } from '../executor/client.ts';

/** One process in the container, started by the transport with stdin and stdout. */
export interface RunOptions {
  cmd: string[];
  env?: Record<string, string>;
  workdir?: string;
  stdin?: Buffer | string;
  /** Enforced inside the container by `timeout -k`, with a host-side watchdog behind it. */
  timeoutMs?: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
  /** Keep stdout as raw bytes (file reads, archives) instead of head+tail capped text. */
  rawStdout?: boolean;
}

export interface RunResult {
  exitCode: number | null;
  stdout: CappedOutput;
  stderr: CappedOutput;
  raw?: Buffer;
  timedOut: boolean;
  cancelled: boolean;
  durationMs: number;
}

/** What a terminal starts with: its size and its environment (the sandbox's variables, the prompt). */
export interface TerminalOptions {
  cols: number;
  rows: number;
  env: Record<string, string>;
}

/**
 * How one backend reaches one started container: everything a container sandbox does that is
 * not the same for Docker and Kubernetes. The sandbox (sandbox.ts) holds the rest: file
 * operations, scripts, baseline and diff, the executor's calls, fork, destroy.
 */
export interface ContainerTransport {
  readonly backend: 'docker' | 'kubernetes';
  /** Its short name in messages and ids: a container id, a pod name. */
  readonly id: string;
  /** What the sandbox's isolation is, in a line for people (the banner, `start_episode`). */
  readonly isolation: string;
  /** Starts one process as the commands' user, with stdin and stdout, and waits for it. */
  run(opts: RunOptions): Promise<RunResult>;
  /** Resolves when the container runs; else SANDBOX_UNAVAILABLE with `sandboxLost` naming why (gone, stopped, OOM). */
  probe(): Promise<void>;
  /** Counts a command's marker as running in the container until the returned undo. */
  track(marker: string): () => void;
  /** Kills what finished commands left behind, the executor at hand. */
  sweepLeftovers(executor: ExecutorClient): Promise<void>;
  /** Runs one agent's command under the backend's watch (the kernel's OOM count, the pod's deletion). */
  observe(command: () => Promise<ExecResult>): Promise<ExecResult>;
  /** A person's terminal, as the commands' user, where the commands cannot reach it. */
  terminal(opts: TerminalOptions): Promise<PtySession>;
  /** Frees what the transport started besides the container (a terminal's container); the container is the factory's. */
  close(): Promise<void>;
}
