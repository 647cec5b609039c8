import { z } from 'zod';
import { GymError } from '../errors.ts';
import type { ResultRow } from './runs.ts';

/** The columns a run table sorts by. */
export const SORT_KEYS = [
  'task',
  'sample',
  'status',
  'reward',
  'stopReason',
  'steps',
  'tokens',
  'costUsd',
  'durationMs',
  'failToPass',
  'passToPass',
  'infraError',
  'attempts',
] as const;
export type SortKey = (typeof SORT_KEYS)[number];

export const MAX_PAGE = 500;

/** A table request: a page of the rows that pass the filters, in one order. */
export const ResultQuery = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(100),
  sort: z.enum(SORT_KEYS).default('task'),
  dir: z.enum(['asc', 'desc']).default('asc'),
  status: z.enum(['passed', 'failed', 'error', 'running', '']).default(''),
  /** A substring of the task id (case-insensitive). */
  q: z.string().max(200).default(''),
  /** Metadata filters: key → value (as text). */
  meta: z.record(z.string().max(100), z.string().max(500)).default({}),
});
export type ResultQuery = z.infer<typeof ResultQuery>;
const MetaFilter = z.tuple([z.string().max(100), z.string().max(500)]);

/** The query from URL parameters: `offset`, `limit`, `sort`, `dir`, `status`, `q` and `m.<key>=<value>` for metadata. */
export function parseResultQuery(params: Record<string, unknown>): ResultQuery {
  // Entries, not assignments: `m.__proto__` is a key like any other, never the object's prototype.
  const meta: [string, unknown][] = [];
  const rest: [string, unknown][] = [];
  for (const [k, v] of Object.entries(params)) {
    const value = Array.isArray(v) ? v[v.length - 1] : v;
    if (k.startsWith('m.')) meta.push([k.slice(2), value]);
    else rest.push([k, value]);
  }
  const parsed = ResultQuery.safeParse({ ...Object.fromEntries(rest), meta: {} });
  const issues = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`);
  // Checked one by one: zod builds a record by assignment, which would drop a `__proto__` filter unseen.
  for (const [key, value] of meta) {
    const one = MetaFilter.safeParse([key, value]);
    if (!one.success) issues.push(...one.error.issues.map((i) => `meta.${key}: ${i.message}`));
  }
  if (!parsed.success || issues.length) throw new GymError('INVALID_ARGUMENT', `bad table query: ${issues.join('; ')}`);
  return { ...parsed.data, meta: Object.fromEntries(meta as [string, string][]) };
}

export interface ResultPage {
  /** Rows in the run. */
  total: number;
  /** Rows that pass the filters. */
  matched: number;
  offset: number;
  rows: ResultRow[];
}

const STATUS_ORDER = { running: 0, error: 1, failed: 2, passed: 3 } as const;

function sortValue(row: ResultRow, key: SortKey): string | number {
  switch (key) {
    case 'status':
      return STATUS_ORDER[row.status];
    case 'failToPass':
    case 'passToPass': {
      const c = row[key];
      // Passed share; no list sorts first.
      return c ? c.passed / Math.max(1, c.passed + c.failed) : -1;
    }
    case 'costUsd':
      return row.costUsd ?? -1;
    case 'infraError':
    case 'task':
    case 'stopReason':
      return row[key] ?? '';
    default:
      return row[key];
  }
}

const collator = new Intl.Collator(undefined, { numeric: true });

/** Each row's place in task order (then sample): the tie-break of every sort, compared as a number. */
function taskOrder(rows: ResultRow[]): Map<ResultRow, number> {
  const sorted = [...rows].sort((a, b) => collator.compare(a.task, b.task) || a.sample - b.sample);
  return new Map(sorted.map((r, i) => [r, i]));
}

function compare(key: SortKey, order: Map<ResultRow, number>): (a: ResultRow, b: ResultRow) => number {
  const tie = (a: ResultRow, b: ResultRow) => order.get(a)! - order.get(b)!;
  if (key === 'task') return tie;
  return (a, b) => {
    const x = sortValue(a, key);
    const y = sortValue(b, key);
    const c = typeof x === 'number' && typeof y === 'number' ? x - y : collator.compare(String(x), String(y));
    return c || tie(a, b);
  };
}

/**
 * Filters, sorts and pages rows. The sorted order of the last (rows, sort) pair is kept, so
 * paging through a 10,000-row run sorts it once.
 */
export class ResultTable {
  private last?: { rows: ResultRow[]; sort: SortKey; dir: string; sorted: ResultRow[] };
  private order?: { rows: ResultRow[]; order: Map<ResultRow, number> };

  page(rows: ResultRow[], q: ResultQuery): ResultPage {
    let sorted: ResultRow[];
    if (this.last && this.last.rows === rows && this.last.sort === q.sort && this.last.dir === q.dir) sorted = this.last.sorted;
    else {
      if (this.order?.rows !== rows) this.order = { rows, order: taskOrder(rows) };
      const cmp = compare(q.sort, this.order.order);
      sorted = [...rows].sort(q.dir === 'asc' ? cmp : (a, b) => cmp(b, a));
      this.last = { rows, sort: q.sort, dir: q.dir, sorted };
    }
    const needle = q.q.toLowerCase();
    const metaFilters = Object.entries(q.meta).filter(([, v]) => v !== '');
    const filtered =
      q.status || needle || metaFilters.length
        ? sorted.filter(
            (r) =>
              (!q.status || r.status === q.status) &&
              (!needle || r.task.toLowerCase().includes(needle)) &&
              metaFilters.every(([k, v]) => Object.hasOwn(r.metadata, k) && String(r.metadata[k]) === v),
          )
        : sorted;
    return { total: rows.length, matched: filtered.length, offset: q.offset, rows: filtered.slice(q.offset, q.offset + q.limit) };
  }
}
