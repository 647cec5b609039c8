import type { PreparedEnv } from '../env/types.ts';
import type { Task } from '../tasks/schema.ts';

export interface ExecOptions {
  /** Working directory relative to the workspace root (default: the root). */
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  stdin?: string;
  /** Bytes kept per stream (head and tail); the rest is drained and counted. */
  maxOutputBytes?: number;
  signal?: AbortSignal;
  /** Called with output as it arrives (for streaming and progress). */
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
}

export interface ExecResult {
  exitCode: number | null;
  /** Signal that ended the process, if any. */
  signal?: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Bytes dropped from the middle of each stream. */
  truncated: { stdout: number; stderr: number };
  /** Bytes each stream produced in all. */
  totalBytes: { stdout: number; stderr: number };
  durationMs: number;
}

export interface DirEntry {
  /** POSIX path relative to the workspace root. */
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  size: number;
}

export interface FileStat {
  type: 'file' | 'dir' | 'symlink' | 'other';
  size: number;
}

/** Where an episode's code runs. Every path argument is relative to the workspace root. */
export interface Sandbox {
  readonly id: string;
  /** The name its backend is registered under (`local`, `docker`, `kubernetes`, ...): for records and messages. */
  readonly backend: string;
  /** The workspace root as commands inside the sandbox see it. */
  readonly workdir: string;
  /** Notes on how isolated this sandbox is (e.g. "bubblewrap: no network"). */
  readonly isolation: string;
  exec(command: string, opts?: ExecOptions): Promise<ExecResult>;
  /** A file's bytes; with `maxBytes`, a larger file is FILE_TOO_LARGE (`details.size`) and is not read. */
  readFile(relPath: string, opts?: { maxBytes?: number }): Promise<Buffer>;
  writeFile(relPath: string, data: string | Buffer): Promise<void>;
  remove(relPath: string): Promise<void>;
  stat(relPath: string): Promise<FileStat | null>;
  /** Entries below `relPath`, breadth-first, up to `depth` levels and `limit` entries. */
  list(relPath: string, opts?: { depth?: number; limit?: number }): Promise<{ entries: DirEntry[]; truncated: boolean }>;
  /** Records the current workspace as the baseline that `diff()` compares to. */
  commitBaseline(): Promise<void>;
  /** A git-style patch of everything changed since the baseline (binary-safe). */
  diff(): Promise<string>;
  /** An interactive terminal in the workspace (people watching or taking over an episode). */
  pty?(opts: { cols: number; rows: number; env?: Record<string, string> }): Promise<PtySession>;
  /** A new sandbox with this one's workspace and baseline (for tree search); the original goes on. */
  fork?(): Promise<Sandbox>;
  /**
   * Applies a patch to the workspace by the methods of `chain` in order (default
   * DEFAULT_PATCH_CHAIN) until one applies; `method` is its label (`git apply --3way`,
   * `patch --fuzz=5`), `log` the transcript. With `resetBetweenTries` the work tree goes back
   * to its repository's HEAD (else the baseline, where the backend can reach it) after each
   * failed try, as SWE-bench's harness does (patch_apply.ts). A patch that reaches into a
   * `.git` or through a symbolic link out of the workspace is refused (`refused` says why).
   */
  applyPatch(patch: string, opts?: ApplyPatchOptions): Promise<PatchApplied>;
  destroy(): Promise<void>;
}

/** One way to apply a patch; tried in order until one applies. */
export type PatchMethod =
  /** `git apply [args]`, e.g. [], ['--recount'], ['--3way']. */
  | { kind: 'git-apply'; args?: string[] }
  /** `patch --batch --forward -p1 --fuzz=N`. */
  | { kind: 'patch'; fuzz: number };

/** git apply, git apply --recount, patch --fuzz=3: what every scorer without a harness of its own uses. */
export const DEFAULT_PATCH_CHAIN: readonly PatchMethod[] = [
  { kind: 'git-apply' },
  { kind: 'git-apply', args: ['--recount'] },
  { kind: 'patch', fuzz: 3 },
];

export interface ApplyPatchOptions {
  /** The methods tried in order (default DEFAULT_PATCH_CHAIN). */
  chain?: readonly PatchMethod[];
  /** After each failed try, the work tree back to the start state (and no patch backups), as SWE-bench's harness does. */
  resetBetweenTries?: boolean;
}

/** What applying a patch gave: whether a method applied it, which (`git apply --3way`), the transcript. */
export interface PatchApplied {
  ok: boolean;
  method?: string;
  log: string;
  /** Set when the patch was refused (it writes inside a .git, or through a link out of the workspace): why, naming the path. */
  refused?: string;
}

/** A terminal session: bytes in, bytes out, a size that can change. */
export interface PtySession {
  write(data: string | Buffer): void;
  /** The new size; on Kubernetes the kubelet applies it a moment later (its channel is not ordered with stdin). */
  resize(cols: number, rows: number): Promise<void>;
  onData(listener: (data: Buffer) => void): void;
  onExit(listener: (exitCode: number | null) => void): void;
  kill(): Promise<void>;
  /** Stops reading the terminal's output until resume() (flow control for slow viewers). */
  pause?(): void;
  resume?(): void;
}

export interface SandboxFactory {
  /** The name its backend is registered under (src/sandbox/backend.ts). */
  readonly backend: string;
  /** Checks the backend and cleans up after earlier runs; errors say what is missing. */
  init?(): Promise<void>;
  /** One line on the isolation its sandboxes get (`benchgym serve`'s banner); without it the banner names the backend. */
  describe?(): Promise<string>;
  /** Host folders its messages may name, with what the agent is shown instead (the gym redacts infrastructure errors). */
  readonly hostPaths?: readonly { root: string; placeholder: string }[];
  /** Builds (once, cached) what the task's code needs: a venv / Maven repository, or an image. */
  prepare(task: Task): Promise<PreparedEnv>;
  create(opts: SandboxCreateOptions): Promise<Sandbox>;
  close(): Promise<void>;
}

export interface SandboxCreateOptions {
  /** Files or a host directory copied as the start state. */
  seed: { files?: Record<string, string | Buffer>; dir?: string };
  /** Environment variables and PATH entries the env provides (venv, JDK, Maven settings). */
  env?: { vars?: Record<string, string>; path?: string[]; readOnlyPaths?: string[]; image?: string; memoryBytes?: number; pids?: number };
  labels?: Record<string, string>;
}

/** The shell prompt in terminals: the workspace-relative directory, not the host path. */
export const PTY_PROMPT = 'benchgym:\\W\\$ ';

/**
 * Set in every terminal: readline reads no key bindings and bash keeps no history file where the
 * sandbox's commands write (a planted ~/.inputrc would type into a person's shell; a history
 * file would keep what they typed for the agent to read).
 */
export const PTY_ENV: Readonly<Record<string, string>> = { INPUTRC: '/dev/null', HISTFILE: '/dev/null' };
