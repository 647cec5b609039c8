import { GymError, toGymError } from '../errors.ts';
import { workerPool } from '../pool.ts';
import type { ReplayScoring, ReplayVerdict } from '../scoring/compare.ts';
import type { Task } from '../tasks/schema.ts';
import type { ReplayAdapter, ReplayContext, ReplayReport, ReplayRow, ReplaySubmission, ScoredSubmission } from './adapter.ts';
import { judgeSubmission } from './causes.ts';
import { genericProgress, genericReport, genericResult, refuseUnknownRows, scoredReason, type SubmissionResult } from './generic.ts';
import { readReplayRows } from './rows.ts';

/** Scores one submission's patch against its task (Gym.score in the replay's mode, see replayScorer). */
export type ReplayScore = (task: Task, patch: string) => Promise<ReplayVerdict>;

export interface ScoreSubmissionsOptions<Row, Result> {
  concurrency: number;
  /** See ReplayAdapter.samplesInSequence. */
  samplesInSequence?: boolean;
  signal?: AbortSignal;
  /** The suite's reading of a scored submission. */
  settle(scored: ScoredSubmission<Row>): Promise<Result>;
  /** What the suite knows of reasons, tasks apart and causes (its ReplayAdapter's `reason`, `apart`, `explain`). */
  knows?: Pick<ReplayAdapter<Row>, 'reason' | 'apart' | 'explain'>;
  onResult?(result: Result): void;
}

/** A submission to score, the row it came from and its task. */
export interface PendingSubmission<Row> {
  submission: ReplaySubmission;
  row: Row;
  task: Task;
}

type Unjudged<Row> = Omit<ScoredSubmission<Row>, 'reason' | 'cause' | 'apart'>;

/** What a verdict, or the error scoring threw, says of a submission. */
async function scoreOne<Row>({ submission, row, task }: PendingSubmission<Row>, score: ReplayScore): Promise<Unjudged<Row>> {
  const started = Date.now();
  const { published } = submission;
  let scored: Omit<Unjudged<Row>, 'durationMs' | 'agree'>;
  if (submission.patch === null) scored = { submission, row, task, ours: 'skipped' };
  else {
    try {
      const verdict = await score(task, submission.patch);
      const ours = verdict.status === 'error' ? (verdict.error?.code === 'ENV_UNAVAILABLE' ? 'unavailable' : 'error') : verdict.status;
      scored = { submission, row, task, ours, verdict };
    } catch (err) {
      const e = toGymError(err);
      if (e.code === 'CANCELLED') throw e;
      scored = {
        submission,
        row,
        task,
        ours: e.code === 'ENV_UNAVAILABLE' ? 'unavailable' : 'error',
        error: { code: e.code, message: e.message },
      };
    }
  }
  const comparable = published !== undefined && (scored.ours === 'passed' || scored.ours === 'failed');
  return { ...scored, ...(comparable ? { agree: scored.ours === published } : {}), durationMs: Date.now() - started };
}

/** A scored submission with its reason, and judged: counted apart, or given its cause (causes.ts). */
async function judged<Row>(s: Unjudged<Row>, knows: ScoreSubmissionsOptions<Row, unknown>['knows']): Promise<ScoredSubmission<Row>> {
  const reason = knows?.reason ? await knows.reason(s) : scoredReason(s);
  return judgeSubmission({ ...s, reason }, knows);
}

/**
 * Scores submissions `concurrency` at a time, taking them in input order; results keep that
 * order. Infrastructure failures are results (error, unavailable), never failed solutions.
 */
export async function scoreSubmissions<Row, Result>(
  submissions: PendingSubmission<Row>[],
  score: ReplayScore,
  opts: ScoreSubmissionsOptions<Row, Result>,
): Promise<Result[]> {
  const results: Result[] = new Array(submissions.length);
  const settle = async (i: number, scored: ScoredSubmission<Row>) => {
    results[i] = await opts.settle(scored);
    opts.onResult?.(results[i]!);
  };
  const cancelled = () => new GymError('CANCELLED', 'the replay was cancelled');
  if (!opts.samplesInSequence) {
    await workerPool(submissions, opts.concurrency, async (p, i) => settle(i, await judged(await scoreOne(p, score), opts.knows)), {
      signal: opts.signal,
    });
  } else {
    const byTask = new Map<string, number[]>();
    submissions.forEach((p, i) => byTask.set(p.submission.taskId, [...(byTask.get(p.submission.taskId) ?? []), i]));
    await workerPool(
      [...byTask.values()],
      opts.concurrency,
      async (indices) => {
        let unavailable: Unjudged<Row> | undefined;
        for (const i of indices) {
          if (opts.signal?.aborted) throw cancelled();
          const pending = submissions[i]!;
          // The first sample tells whether the task's env exists here: the others are not tried again.
          const scored = unavailable ? { ...unavailable, ...pending, durationMs: 0 } : await scoreOne(pending, score);
          if (scored.ours === 'unavailable') unavailable ??= scored;
          await settle(i, await judged(scored, opts.knows));
        }
      },
      { signal: opts.signal },
    );
  }
  if (opts.signal?.aborted) throw cancelled();
  return results;
}

export interface ReplayInput<Options> {
  suite: string;
  /** Every task of the suite's dataset. */
  tasks: Task[];
  /** Absolute paths (the dataset when one was given). */
  dataset?: string;
  predictions: string;
  /** `--tasks`: only these ids (each must be a task of the suite). */
  only?: string[];
  options: Options;
  scoring: ReplayScoring;
  score: ReplayScore;
  concurrency: number;
  signal?: AbortSignal;
  /** Each result's progress line, as it comes. */
  onProgress?(line: string): void;
  /** See ReplayContext.excludeErrors. */
  excludeErrors?: boolean;
}

/** The rows of a predictions file for the tasks replayed, and those for tasks the dataset lacks. */
export function rowsFor<Row>(
  adapter: Pick<ReplayAdapter<Row>, 'taskOf'>,
  rows: ReplayRow<Row>[],
  tasks: ReadonlyMap<string, Task>,
): { known: ReplayRow<Row>[]; unknown: ReplayRow<Row>[] } {
  const known = rows.filter((r) => tasks.has(adapter.taskOf(r.row)));
  return { known, unknown: rows.filter((r) => !tasks.has(adapter.taskOf(r.row))) };
}

/** The tasks `--tasks` names; TASK_NOT_FOUND naming each id the suite lacks. */
export function selectTasks(suite: string, all: Task[], only: string[] | undefined): Task[] {
  if (!only) return all;
  const unknown = [...new Set(only)].filter((id) => !all.some((t) => t.id === id));
  if (unknown.length) throw new GymError('TASK_NOT_FOUND', `no task ${unknown.map((u) => `'${u}'`).join(', ')} in suite '${suite}'`);
  return all.filter((t) => only.includes(t.id));
}

/**
 * `benchgym score`: reads the predictions file through the suite's adapter, keeps the rows of
 * the tasks replayed, scores every submission and hands the results to the suite's summary
 * (or the generic one).
 */
export async function replay<Row, Options, Result>(
  adapter: ReplayAdapter<Row, Options, Result>,
  input: ReplayInput<Options>,
): Promise<ReplayReport> {
  let rows = await readReplayRows(input.predictions, adapter.row, adapter.describeIssues?.bind(adapter));
  rows = adapter.keep?.(rows) ?? rows;
  const tasks = selectTasks(input.suite, input.tasks, input.only);
  if (input.only) rows = rows.filter((r) => input.only!.includes(adapter.taskOf(r.row)));
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const { known, unknown } = rowsFor(adapter, rows, byId);
  if (unknown.length) {
    const refusal = adapter.refuseUnknown
      ? adapter.refuseUnknown(unknown)
      : refuseUnknownRows(unknown, (row) => adapter.taskOf(row as Row));
    if (refusal !== null) throw new GymError('TASK_NOT_FOUND', refusal);
  }
  const submissions = known.flatMap(({ row, line }) => {
    const task = byId.get(adapter.taskOf(row))!;
    return adapter.submissions(row, task, line, input.options).map((submission) => ({ submission, row, task }));
  });
  // Without its own reading, a suite gets the generic one: results, progress lines and summary.
  const result = adapter.result
    ? (s: ScoredSubmission<Row>) => adapter.result!(s, { options: input.options })
    : (genericResult as (s: ScoredSubmission<Row>) => Promise<Result>);
  const progress = adapter.result ? adapter.progress?.bind(adapter) : (genericProgress as unknown as (r: Result) => string);
  const results = await scoreSubmissions(submissions, input.score, {
    concurrency: input.concurrency,
    samplesInSequence: adapter.samplesInSequence,
    signal: input.signal,
    settle: result,
    knows: adapter,
    onResult: (r) => {
      const line = input.onProgress && progress?.(r);
      if (line) input.onProgress!(line);
    },
  });
  const { suite, dataset, predictions, scoring, options } = input;
  const context: ReplayContext<Row, Options> = {
    suite,
    dataset,
    predictions,
    scoring,
    options,
    tasks,
    rows: known,
    unknown,
    excludeErrors: input.excludeErrors,
  };
  if (adapter.report) return adapter.report(results, context);
  return genericReport(results as unknown as SubmissionResult[], context as ReplayContext);
}
