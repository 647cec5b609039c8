import type { ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { GymError, type GymErrorCode } from '../../errors.ts';
import type { DirEntry, ExecResult, FileStat } from '../types.ts';
import {
  EXECUTOR_PROTOCOL,
  FrameSchema,
  RESULT_SCHEMAS,
  type ExecutorOp,
  type Frame,
  type PingResult,
  type RequestFields,
  type ResultOf,
  type WireExecResult,
} from './protocol.ts';

/** The executor's channel: any byte stream pair (a child's stdio, Docker's attached exec stream). */
export interface ExecutorStreams {
  /** Frames to the executor (its stdin). */
  input: Writable;
  /** Frames from the executor (its stdout). */
  output: Readable;
  /** Its diagnostics, kept (the tail) for the reason when it dies. */
  stderr?: Readable;
  /** The executor's process, when there is one here: its exit ends the channel at once. */
  process?: ChildProcess;
}

export interface ExecutorClientOptions {
  /** How long the handshake may take (default 15 s). */
  connectTimeoutMs?: number;
  /** How long a file operation may take before the executor counts as hung (default 60 s). */
  callTimeoutMs?: number;
  /** What to call the executor in messages ("the executor in container abc"). */
  label?: string;
}

export interface ExecutorExecOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Start from an empty environment instead of the executor's. */
  clearEnv?: boolean;
  stdin?: string | Buffer;
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL on timeout or cancel (default 500 ms). */
  graceMs?: number;
  maxOutputBytes?: number;
  /** Bytes streamed to onOutput per stream at most (default 8 MiB). */
  streamLimitBytes?: number;
  /** Aborting cancels the command (its whole group) and rejects with CANCELLED. */
  signal?: AbortSignal;
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
}

/** A command running in the executor. */
export interface RunningExec {
  /** The request id, the target of cancel and signal. */
  readonly id: number;
  readonly result: Promise<ExecResult>;
  /** Sends a signal (SIGINT, SIGTERM, ...) to the command's process group; false when it has ended. */
  signal(name: string): Promise<boolean>;
  /** SIGTERM, then SIGKILL after the grace, to the group and what left it; false when it has ended. */
  cancel(): Promise<boolean>;
}

interface Pending {
  op: ExecutorOp;
  resolve(value: unknown): void;
  reject(err: GymError): void;
  onOutput?: (data: Buffer, stream: 'stdout' | 'stderr') => void;
  timer?: NodeJS.Timeout;
}

/** Longest frame accepted from the executor (a file read is base64 inside one). */
const MAX_FRAME_BYTES = 256 * 1024 * 1024;
/** The executor's own limit on one request line (maxFrameBytes in go/main.go). */
const MAX_REQUEST_BYTES = 96 * 1024 * 1024;
const STDERR_KEPT = 4000;
/** Slack past an exec's own timeout before the executor counts as hung. */
const EXEC_SLACK_MS = 30_000;
/** Names a listing skips unless told otherwise, as the backends' list() does. */
export const DEFAULT_LIST_SKIP = ['.git', '__pycache__'];

/** Executor codes the gym has no code of its own for. */
const CODE_MAP: Record<string, GymErrorCode> = {
  PERMISSION_DENIED: 'SANDBOX_UNAVAILABLE',
  EXEC_FAILED: 'SANDBOX_UNAVAILABLE',
  IO_ERROR: 'SANDBOX_UNAVAILABLE',
  BAD_FRAME: 'INTERNAL',
  INTERNAL: 'INTERNAL',
};
const PASSED_THROUGH = new Set<string>([
  'PATH_OUTSIDE_WORKSPACE',
  'FILE_NOT_FOUND',
  'NOT_A_FILE',
  'NOT_A_DIRECTORY',
  'FILE_EXISTS',
  'INVALID_ARGUMENT',
]);

function gymCode(code: string): GymErrorCode {
  if (PASSED_THROUGH.has(code)) return code as GymErrorCode;
  return CODE_MAP[code] ?? 'INTERNAL';
}

const b64 = (s: string | null): Buffer => (s ? Buffer.from(s, 'base64') : Buffer.alloc(0));

/** The stream's text as CappedOutput.text() renders it: head, a note of what was dropped, tail. */
function render(s: WireExecResult['stdout']): { text: string; dropped: number } {
  const head = b64(s.head);
  const tail = b64(s.tail);
  const dropped = s.total - head.length - tail.length;
  if (dropped === 0) return { text: Buffer.concat([head, tail]).toString('utf8'), dropped };
  return { text: `${head.toString('utf8')}\n[... ${dropped} bytes omitted (${s.total} in all) ...]\n${tail.toString('utf8')}`, dropped };
}

/**
 * The host's end of an executor's channel: requests multiplexed by id, every frame
 * zod-checked. When the executor dies, its streams close or it sends a frame that is not
 * the protocol, every pending and later call rejects with SANDBOX_UNAVAILABLE and the reason.
 *
 * @example
 *   const ex = await ExecutorClient.connect({ input: child.stdin!, output: child.stdout!, process: child });
 *   const r = await ex.exec('pytest -q', { timeoutMs: 60_000, onOutput: (t) => process.stdout.write(t) });
 */
export class ExecutorClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private failure: GymError | null = null;
  private partial: Buffer[] = [];
  private partialLen = 0;
  private stderrTail = '';
  private readonly label: string;
  private readonly callTimeoutMs: number;
  /** Frames the executor could not route (BAD_FRAME without an id): a client bug, kept for tests and logs. */
  readonly unroutedErrors: string[] = [];
  /** What the executor said at the handshake. */
  info?: PingResult;

  constructor(
    private readonly streams: ExecutorStreams,
    opts: ExecutorClientOptions = {},
  ) {
    this.label = opts.label ?? 'the executor';
    this.callTimeoutMs = opts.callTimeoutMs ?? 60_000;
    const { input, output, stderr, process: proc } = streams;
    output.on('data', (chunk: Buffer | string) => this.onData(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
    output.on('end', () => this.failSoon('it closed its output'));
    output.on('close', () => this.failSoon('its output was closed'));
    output.on('error', (err) => this.fail(`reading its output failed: ${err.message}`));
    input.on('error', (err) => this.failSoon(`writing to it failed: ${err.message}`));
    input.on('close', () => this.failSoon('its input was closed'));
    stderr?.on('data', (chunk: Buffer | string) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-STDERR_KEPT);
    });
    stderr?.on('error', () => {});
    proc?.on('exit', (code, signal) => this.fail(signal ? `it was killed by ${signal}` : `it exited with code ${code}`));
    proc?.on('error', (err) => this.fail(`it could not be started: ${err.message}`));
  }

  /** Wraps the streams and completes the handshake (protocol version check). */
  static async connect(streams: ExecutorStreams, opts: ExecutorClientOptions = {}): Promise<ExecutorClient> {
    const client = new ExecutorClient(streams, opts);
    const timeoutMs = opts.connectTimeoutMs ?? 15_000;
    try {
      const hello = await client.call('ping', {}, { timeoutMs });
      if (hello.protocol !== EXECUTOR_PROTOCOL) {
        throw new GymError(
          'SANDBOX_UNAVAILABLE',
          `${client.label} speaks protocol ${hello.protocol}, this server ${EXECUTOR_PROTOCOL} (version ${hello.version}); rebuild it`,
        );
      }
      client.info = hello;
      return client;
    } catch (err) {
      client.fail(err instanceof GymError ? err.message : String(err));
      await client.close();
      throw err;
    }
  }

  /** Why the channel is unusable, or null while it works. */
  get closedReason(): string | null {
    return this.failure?.message ?? null;
  }

  /** Runs a command: a string through `/bin/sh -c`, an array directly. */
  exec(command: string | string[], opts: ExecutorExecOptions = {}): Promise<ExecResult> {
    return this.startExec(command, opts).result;
  }

  /** Starts a command and returns at once, with its id to signal or cancel it. */
  startExec(command: string | string[], opts: ExecutorExecOptions = {}): RunningExec {
    const fields: RequestFields['exec'] = {
      ...(typeof command === 'string' ? { command } : { argv: command }),
      ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
      ...(opts.env ? { env: opts.env } : {}),
      ...(opts.clearEnv ? { clearEnv: true } : {}),
      ...(opts.stdin !== undefined ? { stdin: Buffer.from(opts.stdin).toString('base64') } : {}),
      ...(opts.timeoutMs ? { timeoutMs: Math.ceil(opts.timeoutMs) } : {}),
      ...(opts.graceMs !== undefined ? { graceMs: opts.graceMs } : {}),
      ...(opts.maxOutputBytes !== undefined ? { maxOutputBytes: opts.maxOutputBytes } : {}),
      ...(opts.streamLimitBytes !== undefined ? { streamLimitBytes: opts.streamLimitBytes } : {}),
      ...(opts.onOutput ? { stream: true } : {}),
    };
    const id = this.nextId++;
    let onOutput: Pending['onOutput'];
    const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    if (opts.onOutput) {
      const deliver = opts.onOutput;
      onOutput = (data, stream) => {
        const text = decoders[stream].write(data);
        if (text) deliver(text, stream);
      };
    }
    const signal = opts.signal;
    const run = async (): Promise<ExecResult> => {
      if (signal?.aborted) throw new GymError('CANCELLED', 'the command was cancelled');
      let aborted = false;
      const onAbort = () => {
        aborted = true;
        this.call('cancel', { target: id }).catch(() => {});
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        // The executor enforces the timeout; this deadline only catches a hung executor.
        const deadline = opts.timeoutMs ? opts.timeoutMs + (opts.graceMs ?? 500) + EXEC_SLACK_MS : 0;
        const wire = await this.call('exec', fields, { id, timeoutMs: deadline, onOutput });
        for (const stream of ['stdout', 'stderr'] as const) {
          const rest = decoders[stream].end();
          if (rest && opts.onOutput) opts.onOutput(rest, stream);
        }
        if ((aborted || wire.cancelled) && !wire.timedOut) throw new GymError('CANCELLED', 'the command was cancelled');
        const stdout = render(wire.stdout);
        const stderr = render(wire.stderr);
        return {
          exitCode: wire.exitCode,
          signal: wire.signal,
          stdout: stdout.text,
          stderr: stderr.text,
          timedOut: wire.timedOut,
          truncated: { stdout: stdout.dropped, stderr: stderr.dropped },
          totalBytes: { stdout: wire.stdout.total, stderr: wire.stderr.total },
          durationMs: wire.durationMs,
        };
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    };
    const result = run();
    return {
      id,
      result,
      signal: async (name) => (await this.call('signal', { target: id, signal: name })).found,
      cancel: async () => (await this.call('cancel', { target: id })).found,
    };
  }

  /** A file's bytes, up to maxBytes (default 32 MiB); `size` is the whole file's. */
  async read(path: string, opts: { maxBytes?: number } = {}): Promise<{ data: Buffer; size: number; truncated: boolean }> {
    const r = await this.call('read', { path, ...(opts.maxBytes !== undefined ? { maxBytes: opts.maxBytes } : {}) });
    return { data: b64(r.data), size: r.size, truncated: r.truncated };
  }

  /** Writes a file atomically (a temporary file renamed over it), making missing directories. */
  async write(path: string, data: string | Buffer, opts: { mode?: number; exclusive?: boolean } = {}): Promise<void> {
    await this.call('write', { path, data: Buffer.from(data).toString('base64'), ...opts });
  }

  /** The entry itself (a final link is not followed unless `follow`); null when missing. */
  async stat(path: string, opts: { follow?: boolean } = {}): Promise<(FileStat & { mode: number; mtimeMs: number }) | null> {
    try {
      return await this.call('stat', { path, ...opts });
    } catch (err) {
      if (err instanceof GymError && err.code === 'FILE_NOT_FOUND') return null;
      throw err;
    }
  }

  /** Entries below a directory, breadth-first, up to `depth` levels and `limit` entries; links are not followed. */
  async list(
    path: string,
    opts: { depth?: number; limit?: number; skip?: string[] } = {},
  ): Promise<{ entries: DirEntry[]; truncated: boolean }> {
    return this.call('list', { path, depth: opts.depth ?? 1, limit: opts.limit ?? 1000, skip: opts.skip ?? DEFAULT_LIST_SKIP });
  }

  /** Removes a file, a link (never what it points to) or a whole tree; false when there was nothing. */
  async remove(path: string): Promise<boolean> {
    return (await this.call('remove', { path })).removed;
  }

  /**
   * Ends the channel: the executor kills what still runs and exits. Pending calls reject
   * with SANDBOX_UNAVAILABLE; a process that does not exit in time is killed.
   */
  async close(): Promise<void> {
    this.fail(`${this.label} was closed`);
    const { input, output, process: proc } = this.streams;
    input.end();
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      const timer = setTimeout(() => proc.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    } else if (!proc) {
      output.destroy();
    }
  }

  /** Sends one request and waits for its result, checked against the op's schema. */
  call<Op extends ExecutorOp>(
    op: Op,
    fields: RequestFields[Op],
    opts: { id?: number; timeoutMs?: number; onOutput?: Pending['onOutput'] } = {},
  ): Promise<ResultOf<Op>> {
    if (this.failure) return Promise.reject(this.failure);
    const id = opts.id ?? this.nextId++;
    const line = JSON.stringify({ id, op, ...fields }) + '\n';
    // The executor skips a longer line unanswered (BAD_FRAME without an id): refuse it here instead.
    const size = Buffer.byteLength(line);
    if (size > MAX_REQUEST_BYTES) {
      return Promise.reject(
        new GymError(
          'FILE_TOO_LARGE',
          `a ${op} request of ${size} bytes is over the executor's ` +
            `limit of ${MAX_REQUEST_BYTES} (file contents and stdin travel as base64)`,
        ),
      );
    }
    return new Promise<ResultOf<Op>>((resolve, reject) => {
      const pending: Pending = {
        op,
        resolve: resolve as (v: unknown) => void,
        reject,
        ...(opts.onOutput ? { onOutput: opts.onOutput } : {}),
      };
      const timeoutMs = opts.timeoutMs ?? (op === 'exec' ? 0 : this.callTimeoutMs);
      if (timeoutMs > 0) {
        pending.timer = setTimeout(() => this.fail(`it did not answer a ${op} in ${timeoutMs} ms`), timeoutMs);
      }
      this.pending.set(id, pending);
      try {
        this.streams.input.write(line);
      } catch (err) {
        this.failSoon(`writing to it failed: ${(err as Error).message}`);
      }
    });
  }

  private onData(chunk: Buffer): void {
    let start = 0;
    while (!this.failure) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) {
        if (start < chunk.length) {
          this.partial.push(chunk.subarray(start));
          this.partialLen += chunk.length - start;
          if (this.partialLen > MAX_FRAME_BYTES) this.fail(`it sent a frame longer than ${MAX_FRAME_BYTES} bytes`);
        }
        return;
      }
      const piece = chunk.subarray(start, nl);
      const line = this.partial.length ? Buffer.concat([...this.partial, piece]) : piece;
      this.partial = [];
      this.partialLen = 0;
      start = nl + 1;
      if (line.length) this.onLine(line.toString('utf8'));
    }
  }

  private onLine(line: string): void {
    let frame: Frame;
    try {
      frame = FrameSchema.parse(JSON.parse(line));
    } catch {
      // Its stdout is not the protocol any more: nothing after this can be trusted.
      this.fail(`it sent a frame that is not the protocol: ${JSON.stringify(line.slice(0, 200))}`);
      return;
    }
    if ('event' in frame) {
      this.pending.get(frame.id)?.onOutput?.(b64(frame.data), frame.stream);
      return;
    }
    if (frame.id === null) {
      if (!frame.ok) this.unroutedErrors.push(`${frame.error.code}: ${frame.error.message}`);
      return;
    }
    const pending = this.pending.get(frame.id);
    if (!pending) return;
    this.pending.delete(frame.id);
    if (pending.timer) clearTimeout(pending.timer);
    if (!frame.ok) {
      pending.reject(new GymError(gymCode(frame.error.code), frame.error.message, { executorCode: frame.error.code }));
      return;
    }
    const parsed = RESULT_SCHEMAS[pending.op].safeParse(frame.result);
    if (!parsed.success) {
      this.fail(
        `it answered a ${pending.op} with a malformed ` +
          `result: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
      pending.reject(this.failure!);
      return;
    }
    pending.resolve(parsed.data);
  }

  /** Waits a moment for the process's exit status, so the reason names it. */
  private failSoon(reason: string): void {
    const proc = this.streams.process;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null || this.failure) {
      this.fail(reason);
      return;
    }
    const timer = setTimeout(() => this.fail(reason), 500);
    proc.once('exit', () => clearTimeout(timer));
  }

  /** Ends the channel for good: every pending and later call rejects with the reason. */
  private fail(reason: string): void {
    if (this.failure) return;
    const stderr = this.stderrTail.trim();
    const message = reason.startsWith(this.label) ? reason : `${this.label} is gone: ${reason}`;
    this.failure = new GymError('SANDBOX_UNAVAILABLE', stderr ? `${message} (its last words: ${stderr.slice(-500)})` : message);
    for (const [, p] of this.pending) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(this.failure);
    }
    this.pending.clear();
    this.partial = [];
  }
}
