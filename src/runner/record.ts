import type { AgentResult } from '../agent/types.ts';
import type { Verdict } from '../scoring/verdict.ts';
import type { Task } from '../tasks/schema.ts';
import type { RunManifest } from './manifest.ts';
import type { ResultRecord } from './results.ts';

/** A verdict as far as a result line needs it: the gym's own (in-process) or the public one submit returned (a server). */
export type VerdictFacts = Pick<Verdict, 'reward' | 'status' | 'notes' | 'failToPass' | 'passToPass' | 'durationMs'> & {
  tests: Pick<Verdict['tests'][number], 'status'>[];
  error?: { code: string; message: string };
};

/** An episode as far as a result line needs it, wherever it ran. */
export interface EpisodeFacts {
  id: string;
  context: string;
  /** Tool calls the gym counted (in-process); else the agent's count is used. */
  steps?: number;
  verdict?: VerdictFacts;
  /** The gym's trajectory file, when the gym ran in this process. */
  gymTrajectory: string | null;
  /** The first sandbox failure after the agent's code could run there (Episode.sandboxFailure). */
  sandboxFailure?: { code: string; message: string };
}

/** What one attempt at a (task, sample) produced, for its result line. */
export interface AttemptFacts {
  manifest: RunManifest;
  task: Task;
  sample: number;
  attempt: number;
  /** The episode, if one was started. */
  episode: EpisodeFacts | undefined;
  /** What the agent returned, if it returned. */
  result: AgentResult | undefined;
  startedAt: Date;
  durations: { startMs: number; agentMs: number; scoringMs: number };
  /** The pair's trajectory file, relative to the run directory. */
  trajectory: string;
  /** The start state and prompt variant the run asked for. */
  context: string | undefined;
  promptVariant: string | undefined;
}

/** The result line of an attempt as the gym's verdict decides it (infrastructure failures are marked afterwards). */
export function resultRecord(f: AttemptFacts): ResultRecord {
  const verdict = f.episode?.verdict;
  const usage = f.result?.usage;
  const endedAt = new Date();
  return {
    runId: f.manifest.runId,
    suite: f.manifest.suite,
    task: f.task.id,
    sample: f.sample,
    attempt: f.attempt,
    final: true,
    agent: f.manifest.agent,
    model: f.manifest.model,
    episodeId: f.episode?.id ?? null,
    status: verdict && verdict.status !== 'error' ? verdict.status : 'failed',
    reward: verdict && verdict.status !== 'error' ? verdict.reward : 0,
    infra: false,
    verdict: verdict ? verdictSummary(verdict) : null,
    submitted: Boolean(verdict),
    stopReason: f.result?.stopReason ?? (verdict ? 'submitted' : 'error'),
    steps: f.episode?.steps ?? f.result?.steps ?? 0,
    ...(f.result?.rounds !== undefined ? { rounds: f.result.rounds } : {}),
    ...(f.result?.passedRound !== undefined ? { passedRound: f.result.passedRound } : {}),
    ...(f.result?.error ? { agentError: f.result.error.slice(0, 2000) } : {}),
    tokens: {
      prompt: usage?.promptTokens ?? 0,
      completion: usage?.completionTokens ?? 0,
      total: (usage?.promptTokens ?? 0) + (usage?.completionTokens ?? 0),
      calls: usage?.calls ?? 0,
    },
    costUsd: usage?.costUsd ?? 0,
    startedAt: f.startedAt.toISOString(),
    endedAt: endedAt.toISOString(),
    durations: { ...f.durations, totalMs: endedAt.getTime() - f.startedAt.getTime() },
    metadata: {
      ...reportMetadata(f.task),
      context: f.episode?.context ?? f.context ?? f.task.defaultContext,
      promptVariant: f.promptVariant ?? 'default',
    },
    trajectory: f.trajectory,
    gymTrajectory: f.episode?.gymTrajectory ?? null,
  };
}

/** Turns a result into an infrastructure failure: status error, reward 0 (a sample that did not pass; reports say how many). */
export function markInfra(
  record: ResultRecord,
  code: string,
  message: string,
  source: 'agent' | 'verdict' | 'gym',
  afterAgentCode = false,
): void {
  record.status = 'error';
  record.reward = 0;
  record.infra = true;
  record.infraError = { code, message: message.slice(0, 2000), source, ...(afterAgentCode ? { afterAgentCode: true as const } : {}) };
}

/** The note of a result counted failed: its episode's sandbox failed after the agent's code ran, on a retry too. */
export const SANDBOX_FAILED_AFTER_AGENT_NOTE = 'SANDBOX_FAILED_AFTER_AGENT_CODE';

/**
 * Strict scoring's answer to a sandbox that failed again after the agent's code ran there (the
 * pair's `times`-th such attempt): a wrong answer, not an infrastructure failure, so killing its
 * sandbox cannot take an agent's sample out of the count.
 */
export function countAgainstAgent(record: ResultRecord, times: number): void {
  const failure = record.infraError!;
  record.status = 'failed';
  record.reward = 0;
  record.infra = false;
  delete record.infraError;
  (record.notes ??= []).push(
    `${SANDBOX_FAILED_AFTER_AGENT_NOTE}: the episode's sandbox failed after the agent's code ran there on ${times} attempts ` +
      `(this one: ${failure.code}: ${failure.message.split('\n')[0]!.slice(0, 500)}): counted as failed (strict scoring)`,
  );
}

/** The verdict as a result line keeps it: counts, not the tests' details. */
export function verdictSummary(v: VerdictFacts): NonNullable<ResultRecord['verdict']> {
  const tests = { passed: 0, failed: 0, error: 0, skipped: 0 };
  for (const t of v.tests) tests[t.status]++;
  return {
    reward: v.reward,
    status: v.status,
    tests,
    ...(v.failToPass ? { failToPass: { passed: v.failToPass.passed.length, failed: v.failToPass.failed.length } } : {}),
    ...(v.passToPass ? { passToPass: { passed: v.passToPass.passed.length, failed: v.passToPass.failed.length } } : {}),
    notes: v.notes,
  };
}

/** The task facts reports group by: language, kind and the short scalar metadata (library, level, ...). */
export function reportMetadata(task: Task): Record<string, string | number | boolean> {
  const out: [string, string | number | boolean][] = [
    ['language', task.language],
    ['kind', task.kind],
  ];
  for (const [key, value] of Object.entries(task.metadata)) {
    if (typeof value === 'number' || typeof value === 'boolean' || (typeof value === 'string' && value.length <= 200))
      out.push([key, value]);
  }
  // Entries, not assignments: a metadata key `__proto__` stays a key.
  return Object.fromEntries(out);
}

/** Every field of a result line: a suite's annotations (Suite.annotateResult) may not take one of these names. */
export const RESULT_FIELDS: ReadonlySet<string> = new Set(
  Object.keys({
    runId: true,
    suite: true,
    task: true,
    sample: true,
    attempt: true,
    final: true,
    agent: true,
    model: true,
    episodeId: true,
    status: true,
    reward: true,
    infra: true,
    infraError: true,
    verdict: true,
    submitted: true,
    stopReason: true,
    steps: true,
    rounds: true,
    passedRound: true,
    agentError: true,
    tokens: true,
    costUsd: true,
    startedAt: true,
    endedAt: true,
    durations: true,
    metadata: true,
    trajectory: true,
    gymTrajectory: true,
    notes: true,
  } satisfies Record<keyof ResultRecord, true>),
);
