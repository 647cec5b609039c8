import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { ReplayAdapter, ReplayRow } from '../../src/replay/adapter.ts';
import { readReplayRows } from '../../src/replay/rows.ts';
import type { Verdict } from '../../src/scoring/verdict.ts';
import type { ReplayVerdict } from '../../src/scoring/compare.ts';
import { REFUSED } from '../../src/scoring/candidate_files.ts';
import { TEST_FILES_KEPT } from './scorer.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { describeIssues } from '../../src/validation.ts';
import { ownValue } from '../../src/own.ts';
import { NOTE_CODES } from '../../src/scoring/note_codes.ts';

/** One prediction of the SWE-bench harness's input (`all_preds.jsonl`). */
export const PredictionRow = z.looseObject({
  instance_id: z.string().min(1),
  model_patch: z.string().nullable().default(null),
  model_name_or_path: z.string().optional(),
});
export type Prediction = z.infer<typeof PredictionRow>;

const describeRowIssues = (error: z.ZodError) => `invalid prediction: ${describeIssues(error)}`;

/** A later line for the same instance replaces an earlier one, as in the harness (the instance keeps its first place). */
function lastPerInstance(rows: ReplayRow<Prediction>[]): ReplayRow<Prediction>[] {
  const byId = new Map<string, ReplayRow<Prediction>>();
  for (const r of rows) byId.set(r.row.instance_id, r);
  return [...byId.values()];
}

/** Reads predictions as JSON Lines or a JSON list; a later line for the same instance replaces an earlier one, as in the harness. */
export async function readPredictions(file: string): Promise<Prediction[]> {
  return lastPerInstance(await readReplayRows(file, PredictionRow, describeRowIssues)).map((r) => r.row);
}

/** The per-instance report of the SWE-bench harness (`logs/<instance_id>/report.json`). */
export interface InstanceReport {
  patch_is_None: boolean;
  patch_exists: boolean;
  patch_successfully_applied: boolean;
  resolved: boolean;
  tests_status?: {
    FAIL_TO_PASS: { success: string[]; failure: string[] };
    PASS_TO_PASS: { success: string[]; failure: string[] };
  };
  /**
   * benchgym: the verdict's notes (neutralised tampering, substitutions) and an
   * error, if any (the harness's PATCH_APPLY_FAILED, or an infrastructure one).
   */
  notes: string[];
  error?: { code: string; message: string };
  /** benchgym: FAIL_TO_PASS tests of the instance pass on its untouched start state (CANNOT_FAIL note): a resolution is counted apart. */
  cannot_fail?: boolean;
  /** benchgym: the strict verdict, where strict scoring may decide otherwise (the candidate's test files, refused files). */
  strict?: { resolved: boolean; notes: string[] };
}

/** The run report of the SWE-bench harness (`make_run_report`, schema 2), as results.json. */
export interface RunReport {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  unresolved_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  completed_ids: string[];
  incomplete_ids: string[];
  empty_patch_ids: string[];
  submitted_ids: string[];
  resolved_ids: string[];
  unresolved_ids: string[];
  error_ids: string[];
  /** Predictions for instances the dataset does not have. */
  unknown_ids: string[];
  /** benchgym: errors that are the harness's verdict on the patch (it does not apply), not an infrastructure failure. */
  patch_apply_failed_ids: string[];
  /** benchgym: resolved instances whose FAIL_TO_PASS pass on the start state (CANNOT_FAIL): reported apart. */
  cannot_fail_ids: string[];
  /** benchgym: instances scored in both modes (strict may decide otherwise), and those whose verdicts differ. */
  strict_checked_ids: string[];
  strict_differs_ids: string[];
  schema_version: 2;
}

/** The note codes of a patch that does not apply and of tests that cannot fail (src/scoring/note_codes.ts of the replay). */
export const PATCH_APPLY_FAILED = NOTE_CODES.patchNotApplied;
const CANNOT_FAIL = NOTE_CODES.cannotFail;
const coded = (notes: readonly string[], code: string) => notes.find((n) => n === code || n.startsWith(`${code}:`));

/**
 * Where strict scoring may decide otherwise than faithful: the candidate's test files kept, or files of its refused (removed in faithful).
 */
export function strictMayDiffer(v: Pick<Verdict, 'notes' | 'status'>): boolean {
  return v.status !== 'error' && v.notes.some((n) => n.startsWith(`${TEST_FILES_KEPT}:`) || n.startsWith(`${REFUSED}:`));
}

export function instanceReport(patch: string | null, v: ReplayVerdict | null, error?: { code: string; message: string }): InstanceReport {
  const exists = Boolean(patch && patch.trim());
  const notApplied = v && v.status !== 'error' ? coded(v.notes, PATCH_APPLY_FAILED) : undefined;
  const applied = Boolean(v && v.status !== 'error' && !notApplied);
  // The harness reports a patch that does not apply as an error of the instance (not an infrastructure failure of ours).
  const harnessError = notApplied ? { error: { code: PATCH_APPLY_FAILED, message: notApplied } } : {};
  const strict = v?.strictVerdict ? { strict: { resolved: v.strictVerdict.reward === 1, notes: v.strictVerdict.notes } } : {};
  return {
    patch_is_None: patch === null,
    patch_exists: exists,
    patch_successfully_applied: exists && applied,
    resolved: v?.reward === 1,
    ...(v?.failToPass
      ? {
          tests_status: {
            FAIL_TO_PASS: { success: v.failToPass.passed, failure: v.failToPass.failed },
            PASS_TO_PASS: { success: v.passToPass?.passed ?? [], failure: v.passToPass?.failed ?? [] },
          },
        }
      : {}),
    notes: v?.notes ?? [],
    ...(v?.reward === 1 && coded(v.notes, CANNOT_FAIL) ? { cannot_fail: true } : {}),
    ...strict,
    ...(error ? { error } : v?.error ? { error: v.error } : harnessError),
  };
}

/** An error that is the harness's verdict on the patch, not an infrastructure failure. */
const patchError = (r: InstanceReport) => r.error?.code === PATCH_APPLY_FAILED;

/** The run report over the instances replayed (`tasks`), from each submitted instance's report. */
export function runReport(tasks: Task[], submitted: string[], reports: Map<string, InstanceReport>, unknown: string[]): RunReport {
  const ids = (f: (r: InstanceReport) => boolean) =>
    [...reports]
      .filter(([, r]) => f(r))
      .map(([id]) => id)
      .sort();
  const empty = ids((r) => !r.patch_exists);
  const errors = ids((r) => r.patch_exists && Boolean(r.error));
  const completed = ids((r) => r.patch_exists && !r.error);
  const resolved = ids((r) => r.resolved);
  const strictChecked = ids((r) => Boolean(r.strict));
  return {
    total_instances: tasks.length,
    submitted_instances: submitted.length,
    completed_instances: completed.length,
    resolved_instances: resolved.length,
    unresolved_instances: completed.length - resolved.length,
    empty_patch_instances: empty.length,
    error_instances: errors.length,
    completed_ids: completed,
    incomplete_ids: tasks
      .map((t) => t.id)
      .filter((id) => !completed.includes(id))
      .sort(),
    empty_patch_ids: empty,
    submitted_ids: [...submitted].sort(),
    resolved_ids: resolved,
    unresolved_ids: completed.filter((id) => !resolved.includes(id)),
    error_ids: errors,
    unknown_ids: [...unknown].sort(),
    patch_apply_failed_ids: ids(patchError),
    cannot_fail_ids: ids((r) => r.resolved && r.cannot_fail === true),
    strict_checked_ids: strictChecked,
    strict_differs_ids: ids((r) => Boolean(r.strict) && r.strict!.resolved !== r.resolved),
    schema_version: 2,
  };
}

/**
 * The resolved rate over every instance (an error, an empty or a missing patch is not resolved,
 * as the harness counts them) and over the completed ones; `excludeErrors` puts the second first.
 * A patch that does not apply is in the harness's `error_ids`, but it is the candidate's failure,
 * not ours: it counts as completed and unresolved in the second figure too, never left out.
 * Resolutions on instances whose tests cannot fail (CANNOT_FAIL) are counted apart: in neither
 * figure's numerator nor denominator.
 */
export function resolvedRates(
  run: Pick<RunReport, 'resolved_instances' | 'total_instances' | 'completed_instances' | 'error_instances'> &
    Partial<Pick<RunReport, 'patch_apply_failed_ids' | 'cannot_fail_ids'>>,
  excludeErrors = false,
): string {
  const pct = (n: number, d: number) => (d ? `${((100 * n) / d).toFixed(1)}%` : 'n/a');
  const apart = run.cannot_fail_ids?.length ?? 0;
  const patchErrors = run.patch_apply_failed_ids?.length ?? 0;
  const resolved = run.resolved_instances - apart;
  const total = run.total_instances - apart;
  const completedN = run.completed_instances + patchErrors - apart;
  const all = `${pct(resolved, total)} of the ${total} instances`;
  const completed =
    `${pct(resolved, completedN)} of the ${completedN} ` +
    `completed${patchErrors ? ` (${patchErrors} whose patch does not apply among them)` : ''}`;
  const infra = run.error_instances - patchErrors;
  const errors = infra ? ` (${infra} error${infra === 1 ? '' : 's'}: not resolved)` : '';
  const cannot = apart ? `; ${apart} resolved apart: FAIL_TO_PASS tests that cannot fail (CANNOT_FAIL)` : '';
  return (excludeErrors ? `resolved: ${completed}; ${all}${errors}` : `resolved: ${all}${errors}; ${completed}`) + cannot;
}

/** The report's line on strict and faithful scoring: how many instances may differ, how many were scored both ways and differ. */
function modeLine(run: RunReport, results: InstanceResult[]): string {
  const mayDiffer = results.filter((r) => strictMayDiffer({ notes: r.report.notes, status: r.report.error ? 'error' : 'failed' })).length;
  if (!mayDiffer && !run.strict_checked_ids.length) return '';
  const differ = run.strict_differs_ids
    .map((id) => `  STRICT ${results.find((r) => r.id === id)?.report.strict?.resolved ? 'resolved' : 'unresolved'} ${id}\n`)
    .join('');
  return (
    `strict vs faithful: ${mayDiffer} instance(s) whose candidate's test files (or refused files) strict scoring sets ` +
    `aside; ${run.strict_checked_ids.length} scored both ways, ${run.strict_differs_ids.length} verdict(s) differ\n${differ}`
  );
}

/** One instance replayed: its harness report and how long it took (resumed: read back from an earlier run's logs). */
export interface InstanceResult {
  id: string;
  report: InstanceReport;
  durationMs: number;
  resumed?: boolean;
}

/** The replay's own options: the output directory; whether complete logs are scored again; what was resumed. */
export interface ReplayOptions {
  out: string;
  rescore: boolean;
  /** Instances whose complete report an earlier run left in OUT (filled while the submissions are made). */
  resumed: Map<string, InstanceReport>;
}

const logDir = (out: string, id: string) => path.join(out, 'logs', id.replace(/[^\w.@+-]/g, '_'));

/**
 * The report an earlier run left for this prediction, when it is complete: `report.json` read
 * whole, for this instance, with a verdict (an infrastructure error is scored again), and
 * `patch.diff` the same patch. A run killed midway left the instance it was scoring without
 * one (report.json is written last, and atomically), so that instance is scored again.
 */
export function completeReport(out: string, p: Prediction): InstanceReport | undefined {
  const dir = logDir(out, p.instance_id);
  try {
    if (readFileSync(path.join(dir, 'patch.diff'), 'utf8') !== (p.model_patch ?? '')) return undefined;
    const parsed = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8')) as Record<string, InstanceReport | undefined>;
    const r = ownValue(parsed, p.instance_id);
    if (
      !r ||
      typeof r.resolved !== 'boolean' ||
      typeof r.patch_successfully_applied !== 'boolean' ||
      !Array.isArray(r.notes) ||
      (r.error && !patchError(r))
    )
      return undefined;
    return r;
  } catch {
    return undefined;
  }
}

/** Writes a file whole or not at all (a kill mid-write leaves the old one, or none). */
async function writeWhole(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, text);
  await fs.rename(tmp, file);
}

/**
 * `benchgym score --suite swe-bench-java` replays predictions the way `run_evaluation` does:
 * each `model_patch` scored in a fresh sandbox (the suite's harness steps),
 * `OUT/logs/<id>/{patch.diff, report.json, test_output.txt}` written per instance, and
 * `OUT/results.json` with the run report. Empty patches are not run (the harness counts them
 * apart); infrastructure failures are `error_ids`, never unresolved.
 */
export const replayAdapter: ReplayAdapter<Prediction, ReplayOptions, InstanceResult> = {
  rowFormat: 'instance_id, model_patch',
  usage: `  benchgym score --suite swe-bench-java --dataset FILE.jsonl --predictions all_preds.jsonl [--repos-dir DIR] [--out DIR]
                 [--rescore] [--tasks a,b] [--concurrency N] [--json]
                                                      SWE-bench predictions (instance_id, model_patch): OUT/results.json
                                                      (resolved ids) and OUT/logs/<instance_id>/ (default OUT ./swebench-run);
                                                      resumable: an instance whose complete report.json for the same patch
                                                      is in OUT is not scored again (--rescore: score every one)`,
  row: PredictionRow,
  describeIssues: describeRowIssues,
  flags: { out: { type: 'string' }, rescore: { type: 'boolean' } },
  options: (values) => ({
    out: path.resolve(typeof values.out === 'string' ? values.out : 'swebench-run'),
    rescore: values.rescore === true,
    resumed: new Map(),
  }),
  taskOf: (row) => row.instance_id,
  keep: lastPerInstance,
  refuseUnknown: () => null,
  submissions(row, _task, line, options) {
    const patch = row.model_patch?.trim() ? row.model_patch : null;
    // Resumed: nothing to score (the driver skips a null patch); result() hands back the earlier report.
    const earlier = patch !== null && !options.rescore ? completeReport(options.out, row) : undefined;
    if (earlier) options.resumed.set(row.instance_id, earlier);
    return [{ taskId: row.instance_id, sample: 0, patch: earlier ? null : patch, line }];
  },
  // Strict scoring differs only where the candidate's test files or refused files are: those are scored both ways.
  strictRescore: strictMayDiffer,
  // A resolution on an instance whose FAIL_TO_PASS pass on the start state is reported apart.
  startStateCheck: true,
  async result(s, { options }) {
    const p = s.row;
    const earlier = options.resumed.get(p.instance_id);
    if (earlier) return { id: p.instance_id, report: earlier, durationMs: 0, resumed: true };
    const dir = logDir(options.out, p.instance_id);
    await fs.mkdir(dir, { recursive: true });
    // report.json goes last: an instance without one was not finished and is scored again.
    await fs.rm(path.join(dir, 'report.json'), { force: true });
    await fs.writeFile(path.join(dir, 'patch.diff'), p.model_patch ?? '');
    const report = instanceReport(p.model_patch, s.verdict ?? null, s.error);
    if (s.verdict?.logRef) await fs.copyFile(s.verdict.logRef, path.join(dir, 'test_output.txt')).catch(() => {});
    await writeWhole(path.join(dir, 'report.json'), JSON.stringify({ [p.instance_id]: report }, null, 2) + '\n');
    return { id: p.instance_id, report, durationMs: s.durationMs };
  },
  progress({ id, report: r, durationMs, resumed }) {
    const what = patchError(r)
      ? 'error: patch does not apply'
      : r.error
        ? `ERROR ${r.error.code}: ${r.error.message.split('\n')[0]}`
        : !r.patch_exists
          ? 'empty patch'
          : r.resolved
            ? r.cannot_fail
              ? 'resolved (CANNOT_FAIL: counted apart)'
              : 'resolved'
            : 'unresolved';
    return `${what.padEnd(11)} ${id} (${resumed ? 'resumed: report.json of an earlier run' : `${(durationMs / 1000).toFixed(1)} s`})`;
  },
  async report(results, { suite, tasks, rows, unknown, options: { out }, excludeErrors }) {
    await fs.mkdir(path.join(out, 'logs'), { recursive: true });
    const run = runReport(
      tasks,
      rows.map((r) => r.row.instance_id),
      new Map(results.map((r) => [r.id, r.report])),
      unknown.map((r) => r.row.instance_id),
    );
    await writeWhole(path.join(out, 'results.json'), JSON.stringify(run, null, 2) + '\n');
    const resumed = results.filter((r) => r.resumed).length;
    const text =
      `\n${suite}: ${run.resolved_instances}/${run.total_instances} resolved ` +
      `(${run.submitted_instances} submitted, ${run.completed_instances} completed, ` +
      `${run.empty_patch_instances} empty, ${run.error_instances} ` +
      `errors${run.patch_apply_failed_ids.length ? ` (${run.patch_apply_failed_ids.length} patches that do not apply)` : ''}` +
      `${run.unknown_ids.length ? `, ${run.unknown_ids.length} unknown ids` : ''})\n` +
      `${resolvedRates(run, excludeErrors)}\n` +
      run.cannot_fail_ids
        .map(
          (id) =>
            `  CANNOT_FAIL ${id}: ${
              results
                .find((r) => r.id === id)
                ?.report.notes.find((n) => n.startsWith(`${CANNOT_FAIL}:`))
                ?.slice(0, 400) ?? ''
            }\n`,
        )
        .join('') +
      modeLine(run, results) +
      (resumed ? `${resumed} resumed from the reports of an earlier run in ${out} (--rescore scores them again)\n` : '') +
      `results: ${path.join(out, 'results.json')}, logs: ${path.join(out, 'logs')}/<instance_id>/\n`;
    return { json: run, text, exitCode: run.error_instances - run.patch_apply_failed_ids.length > 0 ? 1 : 0 };
  },
};
