/**
 * Benchmark metrics over per-(task, sample) outcomes: the unbiased pass@k estimator, the
 * resolved rate, bootstrap confidence intervals over tasks and breakdowns by task metadata or
 * any grouping. A sample that ended in an infrastructure failure is a sample that did not pass:
 * it stays in every denominator (a wrong answer must not hide in an error) and is counted apart;
 * `excludeErrors` leaves such samples out, the old denominator. A suite's own metrics (over the
 * annotations it records) live with the suite.
 */
import { ownValue } from '../own.ts';

/**
 * The unbiased pass@k estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained
 * on Code", the Codex paper), used as is by most code benchmarks: with n samples of which c
 * pass, `1 - C(n-c, k) / C(n, k)`, computed as the paper's numerically stable
 * `1 - prod(1 - k / arange(n - c + 1, n + 1))`.
 * Returns undefined when n < k: the estimator needs at least k samples.
 *
 * @example passAtK(10, 3, 1) // 0.3
 */
export function passAtK(n: number, c: number, k: number): number | undefined {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 0 || c < 0 || c > n || k < 1) {
    throw new RangeError(`passAtK needs whole numbers 0 <= c <= n and k >= 1 (got n=${n}, c=${c}, k=${k})`);
  }
  if (n < k) return undefined;
  if (n - c < k) return 1;
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - k / i;
  return 1 - prod;
}

/** One task's outcomes. */
export interface TaskOutcomes {
  task: string;
  /** Pass (true) or not per sample counted (an infrastructure failure is false; left out with `excludeErrors`), in sample order. */
  passed: boolean[];
  metadata?: Record<string, unknown>;
}

/** pass@k per task (tasks with fewer than k scored samples are left out). */
export function passAtKPerTask(tasks: TaskOutcomes[], k: number): { task: string; value: number }[] {
  const out: { task: string; value: number }[] = [];
  for (const t of tasks) {
    const value = passAtK(t.passed.length, t.passed.filter(Boolean).length, k);
    if (value !== undefined) out.push({ task: t.task, value });
  }
  return out;
}

/** The benchmark's pass@k: the mean of the per-task estimates; undefined when no task has k samples. */
export function meanPassAtK(tasks: TaskOutcomes[], k: number): number | undefined {
  return mean(passAtKPerTask(tasks, k).map((t) => t.value));
}

/** The share of tasks where at least one of the first k samples passes (the naive, biased pass@k). */
export function firstKPassRate(tasks: TaskOutcomes[], k: number): number | undefined {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a whole number >= 1 (got ${k})`);
  const eligible = tasks.filter((t) => t.passed.length >= k);
  if (!eligible.length) return undefined;
  return eligible.filter((t) => t.passed.slice(0, k).some(Boolean)).length / eligible.length;
}

/**
 * The resolved rate of single-sample runs (issue-resolving benchmarks): the share of tasks whose (first
 * scored) sample has reward 1.
 */
export function resolvedRate(tasks: TaskOutcomes[]): number | undefined {
  return mean(tasks.filter((t) => t.passed.length > 0).map((t) => (t.passed[0] ? 1 : 0)));
}

export function mean(values: number[]): number | undefined {
  if (!values.length) return undefined;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** A small seeded PRNG (mulberry32): the same seed gives the same resamples on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** numpy.percentile's default ('linear') on sorted values, q in [0, 1]. */
export function percentile(sorted: number[], q: number): number {
  if (!sorted.length) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export interface Interval {
  estimate: number;
  lo: number;
  hi: number;
}

export interface BootstrapOptions {
  resamples?: number;
  confidence?: number;
  seed?: number;
}

/**
 * A percentile bootstrap interval over tasks: resample the per-task values with replacement
 * (1000 times by default, seeded), take the statistic of each resample, and the 2.5th / 97.5th
 * percentiles for 95%.
 */
export function bootstrapCI(
  values: number[],
  opts: BootstrapOptions = {},
  statistic: (xs: number[]) => number = (xs) => mean(xs)!,
): Interval | undefined {
  if (!values.length) return undefined;
  const resamples = opts.resamples ?? 1000;
  const confidence = opts.confidence ?? 0.95;
  const random = seededRandom(opts.seed ?? 1);
  const stats: number[] = new Array(resamples);
  const sample: number[] = new Array(values.length);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < values.length; i++) sample[i] = values[Math.floor(random() * values.length)]!;
    stats[r] = statistic(sample);
  }
  stats.sort((a, b) => a - b);
  const alpha = (1 - confidence) / 2;
  return { estimate: statistic(values), lo: percentile(stats, alpha), hi: percentile(stats, 1 - alpha) };
}

/** A paired bootstrap of the difference b - a over the tasks both have, resampling tasks. */
export function pairedBootstrapDiff(
  a: Map<string, number>,
  b: Map<string, number>,
  opts: BootstrapOptions = {},
): (Interval & { tasks: number }) | undefined {
  const common = [...a.keys()].filter((t) => b.has(t)).sort();
  if (!common.length) return undefined;
  const diffs = common.map((t) => b.get(t)! - a.get(t)!);
  const ci = bootstrapCI(diffs, opts)!;
  return { ...ci, tasks: common.length };
}

// ---------------------------------------------------------------------------
// Summaries of a run's final results.

/** The fields of a final result that metrics read (see src/runner/results.ts). */
export interface OutcomeRecord {
  task: string;
  sample: number;
  status: 'passed' | 'failed' | 'error';
  infra: boolean;
  metadata?: Record<string, unknown>;
}

export interface MetricSummary {
  /** Tasks with at least one sample counted. */
  tasks: number;
  /** Samples counted: every one, or with `excludeErrors` the scored ones. */
  samples: number;
  passedSamples: number;
  /** Final infrastructure failures: samples that did not pass (counted in `samples` unless `excludeErrors`). */
  infraFailures: number;
  /** Tasks whose every sample was an infrastructure failure (left out of `tasks` only with `excludeErrors`). */
  tasksAllInfra: number;
  /** Whether the figures leave infrastructure failures out (the old denominator). */
  excludeErrors: boolean;
  /** Samples per task: the smallest and the largest count among the tasks counted. */
  minSamples: number;
  maxSamples: number;
  passAtK: Record<number, (Interval & { tasks: number }) | undefined>;
  /** Single-sample runs: the share of tasks resolved. */
  resolved?: Interval & { tasks: number };
}

export const DEFAULT_KS = [1, 5, 10, 20, 50, 100];

/** How a metric treats infrastructure failures: as samples that did not pass (default), or left out. */
export interface ErrorPolicy {
  excludeErrors?: boolean;
}

/** Groups final results by task; infrastructure failures are counted, and kept as samples that did not pass unless `excludeErrors`. */
export function taskOutcomes(
  records: OutcomeRecord[],
  opts: ErrorPolicy = {},
): { tasks: TaskOutcomes[]; infraFailures: number; tasksAllInfra: number } {
  const byTask = new Map<string, OutcomeRecord[]>();
  for (const r of records) {
    const list = byTask.get(r.task) ?? [];
    list.push(r);
    byTask.set(r.task, list);
  }
  const tasks: TaskOutcomes[] = [];
  let infraFailures = 0;
  let tasksAllInfra = 0;
  for (const [task, list] of [...byTask].sort(([a], [b]) => a.localeCompare(b))) {
    list.sort((a, b) => a.sample - b.sample);
    const scored = list.filter((r) => !isError(r));
    infraFailures += list.length - scored.length;
    if (!scored.length) tasksAllInfra++;
    const counted = opts.excludeErrors ? scored : list;
    if (!counted.length) continue;
    tasks.push({ task, passed: counted.map((r) => r.status === 'passed'), metadata: list[0]!.metadata });
  }
  return { tasks, infraFailures, tasksAllInfra };
}

/** How a summary is made: the bootstrap, the k of pass@k, the errors' denominator. */
export type SummaryOptions = BootstrapOptions & { ks?: number[] } & ErrorPolicy;

/** A result that is an infrastructure failure, not a verdict on the answer. */
export function isError(r: Pick<OutcomeRecord, 'infra' | 'status'>): boolean {
  return r.infra || r.status === 'error';
}

/**
 * pass@k with a 95% bootstrap interval for each k up to the samples drawn, and the resolved
 * rate for single-sample runs; infrastructure failures count as samples that did not pass
 * unless `excludeErrors`.
 */
export function summarize(records: OutcomeRecord[], opts: SummaryOptions = {}): MetricSummary {
  const { tasks, infraFailures, tasksAllInfra } = taskOutcomes(records, opts);
  const counts = tasks.map((t) => t.passed.length);
  const maxSamples = counts.length ? Math.max(...counts) : 0;
  const minSamples = counts.length ? Math.min(...counts) : 0;
  const ks = opts.ks ?? defaultKs(maxSamples);
  const passAt: MetricSummary['passAtK'] = {};
  for (const k of ks) {
    const per = passAtKPerTask(tasks, k);
    const ci = bootstrapCI(
      per.map((p) => p.value),
      opts,
    );
    passAt[k] = ci ? { ...ci, tasks: per.length } : undefined;
  }
  const summary: MetricSummary = {
    tasks: tasks.length,
    samples: counts.reduce((a, b) => a + b, 0),
    passedSamples: tasks.reduce((a, t) => a + t.passed.filter(Boolean).length, 0),
    infraFailures,
    tasksAllInfra,
    excludeErrors: Boolean(opts.excludeErrors),
    minSamples,
    maxSamples,
    passAtK: passAt,
  };
  if (maxSamples === 1) {
    const values = tasks.map((t) => (t.passed[0] ? 1 : 0));
    const ci = bootstrapCI(values, opts);
    if (ci) summary.resolved = { ...ci, tasks: values.length };
  }
  return summary;
}

/** The usual k values up to the samples drawn, and n itself (pass@n: any sample passed, exactly). */
function defaultKs(maxSamples: number): number[] {
  return [...new Set([...DEFAULT_KS.filter((k) => k <= maxSamples), Math.max(1, maxSamples)])].sort((a, b) => a - b);
}

/**
 * The metadata keys worth a breakdown: present on some tasks, with at least two values, and
 * grouping tasks (not one distinct value per task).
 */
export function breakdownKeys(records: OutcomeRecord[], preferred: string[] = []): string[] {
  const values = new Map<string, Map<string, string>>();
  const tasks = new Set<string>();
  for (const r of records) {
    tasks.add(r.task);
    for (const [key, value] of Object.entries(r.metadata ?? {})) {
      if (value === null || typeof value === 'object') continue;
      const m = values.get(key) ?? new Map<string, string>();
      m.set(r.task, String(value));
      values.set(key, m);
    }
  }
  const keys: string[] = [];
  for (const [key, perTask] of values) {
    const distinct = new Set(perTask.values()).size;
    if (preferred.includes(key) || (distinct >= 2 && distinct < perTask.size && distinct <= 30)) keys.push(key);
  }
  return keys.sort((a, b) => rank(a, preferred) - rank(b, preferred) || a.localeCompare(b));
}

function rank(key: string, preferred: string[]): number {
  const order = [...preferred, 'library', 'level', 'category', 'kind', 'language'];
  const i = order.indexOf(key);
  return i < 0 ? order.length : i;
}

/** Summaries per value of a metadata key; tasks without the key fall under '(none)'. */
export function breakdown(records: OutcomeRecord[], key: string, opts: SummaryOptions = {}): { value: string; summary: MetricSummary }[] {
  const groups = new Map<string, OutcomeRecord[]>();
  for (const r of records) {
    const raw = ownValue(r.metadata, key);
    const value = raw === undefined || raw === null ? '(none)' : String(raw);
    const list = groups.get(value) ?? [];
    list.push(r);
    groups.set(value, list);
  }
  return [...groups]
    .sort(([a], [b]) => (a === '(none)' ? 1 : b === '(none)' ? -1 : a.localeCompare(b, undefined, { numeric: true })))
    .map(([value, list]) => ({ value, summary: summarize(list, opts) }));
}

/**
 * Records grouped by `groupOf`: groups named in `order` first, in that order, then the others
 * by name, '(none)' last.
 */
export function groupBy<R extends OutcomeRecord>(
  records: R[],
  groupOf: (r: R) => string,
  order: string[] = [],
): { value: string; records: R[] }[] {
  const groups = new Map<string, R[]>();
  for (const r of records) {
    const value = groupOf(r);
    const list = groups.get(value) ?? [];
    list.push(r);
    groups.set(value, list);
  }
  const rankOf = (v: string) => (order.includes(v) ? order.indexOf(v) : v === '(none)' ? order.length + 1 : order.length);
  return [...groups].sort(([a], [b]) => rankOf(a) - rankOf(b) || a.localeCompare(b)).map(([value, list]) => ({ value, records: list }));
}

/** Summaries (pass@k, resolved) per group of tasks, in `groupBy`'s order. */
export function breakdownBy(
  records: OutcomeRecord[],
  groupOf: (r: OutcomeRecord) => string,
  order: string[] = [],
  opts: SummaryOptions = {},
): { value: string; summary: MetricSummary }[] {
  return groupBy(records, groupOf, order).map(({ value, records: list }) => ({ value, summary: summarize(list, opts) }));
}
