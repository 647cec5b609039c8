import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { ReplayAdapter, ReplayRow } from '../../src/replay/adapter.ts';
import { readReplayRows } from '../../src/replay/rows.ts';
import type { Verdict } from '../../src/scoring/verdict.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { describeIssues } from '../../src/validation.ts';

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
  /** benchgym: the verdict's notes (neutralised tampering, substitutions) and an infrastructure error, if any. */
  notes: string[];
  error?: { code: string; message: string };
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
  schema_version: 2;
}

export function instanceReport(patch: string | null, v: Verdict | null, error?: { code: string; message: string }): InstanceReport {
  const exists = Boolean(patch && patch.trim());
  const applied = Boolean(v && v.status !== 'error' && !v.notes.some((n) => n.startsWith('PATCH_APPLY_FAILED')));
  return {
    patch_is_None: patch === null,
    patch_exists: exists,
    patch_successfully_applied: exists && applied,
    resolved: v?.reward === 1,
    ...(v?.failToPass
      ? { tests_status: { FAIL_TO_PASS: { success: v.failToPass.passed, failure: v.failToPass.failed }, PASS_TO_PASS: { success: v.passToPass?.passed ?? [], failure: v.passToPass?.failed ?? [] } } }
      : {}),
    notes: v?.notes ?? [],
    ...(error ?? (v?.error ? { error: v.error } : {})),
  };
}

/** The run report over the instances replayed (`tasks`), from each submitted instance's report. */
export function runReport(tasks: Task[], submitted: string[], reports: Map<string, InstanceReport>, unknown: string[]): RunReport {
  const ids = (f: (r: InstanceReport) => boolean) => [...reports].filter(([, r]) => f(r)).map(([id]) => id).sort();
  const empty = ids((r) => !r.patch_exists);
  const errors = ids((r) => r.patch_exists && Boolean(r.error));
  const completed = ids((r) => r.patch_exists && !r.error);
  const resolved = ids((r) => r.resolved);
  return {
    total_instances: tasks.length,
    submitted_instances: submitted.length,
    completed_instances: completed.length,
    resolved_instances: resolved.length,
    unresolved_instances: completed.length - resolved.length,
    empty_patch_instances: empty.length,
    error_instances: errors.length,
    completed_ids: completed,
    incomplete_ids: tasks.map((t) => t.id).filter((id) => !completed.includes(id)).sort(),
    empty_patch_ids: empty,
    submitted_ids: [...submitted].sort(),
    resolved_ids: resolved,
    unresolved_ids: completed.filter((id) => !resolved.includes(id)),
    error_ids: errors,
    unknown_ids: [...unknown].sort(),
    schema_version: 2,
  };
}

/** One instance replayed: its harness report and how long it took. */
export interface InstanceResult {
  id: string;
  report: InstanceReport;
  durationMs: number;
}

const logDir = (out: string, id: string) => path.join(out, 'logs', id.replace(/[^\w.@+-]/g, '_'));

/**
 * `benchgym score --suite swe-bench-java` replays predictions the way `run_evaluation` does:
 * each `model_patch` scored in a fresh sandbox (the suite's harness steps),
 * `OUT/logs/<id>/{patch.diff, report.json, test_output.txt}` written per instance, and
 * `OUT/results.json` with the run report. Empty patches are not run (the harness counts them
 * apart); infrastructure failures are `error_ids`, never unresolved.
 */
export const replayAdapter: ReplayAdapter<Prediction, { out: string }, InstanceResult> = {
  rowFormat: 'instance_id, model_patch',
  usage: `  benchgym score --suite swe-bench-java --dataset FILE.jsonl --predictions all_preds.jsonl [--repos-dir DIR] [--out DIR]
                 [--tasks a,b] [--concurrency N] [--json]
                                                      SWE-bench predictions (instance_id, model_patch): OUT/results.json
                                                      (resolved ids) and OUT/logs/<instance_id>/ (default OUT ./swebench-run)`,
  row: PredictionRow,
  describeIssues: describeRowIssues,
  flags: { out: { type: 'string' } },
  options: (values) => ({ out: path.resolve(typeof values.out === 'string' ? values.out : 'swebench-run') }),
  taskOf: (row) => row.instance_id,
  keep: lastPerInstance,
  refuseUnknown: () => null,
  submissions: (row, _task, line) => [{ taskId: row.instance_id, sample: 0, patch: row.model_patch?.trim() ? row.model_patch : null, line }],
  // Its Maven runs have no strict-only check: `--scoring both` replays it faithfully.
  strictRescore: false,
  async result(s, { options }) {
    const p = s.row;
    const dir = logDir(options.out, p.instance_id);
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'patch.diff'), p.model_patch ?? '');
    const report = instanceReport(p.model_patch, s.verdict ?? null, s.error);
    if (s.verdict?.logRef) await fs.copyFile(s.verdict.logRef, path.join(dir, 'test_output.txt')).catch(() => {});
    await fs.writeFile(path.join(dir, 'report.json'), JSON.stringify({ [p.instance_id]: report }, null, 2) + '\n');
    return { id: p.instance_id, report, durationMs: s.durationMs };
  },
  progress({ id, report: r, durationMs }) {
    const what = r.error ? `ERROR ${r.error.code}: ${r.error.message.split('\n')[0]}` : !r.patch_exists ? 'empty patch' : r.resolved ? 'resolved' : r.patch_successfully_applied ? 'unresolved' : 'patch does not apply';
    return `${what.padEnd(11)} ${id} (${(durationMs / 1000).toFixed(1)} s)`;
  },
  async report(results, { suite, tasks, rows, unknown, options: { out } }) {
    await fs.mkdir(path.join(out, 'logs'), { recursive: true });
    const run = runReport(tasks, rows.map((r) => r.row.instance_id), new Map(results.map((r) => [r.id, r.report])), unknown.map((r) => r.row.instance_id));
    await fs.writeFile(path.join(out, 'results.json'), JSON.stringify(run, null, 2) + '\n');
    const text =
      `\n${suite}: ${run.resolved_instances}/${run.total_instances} resolved (${run.submitted_instances} submitted, ${run.completed_instances} completed, ` +
      `${run.empty_patch_instances} empty, ${run.error_instances} errors${run.unknown_ids.length ? `, ${run.unknown_ids.length} unknown ids` : ''})\n` +
      `results: ${path.join(out, 'results.json')}, logs: ${path.join(out, 'logs')}/<instance_id>/\n`;
    return { json: run, text, exitCode: run.error_instances > 0 ? 1 : 0 };
  },
};
