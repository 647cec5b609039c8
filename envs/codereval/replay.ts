import { formatModeDifferences, strictOutcome, type StrictOutcome } from '../../src/scoring/compare.ts';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { GymError } from '../../src/errors.ts';
import type { ReplayAdapter, ReplayRow, ReplaySubmission, ScoredSubmission } from '../../src/replay/adapter.ts';
import { scoreSubmissions } from '../../src/replay/driver.ts';
import { agreementFigures, formatAgreement, type AgreementFigures } from '../../src/replay/agreement.ts';
import type { ReplayCause, TaskApart } from '../../src/replay/causes.ts';
import { apartWords, replayHeadline } from '../../src/replay/generic.ts';
import { passRate } from '../../src/runner/pass_rate.ts';
import { meanPassAtK, type TaskOutcomes } from '../../src/runner/metrics.ts';
import { accAtK, oracleContextHits } from './metrics.ts';
import type { Verdict } from '../../src/scoring/verdict.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { readJsonl } from '../../src/tasks/jsonl.ts';
import { describeIssues } from '../../src/validation.ts';
import { replaceFilePatch } from '../../src/replay/file_patch.ts';
import { LEVELS, STANDALONE_LEVELS } from './dataset.ts';
import { CANDIDATE_FILE } from './tasks.ts';
import { explainSample, taskApart } from './known_differences.ts';

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

const describeRowIssues = (error: z.ZodError) =>
  `${describeIssues(error)} (expected CoderEval's output format: _id, generate_results[{generate_code, is_pass}])`;

export function readOutputs(file: string): Promise<OutputRow[]> {
  return readJsonl(file, OutputRow, {
    code: 'INVALID_ARGUMENT',
    unreadable: 'INVALID_ARGUMENT',
    what: 'the predictions file',
    describe: describeRowIssues,
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
  /** Why it disagrees, or why its published verdict is not sound (a known difference of the platform's). */
  cause?: ReplayCause;
  /** Its task is invalid or unavailable here: counted apart, never compared. */
  apart?: TaskApart;
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
  const lines = log
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
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
 * The platform's copy of a project held the original function in its own file: the candidate
 * replaced only the test file's copy, so code of the project that calls the function got the
 * original. A task inside its project (its workspace a folder, the project's file stubbed there)
 * gets the reference back in that file beside each candidate; '' for other tasks.
 */
export function platformCopyPatch(task: Task): string {
  if (task.workspace.type !== 'dir' || !task.solution?.files) return '';
  const parts: string[] = [];
  for (const [file, reference] of Object.entries(task.solution.files)) {
    const at = path.join(task.workspace.path, file);
    const start = existsSync(at) ? readFileSync(at, 'utf8') : null;
    if (start !== null) parts.push(replaceFilePatch(file, start, reference));
  }
  return parts.join('');
}

/** Each sample of a row as a submission, with the published is_pass. */
function submissions(row: OutputRow, line: number, copy: string): ReplaySubmission[] {
  return row.generate_results.map((g, sample) => ({
    taskId: row._id,
    sample,
    patch: candidatePatch(g.generate_code) + copy,
    ...(g.is_pass === undefined ? {} : { published: g.is_pass ? ('passed' as const) : ('failed' as const) }),
    line,
  }));
}

/** The reason of a scored sample: the failure line of its log, or the error scoring threw. */
async function reasonOf(s: Pick<ScoredSubmission<OutputRow>, 'verdict' | 'error'>): Promise<string> {
  return s.verdict ? failureLine(s.verdict) : `${s.error!.code}: ${s.error!.message.split('\n')[0]}`;
}

async function resultOf(s: ScoredSubmission<OutputRow>): Promise<SampleResult> {
  const { submission: sub, verdict } = s;
  const reason = s.reason;
  const strict = verdict ? await strictOutcome(verdict, failureLine) : undefined;
  return {
    taskId: sub.taskId,
    sample: sub.sample,
    level: String(s.task.metadata.level ?? s.row.level ?? 'unknown'),
    ours: s.ours as Outcome,
    ...(sub.published ? { theirs: sub.published } : {}),
    ...(s.agree !== undefined ? { agree: s.agree } : {}),
    reason,
    ...(s.cause ? { cause: s.cause } : {}),
    ...(s.apart ? { apart: s.apart } : {}),
    durationMs: s.durationMs,
    ...(strict ? { strict } : {}),
  };
}

/** What the suite knows of its samples: their reason, the tasks invalid here, the platform's known differences. */
const KNOWS = { reason: reasonOf, apart: taskApart, explain: explainSample };

const refuseUnknown = (rows: ReplayRow<OutputRow>[]) =>
  `outputs for tasks not in the dataset: ${rows
    .slice(0, 10)
    .map((r) => r.row._id)
    .join(', ')}`;

/**
 * Scores every sample of every row. A task whose env is unavailable here is tried once and
 * its other samples are counted unavailable without scoring.
 */
export async function replayOutputs(
  tasks: Map<string, Task>,
  rows: OutputRow[],
  score: (task: Task, patch: string) => Promise<Verdict>,
  opts: ReplayOptions,
): Promise<SampleResult[]> {
  const lines = rows.map((row, i) => ({ row, line: i + 1 }));
  const unknown = lines.filter((r) => !tasks.has(r.row._id));
  if (unknown.length) throw new GymError('TASK_NOT_FOUND', refuseUnknown(unknown));
  const pending = lines.flatMap(({ row, line }) =>
    submissions(row, line, platformCopyPatch(tasks.get(row._id)!)).map((submission) => ({ submission, row, task: tasks.get(row._id)! })),
  );
  return scoreSubmissions(pending, score, {
    concurrency: opts.concurrency,
    samplesInSequence: true,
    signal: opts.signal,
    settle: resultOf,
    onResult: opts.onResult,
    knows: KNOWS,
  });
}

export interface LevelFigures {
  level: string;
  /**
   * Tasks whose every sample has a published verdict and was decided here or failed to score (an
   * error is a sample that did not pass; with excludeErrors: decided only).
   */
  tasks: number;
  ours: Record<number, number | undefined>;
  theirs: Record<number, number | undefined>;
  /** The published verdicts over every task of the level in the file (runnable here or not). */
  theirsAll: Record<number, number | undefined>;
  tasksAll: number;
}

export interface ReplaySummary {
  samples: number;
  /** Of the samples not counted apart: passed, failed, errors. */
  passed: number;
  failed: number;
  unavailable: number;
  /** Scored, but of tasks the suite knows to be invalid here: in no rate and no Pass@k. */
  apart: number;
  errors: number;
  compared: number;
  agreed: number;
  agreement: number | null;
  /** Both agreements (as measured, over sound published verdicts), the disagreements by cause, the tasks apart. */
  agreementFigures: AgreementFigures;
  theirPassed: number;
  ourPassed: number;
  /** Passed over passed, failed and errors (a scoring error is a sample that did not pass), and over the decided ones; null for none. */
  passRate: number | null;
  scoredPassRate: number | null;
  /** Per level and for standalone / non-standalone / all. */
  passAtK: LevelFigures[];
  /** Agreement per runnable level, as measured and over sound published verdicts (the paper reports by level). */
  agreementByLevel: LevelAgreement[];
}

export interface LevelAgreement {
  level: string;
  compared: number;
  agreed: number;
  soundCompared: number;
  soundAgreed: number;
  disagreements: number;
  /** Samples counted apart (their task invalid or unavailable here). */
  apart: number;
}

function levelAgreement(level: string, results: SampleResult[]): LevelAgreement {
  const f = agreementFigures(results);
  return {
    level,
    compared: f.compared,
    agreed: f.agreed,
    soundCompared: f.soundCompared,
    soundAgreed: f.soundAgreed,
    disagreements: f.disagreements,
    apart: f.apart,
  };
}

export const KS = [1, 5, 10];

/**
 * Pass@k of a group of tasks, from our verdicts and from the published ones on the same tasks: those
 * whose every sample has a published verdict and ours (a sample whose scoring failed did not pass,
 * unless `excludeErrors` leaves such tasks out).
 */
function figures(level: string, results: SampleResult[], ks: number[], excludeErrors: boolean): LevelFigures {
  const byTask = new Map<string, SampleResult[]>();
  for (const r of results) byTask.set(r.taskId, [...(byTask.get(r.taskId) ?? []), r]);
  const ours: TaskOutcomes[] = [];
  const theirs: TaskOutcomes[] = [];
  const theirsAll: TaskOutcomes[] = [];
  for (const [task, list] of byTask) {
    list.sort((a, b) => a.sample - b.sample);
    if (list.every((r) => r.theirs)) theirsAll.push({ task, passed: list.map((r) => r.theirs === 'passed') });
    const counted = (r: SampleResult) => r.agree !== undefined || (!excludeErrors && r.ours === 'error' && r.theirs !== undefined);
    if (!list.every(counted)) continue;
    ours.push({ task, passed: list.map((r) => r.ours === 'passed') });
    theirs.push({ task, passed: list.map((r) => r.theirs === 'passed') });
  }
  const at = (t: TaskOutcomes[]) => Object.fromEntries(ks.map((k) => [k, meanPassAtK(t, k)]));
  return { level, tasks: ours.length, ours: at(ours), theirs: at(theirs), theirsAll: at(theirsAll), tasksAll: theirsAll.length };
}

export function summarize(all: SampleResult[], ks = KS, excludeErrors = false): ReplaySummary {
  // Samples of a task invalid here say nothing of the model: in no rate and no Pass@k.
  const results = all.filter((r) => !r.apart || r.ours === 'unavailable');
  const count = (o: Outcome) => results.filter((r) => r.ours === o).length;
  const rate = passRate({ passed: count('passed'), failed: count('failed'), errors: count('error') });
  const compared = results.filter((r) => r.agree !== undefined);
  const agreed = compared.filter((r) => r.agree).length;
  const levels = [
    ...LEVELS.filter((l) => all.some((r) => r.level === l)),
    ...new Set(all.map((r) => r.level).filter((l) => !(LEVELS as readonly string[]).includes(l))),
  ];
  const standalone = new Set(['self_contained', 'slib_runnable']);
  return {
    samples: all.length,
    passed: count('passed'),
    failed: count('failed'),
    unavailable: count('unavailable'),
    apart: all.length - results.length,
    errors: count('error'),
    compared: compared.length,
    agreed,
    agreement: compared.length ? agreed / compared.length : null,
    agreementFigures: agreementFigures(all),
    theirPassed: compared.filter((r) => r.theirs === 'passed').length,
    ourPassed: compared.filter((r) => r.ours === 'passed').length,
    passRate: rate.rate,
    scoredPassRate: rate.scoredRate,
    passAtK: [
      // A task with a sample counted apart is in no ours/theirs column (it is not compared), only in theirs-all.
      ...levels.map((l) =>
        figures(
          l,
          all.filter((r) => r.level === l),
          ks,
          excludeErrors,
        ),
      ),
      figures(
        'standalone',
        all.filter((r) => standalone.has(r.level)),
        ks,
        excludeErrors,
      ),
      figures(
        'non-standalone',
        all.filter((r) => !standalone.has(r.level)),
        ks,
        excludeErrors,
      ),
      figures('all', all, ks, excludeErrors),
    ],
    agreementByLevel: levels.map((l) =>
      levelAgreement(
        l,
        all.filter((r) => r.level === l),
      ),
    ),
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
      .map(([group, cats]) => [
        group,
        Object.fromEntries([...cats].map(([c, hits]) => [c, Object.fromEntries(ks.map((k) => [k, accAtK(hits, k)]))])),
      ]),
  );
}

const pct = (v: number | undefined) => (v === undefined ? '   n/a' : `${(100 * v).toFixed(1).padStart(5)}%`);

/** The replay's report as text: the headline (errors did not pass), agreement, each disagreement with its reason, Pass@k per level. */
export function formatReplay(results: SampleResult[], summary: ReplaySummary, acc?: AccTable, ks = KS, excludeErrors = false): string {
  const out: string[] = [];
  out.push(`${summary.samples} samples: ${replayHeadline(summary, excludeErrors)}, ${apartWords(summary)}`);
  out.push(
    ...formatAgreement(results, summary.agreementFigures, {
      what: 'the published is_pass',
      extra: `; published ${summary.theirPassed} passed, ours ${summary.ourPassed} on the same samples`,
      disagreement: (r) => `  DISAGREE ${r.taskId} sample ${r.sample} (${r.level}): ours ${r.ours}, published ${r.theirs}: ${r.reason}`,
    }),
  );
  for (const r of results.filter((x) => x.ours === 'error')) out.push(`  ERROR ${r.taskId} sample ${r.sample}: ${r.reason}`);
  const share = (n: number, d: number) => (d ? `${n}/${d} (${((100 * n) / d).toFixed(1)}%)` : 'n/a');
  if (summary.agreementByLevel.some((a) => a.compared)) {
    out.push('agreement per runnable level (as measured; over sound published verdicts; samples counted apart):');
    for (const a of summary.agreementByLevel) {
      out.push(
        `  ${a.level.padEnd(16)} ${share(a.agreed, a.compared).padEnd(20)} ` +
          `${share(a.soundAgreed, a.soundCompared).padEnd(20)} ${a.apart} apart`,
      );
    }
  }
  const errors = excludeErrors ? ', tasks with a scoring error left out' : ': a sample whose scoring failed did not pass';
  out.push(
    '',
    `Pass@k per runnable level: benchgym's verdicts (ours${errors}) and the published ` +
      `ones (theirs) on the same tasks; theirs-all: every task of the level in the file`,
  );
  const head = [
    'level'.padEnd(16),
    'tasks',
    ...ks.map((k) => `ours@${k}`.padStart(8)),
    ...ks.map((k) => `theirs@${k}`.padStart(10)),
    ' all',
    ...ks.map((k) => `theirs-all@${k}`.padStart(13)),
  ];
  out.push(head.join(' '));
  for (const f of summary.passAtK) {
    out.push(
      [
        f.level.padEnd(16),
        String(f.tasks).padStart(5),
        ...ks.map((k) => pct(f.ours[k]).padStart(8)),
        ...ks.map((k) => pct(f.theirs[k]).padStart(10)),
        String(f.tasksAll).padStart(4),
        ...ks.map((k) => pct(f.theirsAll[k]).padStart(13)),
      ].join(' '),
    );
  }
  if (acc) {
    out.push(
      '',
      'Acc@k of the published samples, every task of the file (oracle_context tokens found in at least one of the first k samples):',
    );
    for (const [group, cats] of Object.entries(acc)) {
      for (const [c, row] of Object.entries(cats))
        out.push(`  ${group.padEnd(16)} ${c.padEnd(14)} ${ks.map((k) => `Acc@${k} ${pct(row[k])}`).join('  ')}`);
    }
  } else {
    out.push('', 'Acc@k: the records carry no oracle_context (put CoderEval4Python.json in the dataset directory for it).');
  }
  return out.join('\n');
}

/** `benchgym score --suite codereval`: published `*_out.jsonl` samples, agreement with is_pass, Pass@k per level, Acc@k. */
export const replayAdapter: ReplayAdapter<OutputRow, undefined, SampleResult> = {
  rowFormat: '_id, generate_results[{generate_code, is_pass}]',
  usage: `  benchgym score --suite codereval --dataset PATH --predictions FILE_out.jsonl [--tasks a,b] [--concurrency N] [--json]
                 [--scoring faithful|strict|both]     CoderEval outputs: agreement with is_pass, Pass@k per level
                                                      (--scoring: faithful by default, the benchmark's harness; both:
                                                      faithful, and strict on its passes, listing where they differ)`,
  row: OutputRow,
  describeIssues: describeRowIssues,
  taskOf: (row) => row._id,
  refuseUnknown,
  submissions: (row, task, line) => submissions(row, line, platformCopyPatch(task)),
  samplesInSequence: true,
  ...KNOWS,
  result: resultOf,
  progress: (r) =>
    r.ours === 'unavailable'
      ? undefined
      : `${r.ours.padEnd(8)} ${r.taskId} #${r.sample}` +
        `${r.theirs ? ` (published: ${r.theirs}${r.agree === false ? ', DISAGREE' : ''})` : ''}` +
        `${r.ours === 'passed' ? '' : `: ${r.reason}`}` +
        `${r.strict && r.strict.status !== 'passed' ? `; strict: ${r.strict.status} (${r.strict.reason})` : ''}`,
  async report(results, { suite, dataset, predictions, tasks, rows, excludeErrors }) {
    const summary = summarize(results, KS, excludeErrors);
    const acc = outputsAccAtK(
      new Map(tasks.map((t) => [t.id, t])),
      rows.map((r) => r.row),
    );
    let text = `\n${suite}: ${formatReplay(results, summary, acc, KS, excludeErrors)}\n`;
    if (results.some((r) => r.strict))
      text +=
        formatModeDifferences(
          results.map((r) => ({ id: `${r.taskId} #${r.sample}`, ours: r.ours, theirs: r.theirs, strict: r.strict })),
        ).join('\n') + '\n';
    return {
      json: { suite, dataset, predictions, summary, ...(acc ? { accAtK: acc } : {}), results },
      text,
      exitCode: summary.errors > 0 ? 1 : 0,
    };
  },
};
