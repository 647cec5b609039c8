/** Hand-made run directories for report tests: result lines with neutral defaults, and a run.json beside them. */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { newManifest, writeManifest, type RunIdentity } from '../../src/runner/manifest.ts';
import type { ResultRecord } from '../../src/runner/results.ts';

/** A final, scored result line; `status` decides the reward. Extra keys stand for a suite's annotations. */
export function resultLine(
  fields: Pick<ResultRecord, 'suite' | 'task' | 'sample' | 'agent' | 'model' | 'status' | 'metadata'> &
    Partial<ResultRecord> &
    Record<string, unknown>,
): ResultRecord {
  return {
    runId: `${fields.agent}-${fields.model}`,
    attempt: 1,
    final: true,
    episodeId: null,
    reward: fields.status === 'passed' ? 1 : 0,
    infra: false,
    verdict: null,
    submitted: true,
    stopReason: 'submitted',
    steps: 3,
    tokens: { prompt: 0, completion: 0, total: 0, calls: 1 },
    costUsd: 0,
    startedAt: '2026-01-01T00:00:00Z',
    endedAt: '2026-01-01T00:00:01Z',
    durations: { startMs: 1, agentMs: 1, scoringMs: 1, totalMs: 3 },
    trajectory: 't.jsonl',
    gymTrajectory: null,
    ...fields,
  };
}

/** Writes run.json (suite, agent and model of the first line) and results.jsonl. */
export async function writeRunDir(dir: string, lines: ResultRecord[], options: Partial<RunIdentity> = {}): Promise<void> {
  const first = lines[0]!;
  const samples = Math.max(...lines.map((l) => l.sample)) + 1;
  const identity: RunIdentity = {
    dataset: null,
    samples,
    tasks: null,
    maxSteps: null,
    timeLimitMs: null,
    baseURL: null,
    temperature: null,
    maxTokens: null,
    pricing: null,
    ...options,
  };
  await writeManifest(
    dir,
    newManifest({
      suite: first.suite,
      agent: first.agent,
      model: first.model,
      options: identity,
      taskIds: [...new Set(lines.map((l) => l.task))],
      settings: { concurrency: 1, retries: 0 },
    }),
  );
  await fs.writeFile(path.join(dir, 'results.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}
