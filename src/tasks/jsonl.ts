import { promises as fs } from 'node:fs';
import readline from 'node:readline';
import type { z } from 'zod';
import { GymError, type GymErrorCode } from '../errors.ts';
import { describeIssues } from '../validation.ts';

/** JSON Lines files of datasets, model outputs and stores, read with every row validated. */
export interface JsonlOptions {
  /** The code of a row that is not JSON or does not fit the schema (default TASK_INVALID: a dataset file). */
  code?: GymErrorCode;
  /** The code when the file cannot be read (default SUITE_NOT_FOUND). */
  unreadable?: GymErrorCode;
  /** How the file is named in the unreadable error (default: its path alone). */
  what?: string;
  /** How a row's schema issues are told (default: each field and its issue). */
  describe?: (error: z.ZodError) => string;
  /** Also read a file that is one JSON array (its first non-blank character `[`), its items numbered from 1. */
  arrays?: boolean;
}

/** One row read: the value the schema gave, its line (or array position) and its text as written. */
export interface JsonlRow<T> {
  row: T;
  line: number;
  text: string;
}

/**
 * Each row of a JSON Lines file as it is read (the file is never held whole), validated;
 * blank lines are skipped. A row that is not JSON or does not fit the schema is an error
 * naming the file and line, or with `invalid: 'skip'` (a store that may hold older formats
 * or a partial write) is passed over.
 */
export async function* jsonlRows<S extends z.ZodType>(
  file: string,
  schema: S,
  opts: JsonlOptions & { invalid?: 'throw' | 'skip' } = {},
): AsyncGenerator<JsonlRow<z.infer<S>>> {
  const cannotRead = (err: unknown) =>
    new GymError(opts.unreadable ?? 'SUITE_NOT_FOUND', `cannot read ${opts.what ? `${opts.what} ` : ''}${file}: ${(err as Error).message}`);
  const skip = opts.invalid === 'skip';
  const code = opts.code ?? 'TASK_INVALID';
  const valid = (raw: unknown, line: number, text: string): JsonlRow<z.infer<S>> | null => {
    const parsed = schema.safeParse(raw);
    if (parsed.success) return { row: parsed.data, line, text };
    if (skip) return null;
    throw new GymError(code, `${file}:${line}: ${(opts.describe ?? describeIssues)(parsed.error)}`);
  };
  const rowOf = (text: string, line: number): JsonlRow<z.infer<S>> | null => {
    if (!text.trim()) return null;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      if (skip) return null;
      throw new GymError(code, `${file}:${line}: not JSON (${(err as Error).message})`);
    }
    return valid(raw, line, text);
  };

  if (opts.arrays) {
    // An array cannot be read row by row: such a file is read whole.
    const content = await fs.readFile(file, 'utf8').catch((err: unknown) => Promise.reject(cannotRead(err)));
    if (content.trimStart().startsWith('[')) {
      let items: unknown[];
      try {
        items = JSON.parse(content) as unknown[];
      } catch (err) {
        if (skip) return;
        throw new GymError(code, `${file}: not JSON (${(err as Error).message})`);
      }
      for (let i = 0; i < items.length; i++) {
        const r = valid(items[i], i + 1, JSON.stringify(items[i]));
        if (r) yield r;
      }
      return;
    }
    const lines = content.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const r = rowOf(lines[i]!, i + 1);
      if (r) yield r;
    }
    return;
  }

  const handle = await fs.open(file, 'r').catch((err: unknown) => Promise.reject(cannotRead(err)));
  const lines = readline.createInterface({ input: handle.createReadStream({ encoding: 'utf8' }), crlfDelay: Infinity });
  const it = lines[Symbol.asyncIterator]();
  try {
    for (let n = 1; ; n++) {
      let next: IteratorResult<string>;
      try {
        next = await it.next();
      } catch (err) {
        throw cannotRead(err);
      }
      if (next.done) return;
      const r = rowOf(next.value, n);
      if (r) yield r;
    }
  } finally {
    lines.close();
    await handle.close().catch(() => {});
  }
}

/**
 * Reads a JSON Lines file, validating every row; errors name the file and line. Blank lines are skipped; each row keeps its line number.
 */
export async function readJsonlRows<S extends z.ZodType>(
  file: string,
  schema: S,
  opts: JsonlOptions = {},
): Promise<{ row: z.infer<S>; line: number }[]> {
  const rows: { row: z.infer<S>; line: number }[] = [];
  for await (const { row, line } of jsonlRows(file, schema, opts)) rows.push({ row, line });
  return rows;
}

/** The rows of a dataset's JSON Lines file (see readJsonlRows). */
export async function readJsonl<S extends z.ZodType>(file: string, schema: S, opts: JsonlOptions = {}): Promise<z.infer<S>[]> {
  return (await readJsonlRows(file, schema, opts)).map((r) => r.row);
}
