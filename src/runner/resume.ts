import path from 'node:path';
import { GymError } from '../errors.ts';
import type { Task } from '../tasks/schema.ts';
import type { PairJob } from './attempt.ts';
import { identityDifferences, MANIFEST_FILE, readManifest, RESULTS_FILE, type RunManifest } from './manifest.ts';
import { finalResults, pairKey, readResults, type ReadResults, type ResultRecord } from './results.ts';

/**
 * The run directory for a run about to start: a new run (`fresh`), or, with `resume`, the same
 * run continued; a directory holding a run with other options is refused.
 */
export async function openRun(
  outDir: string,
  fresh: RunManifest,
  resume: boolean | undefined,
  settings: RunManifest['settings'],
): Promise<{ manifest: RunManifest; read: ReadResults }> {
  const existing = await readManifest(outDir);
  const read = await readResults(path.join(outDir, RESULTS_FILE));
  if (!existing && !read.records.length) return { manifest: fresh, read };
  if (!resume) {
    throw new GymError(
      'INVALID_ARGUMENT',
      `${outDir} already holds a run (${existing ? MANIFEST_FILE : RESULTS_FILE}); pass --resume to continue it, or choose another --out`,
    );
  }
  if (!existing)
    throw new GymError('INVALID_ARGUMENT', `${outDir} has ${RESULTS_FILE} but no ${MANIFEST_FILE}: it cannot be resumed safely`);
  const diffs = identityDifferences(existing, fresh);
  const added = fresh.taskIds.filter((id) => !existing.taskIds.includes(id));
  const removed = existing.taskIds.filter((id) => !fresh.taskIds.includes(id));
  if (added.length || removed.length)
    diffs.push(
      `the suite's tasks changed since the run ` +
        `started (${[...added.map((t) => `+${t}`), ...removed.map((t) => `-${t}`)].slice(0, 10).join(', ')}` +
        `${added.length + removed.length > 10 ? ', ...' : ''})`,
    );
  if (diffs.length) {
    throw new GymError(
      'INVALID_ARGUMENT',
      `--resume with different options than the run in ${outDir} was ` +
        `started with (${diffs.join('; ')}); use the same options or another --out`,
    );
  }
  return { manifest: { ...existing, resumed: [...(existing.resumed ?? []), new Date().toISOString()], settings }, read };
}

/**
 * What is left to do: pairs without a final result (a pair tried before continues its attempt
 * count), and the final results carried over. With `rerunErrors`, a pair whose final result is an
 * infrastructure failure is run again too (its next attempt; the earlier lines stay in
 * results.jsonl and its trajectory, and the new final line supersedes the old).
 */
export function remainingPairs(
  tasks: Task[],
  samples: number,
  records: ResultRecord[],
  opts: { rerunErrors?: boolean } = {},
): { jobs: PairJob[]; carried: ResultRecord[] } {
  const earlierFinal = new Map(finalResults(records).map((r) => [pairKey(r.task, r.sample), r]));
  const lastAttempt = new Map<string, number>();
  const sandboxFailures = new Map<string, number>();
  for (const r of records) {
    const key = pairKey(r.task, r.sample);
    lastAttempt.set(key, Math.max(r.attempt, lastAttempt.get(key) ?? 0));
    if (r.infraError?.afterAgentCode) sandboxFailures.set(key, (sandboxFailures.get(key) ?? 0) + 1);
  }
  const jobs: PairJob[] = [];
  const carried: ResultRecord[] = [];
  for (const task of tasks) {
    for (let sample = 0; sample < samples; sample++) {
      const key = pairKey(task.id, sample);
      const done = earlierFinal.get(key);
      if (done && !(opts.rerunErrors && done.infra)) carried.push(done);
      else jobs.push({ task, sample, firstAttempt: (lastAttempt.get(key) ?? 0) + 1, sandboxFailures: sandboxFailures.get(key) ?? 0 });
    }
  }
  return { jobs, carried };
}
