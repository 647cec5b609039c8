import { formatModeDifferences, strictOutcome, type StrictOutcome } from '../../src/scoring/compare.ts';
import { z } from 'zod';
import { GymError } from '../../src/errors.ts';
import type { ReplayAdapter, ReplayRow, ReplaySubmission, ScoredSubmission } from '../../src/replay/adapter.ts';
import { scoreSubmissions } from '../../src/replay/driver.ts';
import { agreementFigures, formatAgreement, type AgreementFigures } from '../../src/replay/agreement.ts';
import type { ReplayCause, TaskApart } from '../../src/replay/causes.ts';
import { apartWords, replayHeadline, verdictReason } from '../../src/replay/generic.ts';
import { passRate } from '../../src/runner/pass_rate.ts';
import type { Verdict } from '../../src/scoring/verdict.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { readJsonlRows } from './dataset.ts';
import { authorsUnescape, candidateCode, EXTRACTION_MODES, type ExtractionMode } from './extract.ts';
import { explainPrediction, problemApart } from './known_differences.ts';
import { solutionFile } from './tasks.ts';
import { ownValue } from '../../src/own.ts';
import { replaceFilePatch } from '../../src/replay/file_patch.ts';

/**
 * Replaying published results: a JSON Lines file of model outputs in the authors' format
 * (`example_id`, `answer`, and `passed` when the file carries their verdict; the v2
 * harness also accepts `solution` or `output` for the answer), each scored like a
 * submission, and compared with the published verdict where there is one.
 */
const truthy = z.union([z.boolean(), z.string(), z.number()]).transform((v) => v === true || v === 1 || /^(true|1|yes)$/i.test(String(v)));

export const PredictionRow = z
  .looseObject({
    example_id: z.union([z.string(), z.number()]).optional(),
    idx: z.union([z.string(), z.number()]).optional(),
    task_id: z.union([z.string(), z.number()]).optional(),
    answer: z.string().optional(),
    solution: z.string().optional(),
    output: z.string().optional(),
    passed: truthy.optional(),
  })
  .transform((r, ctx) => {
    const id = r.example_id ?? r.idx ?? r.task_id;
    // The v2 harness's order of aliases (data_model.py `Solution`).
    const answer = r.answer ?? r.solution ?? r.output;
    if (id === undefined) ctx.addIssue({ code: 'custom', message: 'no example_id (or idx, task_id)' });
    if (answer === undefined) ctx.addIssue({ code: 'custom', message: 'no answer (or solution, output)' });
    // Beside an answer, `output` is the published run's own output (the v2 results files): it says why theirs failed.
    const published = r.answer !== undefined && typeof r.output === 'string' ? { publishedOutput: r.output } : {};
    return { taskId: String(id), answer: answer ?? '', passed: r.passed, ...published };
  });
export type Prediction = z.infer<typeof PredictionRow> & { line: number };

export async function readPredictions(file: string): Promise<Prediction[]> {
  const rows = await readJsonlRows(file, PredictionRow, {
    code: 'INVALID_ARGUMENT',
    unreadable: 'INVALID_ARGUMENT',
    what: 'the predictions file',
    describe: (error) => error.issues.map((x) => x.message).join('; '),
  });
  return rows.map(({ row, line }) => ({ ...row, line }));
}

/** The start-state content of a file of a task whose workspace is given as files. */
function startContent(task: Task, file: string): string | null {
  return task.workspace.type === 'files' ? (ownValue(task.workspace.files, file) ?? null) : null;
}

/** The code a prediction is scored as, written over `sample_<id>.py`, as a patch against the task's start state. */
export function predictionPatch(task: Task, answer: string, mode: ExtractionMode): { code: string; patch: string } {
  let code = candidateCode(answer, mode);
  // The v1 harness also unescaped "\n" in what it ran (unless the script held a triple quote).
  if (mode === 'authors-sanitizer' && task.metadata.form === 'v1') code = authorsUnescape(code);
  const file = solutionFile(task.id);
  return { code, patch: replaceFilePatch(file, startContent(task, file), code) };
}

export type ReplayOutcome = 'passed' | 'failed' | 'unavailable' | 'error';

export interface ReplayResult {
  taskId: string;
  line: number;
  ours: ReplayOutcome;
  /** The published verdict, when the file has one. */
  theirs?: 'passed' | 'failed';
  agree?: boolean;
  /** One line from our verdict: the first failing test and its message, or the error. */
  reason: string;
  /** Why it disagrees, or why its published verdict is not sound. */
  cause?: ReplayCause;
  /** Its problem is invalid or unavailable here: counted apart, never compared. */
  apart?: TaskApart;
  durationMs: number;
  /** `--scoring both`: what strict mode made of a faithful pass. */
  strict?: StrictOutcome;
}

/** The short reason a verdict gives (the generic replay's). */
export { verdictReason };

export interface ReplayOptions {
  mode: ExtractionMode;
  concurrency: number;
  signal?: AbortSignal;
  onResult?: (r: ReplayResult) => void;
}

type Row = z.infer<typeof PredictionRow>;

/** A prediction as the replay's one submission for its problem. */
function submission(row: Row, task: Task, line: number, mode: ExtractionMode): ReplaySubmission {
  const { passed } = row;
  return {
    taskId: row.taskId,
    sample: 0,
    patch: predictionPatch(task, row.answer, mode).patch,
    ...(passed === undefined ? {} : { published: passed ? 'passed' : 'failed' }),
    line,
  };
}

async function resultOf(s: ScoredSubmission<Row>): Promise<ReplayResult> {
  const { submission: p, verdict } = s;
  const reason = s.reason;
  const strict = verdict ? await strictOutcome(verdict, verdictReason) : undefined;
  return {
    taskId: p.taskId,
    line: p.line,
    ours: s.ours as ReplayOutcome,
    ...(p.published ? { theirs: p.published } : {}),
    ...(s.agree !== undefined ? { agree: s.agree } : {}),
    reason,
    ...(s.cause ? { cause: s.cause } : {}),
    ...(s.apart ? { apart: s.apart } : {}),
    durationMs: s.durationMs,
    ...(strict ? { strict } : {}),
  };
}

/** What the suite knows of its problems: those invalid here (the data's flaws), and why a published verdict differs. */
const KNOWS = { apart: problemApart, explain: explainPrediction };

const refuseUnknown = (rows: ReplayRow<Row>[]) =>
  `predictions for problems not in the dataset: ${rows
    .slice(0, 10)
    .map((p) => `${p.row.taskId} (line ${p.line})`)
    .join(', ')}`;

/** Scores each prediction with `score` (Gym.score), in input order, `concurrency` at a time. */
export async function replayPredictions(
  tasks: Map<string, Task>,
  predictions: Prediction[],
  score: (task: Task, patch: string) => Promise<Verdict>,
  opts: ReplayOptions,
): Promise<ReplayResult[]> {
  const rows = predictions.map(({ line, ...row }) => ({ row, line }));
  const unknown = rows.filter((p) => !tasks.has(p.row.taskId));
  if (unknown.length) throw new GymError('TASK_NOT_FOUND', refuseUnknown(unknown));
  const submissions = rows.map(({ row, line }) => {
    const task = tasks.get(row.taskId)!;
    return { submission: submission(row, task, line, opts.mode), row, task };
  });
  return scoreSubmissions(submissions, score, {
    concurrency: opts.concurrency,
    signal: opts.signal,
    settle: resultOf,
    onResult: opts.onResult,
    knows: KNOWS,
  });
}

export interface ReplaySummary {
  rows: number;
  /** Of the rows not counted apart: passed, failed, errors. */
  passed: number;
  failed: number;
  unavailable: number;
  /** Scored, but of problems the suite knows to be invalid here: in no rate. */
  apart: number;
  errors: number;
  /** Rows with a published verdict that both sides decided. */
  compared: number;
  agreed: number;
  /** agreed / compared, or null when nothing was compared. */
  agreement: number | null;
  /** Both agreements (as measured, over sound published verdicts), the disagreements by cause, the problems apart. */
  agreementFigures: AgreementFigures;
  /** The published pass count over the same compared rows, and ours. */
  theirPassed: number;
  ourPassedOfCompared: number;
  /**
   * Passed over passed, failed and errors (a scoring error is a prediction that did not pass), and over the decided ones; null for none.
   */
  passRate: number | null;
  scoredPassRate: number | null;
}

export function summarize(results: ReplayResult[]): ReplaySummary {
  const count = (o: ReplayOutcome) => results.filter((r) => r.ours === o && (o === 'unavailable' || !r.apart)).length;
  const compared = results.filter((r) => r.agree !== undefined);
  const agreed = compared.filter((r) => r.agree).length;
  const rate = passRate({ passed: count('passed'), failed: count('failed'), errors: count('error') });
  return {
    rows: results.length,
    passed: count('passed'),
    failed: count('failed'),
    unavailable: count('unavailable'),
    apart: results.filter((r) => r.apart && r.ours !== 'unavailable').length,
    errors: count('error'),
    compared: compared.length,
    agreed,
    agreement: compared.length ? agreed / compared.length : null,
    agreementFigures: agreementFigures(results),
    theirPassed: compared.filter((r) => r.theirs === 'passed').length,
    ourPassedOfCompared: compared.filter((r) => r.ours === 'passed').length,
    passRate: rate.rate,
    scoredPassRate: rate.scoredRate,
  };
}

/** `benchgym score --suite gitchameleon`: the authors' prediction files, scored and compared with their verdicts. */
export const replayAdapter: ReplayAdapter<Row, { mode: ExtractionMode }, ReplayResult> = {
  rowFormat: 'example_id, answer[, passed]',
  usage: `  benchgym score --suite gitchameleon --dataset PATH --predictions FILE [--mode extract|authors-sanitizer]
                 [--tasks a,b] [--concurrency N] [--json] [--scoring faithful|strict|both]
                                                      score published model outputs; agreement with their verdicts`,
  row: PredictionRow,
  describeIssues: (error) => error.issues.map((x) => x.message).join('; '),
  flags: { mode: { type: 'string' } },
  options(values) {
    const mode = (values.mode ?? 'extract') as ExtractionMode;
    if (!EXTRACTION_MODES.includes(mode))
      throw new GymError('INVALID_ARGUMENT', `invalid --mode: '${String(values.mode)}' (${EXTRACTION_MODES.join(' or ')})`);
    return { mode };
  },
  taskOf: (row) => row.taskId,
  refuseUnknown,
  submissions: (row, task, line, { mode }) => [submission(row, task, line, mode)],
  ...KNOWS,
  result: resultOf,
  progress: (r) =>
    `${r.ours.padEnd(11)} ${r.taskId}${r.theirs ? ` (published: ${r.theirs}${r.agree === false ? ', DISAGREE' : ''})` : ''}` +
    ` ${(r.durationMs / 1000).toFixed(1)} s${r.ours === 'passed' ? '' : `: ${r.reason}`}` +
    `${r.strict ? `; strict: ${r.strict.status}${r.strict.status === 'passed' ? '' : ` (${r.strict.reason})`}` : ''}`,
  async report(results, { suite, dataset, predictions, options: { mode }, scoring, excludeErrors }) {
    const summary = summarize(results);
    const out: string[] = [];
    const headline = replayHeadline(summary, excludeErrors);
    out.push(`\n${suite}: ${summary.rows} predictions (mode ${mode}): ${headline}, ${apartWords(summary)}; scoring ${scoring}`);
    out.push(
      ...formatAgreement(results, summary.agreementFigures, {
        what: 'the published verdicts',
        extra: `; published ${summary.theirPassed} passed, ours ${summary.ourPassedOfCompared} on the same rows`,
        disagreement: (r) => `  DISAGREE ${r.taskId} (line ${r.line}): ours ${r.ours}, theirs ${r.theirs}: ${r.reason}`,
      }),
    );
    for (const r of results.filter((x) => x.ours === 'error')) out.push(`  ERROR ${r.taskId}: ${r.reason}`);
    if (scoring === 'both')
      out.push(...formatModeDifferences(results.map((r) => ({ id: r.taskId, ours: r.ours, theirs: r.theirs, strict: r.strict }))));
    return {
      json: { suite, dataset, predictions, mode, scoring, summary, results },
      text: out.join('\n') + '\n',
      exitCode: summary.errors > 0 ? 1 : 0,
    };
  },
};
