import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { sandboxEnv } from '../../src/env/types.ts';
import { toGymError } from '../../src/errors.ts';
import type { SandboxFactory } from '../../src/sandbox/types.ts';
import { jsonlRows } from '../../src/tasks/jsonl.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { seedOf } from '../../src/tasks/seed.ts';
import { pydocCommand } from '../../src/tools/view_docs.ts';
import type { DatasetForm } from './dataset.ts';

/**
 * Doc-prompting needs the documentation of each problem's function *as of the pinned
 * version*. The dataset does not carry it (v2's `docs` cell holds links to documentation
 * pages), so it is rendered with pydoc inside the problem's own env (the same way view_docs
 * does) and kept in a docs store, a JSON Lines file the suite reads when it loads: a task
 * has the `with-docs` prompt variants once its documentation is in the store.
 */
export const DocsEntry = z.object({
  form: z.enum(['v1', 'v2']),
  task_id: z.string(),
  library: z.string(),
  version: z.string(),
  python: z.string(),
  /** The dotted path that resolved. */
  symbol: z.string(),
  docs: z.string(),
});
export type DocsEntry = z.infer<typeof DocsEntry>;

/**
 * Where the docs store of a dataset form is, unless the suite is given one: $BENCHGYM_GITCHAMELEON_DOCS,
 * else the suite's cache folder (`--cache-dir`/gitchameleon), else gitchameleon/ of $BENCHGYM_CACHE.
 */
export function defaultDocsFile(form: DatasetForm, cacheDir?: string): string {
  if (process.env.BENCHGYM_GITCHAMELEON_DOCS) return path.resolve(process.env.BENCHGYM_GITCHAMELEON_DOCS.replace('{form}', form));
  const dir =
    cacheDir ??
    path.join(process.env.BENCHGYM_CACHE ?? process.env.BENCHGYM_HOME ?? path.join(os.homedir(), '.cache', 'benchgym'), 'gitchameleon');
  return path.join(dir, `docs-${form}.jsonl`);
}

/** The docs store is the suite's own cache: a line it cannot read is passed over, never an error. */
const STORE = { what: 'the docs store', invalid: 'skip' } as const;

/** The store's entries of one form by task id; a missing file is an empty store, a bad line is skipped. */
export async function readDocsStore(file: string, form: DatasetForm): Promise<Map<string, DocsEntry>> {
  const out = new Map<string, DocsEntry>();
  if (!existsSync(file)) return out;
  // A line from an older format or a partial write: that task simply has no docs yet.
  for await (const { row } of jsonlRows(file, DocsEntry, STORE)) if (row.form === form) out.set(row.task_id, row);
  return out;
}

/**
 * The dotted paths under which a problem's `name_of_class_or_func` may be found, best
 * first: the name itself when dotted; the API calls of the reference solution that end
 * with it (v2); the name in the library's top module; then searches of the library's
 * loaded submodules. None for rows without a usable name ("", "-").
 */
export function docSymbolCandidates(name: string, importName: string, apiCalls: string[] = []): string[] {
  // The names are written loosely ("Eq.rewrite(Add)", "BoundField.as_field_group()",
  // "tornado.auth (all callback arguments)"): take the dotted name they start with.
  const n = /^[A-Za-z_][\w.]*/.exec(name.trim())?.[0]?.replace(/\.+$/, '') ?? '';
  if (!n) return [];
  const out: string[] = [];
  const add = (c: string) => {
    if (!out.includes(c)) out.push(c);
  };
  if (n.includes('.')) {
    add(n.split('.')[0] === importName ? n : `${importName}.${n}`);
    add(n);
    if (n.split('.')[0] !== importName) add(`search:${importName}:${n}`);
  }
  const last = n.split('.').at(-1)!;
  for (const call of apiCalls) if (call.includes('.') && call.split('.').at(-1) === last) add(call);
  add(`${importName}.${last}`);
  add(`search:${importName}:${last}`);
  return out;
}

export interface RenderDocsOptions {
  signal?: AbortSignal;
  onResult?: (taskId: string, outcome: { symbol?: string; chars?: number; error?: string }) => void;
}

/**
 * Renders the documentation of each task's function in its own env and returns the store
 * entries; tasks whose env cannot be built, or whose symbol does not resolve, are reported
 * through `onResult` and left out.
 */
export async function renderDocs(
  sandboxes: SandboxFactory,
  tasks: Task[],
  candidates: Map<string, string[]>,
  opts: RenderDocsOptions = {},
): Promise<DocsEntry[]> {
  const entries: DocsEntry[] = [];
  for (const task of tasks) {
    const symbols = candidates.get(task.id) ?? [];
    if (!symbols.length || task.env.kind !== 'python') {
      opts.onResult?.(task.id, { error: 'no function name to document' });
      continue;
    }
    try {
      const env = await sandboxes.prepare(task);
      const sandbox = await sandboxes.create({
        seed: seedOf(task),
        env: sandboxEnv(env),
        labels: { 'benchgym.task': task.id, 'benchgym.role': 'docs' },
      });
      try {
        const r = await sandbox.exec(pydocCommand(env.command, symbols), {
          timeoutMs: 180_000,
          signal: opts.signal,
          maxOutputBytes: 512 * 1024,
        });
        if (r.exitCode !== 0) {
          opts.onResult?.(task.id, { error: r.timedOut ? 'timed out' : r.stderr.trim().split('\n').slice(-3).join(' | ') });
          continue;
        }
        const [header = '', ...page] = r.stdout.split('\n');
        const symbol = /^# (\S+)/.exec(header)?.[1] ?? symbols[0]!;
        const meta = task.metadata as { form: DatasetForm; library: string; installedVersion: string };
        entries.push({
          form: meta.form,
          task_id: task.id,
          library: meta.library,
          version: meta.installedVersion,
          python: task.env.version,
          symbol,
          docs: page.join('\n').trimEnd(),
        });
        opts.onResult?.(task.id, { symbol, chars: page.join('\n').length });
      } finally {
        await sandbox.destroy().catch(() => {});
      }
    } catch (err) {
      const e = toGymError(err);
      if (e.code === 'CANCELLED') throw e;
      opts.onResult?.(task.id, { error: `${e.code}: ${e.message.split('\n')[0]}` });
    }
  }
  return entries;
}

/** Adds entries to a store, replacing those of the same form and task. */
export async function writeDocsStore(file: string, entries: DocsEntry[]): Promise<void> {
  const keep: string[] = [];
  const replaced = new Set(entries.map((e) => `${e.form}/${e.task_id}`));
  // Lines it cannot read are dropped.
  if (existsSync(file))
    for await (const { row, text } of jsonlRows(file, DocsEntry, STORE)) if (!replaced.has(`${row.form}/${row.task_id}`)) keep.push(text);
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, [...keep, ...entries.map((e) => JSON.stringify(e))].map((l) => `${l}\n`).join(''));
  await fs.rename(tmp, file);
}
