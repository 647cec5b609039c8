import path from 'node:path';
import { connectInProcess, type EpisodeSession } from '../agent/session.ts';
import type { AgentContext, AgentResult } from '../agent/types.ts';
import type { Episode } from '../episode/episode.ts';
import { GymError, INFRA_CODES, toGymError } from '../errors.ts';
import { withoutEpisodeKeys } from '../protocol/capability.ts';
import type { Task } from '../tasks/schema.ts';
import type { RunManifest } from './manifest.ts';
import type { RunExperimentOptions } from './options.ts';
import type { ProgressSink } from './progress.ts';
import { countAgainstAgent, markInfra, RESULT_FIELDS, resultRecord, type EpisodeFacts } from './record.ts';
import { startRemoteEpisode, type RemoteEpisode } from './remote.ts';
import { trajectoryName, type ResultRecord, type ResultsWriter } from './results.ts';
import { TrajectoryWriter } from './trajectory.ts';
import { runAgentWithWatchdog } from './watchdog.ts';

/** One (task, sample) left to do. */
export interface PairJob {
  task: Task;
  sample: number;
  /** The first attempt number to use (a resumed pair continues its count). */
  firstAttempt: number;
  /** Earlier attempts (a resumed pair's) whose sandbox failed after the agent's code ran there. */
  sandboxFailures?: number;
}

/** What every attempt of a run shares. */
export interface AttemptContext {
  opts: RunExperimentOptions;
  manifest: RunManifest;
  outDir: string;
  retries: number;
  /** The run's stop signal. */
  signal: AbortSignal;
}

/** One (task, sample): attempts until a final result; null when the run was stopped first. */
export async function runPair(
  ctx: AttemptContext,
  job: PairJob,
  writer: ResultsWriter,
  progress: ProgressSink,
): Promise<ResultRecord | null> {
  const lastAllowed = Math.max(job.firstAttempt, 1 + ctx.retries);
  let sandboxFailures = job.sandboxFailures ?? 0;
  for (let attempt = job.firstAttempt; ; attempt++) {
    if (ctx.signal.aborted) return null;
    const { record, retryable, sandboxFailed } = await runAttempt(ctx, job, attempt, sandboxFailures);
    if (sandboxFailed) sandboxFailures++;
    // An episode cut short because the run stopped is no result: a resume runs it again.
    if (ctx.signal.aborted) return null;
    record.final = !(record.infra && retryable && attempt < lastAllowed);
    await writer.append(record);
    if (record.final) {
      progress.finished(record);
      return record;
    }
    const delay = ctx.opts.retryDelayMs ? ctx.opts.retryDelayMs(attempt + 1) : 5000 * attempt;
    progress.retrying(record, delay);
    await sleep(delay, ctx.signal);
  }
}

/**
 * One episode: start, connect, run the agent, end; classify how it ended. Never throws. The
 * episode runs in this process's gym, or on a server replica (`opts.server`), whose loss makes
 * the attempt an infrastructure failure.
 */
async function runAttempt(
  ctx: AttemptContext,
  job: PairJob,
  attempt: number,
  sandboxFailures: number,
): Promise<{ record: ResultRecord; retryable: boolean; sandboxFailed: boolean }> {
  const { opts, manifest, outDir } = ctx;
  const { gym } = opts;
  const startedAt = new Date();
  const trajectoryRel = path.join('trajectories', trajectoryName(job.task.id, job.sample));
  const trajectory = new TrajectoryWriter(path.join(outDir, trajectoryRel));
  const episodeSignal = new AbortController();
  const abortEpisode = () => episodeSignal.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', abortEpisode, { once: true });

  let episode: Episode | undefined;
  let remote: RemoteEpisode | undefined;
  let session: EpisodeSession | undefined;
  let result: AgentResult | undefined;
  let thrown: GymError | undefined;
  let thrownWhere: 'gym' | 'agent' = 'gym';
  let startMs = 0;
  let agentMs = 0;
  let remoteDiff: string | undefined;
  let lost: string | undefined;
  const watchdog = { fired: false };
  const grace = opts.agentGraceMs ?? 5 * 60_000;
  try {
    const t0 = Date.now();
    const start = {
      suite: manifest.suite,
      taskId: job.task.id,
      promptVariant: opts.promptVariant,
      context: opts.context,
      maxSteps: opts.maxSteps,
      timeLimitMs: opts.timeLimitMs,
    };
    let prompt: string;
    if (opts.server) {
      // A replica that stops answering ends the agent now: its calls could only time out.
      remote = await startRemoteEpisode(opts.server, start, {
        signal: episodeSignal.signal,
        onLost: (why) => episodeSignal.abort(new GymError('SANDBOX_UNAVAILABLE', why)),
      });
      startMs = Date.now() - t0;
      trajectory.append({
        type: 'attempt',
        attempt,
        runId: manifest.runId,
        task: job.task.id,
        sample: job.sample,
        episodeId: remote.id,
        gymTrajectory: null,
        replica: remote.replica,
        mcpUrl: withoutEpisodeKeys(remote.mcpUrl),
        startedAt: startedAt.toISOString(),
      });
      session = remote.session;
      prompt = remote.prompt;
    } else {
      episode = await gym.startEpisode(start, { progress: () => {}, signal: episodeSignal.signal });
      startMs = Date.now() - t0;
      trajectory.append({
        type: 'attempt',
        attempt,
        runId: manifest.runId,
        task: job.task.id,
        sample: job.sample,
        episodeId: episode.id,
        gymTrajectory: episode.trajectory.file,
        startedAt: startedAt.toISOString(),
      });
      session = await (opts.connect ?? connectInProcess)(gym, episode.id);
      prompt = episode.prompt;
    }
    const agentCtx: AgentContext = {
      client: session.client,
      episodeId: session.episodeId,
      // The agent sees the task as listings do: without the suite's private metadata.
      task: {
        suite: job.task.suite,
        id: job.task.id,
        prompt,
        language: job.task.language,
        kind: job.task.kind,
        metadata: gym.registry.publicTaskInfo(job.task).metadata as Record<string, unknown>,
      },
      model: opts.model,
      sample: job.sample,
      signal: episodeSignal.signal,
      record: (event) =>
        trajectory.append({ ...event, type: typeof event.type === 'string' ? event.type : 'event', attempt, at: new Date().toISOString() }),
    };
    thrownWhere = 'agent';
    const t1 = Date.now();
    const limit = (opts.timeLimitMs ?? gym.defaults.timeLimitMs) + grace;
    result = await runAgentWithWatchdog(
      opts.agent.create(job.task, opts.context),
      agentCtx,
      episodeSignal,
      limit,
      watchdog,
      Math.min(30_000, grace),
    );
    agentMs = Date.now() - t1;
    if (!isAgentResult(result))
      throw new GymError('INTERNAL', `the agent returned ${JSON.stringify(result)?.slice(0, 200)}, not an AgentResult`);
  } catch (err) {
    thrown = toGymError(err);
    result = undefined;
  } finally {
    ctx.signal.removeEventListener('abort', abortEpisode);
    if (remote) {
      // Whether the replica was lost while the agent ran (not what ending the episode may meet afterwards).
      lost = remote.lost();
      remoteDiff = await remote.finalDiff();
      await remote.end();
    } else {
      await session?.close().catch(() => {});
      if (episode) await gym.endEpisode(episode).catch(() => {});
    }
  }

  const facts: EpisodeFacts | undefined = episode
    ? {
        id: episode.id,
        context: episode.context,
        steps: episode.steps,
        verdict: episode.verdict,
        gymTrajectory: episode.trajectory.file,
        sandboxFailure: episode.sandboxFailure,
      }
    : remote
      ? { id: remote.id, context: remote.context, verdict: remote.verdict(), gymTrajectory: null, sandboxFailure: remote.sandboxFailure() }
      : undefined;
  const verdict = facts?.verdict;
  const record = resultRecord({
    manifest,
    task: job.task,
    sample: job.sample,
    attempt,
    episode: facts,
    result,
    startedAt,
    durations: { startMs, agentMs, scoringMs: verdict?.durationMs ?? 0 },
    trajectory: trajectoryRel,
    context: opts.context,
    promptVariant: opts.promptVariant,
  });
  let retryable = false;
  let sandboxFailed = false;
  const notes: string[] = [];
  if (verdict && verdict.status !== 'error') {
    // The gym's verdict decides; an agent that failed after submitting does not undo it.
    if (thrown) notes.push(`the agent failed after its submission was scored: ${thrown.code}: ${thrown.message}`);
    if (result?.infraError)
      notes.push(
        `the agent reported an infrastructure failure after its submission was scored: ${result.infraError.code}: ${result.infraError.message}`,
      );
  } else if (verdict) {
    markInfra(record, verdict.error?.code ?? 'INTERNAL', verdict.error?.message ?? 'scoring failed', 'verdict');
    retryable = true;
  } else if (lost) {
    // The replica holding the episode died: whatever the agent made of its failed calls, no answer was judged.
    markInfra(record, 'SANDBOX_UNAVAILABLE', lost, 'gym');
    retryable = true;
  } else if (facts?.sandboxFailure) {
    // The sandbox failed after the agent's code ran there: retried, and in strict scoring counted against the agent when it recurs.
    markInfra(record, facts.sandboxFailure.code, facts.sandboxFailure.message, 'gym', true);
    sandboxFailed = true;
    if (ctx.opts.gym.scoring === 'strict' && sandboxFailures >= 1) countAgainstAgent(record, sandboxFailures + 1);
    else retryable = true;
  } else if (watchdog.fired) {
    // Not retried: a retry would most likely hang as long again.
    markInfra(
      record,
      'AGENT_TIMEOUT',
      `the agent was still running ${Math.round(grace / 1000)} s after the episode's time limit and was cancelled`,
      'agent',
    );
  } else if (thrown) {
    markInfra(record, thrown.code, thrown.message, thrownWhere);
    // An env that cannot exist on this machine will not appear on a retry.
    retryable = INFRA_CODES.has(thrown.code) && thrown.code !== 'ENV_UNAVAILABLE';
  } else if (result?.infraError) {
    markInfra(record, result.infraError.code, result.infraError.message, 'agent');
    retryable = true;
  } else if (result?.submitted) {
    notes.push('the agent reported a submission, but the gym has no verdict for the episode');
  }
  if (notes.length) (record.notes ??= []).push(...notes);
  annotate(ctx, job.task, episode ? episode.finalDiff : remoteDiff, record);
  trajectory.append({
    type: 'result',
    attempt,
    status: record.status,
    reward: record.reward,
    infra: record.infra,
    ...(record.infraError ? { infraError: record.infraError } : {}),
    stopReason: record.stopReason,
    at: record.endedAt,
  });
  await trajectory.flush();
  return { record, retryable, sandboxFailed };
}

/**
 * Adds the suite's facts about the episode (Suite.annotateResult) at the top level of the
 * result line; a key that is a result field, or a suite that throws, leaves a note instead.
 */
function annotate(ctx: AttemptContext, task: Task, diff: string | undefined, record: ResultRecord): void {
  const suite = ctx.opts.gym.registry.suite(task.suite);
  if (!suite?.annotateResult) return;
  let facts: Record<string, unknown> | undefined;
  try {
    facts = suite.annotateResult(task, { diff });
  } catch (err) {
    (record.notes ??= []).push(`suite '${task.suite}' could not annotate the result: ${toGymError(err).message}`);
    return;
  }
  for (const [key, value] of Object.entries(facts ?? {})) {
    if (value === undefined) continue;
    if (RESULT_FIELDS.has(key)) (record.notes ??= []).push(`suite '${task.suite}' annotation '${key}' ignored: it is a result field`);
    else Object.assign(record, { [key]: value });
  }
}

function isAgentResult(r: unknown): r is AgentResult {
  return Boolean(r) && typeof r === 'object' && typeof (r as AgentResult).stopReason === 'string';
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
