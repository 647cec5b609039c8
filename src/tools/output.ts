import { z } from 'zod';

/** Shapes several tools' `data` share (see ToolBase.output). */

export const Count = z.number().int().min(0);

export const DirEntryOutput = z.object({
  path: z.string(),
  type: z.enum(['file', 'dir', 'symlink', 'other']),
  size: Count,
});

export const TestStatusOutput = z.enum(['passed', 'failed', 'error', 'skipped']);

export const ExecResultOutput = z.object({
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable().optional(),
  stdout: z.string(),
  stderr: z.string(),
  timedOut: z.boolean(),
  truncated: z.object({ stdout: Count, stderr: Count }).describe('bytes dropped from the middle of each stream'),
  totalBytes: z.object({ stdout: Count, stderr: Count }).describe('bytes each stream produced in all'),
  durationMs: z.number().min(0),
});

/** A task as agents may see it (publicTaskInfo); `env` and `metadata` hold the task's own keys. */
export const TaskInfoOutput = z.object({
  id: z.string(),
  suite: z.string(),
  title: z.string(),
  language: z.string(),
  kind: z.string(),
  env: z.record(z.string(), z.unknown()),
  hasVisibleTests: z.boolean(),
  promptVariants: z.array(z.string()),
  contexts: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()),
});

export const McpPathOutput = z
  .string()
  .optional()
  .describe("the episode's own MCP endpoint on this server (Streamable HTTP only; absent over stdio)");
