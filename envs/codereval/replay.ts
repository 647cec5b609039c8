import { formatModeDifferences, strictOutcome, type ReplayVerdict, type StrictOutcome } from '../../src/scoring/compare.ts';
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { GymError, toGymError } from '../../src/errors.ts';
import { meanPassAtK, oracleContextHits, accAtK, type TaskOutcomes } from '../../src/runner/metrics.ts';
import type { Verdict } from '../../src/scoring/verdict.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { readJsonl } from '../../src/tasks/jsonl.ts';
import { describeIssues } from '../../src/validation.ts';
import { replaceFilePatch } from '../gitchameleon/replay.ts';
import { LEVELS, STANDALONE_LEVELS } from './dataset.ts';
import { CANDIDATE_FILE } from './tasks.ts';

/**
 * Replaying published CoderEval outputs (`*_out.jsonl`: `_id`, `generate_results` of
 * `{generate_code, is_pass, return_code}`): each sample is scored as the platform scores it
 * (the raw completion in place of the function in the platform's test file) and compared
 * with the published `is_pass`.
 */
export const OutputRow = z.looseObject({
  _id: z.string().min(1),
  level: z.string().optional(),
  generate_results: z.array(
    z.union([
      z.looseObject({ generate_code: z.string(), is_pass: z.boolean().optional(), return_code: z.number().nullable().optional() }),
      z.string().transform((generate_code) => ({ generate_code, is_pass: undefined, return_code: undefined })),
    ]),
  ),
});
export type OutputRow = z.infer<typeof OutputRow>;

export function readOutputs(file: string): Promise<OutputRow[]> {
  return readJsonl(file, OutputRow, {
    code: 'INVALID_ARGUMENT',
    unreadable: 'INVALID_ARGUMENT',
    what: 'the predictions file',
    describe: (error) => `${describeIssues(error)} (expected CoderEval's output format: _id, generate_results[{generate_code, is_pass}])`,
  });
}

export type Outcome = 'passed' | 'failed' | 'unavailable' | 'error';

export interface SampleResult {
  taskId: string;
  sample: number;
  level: string;
  ours: Outcome;
  theirs?: 'passed' | 'failed';
  agree?: boolean;
  /** Why ours is what it is: the last error line of the test run, or the infrastructure error. */
  reason: string;
  durationMs: number;
  /** `--scoring both`: what strict mode made of a faithful pass. */
  strict?: StrictOutcome;
}

/** The candidate as a patch: the raw completion in CANDIDATE_FILE, used verbatim by the scorer. */
export function candidatePatch(code: string): string {
  // An empty completion still replaces the function (with nothing), as on the platform.
  return replaceFilePatch(CANDIDATE_FILE, null, code === '' ? '\n' : code);
}

/** The last line of a scoring log that says what went wrong (an exception, a timeout). */
export async function failureLine(v: Verdict): Promise<string> {
  if (v.error) return `${v.error.code}: ${v.error.message.split('\n')[0]}`;
  let log = '';
  if (v.logRef) log = await fs.readFile(v.logRef, 'utf8').catch(() => '');
  const lines = log.split('\n').map((l) => l.trim()).filter(Boolean);
  const hit = [...lines].reverse().find((l) => /^(TIMEOUT|CANDIDATE|HARNESS):|^\w+(\.\w+)*(Error|Exception|Exit)\b|^\w+Error:/.test(l));
  if (hit) return hit;
  return v.status === 'passed' ? 'exit code 0' : (lines.filter((l) => !/^exit( code)? /.test(l)).at(-1) ?? `exit code ${v.exitCode}`);
}

export interface ReplayOptions {
  concurrency: number;
  signal?: AbortSignal;
  onResult?: (r: SampleResult) => void;
}

/**
 * Scores every sample of every row. A task whose env is unavailable here is tried once and
 * its other samples are counted unavailable without scoring.
 */
export async function replayOutputs(tasks: Map<string, Task>, rows: OutputRow[], score: (task: Task, patch: string) => Promise<Verdict>, opts: ReplayOptions): Promise<SampleResult[]> {
  const unknown = rows.filter((r) => !tasks.has(r._id));
  if (unknown.length) throw new GymError('TASK_NOT_FOUND', `outputs for tasks not in the dataset: ${unknown.slice(0, 10).map((r) => r._id).join(', ')}`);
  const jobs = rows.flatMap((row) => row.generate_results.map((g, sample) => ({ row, sample, g })));
  const unavailable = new Map<string, string>();
  const results: SampleResult[] = new Array(jobs.length);
  const one = async ({ row, sample, g }: (typeof jobs)[number]): Promise<SampleResult> => {
    const started = Date.now();
    const task = tasks.get(row._id)!;
    const theirs = g.is_pass === undefined ? undefined : g.is_pass ? ('passed' as const) : ('failed' as const);
    const level = String(task.metadata.level ?? row.level ?? 'unknown');
    let ours: Outcome;
    let reason: string;
    let strict: StrictOutcome | undefined;
    const known = unavailable.get(row._id);
    if (known) {
      ours = 'unavailable';
      reason = known;
    } else {
      try {
        const verdict: ReplayVerdict = await score(task, candidatePatch(g.generate_code));
        ours = verdict.status === 'error' ? (verdict.error?.code === 'ENV_UNAVAILABLE' ? 'unavailable' : 'error') : verdict.status;
        reason = await failureLine(verdict);
        strict = await strictOutcome(verdict, failureLine);
      } catch (err) {
        const e = toGymError(err);
        if (e.code === 'CANCELLED') throw e;
        ours = e.code === 'ENV_UNAVAILABLE' ? 'unavailable' : 'error';
        reason = `${e.code}: ${e.message.split('\n')[0]}`;
      }
      if (ours === 'unavailable') unavailable.set(row._id, reason);
    }
    const comparable = theirs !== undefined && (ours === 'passed' || ours === 'failed');
    return { taskId: row._id, sample, level, ours, ...(theirs ? { theirs } : {}), ...(comparable ? { agree: ours === theirs } : {}), reason, durationMs: Date.now() - started, ...(strict ? { strict } : {}) };
  };
  // Samples of one task run one after another (the first tells whether its env exists); tasks run in parallel.
  const byTask = new Map<string, number[]>();
  jobs.forEach((j, i) => byTask.set(j.row._id, [...(byTask.get(j.row._id) ?? []), i]));
  const queue = [...byTask.values()];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(opts.concurrency, queue.length)) }, async () => {
      while (next < queue.length) {
        const indices = queue[next++]!;
        for (const i of indices) {
          if (opts.signal?.aborted) throw new GymError('CANCELLED', 'the replay was cancelled');
          results[i] = await one(jobs[i]!);
          opts.onResult?.(results[i]!);
        }
      }
    }),
  );
  return results;
}

export interface LevelFigures {
  level: string;
  /** Tasks whose every sample was decided here. */
  tasks: number;
  ours: Record<number, number | undefined>;
  theirs: Record<number, number | undefined>;
  /** The published verdicts over every task of the level in the file (runnable here or not). */
  theirsAll: Record<number, number | undefined>;
  tasksAll: number;
}

export interface ReplaySummary {
  samples: number;
  passed: number;
  failed: number;
  unavailable: number;
  errors: number;
  compared: number;
  agreed: number;
  agreement: number | null;
  theirPassed: number;
  ourPassed: number;
  /** Per level and for standalone / non-standalone / all. */
  passAtK: LevelFigures[];
}

export const KS = [1, 5, 10];

/** Pass@k of a group of tasks, from our verdicts and from the published ones on the same tasks. */
function figures(level: string, results: SampleResult[], ks: number[]): LevelFigures {
  const byTask = new Map<string, SampleResult[]>();
  for (const r of results) byTask.set(r.taskId, [...(byTask.get(r.taskId) ?? []), r]);
  const ours: TaskOutcomes[] = [];
  const theirs: TaskOutcomes[] = [];
  const theirsAll: TaskOutcomes[] = [];
  for (const [task, list] of byTask) {
    list.sort((a, b) => a.sample - b.sample);
    if (list.every((r) => r.theirs)) theirsAll.push({ task, passed: list.map((r) => r.theirs === 'passed') });
    if (!list.every((r) => r.agree !== undefined)) continue;
    ours.push({ task, passed: list.map((r) => r.ours === 'passed') });
    theirs.push({ task, passed: list.map((r) => r.theirs === 'passed') });
  }
  const at = (t: TaskOutcomes[]) => Object.fromEntries(ks.map((k) => [k, meanPassAtK(t, k)]));
  return { level, tasks: ours.length, ours: at(ours), theirs: at(theirs), theirsAll: at(theirsAll), tasksAll: theirsAll.length };
}

export function summarize(results: SampleResult[], ks = KS): ReplaySummary {
  const count = (o: Outcome) => results.filter((r) => r.ours === o).length;
  const compared = results.filter((r) => r.agree !== undefined);
  const agreed = compared.filter((r) => r.agree).length;
  const levels = [...LEVELS.filter((l) => results.some((r) => r.level === l)), ...new Set(results.map((r) => r.level).filter((l) => !(LEVELS as readonly string[]).includes(l)))];
  const standalone = new Set(['self_contained', 'slib_runnable']);
  return {
    samples: results.length,
    passed: count('passed'),
    failed: count('failed'),
    unavailable: count('unavailable'),
    errors: count('error'),
    compared: compared.length,
    agreed,
    agreement: compared.length ? agreed / compared.length : null,
    theirPassed: compared.filter((r) => r.theirs === 'passed').length,
    ourPassed: compared.filter((r) => r.ours === 'passed').length,
    passAtK: [
      ...levels.map((l) => figures(l, results.filter((r) => r.level === l), ks)),
      figures('standalone', results.filter((r) => standalone.has(r.level)), ks),
      figures('non-standalone', results.filter((r) => !standalone.has(r.level)), ks),
      figures('all', results, ks),
    ],
  };
}

/** Acc@k by group (each runnable level, standalone, non-standalone, all), then token category (and 'all'), then k. */
export type AccTable = Record<string, Record<string, Record<number, number | undefined>>>;

/**
 * Acc@k of the published samples (CoderEval §4.3) per oracle_context category, overall and
 * per runnable level and standalone / non-standalone, when the tasks carry oracle_context:
 * undefined otherwise. Every task of the file counts (no execution is needed).
 */
export function outputsAccAtK(tasks: Map<string, Task>, rows: OutputRow[], ks = KS): AccTable | undefined {
  const units = new Map<string, Map<string, boolean[][]>>();
  const add = (group: string, category: string, hits: boolean[][]) => {
    const g = units.get(group) ?? new Map<string, boolean[][]>();
    g.set(category, [...(g.get(category) ?? []), ...hits]);
    units.set(group, g);
  };
  for (const row of rows) {
    const task = tasks.get(row._id);
    const ctx = task?.metadata.oracle_context as Record<string, string[]> | undefined;
    if (!task || !ctx) continue;
    const level = String(task.metadata.level ?? row.level ?? 'unknown');
    const groups = [level, STANDALONE_LEVELS.has(level) ? 'standalone' : 'non-standalone', 'all'];
    const code = row.generate_results.map((g) => g.generate_code);
    for (const [category, tokens] of Object.entries(ctx)) {
      const hits = oracleContextHits(tokens, code);
      for (const group of groups) for (const c of [category, 'all']) add(group, c, hits);
    }
  }
  if (!units.size) return undefined;
  const order = [...LEVELS, 'standalone', 'non-standalone', 'all'] as string[];
  return Object.fromEntries(
    [...units]
      .sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))
      .map(([group, cats]) => [group, Object.fromEntries([...cats].map(([c, hits]) => [c, Object.fromEntries(ks.map((k) => [k, accAtK(hits, k)]))]))]),
  );
}

const pct = (v: number | undefined) => (v === undefined ? '   n/a' : `${(100 * v).toFixed(1).padStart(5)}%`);

/** The replay's report as text: counts, agreement, each disagreement with its reason, Pass@k per level. */
export function formatReplay(results: SampleResult[], summary: ReplaySummary, acc?: AccTable, ks = KS): string {
  const out: string[] = [];
  const decided = summary.passed + summary.failed;
  out.push(`${summary.samples} samples: ${summary.passed} passed, ${summary.failed} failed (${decided} scored here); ${summary.unavailable} unavailable here (their env needs CoderEval's image), ${summary.errors} errors`);
  if (summary.compared) {
    out.push(`agreement with the published is_pass: ${summary.agreed}/${summary.compared} (${(100 * summary.agreement!).toFixed(1)}%); published ${summary.theirPassed} passed, ours ${summary.ourPassed} on the same samples`);
    for (const r of results.filter((x) => x.agree === false)) out.push(`  DISAGREE ${r.taskId} sample ${r.sample} (${r.level}): ours ${r.ours}, published ${r.theirs}: ${r.reason}`);
  }
  for (const r of results.filter((x) => x.ours === 'error')) out.push(`  ERROR ${r.taskId} sample ${r.sample}: ${r.reason}`);
  const unavailableTasks = new Map(results.filter((r) => r.ours === 'unavailable').map((r) => [r.taskId, r]));
  if (unavailableTasks.size) out.push(`${unavailableTasks.size} tasks unavailable here (ENV_UNAVAILABLE), e.g. ${[...unavailableTasks.values()][0]!.taskId}: ${[...unavailableTasks.values()][0]!.reason}`);
  out.push('', `Pass@k per runnable level: benchgym's verdicts (ours) and the published ones (theirs) on the same tasks; theirs-all: every task of the level in the file`);
  const head = ['level'.padEnd(16), 'tasks', ...ks.map((k) => `ours@${k}`.padStart(8)), ...ks.map((k) => `theirs@${k}`.padStart(10)), ' all', ...ks.map((k) => `theirs-all@${k}`.padStart(13))];
  out.push(head.join(' '));
  for (const f of summary.passAtK) {
    out.push([f.level.padEnd(16), String(f.tasks).padStart(5), ...ks.map((k) => pct(f.ours[k]).padStart(8)), ...ks.map((k) => pct(f.theirs[k]).padStart(10)), String(f.tasksAll).padStart(4), ...ks.map((k) => pct(f.theirsAll[k]).padStart(13))].join(' '));
  }
  if (acc) {
    out.push('', 'Acc@k of the published samples, every task of the file (oracle_context tokens found in at least one of the first k samples):');
    for (const [group, cats] of Object.entries(acc)) {
      for (const [c, row] of Object.entries(cats)) out.push(`  ${group.padEnd(16)} ${c.padEnd(14)} ${ks.map((k) => `Acc@${k} ${pct(row[k])}`).join('  ')}`);
    }
  } else {
    out.push('', 'Acc@k: the records carry no oracle_context (put CoderEval4Python.json in the dataset directory for it).');
  }
  return out.join('\n');
}

/** `benchgym score --suite codereval`: the CLI side (src/cli/score.ts dispatches here). */
export async function scoreCli(
  gym: { registry: { tasks(suite: string): Promise<Task[]> }; score(task: Task, patch: string): Promise<Verdict> },
  suiteId: string,
  o: { predictions: string; tasks?: string; concurrency: number; json?: boolean; dataset: string; score?: (task: Task, patch: string) => Promise<ReplayVerdict> },
): Promise<number> {
  const all = await gym.registry.tasks(suiteId);
  const byId = new Map(all.map((t) => [t.id, t]));
  if (!all.some((t) => t.metadata.codereval_id)) throw new GymError('INVALID_ARGUMENT', `suite '${suiteId}' is not a CoderEval suite`);
  let rows = await readOutputs(o.predictions);
  if (o.tasks) {
    const wanted = new Set(o.tasks.split(',').map((s) => s.trim()).filter(Boolean));
    const unknown = [...wanted].filter((id) => !byId.has(id));
    if (unknown.length) throw new GymError('TASK_NOT_FOUND', `no task ${unknown.map((u) => `'${u}'`).join(', ')} in suite '${suiteId}'`);
    rows = rows.filter((r) => wanted.has(r._id));
  }
  const results = await replayOutputs(byId, rows, o.score ?? ((task, patch) => gym.score(task, patch)), {
    concurrency: o.concurrency,
    onResult: (r) => {
      if (!o.json && r.ours !== 'unavailable') process.stderr.write(`${r.ours.padEnd(8)} ${r.taskId} #${r.sample}${r.theirs ? ` (published: ${r.theirs}${r.agree === false ? ', DISAGREE' : ''})` : ''}${r.ours === 'passed' ? '' : `: ${r.reason}`}${r.strict && r.strict.status !== 'passed' ? `; strict: ${r.strict.status} (${r.strict.reason})` : ''}\n`);
    },
  });
  const summary = summarize(results);
  const acc = outputsAccAtK(byId, rows);
  if (o.json) process.stdout.write(JSON.stringify({ suite: suiteId, dataset: o.dataset, predictions: o.predictions, summary, ...(acc ? { accAtK: acc } : {}), results }, null, 2) + '\n');
  else {
    process.stdout.write(`\n${suiteId}: ${formatReplay(results, summary, acc)}\n`);
    if (results.some((r) => r.strict)) process.stdout.write(formatModeDifferences(results.map((r) => ({ id: `${r.taskId} #${r.sample}`, ours: r.ours, theirs: r.theirs, strict: r.strict }))).join('\n') + '\n');
  }
  return summary.errors > 0 ? 1 : 0;
}
