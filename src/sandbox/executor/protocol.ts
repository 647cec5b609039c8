/**
 * The executor's wire protocol: JSON lines over the executor's own stdin and stdout, one
 * long-lived channel, several requests in flight, each answered by id. Bytes (output,
 * file contents, stdin) travel as base64 strings; Go writes an empty byte string as null.
 *
 *   request   {"id": 7, "op": "exec", "command": "ls", "stream": true, ...}
 *   event     {"id": 7, "event": "output", "stream": "stdout", "data": "<base64>"}   (exec, stream: true)
 *   result    {"id": 7, "ok": true, "result": {...}}
 *   error     {"id": 7, "ok": false, "error": {"code": "FILE_NOT_FOUND", "message": "..."}}
 *
 * A frame the executor cannot read is answered with BAD_FRAME (id null when none could be read).
 */
import { z } from 'zod';

/** Bumped on any change a client of an older version would misread. */
export const EXECUTOR_PROTOCOL = 1;

/** Codes the executor sends; the client maps them to GymError codes (client.ts). */
export const EXECUTOR_ERROR_CODES = [
  'PATH_OUTSIDE_WORKSPACE',
  'FILE_NOT_FOUND',
  'NOT_A_FILE',
  'NOT_A_DIRECTORY',
  'FILE_EXISTS',
  'INVALID_ARGUMENT',
  'PERMISSION_DENIED',
  'EXEC_FAILED',
  'IO_ERROR',
  'BAD_FRAME',
  'INTERNAL',
] as const;
export type ExecutorErrorCode = (typeof EXECUTOR_ERROR_CODES)[number];

const bytes = z.string().nullable();
const id = z.number().int().nonnegative();

export const ErrorFrameSchema = z.object({
  id: id.nullable(),
  ok: z.literal(false),
  error: z.object({ code: z.string(), message: z.string() }),
});
export const ResultFrameSchema = z.object({ id, ok: z.literal(true), result: z.unknown() });
export const OutputFrameSchema = z.object({ id, event: z.literal('output'), stream: z.enum(['stdout', 'stderr']), data: bytes });
/** Every frame the executor may send. */
export const FrameSchema = z.union([ResultFrameSchema, ErrorFrameSchema, OutputFrameSchema]);
export type Frame = z.infer<typeof FrameSchema>;

export const PingResultSchema = z.object({
  protocol: z.number().int(),
  version: z.string(),
  pid: z.number().int(),
  root: z.string(),
  /** The executor's real uid (0 when it runs its commands as another: --user). */
  uid: z.number().int().optional(),
  /** The uid its commands run as. */
  commandUid: z.number().int().optional(),
  /** How it keeps out of its commands' reach: another uid, a pid namespace per command, or neither (go/identity.go). */
  isolation: z.enum(['uid', 'pid-namespace', 'none']).optional(),
});
export type PingResult = z.infer<typeof PingResultSchema>;

const StreamSchema = z.object({ head: bytes, tail: bytes, total: z.number().int().nonnegative() });
export const ExecResultSchema = z.object({
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  cancelled: z.boolean(),
  durationMs: z.number().nonnegative(),
  stdout: StreamSchema,
  stderr: StreamSchema,
});
export type WireExecResult = z.infer<typeof ExecResultSchema>;

export const SignalResultSchema = z.object({ found: z.boolean() });
export const ReadResultSchema = z.object({ data: bytes, size: z.number().int().nonnegative(), truncated: z.boolean() });
export const WriteResultSchema = z.object({ size: z.number().int().nonnegative() });
const KindSchema = z.enum(['file', 'dir', 'symlink', 'other']);
export const StatResultSchema = z.object({ type: KindSchema, size: z.number().int(), mode: z.number().int(), mtimeMs: z.number() });
export const ListResultSchema = z.object({
  entries: z.array(z.object({ path: z.string(), type: KindSchema, size: z.number().int().nonnegative() })),
  truncated: z.boolean(),
});
export const RemoveResultSchema = z.object({ removed: z.boolean() });

/** What each op's result must look like. */
export const RESULT_SCHEMAS = {
  ping: PingResultSchema,
  exec: ExecResultSchema,
  cancel: SignalResultSchema,
  signal: SignalResultSchema,
  read: ReadResultSchema,
  write: WriteResultSchema,
  stat: StatResultSchema,
  list: ListResultSchema,
  remove: RemoveResultSchema,
} as const;
export type ExecutorOp = keyof typeof RESULT_SCHEMAS;
export type ResultOf<Op extends ExecutorOp> = z.infer<(typeof RESULT_SCHEMAS)[Op]>;

/** The fields of each request (the client adds `id` and `op`); byte fields are base64. */
export interface RequestFields {
  ping: Record<string, never>;
  exec: {
    /** Run through `/bin/sh -c`. */
    command?: string;
    /** Run directly (looked up in the command's PATH). */
    argv?: string[];
    /** Relative to the workspace root; must be a directory inside it. */
    cwd?: string;
    /** Added to (or, with clearEnv, instead of) the executor's environment. */
    env?: Record<string, string>;
    clearEnv?: boolean;
    /** Without it the command reads /dev/null. */
    stdin?: string;
    /** 0 or absent: no limit. Enforced inside: SIGTERM to the group, SIGKILL after graceMs. */
    timeoutMs?: number;
    graceMs?: number;
    /** Bytes kept per stream, head and tail halves (default 1 MiB). */
    maxOutputBytes?: number;
    /** Send output events as it comes. */
    stream?: boolean;
    /** Bytes streamed per stream at most (default 8 MiB); the result still has head and tail. */
    streamLimitBytes?: number;
  };
  cancel: { target: number };
  signal: { target: number; signal: string };
  read: { path: string; maxBytes?: number };
  write: { path: string; data: string; mode?: number; exclusive?: boolean };
  stat: { path: string; follow?: boolean };
  list: { path: string; depth?: number; limit?: number; skip?: string[] };
  remove: { path: string };
}
