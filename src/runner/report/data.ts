import path from 'node:path';
import { GymError } from '../../errors.ts';
import { MANIFEST_FILE, readManifest, RESULTS_FILE, type RunManifest } from '../manifest.ts';
import { breakdown, breakdownKeys, mean, pairedBootstrapDiff, passAtKPerTask, summarize, taskOutcomes } from '../metrics.ts';
import type { ErrorPolicy, Interval, MetricSummary } from '../metrics.ts';
import { passCountsOf, type PassCounts } from '../pass_rate.ts';
import { SANDBOX_FAILED_AFTER_AGENT_NOTE } from '../record.ts';
import { finalResults, readResults, type ResultRecord } from '../results.ts';

/** One run directory, read back. */
export interface LoadedRun {
  dir: string;
  manifest: RunManifest;
  /** Every line of results.jsonl (retried attempts included). */
  attempts: ResultRecord[];
  /** The final result of each (task, sample). */
  results: ResultRecord[];
  /** A short name telling this run from the others in a report. */
  label: string;
}

/** The bootstrap settings every number in a report uses. */
export const REPORT_BOOTSTRAP = { resamples: 1000, confidence: 0.95, seed: 1 };

export async function loadRun(dir: string): Promise<Omit<LoadedRun, 'label'>> {
  const abs = path.resolve(dir);
  const manifest = await readManifest(abs);
  if (!manifest) throw new GymError('INVALID_ARGUMENT', `${abs} is not a run directory (no ${MANIFEST_FILE})`);
  const { records } = await readResults(path.join(abs, RESULTS_FILE));
  return { dir: abs, manifest, attempts: records, results: finalResults(records) };
}

/** Reads run directories, each labelled by what it differs from the others in. */
export async function loadRuns(dirs: string[]): Promise<LoadedRun[]> {
  if (!dirs.length) throw new GymError('INVALID_ARGUMENT', 'give at least one run directory');
  const runs = await Promise.all(dirs.map(loadRun));
  return labelRuns(runs);
}

/** What the runs differ in: the agent, the model, both, or neither. */
export function comparisonKind(runs: Pick<LoadedRun, 'manifest'>[]): 'single' | 'agent' | 'model' | 'both' | 'same' {
  if (runs.length < 2) return 'single';
  const agents = new Set(runs.map((r) => r.manifest.agent)).size > 1;
  const models = new Set(runs.map((r) => r.manifest.model)).size > 1;
  return agents && models ? 'both' : agents ? 'agent' : models ? 'model' : 'same';
}

function labelRuns(runs: Omit<LoadedRun, 'label'>[]): LoadedRun[] {
  const kind = comparisonKind(runs);
  const base = runs.map((r) =>
    kind === 'agent' ? r.manifest.agent : kind === 'model' ? r.manifest.model : `${r.manifest.agent} · ${r.manifest.model}`,
  );
  return runs.map((r, i) => {
    const duplicate = base.filter((b) => b === base[i]).length > 1;
    return { ...r, label: duplicate ? `${base[i]} (${path.basename(r.dir)})` : base[i]! };
  });
}

/** One run's numbers. */
export interface RunNumbers {
  run: LoadedRun;
  summary: MetricSummary;
  /** The k of its pass@k, ascending. */
  ks: number[];
  byKey: Map<string, { value: string; summary: MetricSummary }[]>;
  infra: { final: number; retriedAttempts: number; recovered: number; codes: Map<string, number> };
  /** The headline: samples passed, failed and ended in errors (report tables show both rates). */
  counts: PassCounts;
  /** `priced`: the run had prices (`--pricing`) or its agent reported a cost; else the cost is unknown, not zero. */
  cost: {
    episodes: number;
    calls: number;
    prompt: number;
    completion: number;
    usd: number;
    priced: boolean;
    meanSteps?: number;
    meanMs?: number;
  };
  rounds?: { mean: number; passedRound: Map<number, number>; samples: number };
}

/** The numbers of a report, computed once for both renderings (and for the suites' sections). */
export interface ReportData {
  generated: string;
  runs: RunNumbers[];
  kind: ReturnType<typeof comparisonKind>;
  keys: string[];
  /** pass@1 of each run after the first, against the first, over the tasks both counted. */
  deltas: { a: string; b: string; k: number; diff?: Interval & { tasks: number } }[];
  tasks: string[];
  /** The figures leave infrastructure failures out (`--exclude-errors`); by default they are samples that did not pass. */
  excludeErrors: boolean;
}

export function reportData(runs: LoadedRun[], opts: { keys?: string[] } & ErrorPolicy = {}): ReportData {
  const keys = opts.keys?.length ? opts.keys : breakdownKeys(runs.flatMap((r) => r.results));
  const policy = { ...REPORT_BOOTSTRAP, excludeErrors: Boolean(opts.excludeErrors) };
  const numbers = runs.map((run): RunNumbers => {
    const summary = summarize(run.results, policy);
    const ks = Object.keys(summary.passAtK)
      .map(Number)
      .sort((a, b) => a - b);
    const byKey = new Map(keys.map((key) => [key, breakdown(run.results, key, policy)]));
    const codes = new Map<string, number>();
    for (const r of run.results.filter((x) => x.infra))
      codes.set(r.infraError?.code ?? 'unknown', (codes.get(r.infraError?.code ?? 'unknown') ?? 0) + 1);
    const retried = run.attempts.filter((a) => !a.final);
    // A retry that met the agent's sandbox failure again and was counted against it recovered nothing.
    const countedAgainst = (r: ResultRecord) => r.notes?.some((n) => n.startsWith(`${SANDBOX_FAILED_AFTER_AGENT_NOTE}:`)) ?? false;
    const recoveredPairs = new Set(
      run.results.filter((r) => !r.infra && r.attempt > 1 && !countedAgainst(r)).map((r) => `${r.task}#${r.sample}`),
    );
    const finished = run.results;
    const withRounds = finished.filter((r) => !r.infra && typeof r.rounds === 'number');
    const passedRound = new Map<number, number>();
    for (const r of withRounds)
      if (r.status === 'passed' && typeof r.passedRound === 'number')
        passedRound.set(r.passedRound, (passedRound.get(r.passedRound) ?? 0) + 1);
    return {
      run,
      summary,
      ks,
      byKey,
      infra: { final: summary.infraFailures, retriedAttempts: retried.length, recovered: recoveredPairs.size, codes },
      counts: passCountsOf(run.results),
      cost: {
        episodes: run.attempts.length,
        calls: sum(run.attempts.map((a) => a.tokens?.calls ?? 0)),
        prompt: sum(run.attempts.map((a) => a.tokens?.prompt ?? 0)),
        completion: sum(run.attempts.map((a) => a.tokens?.completion ?? 0)),
        usd: sum(run.attempts.map((a) => a.costUsd ?? 0)),
        priced: Boolean(run.manifest.options?.pricing) || run.attempts.some((a) => (a.costUsd ?? 0) > 0),
        meanSteps: mean(finished.map((r) => r.steps ?? 0)),
        meanMs: mean(finished.map((r) => r.durations?.totalMs ?? 0)),
      },
      ...(withRounds.length ? { rounds: { mean: mean(withRounds.map((r) => r.rounds!))!, passedRound, samples: withRounds.length } } : {}),
    };
  });
  const deltas: ReportData['deltas'] = [];
  if (numbers.length >= 2) {
    const perTask = (r: RunNumbers) => new Map(passAtKPerTask(taskOutcomes(r.run.results, policy).tasks, 1).map((t) => [t.task, t.value]));
    const first = perTask(numbers[0]!);
    for (const other of numbers.slice(1)) {
      deltas.push({
        a: numbers[0]!.run.label,
        b: other.run.label,
        k: 1,
        diff: pairedBootstrapDiff(first, perTask(other), REPORT_BOOTSTRAP),
      });
    }
  }
  const tasks = [...new Set(runs.flatMap((r) => r.results.map((x) => x.task)))].sort();
  return {
    generated: new Date().toISOString(),
    runs: numbers,
    kind: comparisonKind(runs),
    keys,
    deltas,
    tasks,
    excludeErrors: policy.excludeErrors,
  };
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
}
