/**
 * The replay contract (`Suite.replay`): how `benchgym score --suite <id>` turns a file of a
 * benchmark's published model outputs into submissions, and its results into the benchmark's
 * own summary. The generic driver (src/replay/driver.ts) reads the rows, scores the submissions
 * in fresh sandboxes and compares with the published verdicts; it knows no suite.
 */
import type { z } from 'zod';
import type { ReplayScoring, ReplayVerdict } from '../scoring/compare.ts';
import type { Task } from '../tasks/schema.ts';
import type { Verdict } from '../scoring/verdict.ts';
import type { ReplayCause, TaskApart } from './causes.ts';

/** One row of the predictions file and its 1-based line (its index in a JSON list). */
export interface ReplayRow<Row> {
  row: Row;
  line: number;
}

/** A flag of the suite's own, in node:util parseArgs form. */
export interface ReplayFlag {
  type: 'string' | 'boolean';
  multiple?: boolean;
}

/** What the flags parsed to: a flag's string, boolean or strings, undefined when left out. */
export type ReplayFlagValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface ReplaySubmission {
  taskId: string;
  /** 0-based sample index within the row. */
  sample: number;
  /** The patch scored against the task's start state; null when there is nothing to score (an empty patch the benchmark counts apart). */
  patch: string | null;
  /** The published verdict, when the file has one. */
  published?: 'passed' | 'failed';
  /** 1-based line of the predictions file. */
  line: number;
}

/** What the driver made of one submission, before the suite's reading of it. */
export interface ScoredSubmission<Row = unknown> {
  submission: ReplaySubmission;
  /** The row it came from, and its task. */
  row: Row;
  task: Task;
  /**
   * passed / failed: decided here; unavailable: the env cannot exist on this machine;
   * error: an infrastructure failure (never a failed solution); skipped: a null patch, not scored.
   */
  ours: 'passed' | 'failed' | 'unavailable' | 'error' | 'skipped';
  /** The verdict, when scoring returned one. */
  verdict?: ReplayVerdict;
  /** The error scoring threw, when it threw. */
  error?: { code: string; message: string };
  /**
   * Whether ours matches the published verdict, when both exist, ours is decided and the
   * sample is not counted apart.
   */
  agree?: boolean;
  /** One line on why ours is what it is (ReplayAdapter.reason, else the verdict's first failure or the error). */
  reason: string;
  /** Its task is invalid or unavailable here (the suite knows, or its env cannot exist): counted apart, never compared. */
  apart?: TaskApart;
  /** Why it disagrees, or why its published verdict is not sound (src/replay/causes.ts). */
  cause?: ReplayCause;
  durationMs: number;
}

/** What the driver knows when the suite sums a replay up. */
export interface ReplayContext<Row = unknown, Options = unknown> {
  suite: string;
  /** Absolute paths of the dataset (when one was given) and of the predictions file. */
  dataset?: string;
  predictions: string;
  scoring: ReplayScoring;
  options: Options;
  /** The tasks replayed: the suite's, or those `--tasks` names. */
  tasks: Task[];
  /** The rows scored (for the tasks replayed), and those for tasks the dataset lacks. */
  rows: ReplayRow<Row>[];
  unknown: ReplayRow<Row>[];
  /**
   * `--exclude-errors`: the summary's first rate over the decided submissions only. By default a
   * submission whose scoring failed is one that did not pass (both rates are shown either way);
   * one whose env cannot exist here is in neither (it says nothing of the submission).
   */
  excludeErrors?: boolean;
}

/** The replay's outcome as the benchmark tells it: `--json` prints `json`, else `text`. */
export interface ReplayReport {
  json: unknown;
  text: string;
  exitCode: number;
}

/**
 * A suite's replay. Only the row schema, `taskOf` and `submissions` are required: the rest
 * defaults to the generic replay (src/replay/generic.ts: a result per submission with the
 * published verdict and ours, counts, agreement, each disagreement; exit 1 on scoring errors).
 */
export interface ReplayAdapter<Row = unknown, Options = unknown, Result = unknown> {
  /** What one line of the predictions file holds, for errors (e.g. `example_id, answer[, passed]`). */
  rowFormat: string;
  /** The usage lines of `benchgym score --suite <id>` (shown by `benchgym score --help`). */
  usage: string;
  /** One line of the predictions file (JSON Lines, or one item of a JSON list). */
  row: z.ZodType<Row>;
  /** How a row's schema issues are told (default: each field and its issue). */
  describeIssues?(error: z.ZodError): string;
  /** Flags of the suite's own besides the driver's (an answer-extraction mode, an output directory). */
  flags?: Readonly<Record<string, ReplayFlag>>;
  /** Reads (and checks, throwing INVALID_ARGUMENT naming the flag) the suite's own flags. */
  options?(values: ReplayFlagValues): Options;
  /** The id of the task a row is for. */
  taskOf(row: Row): string;
  /** Which rows count when several name one task (a harness that keeps the last, say); default all. */
  keep?(rows: ReplayRow<Row>[]): ReplayRow<Row>[];
  /**
   * Rows for tasks the dataset lacks: a message to refuse the file with (TASK_NOT_FOUND), or
   * null to pass them to `report` (default: refused, naming them).
   */
  refuseUnknown?(rows: ReplayRow<Row>[]): string | null;
  /** Rows → submissions (one per sample the row holds). */
  submissions(row: Row, task: Task, line: number, options: Options): ReplaySubmission[];
  /**
   * Samples of one task are scored one after another, and once its env is found unavailable
   * the rest are counted so without scoring (ten samples a task, say). Default: all in parallel.
   */
  samplesInSequence?: boolean;
  /** The one-line reason of a scored submission (default: the verdict's first failure, or the error): causes are read from it. */
  reason?(scored: Omit<ScoredSubmission<Row>, 'reason' | 'cause' | 'apart'>): Promise<string> | string;
  /**
   * A task the suite itself knows to be invalid or unavailable here (a test reading a file in no
   * commit, a flaw of the data), with the reason: its samples are counted apart, never compared.
   */
  apart?(task: Task): TaskApart | undefined;
  /**
   * The suite's own cause of a sample's verdict, before the ones the verdict tells
   * (src/replay/causes.ts): a known difference of the original harness (named, with its
   * evidence), an environment difference. Undefined when it knows none.
   */
  explain?(scored: ScoredSubmission<Row>): ReplayCause | undefined;
  /**
   * False when strict mode adds no check to the suite's scoring: `--scoring both` then scores once,
   * faithfully. A function: the faithful verdicts that strict scoring may decide otherwise (their
   * notes say so), which are scored strictly too under `both` and under `faithful`.
   */
  strictRescore?: boolean | ((faithful: Verdict) => boolean);
  /**
   * Check each passing verdict against its task's start state (`--validated FILE`, else the empty
   * patch scored once per task): FAIL_TO_PASS tests passing there get a CANNOT_FAIL note (src/replay/start_state.ts).
   */
  startStateCheck?: boolean;
  /** The suite's result of one submission (it may write per-instance logs here). */
  result?(scored: ScoredSubmission<Row>, context: Pick<ReplayContext<Row, Options>, 'options'>): Promise<Result>;
  /** A progress line on stderr for a result (without `--json`), or undefined for none. */
  progress?(result: Result): string | undefined;
  /** The summary: counts, agreement, the benchmark's own figures, and the exit code. */
  report?(results: Result[], context: ReplayContext<Row, Options>): Promise<ReplayReport>;
}
