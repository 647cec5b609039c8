import { promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../errors.ts';
import { workerPool } from '../pool.ts';
import { runPair, type AttemptContext } from './attempt.ts';
import { newManifest, RESULTS_FILE, writeManifest, type RunIdentity, type RunManifest } from './manifest.ts';
import type { RunExperimentOptions } from './options.ts';
import { silentProgress } from './progress.ts';
import { openRun, remainingPairs } from './resume.ts';
import { ResultsWriter, type ResultRecord } from './results.ts';
import { offering, sampleTasks, selectTasks } from './selection.ts';

export type { AgentUnderTest, RunExperimentOptions } from './options.ts';

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
  if (!Number.isInteger(samples) || samples < 1)
    throw new GymError('INVALID_ARGUMENT', `samples must be a whole number >= 1 (got ${samples})`);
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new GymError('INVALID_ARGUMENT', `concurrency must be a whole number >= 1 (got ${concurrency})`);
  if (concurrency > gym.defaults.maxEpisodes)
    throw new GymError('INVALID_ARGUMENT', `concurrency ${concurrency} is above the gym's ${gym.defaults.maxEpisodes} episodes at once`);
  if (!Number.isInteger(retries) || retries < 0)
    throw new GymError('INVALID_ARGUMENT', `retries must be a whole number >= 0 (got ${retries})`);

  const outDir = path.resolve(opts.outDir);
  if (opts.rerunErrors && !opts.resume)
    throw new GymError('INVALID_ARGUMENT', 'rerunErrors retries the infrastructure failures of a resumed run: it needs resume');
  const tasks = sampleTasks(offering(await selectTasks(gym, opts.suite, opts.tasks), opts.context, Boolean(opts.tasks?.length)), {
    limit: opts.limit,
    shuffle: opts.shuffle,
  });
  const identity: RunIdentity = {
    dataset: null,
    ...opts.options,
    samples,
    tasks: opts.tasks?.length ? [...opts.tasks] : null,
    maxSteps: opts.maxSteps ?? null,
    timeLimitMs: opts.timeLimitMs ?? null,
    ...(opts.context ? { context: opts.context } : {}),
    ...(opts.promptVariant ? { promptVariant: opts.promptVariant } : {}),
    ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
    ...(opts.shuffle !== undefined ? { shuffle: opts.shuffle } : {}),
    baseURL: opts.model.baseURL ?? null,
    temperature: opts.model.temperature ?? null,
    maxTokens: opts.model.maxTokens ?? null,
    pricing: opts.model.pricing ?? null,
  };
  const settings = { concurrency, retries };
  const fresh = newManifest({
    suite: opts.suite,
    agent: opts.agent.name,
    model: opts.model.model,
    options: identity,
    taskIds: tasks.map((t) => t.id),
    settings,
  });
  const { manifest, read } = await openRun(outDir, fresh, opts.resume, settings);
  await writeManifest(outDir, manifest);
  await fs.mkdir(path.join(outDir, 'trajectories'), { recursive: true });
  const { jobs, carried } = remainingPairs(tasks, samples, read.records, { rerunErrors: opts.rerunErrors });

  const writer = await ResultsWriter.open(path.join(outDir, RESULTS_FILE), read.validBytes);
  const progress = opts.progress ?? silentProgress;
  const stop = new AbortController();
  const onAbort = () => stop.abort(opts.signal?.reason);
  if (opts.signal?.aborted) stop.abort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const written: ResultRecord[] = [];
  progress.start(
    tasks.length * samples,
    carried.length,
    carried.filter((r) => r.status === 'passed').length,
    carried.filter((r) => r.infra).length,
  );

  const ctx: AttemptContext = { opts, manifest, outDir, retries, signal: stop.signal };
  try {
    await workerPool(
      jobs,
      concurrency,
      async (job) => {
        const record = await runPair(ctx, job, writer, progress);
        if (record) written.push(record);
      },
      { signal: stop.signal },
    );
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    progress.stop();
    await writer.close();
  }

  const order = new Map(tasks.map((t, i) => [t.id, i]));
  const results = [...carried, ...written].sort((a, b) => order.get(a.task)! - order.get(b.task)! || a.sample - b.sample);
  return { manifest, results, written, skipped: carried.length, aborted: results.length < tasks.length * samples };
}
