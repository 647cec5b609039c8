import { promises as fs } from 'node:fs';
import path from 'node:path';
import { connectInProcess, type EpisodeSession } from '../agent/session.ts';
import type { Agent, AgentContext, AgentResult, ModelConfig } from '../agent/types.ts';
import type { Episode } from '../episode/episode.ts';
import type { Gym } from '../episode/gym.ts';
import { GymError, INFRA_CODES, toGymError } from '../errors.ts';
import type { Verdict } from '../scoring/verdict.ts';
import { publicTaskInfo, type Task } from '../tasks/schema.ts';
import { identityDifferences, MANIFEST_FILE, newManifest, readManifest, RESULTS_FILE, writeManifest, type RunIdentity, type RunManifest } from './manifest.ts';
import { containsToken } from './metrics.ts';
import { silentProgress, type ProgressSink } from './progress.ts';
import { finalResults, pairKey, readResults, ResultsWriter, trajectoryName, type ResultRecord } from './results.ts';

/** The agent a run measures: its registry name and a fresh Agent per episode. */
export interface AgentUnderTest {
  name: string;
  /** Called once per episode; options may depend on the task (the replay agent's gold files). */
  create(task: Task): Agent;
}

export interface RunExperimentOptions {
  gym: Gym;
  /** The run directory: run.json, results.jsonl, trajectories/. */
  outDir: string;
  suite: string;
  agent: AgentUnderTest;
  model: ModelConfig;
  /** Samples per task (pass@k draws several); default 1. */
  samples?: number;
  /** Task ids to run (default: every task of the suite), in the suite's order. */
  tasks?: string[];
  /** Episodes at once; default 1. */
  concurrency?: number;
  maxSteps?: number;
  timeLimitMs?: number;
  /** The start state every episode asks for (`start_episode {context}`, e.g. HumanEvo's aware or ignored); recorded in each result's metadata. */
  context?: string;
  /** The prompt variant every episode asks for (e.g. HumanEvo's brief or detailed docstring); recorded in each result's metadata. */
  promptVariant?: string;
  /** Retries of an infrastructure failure (wrong answers are never retried); default 2. */
  retries?: number;
  /** Wait before retry number `attempt - 1`; default 5 s times the attempt number. */
  retryDelayMs?: (attempt: number) => number;
  /** Continue the run in outDir: skip (task, sample) pairs that have a final result. */
  resume?: boolean;
  /** More options that decide what the run measures (agent options, --gold, sandbox, dataset): kept in run.json, compared on resume. */
  options?: Record<string, unknown>;
  progress?: ProgressSink;
  /** Aborting stops the run: episodes in flight are cancelled and not written (a resume runs them again). */
  signal?: AbortSignal;
  /** How the agent's MCP client reaches an episode (default: in-process, src/agent/session.ts). */
  connect?: (gym: Gym, episodeId: string) => Promise<EpisodeSession>;
  /**
   * How long an agent may overrun the episode's time limit before its signal is aborted (default
   * 5 min); one that still does not return (at most 30 s later) is abandoned. Either way the
   * pair is an AGENT_TIMEOUT infrastructure failure, not retried.
   */
  agentGraceMs?: number;
}

export interface RunOutcome {
  manifest: RunManifest;
  /** Every final result of the run, earlier sessions included, in (task, sample) order. */
  results: ResultRecord[];
  /** Final results written by this session. */
  written: ResultRecord[];
  /** (task, sample) pairs skipped because a resumed run already had them. */
  skipped: number;
  /** The run was stopped before every pair had a final result. */
  aborted: boolean;
}

interface Job {
  task: Task;
  sample: number;
  /** The first attempt number to use (a resumed pair continues its count). */
  firstAttempt: number;
}

/**
 * Runs an agent over a suite: for each selected task and sample an episode, the agent, the
 * gym's verdict; one line in results.jsonl as each episode ends.
 *
 * @example
 * await runExperiment({ gym, outDir: 'runs/a', suite: 'examples', agent, model: { model: 'gpt-4o-mini' }, samples: 5, concurrency: 4 });
 */
export async function runExperiment(opts: RunExperimentOptions): Promise<RunOutcome> {
  const { gym } = opts;
  const samples = opts.samples ?? 1;
  const concurrency = opts.concurrency ?? 1;
  const retries = opts.retries ?? 2;
  if (!Number.isInteger(samples) || samples < 1) throw new GymError('INVALID_ARGUMENT', `samples must be a whole number >= 1 (got ${samples})`);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new GymError('INVALID_ARGUMENT', `concurrency must be a whole number >= 1 (got ${concurrency})`);
  if (concurrency > gym.defaults.maxEpisodes) throw new GymError('INVALID_ARGUMENT', `concurrency ${concurrency} is above the gym's ${gym.defaults.maxEpisodes} episodes at once`);
  if (!Number.isInteger(retries) || retries < 0) throw new GymError('INVALID_ARGUMENT', `retries must be a whole number >= 0 (got ${retries})`);

  const outDir = path.resolve(opts.outDir);
  const tasks = offering(await selectTasks(gym, opts.suite, opts.tasks), opts.context, Boolean(opts.tasks?.length));
  const identity: RunIdentity = {
    dataset: null,
    ...opts.options,
    samples,
    tasks: opts.tasks?.length ? [...opts.tasks] : null,
    maxSteps: opts.maxSteps ?? null,
    timeLimitMs: opts.timeLimitMs ?? null,
    ...(opts.context ? { context: opts.context } : {}),
    ...(opts.promptVariant ? { promptVariant: opts.promptVariant } : {}),
    baseURL: opts.model.baseURL ?? null,
    temperature: opts.model.temperature ?? null,
    maxTokens: opts.model.maxTokens ?? null,
    pricing: opts.model.pricing ?? null,
  };
  const fresh = newManifest({ suite: opts.suite, agent: opts.agent.name, model: opts.model.model, options: identity, taskIds: tasks.map((t) => t.id), settings: { concurrency, retries } });

  // The run directory: a new run, or the same run resumed.
  const resultsFile = path.join(outDir, RESULTS_FILE);
  const existing = await readManifest(outDir);
  const read = await readResults(resultsFile);
  let manifest: RunManifest;
  if (existing || read.records.length) {
    if (!opts.resume) {
      throw new GymError('INVALID_ARGUMENT', `${outDir} already holds a run (${existing ? MANIFEST_FILE : RESULTS_FILE}); pass --resume to continue it, or choose another --out`);
    }
    if (!existing) throw new GymError('INVALID_ARGUMENT', `${outDir} has ${RESULTS_FILE} but no ${MANIFEST_FILE}: it cannot be resumed safely`);
    const diffs = identityDifferences(existing, fresh);
    const added = fresh.taskIds.filter((id) => !existing.taskIds.includes(id));
    const removed = existing.taskIds.filter((id) => !fresh.taskIds.includes(id));
    if (added.length || removed.length) diffs.push(`the suite's tasks changed since the run started (${[...added.map((t) => `+${t}`), ...removed.map((t) => `-${t}`)].slice(0, 10).join(', ')}${added.length + removed.length > 10 ? ', ...' : ''})`);
    if (diffs.length) {
      throw new GymError('INVALID_ARGUMENT', `--resume with different options than the run in ${outDir} was started with (${diffs.join('; ')}); use the same options or another --out`);
    }
    manifest = { ...existing, resumed: [...(existing.resumed ?? []), new Date().toISOString()], settings: { concurrency, retries } };
  } else {
    manifest = fresh;
  }
  await writeManifest(outDir, manifest);
  await fs.mkdir(path.join(outDir, 'trajectories'), { recursive: true });

  // What is left to do: pairs without a final result; a pair tried before continues its attempt count.
  const earlierFinal = new Map(finalResults(read.records).map((r) => [pairKey(r.task, r.sample), r]));
  const lastAttempt = new Map<string, number>();
  for (const r of read.records) lastAttempt.set(pairKey(r.task, r.sample), Math.max(r.attempt, lastAttempt.get(pairKey(r.task, r.sample)) ?? 0));
  const jobs: Job[] = [];
  const carried: ResultRecord[] = [];
  for (const task of tasks) {
    for (let sample = 0; sample < samples; sample++) {
      const key = pairKey(task.id, sample);
      const done = earlierFinal.get(key);
      if (done) carried.push(done);
      else jobs.push({ task, sample, firstAttempt: (lastAttempt.get(key) ?? 0) + 1 });
    }
  }

  const writer = await ResultsWriter.open(resultsFile, read.validBytes);
  const progress = opts.progress ?? silentProgress;
  const stop = new AbortController();
  const onAbort = () => stop.abort(opts.signal?.reason);
  if (opts.signal?.aborted) stop.abort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const written: ResultRecord[] = [];
  progress.start(tasks.length * samples, carried.length, carried.filter((r) => r.status === 'passed').length, carried.filter((r) => r.infra).length);

  const ctx: AttemptContext = { opts, manifest, outDir, retries, signal: stop.signal };
  try {
    await workerPool(jobs, concurrency, stop.signal, async (job) => {
      const record = await runPair(ctx, job, writer, progress);
      if (record) written.push(record);
    });
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    progress.stop();
    await writer.close();
  }

  const order = new Map(tasks.map((t, i) => [t.id, i]));
  const results = [...carried, ...written].sort((a, b) => order.get(a.task)! - order.get(b.task)! || a.sample - b.sample);
  return { manifest, results, written, skipped: carried.length, aborted: results.length < tasks.length * samples };
}

async function selectTasks(gym: Gym, suite: string, ids?: string[]): Promise<Task[]> {
  const all = await gym.registry.tasks(suite);
  if (!ids?.length) return all;
  // Ids the listing does not hold may name a task with options (CoderEval's `<id>+platform-test`).
  const extra = await Promise.all(ids.filter((id) => !all.some((t) => t.id === id)).map((id) => gym.registry.task(suite, id).catch(() => id)));
  const unknown = extra.filter((t): t is string => typeof t === 'string');
  if (unknown.length) throw new GymError('TASK_NOT_FOUND', `no task ${unknown.map((u) => `'${u}'`).join(', ')} in suite '${suite}'`);
  return [...all.filter((t) => ids.includes(t.id)), ...(extra as Task[])];
}

/**
 * The tasks that offer the start state a run asks for: a task without it (a HumanEvo task
 * whose function is gone at the newest commit has no `ignored` context) is left out of a
 * whole-suite run, and named in an error when the run lists it.
 */
export function offering(tasks: Task[], context: string | undefined, listed: boolean): Task[] {
  if (!context) return tasks;
  const has = (t: Task) => t.defaultContext === context || context in t.contexts;
  const missing = tasks.filter((t) => !has(t));
  if (listed && missing.length) throw new GymError('INVALID_ARGUMENT', `invalid --context '${context}': task${missing.length > 1 ? 's' : ''} ${missing.map((t) => `'${t.id}'`).join(', ')} do${missing.length > 1 ? '' : 'es'} not offer it`);
  const kept = tasks.filter(has);
  if (!kept.length) throw new GymError('INVALID_ARGUMENT', `invalid --context '${context}': no task of the suite offers it`);
  return kept;
}

/** `concurrency` workers taking jobs in order; the first thrown error stops the others from taking more. */
async function workerPool<T>(items: T[], concurrency: number, signal: AbortSignal, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: { err: unknown } | undefined;
  const worker = async () => {
    while (!failed && !signal.aborted && next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (err) {
        failed ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (failed) throw failed.err;
}

interface AttemptContext {
  opts: RunExperimentOptions;
  manifest: RunManifest;
  outDir: string;
  retries: number;
  signal: AbortSignal;
}

/** One (task, sample): attempts until a final result; null when the run was stopped first. */
async function runPair(ctx: AttemptContext, job: Job, writer: ResultsWriter, progress: ProgressSink): Promise<ResultRecord | null> {
  const lastAllowed = Math.max(job.firstAttempt, 1 + ctx.retries);
  for (let attempt = job.firstAttempt; ; attempt++) {
    if (ctx.signal.aborted) return null;
    const { record, retryable } = await runAttempt(ctx, job, attempt);
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

/** One episode: start, connect, run the agent, end; classify how it ended. Never throws. */
async function runAttempt(ctx: AttemptContext, job: Job, attempt: number): Promise<{ record: ResultRecord; retryable: boolean }> {
  const { opts, manifest, outDir } = ctx;
  const { gym } = opts;
  const startedAt = new Date();
  const trajectoryRel = path.join('trajectories', trajectoryName(job.task.id, job.sample));
  const trajectory = new JsonlAppender(path.join(outDir, trajectoryRel));
  const episodeSignal = new AbortController();
  const abortEpisode = () => episodeSignal.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', abortEpisode, { once: true });

  let episode: Episode | undefined;
  let session: EpisodeSession | undefined;
  let result: AgentResult | undefined;
  let thrown: GymError | undefined;
  let thrownWhere: 'gym' | 'agent' = 'gym';
  let startMs = 0;
  let agentMs = 0;
  const watchdog = { fired: false };
  try {
    const t0 = Date.now();
    episode = await gym.startEpisode({ suite: manifest.suite, taskId: job.task.id, promptVariant: opts.promptVariant, context: opts.context, maxSteps: opts.maxSteps, timeLimitMs: opts.timeLimitMs }, { progress: () => {}, signal: episodeSignal.signal });
    startMs = Date.now() - t0;
    trajectory.append({ type: 'attempt', attempt, runId: manifest.runId, task: job.task.id, sample: job.sample, episodeId: episode.id, gymTrajectory: episode.trajectory.file, startedAt: startedAt.toISOString() });
    session = await (opts.connect ?? connectInProcess)(gym, episode.id);
    const agentCtx: AgentContext = {
      client: session.client,
      episodeId: episode.id,
      task: { suite: job.task.suite, id: job.task.id, prompt: episode.prompt, language: job.task.language, kind: job.task.kind, metadata: publicTaskInfo(job.task).metadata as Record<string, unknown> },
      model: opts.model,
      sample: job.sample,
      signal: episodeSignal.signal,
      record: (event) => trajectory.append({ ...event, type: typeof event.type === 'string' ? event.type : 'event', attempt, at: new Date().toISOString() }),
    };
    thrownWhere = 'agent';
    const t1 = Date.now();
    const grace = opts.agentGraceMs ?? 5 * 60_000;
    const limit = (opts.timeLimitMs ?? gym.defaults.timeLimitMs) + grace;
    result = await runAgentWithWatchdog(opts.agent.create(job.task), agentCtx, episodeSignal, limit, watchdog, Math.min(30_000, grace));
    agentMs = Date.now() - t1;
    if (!isAgentResult(result)) throw new GymError('INTERNAL', `the agent returned ${JSON.stringify(result)?.slice(0, 200)}, not an AgentResult`);
  } catch (err) {
    thrown = toGymError(err);
    result = undefined;
  } finally {
    ctx.signal.removeEventListener('abort', abortEpisode);
    await session?.close().catch(() => {});
    if (episode) await gym.endEpisode(episode).catch(() => {});
  }

  const verdict = episode?.verdict;
  const record = baseRecord(ctx, job, attempt, episode, result, startedAt, { startMs, agentMs, scoringMs: verdict?.durationMs ?? 0 }, trajectoryRel);
  let retryable = false;
  const notes: string[] = [];
  if (verdict && verdict.status !== 'error') {
    // The gym's verdict decides; an agent that failed after submitting does not undo it.
    if (thrown) notes.push(`the agent failed after its submission was scored: ${thrown.code}: ${thrown.message}`);
    if (result?.infraError) notes.push(`the agent reported an infrastructure failure after its submission was scored: ${result.infraError.code}: ${result.infraError.message}`);
  } else if (verdict) {
    markInfra(record, verdict.error?.code ?? 'INTERNAL', verdict.error?.message ?? 'scoring failed', 'verdict');
    retryable = true;
  } else if (watchdog.fired) {
    // Not retried: a retry would most likely hang as long again.
    markInfra(record, 'AGENT_TIMEOUT', `the agent was still running ${Math.round(((opts.agentGraceMs ?? 5 * 60_000)) / 1000)} s after the episode's time limit and was cancelled`, 'agent');
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
  if (notes.length) record.notes = notes;
  record.oracleContext = oracleContextOf(job.task, episode?.finalDiff);
  if (!record.oracleContext) delete record.oracleContext;
  trajectory.append({ type: 'result', attempt, status: record.status, reward: record.reward, infra: record.infra, ...(record.infraError ? { infraError: record.infraError } : {}), stopReason: record.stopReason, at: record.endedAt });
  await trajectory.flush();
  return { record, retryable };
}

/**
 * Runs the agent; past the episode's time limit plus a grace period its signal is aborted, and
 * an agent that still does not return is abandoned as an infrastructure failure (a hung model call).
 */
async function runAgentWithWatchdog(agent: Agent, ctx: AgentContext, control: AbortController, limitMs: number, state: { fired: boolean }, abandonMs: number): Promise<AgentResult> {
  let timer: NodeJS.Timeout | undefined;
  let abandon: NodeJS.Timeout | undefined;
  const watchdog = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      state.fired = true;
      control.abort(new GymError('CANCELLED', 'the episode ran past its time limit'));
      abandon = setTimeout(() => reject(new GymError('INTERNAL', `the agent did not return within ${Math.round(limitMs / 1000)} s, nor ${Math.round(abandonMs / 1000)} s after being cancelled`)), abandonMs);
    }, limitMs);
  });
  try {
    return await Promise.race([agent.run(ctx), watchdog]);
  } finally {
    clearTimeout(timer);
    clearTimeout(abandon);
  }
}

function isAgentResult(r: unknown): r is AgentResult {
  return Boolean(r) && typeof r === 'object' && typeof (r as AgentResult).stopReason === 'string';
}

function baseRecord(
  ctx: AttemptContext,
  job: Job,
  attempt: number,
  episode: Episode | undefined,
  result: AgentResult | undefined,
  startedAt: Date,
  durations: { startMs: number; agentMs: number; scoringMs: number },
  trajectory: string,
): ResultRecord {
  const verdict = episode?.verdict;
  const usage = result?.usage;
  const endedAt = new Date();
  return {
    runId: ctx.manifest.runId,
    suite: ctx.manifest.suite,
    task: job.task.id,
    sample: job.sample,
    attempt,
    final: true,
    agent: ctx.manifest.agent,
    model: ctx.manifest.model,
    episodeId: episode?.id ?? null,
    status: verdict && verdict.status !== 'error' ? verdict.status : 'failed',
    reward: verdict && verdict.status !== 'error' ? verdict.reward : 0,
    infra: false,
    verdict: verdict ? verdictSummary(verdict) : null,
    submitted: Boolean(verdict),
    stopReason: result?.stopReason ?? (verdict ? 'submitted' : 'error'),
    steps: episode?.steps ?? result?.steps ?? 0,
    ...(result?.rounds !== undefined ? { rounds: result.rounds } : {}),
    ...(result?.passedRound !== undefined ? { passedRound: result.passedRound } : {}),
    ...(result?.error ? { agentError: result.error.slice(0, 2000) } : {}),
    tokens: {
      prompt: usage?.promptTokens ?? 0,
      completion: usage?.completionTokens ?? 0,
      total: (usage?.promptTokens ?? 0) + (usage?.completionTokens ?? 0),
      calls: usage?.calls ?? 0,
    },
    costUsd: usage?.costUsd ?? 0,
    startedAt: startedAt.toISOString(),
    endedAt: endedAt.toISOString(),
    durations: { ...durations, totalMs: endedAt.getTime() - startedAt.getTime() },
    metadata: { ...reportMetadata(job.task), context: episode?.context ?? ctx.opts.context ?? job.task.defaultContext, promptVariant: ctx.opts.promptVariant ?? 'default' },
    trajectory,
    gymTrajectory: episode?.trajectory.file ?? null,
  };
}

function markInfra(record: ResultRecord, code: string, message: string, source: 'agent' | 'verdict' | 'gym'): void {
  record.status = 'error';
  record.reward = 0;
  record.infra = true;
  record.infraError = { code, message: message.slice(0, 2000), source };
}

export function verdictSummary(v: Verdict): NonNullable<ResultRecord['verdict']> {
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
  const out: Record<string, string | number | boolean> = { language: task.language, kind: task.kind };
  for (const [key, value] of Object.entries(task.metadata)) {
    if (typeof value === 'number' || typeof value === 'boolean' || (typeof value === 'string' && value.length <= 200)) out[key] = value;
  }
  return out;
}

/**
 * CoderEval's oracle_context (task metadata `oracle_context`: a token list, or lists per
 * category, possibly JSON-encoded as in the CoderEval files) checked against the lines the
 * sample added: which tokens its code uses, for Acc@k.
 */
export function oracleContextOf(task: Task, diff: string | undefined): Record<string, boolean[]> | undefined {
  const tokens = oracleContextTokens(task.metadata.oracle_context ?? task.metadata.oracleContext);
  if (!tokens || diff === undefined) return undefined;
  const added = diff
    .split('\n')
    .filter((l) => l.startsWith('+') && !l.startsWith('+++'))
    .map((l) => l.slice(1))
    .join('\n');
  const out: Record<string, boolean[]> = {};
  for (const [category, list] of Object.entries(tokens)) out[category] = list.map((t) => containsToken(added, t));
  return out;
}

export function oracleContextTokens(raw: unknown): Record<string, string[]> | undefined {
  let value = raw;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  const list = (v: unknown): string[] | undefined => {
    if (typeof v === 'string') {
      try {
        v = JSON.parse(v);
      } catch {
        return undefined;
      }
    }
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.length > 0) : undefined;
  };
  if (Array.isArray(value)) {
    const l = list(value);
    return l?.length ? { tokens: l } : undefined;
  }
  if (value && typeof value === 'object') {
    const out: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(value)) {
      const l = list(v);
      if (l?.length) out[k] = l;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return undefined;
}

/** Appends JSON lines in order, without waiting for each write (a trajectory, not the results). */
class JsonlAppender {
  private chain: Promise<void> = Promise.resolve();
  constructor(readonly file: string) {}
  append(record: Record<string, unknown>): void {
    let line: string;
    try {
      line = JSON.stringify(record) + '\n';
    } catch (err) {
      line = JSON.stringify({ type: 'unserializable', attempt: record.attempt, error: (err as Error).message }) + '\n';
    }
    this.chain = this.chain.then(() => fs.appendFile(this.file, line)).catch(() => {});
  }
  flush(): Promise<void> {
    return this.chain;
  }
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

