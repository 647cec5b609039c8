import { strictOutcome, type ReplayVerdict, type StrictOutcome } from '../../src/scoring/compare.ts';
import { z } from 'zod';
import { GymError, toGymError } from '../../src/errors.ts';
import type { Verdict } from '../../src/scoring/verdict.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { readJsonlRows } from './dataset.ts';
import { authorsUnescape, candidateCode, type ExtractionMode } from './extract.ts';
import { solutionFile } from './tasks.ts';

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
    return { taskId: String(id), answer: answer ?? '', passed: r.passed };
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

function lines(text: string): { lines: string[]; endsWithNewline: boolean } {
  if (text === '') return { lines: [], endsWithNewline: true };
  const endsWithNewline = text.endsWith('\n');
  const body = endsWithNewline ? text.slice(0, -1) : text;
  return { lines: body.split('\n'), endsWithNewline };
}

/**
 * A git-style patch that replaces a whole text file (or creates it when `before` is null):
 * one hunk, every old line removed and every new line added.
 */
export function replaceFilePatch(file: string, before: string | null, after: string): string {
  if (before === after) return '';
  const a = lines(before ?? '');
  const b = lines(after);
  const range = (n: number) => (n === 0 ? '0,0' : `1,${n}`);
  const side = (sign: string, l: { lines: string[]; endsWithNewline: boolean }) =>
    l.lines.map((line, i) => `${sign}${line}\n${i === l.lines.length - 1 && !l.endsWithNewline ? '\\ No newline at end of file\n' : ''}`).join('');
  const head = before === null ? `diff --git a/${file} b/${file}\nnew file mode 100644\n--- /dev/null\n+++ b/${file}\n` : `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n`;
  return `${head}@@ -${range(a.lines.length)} +${range(b.lines.length)} @@\n${side('-', a)}${side('+', b)}`;
}

/** The start-state content of a file of a task whose workspace is given as files. */
function startContent(task: Task, file: string): string | null {
  return task.workspace.type === 'files' ? (task.workspace.files[file] ?? null) : null;
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
  durationMs: number;
  /** `--scoring both`: what strict mode made of a faithful pass. */
  strict?: StrictOutcome;
}

/** The short reason a verdict gives: why it failed, or the error. */
export function verdictReason(v: Verdict): string {
  if (v.status === 'error') return `${v.error?.code}: ${(v.error?.message ?? '').split('\n')[0]}`;
  if (v.status === 'passed') return `${v.tests.filter((t) => t.status === 'passed').length} passed`;
  const bad = v.tests.find((t) => t.status === 'failed' || t.status === 'error');
  const note = v.notes.find((n) => /PATCH_APPLY_FAILED|time limit|no test results/.test(n));
  if (bad) return `${bad.name}: ${(bad.message ?? bad.status).split('\n')[0]!.slice(0, 200)}`;
  if (note) return note;
  return `exit code ${v.exitCode}${v.tests.length ? `, ${v.tests.map((t) => `${t.status}`).join(' ')}` : ''}`;
}

export interface ReplayOptions {
  mode: ExtractionMode;
  concurrency: number;
  signal?: AbortSignal;
  onResult?: (r: ReplayResult) => void;
}

/** Scores each prediction with `score` (Gym.score), in input order, `concurrency` at a time. */
export async function replayPredictions(
  tasks: Map<string, Task>,
  predictions: Prediction[],
  score: (task: Task, patch: string) => Promise<Verdict>,
  opts: ReplayOptions,
): Promise<ReplayResult[]> {
  const unknown = predictions.filter((p) => !tasks.has(p.taskId));
  if (unknown.length) throw new GymError('TASK_NOT_FOUND', `predictions for problems not in the dataset: ${unknown.slice(0, 10).map((p) => `${p.taskId} (line ${p.line})`).join(', ')}`);
  const results: ReplayResult[] = new Array(predictions.length);
  let next = 0;
  const one = async (p: Prediction): Promise<ReplayResult> => {
    const started = Date.now();
    const task = tasks.get(p.taskId)!;
    const theirs = p.passed === undefined ? undefined : p.passed ? ('passed' as const) : ('failed' as const);
    let ours: ReplayOutcome;
    let reason: string;
    let strict: StrictOutcome | undefined;
    try {
      const verdict: ReplayVerdict = await score(task, predictionPatch(task, p.answer, opts.mode).patch);
      ours = verdict.status === 'error' ? (verdict.error?.code === 'ENV_UNAVAILABLE' ? 'unavailable' : 'error') : verdict.status;
      reason = verdictReason(verdict);
      strict = await strictOutcome(verdict, verdictReason);
    } catch (err) {
      const e = toGymError(err);
      if (e.code === 'CANCELLED') throw e;
      ours = e.code === 'ENV_UNAVAILABLE' ? 'unavailable' : 'error';
      reason = `${e.code}: ${e.message.split('\n')[0]}`;
    }
    const comparable = theirs !== undefined && (ours === 'passed' || ours === 'failed');
    return { taskId: p.taskId, line: p.line, ours, ...(theirs ? { theirs } : {}), ...(comparable ? { agree: ours === theirs } : {}), reason, durationMs: Date.now() - started, ...(strict ? { strict } : {}) };
  };
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(opts.concurrency, predictions.length)) }, async () => {
      while (next < predictions.length) {
        if (opts.signal?.aborted) throw new GymError('CANCELLED', 'the replay was cancelled');
        const i = next++;
        results[i] = await one(predictions[i]!);
        opts.onResult?.(results[i]!);
      }
    }),
  );
  return results;
}

export interface ReplaySummary {
  rows: number;
  passed: number;
  failed: number;
  unavailable: number;
  errors: number;
  /** Rows with a published verdict that both sides decided. */
  compared: number;
  agreed: number;
  /** agreed / compared, or null when nothing was compared. */
  agreement: number | null;
  /** The published pass count over the same compared rows, and ours. */
  theirPassed: number;
  ourPassedOfCompared: number;
}

export function summarize(results: ReplayResult[]): ReplaySummary {
  const count = (o: ReplayOutcome) => results.filter((r) => r.ours === o).length;
  const compared = results.filter((r) => r.agree !== undefined);
  const agreed = compared.filter((r) => r.agree).length;
  return {
    rows: results.length,
    passed: count('passed'),
    failed: count('failed'),
    unavailable: count('unavailable'),
    errors: count('error'),
    compared: compared.length,
    agreed,
    agreement: compared.length ? agreed / compared.length : null,
    theirPassed: compared.filter((r) => r.theirs === 'passed').length,
    ourPassedOfCompared: compared.filter((r) => r.ours === 'passed').length,
  };
}
