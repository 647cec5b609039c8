import { promises as fs } from 'node:fs';
import type { z } from 'zod';
import { GymError, type GymErrorCode } from '../errors.ts';
import { describeIssues } from '../validation.ts';

/** JSON Lines files of datasets and model outputs, read with every row validated. */
export interface JsonlOptions {
  /** The code of a row that is not JSON or does not fit the schema (default TASK_INVALID: a dataset file). */
  code?: GymErrorCode;
  /** The code when the file cannot be read (default SUITE_NOT_FOUND). */
  unreadable?: GymErrorCode;
  /** How the file is named in the unreadable error (default: its path alone). */
  what?: string;
  /** How a row's schema issues are told (default: each field and its issue). */
  describe?: (error: z.ZodError) => string;
}

/** Reads a JSON Lines file, validating every row; errors name the file and line. Blank lines are skipped; each row keeps its line number. */
export async function readJsonlRows<S extends z.ZodType>(file: string, schema: S, opts: JsonlOptions = {}): Promise<{ row: z.infer<S>; line: number }[]> {
  const code = opts.code ?? 'TASK_INVALID';
  let content: string;
  try {
    content = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new GymError(opts.unreadable ?? 'SUITE_NOT_FOUND', `cannot read ${opts.what ? `${opts.what} ` : ''}${file}: ${(err as Error).message}`);
  }
  const rows: { row: z.infer<S>; line: number }[] = [];
  const lines = content.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.trim()) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(lines[i]!);
    } catch (err) {
      throw new GymError(code, `${file}:${i + 1}: not JSON (${(err as Error).message})`);
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw new GymError(code, `${file}:${i + 1}: ${(opts.describe ?? describeIssues)(parsed.error)}`);
    rows.push({ row: parsed.data, line: i + 1 });
  }
  return rows;
}

/** The rows of a dataset's JSON Lines file (see readJsonlRows). */
export async function readJsonl<S extends z.ZodType>(file: string, schema: S, opts: JsonlOptions = {}): Promise<z.infer<S>[]> {
  return (await readJsonlRows(file, schema, opts)).map((r) => r.row);
}
