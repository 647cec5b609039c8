import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { Gym } from '../../src/episode/gym.ts';
import { GymError, toGymError } from '../../src/errors.ts';
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

/** Reads predictions as JSON Lines or a JSON list; a later line for the same instance replaces an earlier one, as in the harness. */
export async function readPredictions(file: string): Promise<Prediction[]> {
  const text = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new GymError('INVALID_ARGUMENT', `cannot read --predictions ${file}: ${err.code ?? err.message}`);
  });
  let values: { line: number; value: unknown }[];
  if (text.trimStart().startsWith('[')) {
    try {
      values = (JSON.parse(text) as unknown[]).map((value, i) => ({ line: i + 1, value }));
    } catch (err) {
      throw new GymError('INVALID_ARGUMENT', `${file}: not valid JSON: ${(err as Error).message}`);
    }
  } else {
    values = [];
    text.split('\n').forEach((raw, i) => {
      if (!raw.trim()) return;
      try {
        values.push({ line: i + 1, value: JSON.parse(raw) });
      } catch (err) {
        throw new GymError('INVALID_ARGUMENT', `${file}:${i + 1}: not valid JSON: ${(err as Error).message}`);
      }
    });
  }
  const byId = new Map<string, Prediction>();
  for (const { line, value } of values) {
    const r = PredictionRow.safeParse(value);
    if (!r.success) throw new GymError('INVALID_ARGUMENT', `${file}:${line}: invalid prediction: ${describeIssues(r.error)}`);
    byId.set(r.data.instance_id, r.data);
  }
  return [...byId.values()];
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

export interface ReplayOptions {
  out: string;
  concurrency: number;
  onResult?: (id: string, r: InstanceReport, durationMs: number) => void;
}

/**
 * Replays predictions the way `run_evaluation` does: each `model_patch` scored in a fresh
 * sandbox (`gym.score`, the suite's harness steps), `logs/<id>/{patch.diff, report.json,
 * test_output.txt}` written per instance, and `results.json` with the run report. Empty
 * patches are not run (the harness counts them apart); infrastructure failures are
 * `error_ids`, never unresolved.
 */
export async function replaySwebench(gym: Gym, tasks: Task[], predictions: Prediction[], opts: ReplayOptions): Promise<RunReport> {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const unknown = predictions.filter((p) => !byId.has(p.instance_id)).map((p) => p.instance_id);
  const submitted = predictions.filter((p) => byId.has(p.instance_id));
  const reports = new Map<string, InstanceReport>();
  const logs = path.join(opts.out, 'logs');
  await fs.mkdir(logs, { recursive: true });
  let next = 0;
  const worker = async () => {
    while (next < submitted.length) {
      const p = submitted[next++]!;
      const started = Date.now();
      const dir = path.join(logs, p.instance_id.replace(/[^\w.@+-]/g, '_'));
      await fs.mkdir(dir, { recursive: true });
      await fs.writeFile(path.join(dir, 'patch.diff'), p.model_patch ?? '');
      let report: InstanceReport;
      if (!p.model_patch?.trim()) report = instanceReport(p.model_patch, null);
      else {
        try {
          const v = await gym.score(byId.get(p.instance_id)!, p.model_patch);
          report = instanceReport(p.model_patch, v);
          if (v.logRef) await fs.copyFile(v.logRef, path.join(dir, 'test_output.txt')).catch(() => {});
        } catch (err) {
          const e = toGymError(err);
          report = instanceReport(p.model_patch, null, { code: e.code, message: e.message });
        }
      }
      await fs.writeFile(path.join(dir, 'report.json'), JSON.stringify({ [p.instance_id]: report }, null, 2) + '\n');
      reports.set(p.instance_id, report);
      opts.onResult?.(p.instance_id, report, Date.now() - started);
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency, Math.max(1, submitted.length)) }, worker));
  const ids = (f: (r: InstanceReport) => boolean) => [...reports].filter(([, r]) => f(r)).map(([id]) => id).sort();
  const empty = ids((r) => !r.patch_exists);
  const errors = ids((r) => r.patch_exists && Boolean(r.error));
  const completed = ids((r) => r.patch_exists && !r.error);
  const resolved = ids((r) => r.resolved);
  const run: RunReport = {
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
    submitted_ids: submitted.map((p) => p.instance_id).sort(),
    resolved_ids: resolved,
    unresolved_ids: completed.filter((id) => !resolved.includes(id)),
    error_ids: errors,
    unknown_ids: unknown.sort(),
    schema_version: 2,
  };
  await fs.writeFile(path.join(opts.out, 'results.json'), JSON.stringify(run, null, 2) + '\n');
  return run;
}

/** `benchgym score --suite swe-bench-java`: the replay, a summary line per instance, exit 1 on harness errors. */
export async function scoreCli(gym: Gym, suite: string, opts: { predictions: string; out: string; tasks?: string; concurrency: number; json?: boolean }): Promise<number> {
  let tasks = await gym.registry.tasks(suite);
  let predictions = await readPredictions(opts.predictions);
  if (opts.tasks) {
    const wanted = new Set(opts.tasks.split(',').map((s) => s.trim()).filter(Boolean));
    const missing = [...wanted].filter((id) => !tasks.some((t) => t.id === id));
    if (missing.length) throw new GymError('TASK_NOT_FOUND', `no task ${missing.map((u) => `'${u}'`).join(', ')} in suite '${suite}'`);
    tasks = tasks.filter((t) => wanted.has(t.id));
    predictions = predictions.filter((p) => wanted.has(p.instance_id));
  }
  const report = await replaySwebench(gym, tasks, predictions, {
    out: opts.out,
    concurrency: opts.concurrency,
    onResult: (id, r, ms) => {
      if (opts.json) return;
      const what = r.error ? `ERROR ${r.error.code}: ${r.error.message.split('\n')[0]}` : !r.patch_exists ? 'empty patch' : r.resolved ? 'resolved' : r.patch_successfully_applied ? 'unresolved' : 'patch does not apply';
      process.stderr.write(`${what.padEnd(11)} ${id} (${(ms / 1000).toFixed(1)} s)\n`);
    },
  });
  if (opts.json) process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  else {
    process.stdout.write(
      `\n${suite}: ${report.resolved_instances}/${report.total_instances} resolved (${report.submitted_instances} submitted, ${report.completed_instances} completed, ` +
        `${report.empty_patch_instances} empty, ${report.error_instances} errors${report.unknown_ids.length ? `, ${report.unknown_ids.length} unknown ids` : ''})\n` +
        `results: ${path.join(opts.out, 'results.json')}, logs: ${path.join(opts.out, 'logs')}/<instance_id>/\n`,
    );
  }
  return report.error_instances > 0 ? 1 : 0;
}
