import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { existsSync, promises as fs } from 'node:fs';
import type { Agent, AgentContext, AgentResult } from '../../src/agent/types.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { GymError } from '../../src/errors.ts';
import { summarize } from '../../src/runner/metrics.ts';
import { readResults, ResultsWriter, trajectoryName, type ResultRecord } from '../../src/runner/results.ts';
import { reportMetadata } from '../../src/runner/record.ts';
import { runExperiment, type AgentUnderTest, type RunExperimentOptions } from '../../src/runner/runner.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { SuiteRegistry } from '../../src/tasks/registry.ts';
import { examplesSuite } from '../../envs/examples/index.ts';
import { expectGymError, makeGym, pythonTask, tempDir } from '../helpers.ts';

const usage = { promptTokens: 0, completionTokens: 0, costUsd: 0, calls: 0 };

async function submit(ctx: AgentContext): Promise<AgentResult> {
  const r = await ctx.client.callTool({ name: 'submit', arguments: {} });
  ctx.record({ type: 'submitted', isError: Boolean(r.isError) });
  return {
    verdict: (r.structuredContent ?? null) as Record<string, unknown> | null,
    submitted: !r.isError,
    stopReason: 'submitted',
    steps: 1,
    usage: { ...usage, calls: 1, promptTokens: 100, completionTokens: 20, costUsd: 0.001 },
  };
}

/** Writes the task's reference files with create_file, then submits. */
async function writeGoldAndSubmit(task: Task, ctx: AgentContext): Promise<AgentResult> {
  for (const [file, content] of Object.entries(task.solution?.files ?? {})) {
    const r = await ctx.client.callTool({ name: 'create_file', arguments: { path: file, content, overwrite: true } });
    assert.ok(!r.isError, JSON.stringify(r.content));
  }
  return submit(ctx);
}

function agentOf(name: string, run: (task: Task, ctx: AgentContext) => Promise<AgentResult>): AgentUnderTest & { created: string[] } {
  const created: string[] = [];
  return {
    name,
    created,
    create(task: Task): Agent {
      return {
        run: (ctx) => {
          created.push(`${task.id}#${ctx.sample}`);
          return run(task, ctx);
        },
      };
    },
  };
}

/** An agent that writes the gold files; counts how many episodes run at once. */
function goldAgent() {
  let live = 0;
  const agent = agentOf('gold', async (task, ctx) => {
    live++;
    agent.maxLive = Math.max(agent.maxLive, live);
    try {
      return await writeGoldAndSubmit(task, ctx);
    } finally {
      live--;
    }
  }) as ReturnType<typeof agentOf> & { maxLive: number };
  agent.maxLive = 0;
  return agent;
}

async function resultLines(dir: string): Promise<ResultRecord[]> {
  const text = await fs.readFile(path.join(dir, 'results.jsonl'), 'utf8');
  assert.ok(text.endsWith('\n'), 'every line is complete');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ResultRecord);
}

function pairs(records: ResultRecord[]): string[] {
  return records.map((r) => `${r.task}#${r.sample}`).sort();
}

describe('runExperiment over the examples suite', () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let allTasks: Task[];
  const dirs: string[] = [];
  const outDir = async () => {
    const d = await tempDir('benchgym-run-');
    dirs.push(d);
    return path.join(d, 'run');
  };
  const base = (extra: Partial<RunExperimentOptions> & Pick<RunExperimentOptions, 'agent' | 'outDir'>): RunExperimentOptions => ({
    gym,
    suite: 'examples',
    model: { model: 'test-model' },
    retryDelayMs: () => 0,
    ...extra,
  });

  before(async () => {
    ({ gym, cleanup } = await makeGym());
    allTasks = await gym.registry.tasks('examples');
  });
  after(async () => {
    await cleanup?.();
    for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
  });

  test('concurrency 4, two samples: one well-formed result line per (task, sample), trajectories, manifest', async () => {
    const dir = await outDir();
    const agent = goldAgent();
    const outcome = await runExperiment(base({ agent, outDir: dir, samples: 2, concurrency: 4 }));
    const expected = allTasks.flatMap((t) => [`${t.id}#0`, `${t.id}#1`]).sort();
    assert.equal(allTasks.length, 6);
    assert.deepEqual(pairs(outcome.results), expected);
    assert.ok(agent.maxLive > 1 && agent.maxLive <= 4, `episodes ran concurrently (at most 4): ${agent.maxLive}`);
    assert.equal(outcome.aborted, false);

    const lines = await resultLines(dir);
    assert.deepEqual(pairs(lines), expected, 'one line per (task, sample), no retries');
    for (const r of lines) {
      assert.equal(r.runId, outcome.manifest.runId);
      assert.equal(r.suite, 'examples');
      assert.equal(r.agent, 'gold');
      assert.equal(r.model, 'test-model');
      assert.equal(r.attempt, 1);
      assert.equal(r.final, true);
      assert.equal(r.status, 'passed', `${r.task}#${r.sample}: ${JSON.stringify(r.verdict)}`);
      assert.equal(r.reward, 1);
      assert.equal(r.infra, false);
      assert.equal(r.stopReason, 'submitted');
      assert.ok(r.steps >= 2, 'steps come from the gym: create_file calls and submit');
      assert.deepEqual(r.tokens, { prompt: 100, completion: 20, total: 120, calls: 1 });
      assert.equal(r.costUsd, 0.001);
      assert.ok(
        r.durations.startMs >= 0 && r.durations.agentMs > 0 && r.durations.scoringMs > 0 && r.durations.totalMs >= r.durations.agentMs,
      );
      assert.ok(r.verdict && r.verdict.tests.passed > 0 && r.verdict.tests.failed === 0);
      assert.equal(r.metadata.language, allTasks.find((t) => t.id === r.task)!.language);
      assert.ok('kind' in r.metadata && 'difficulty' in r.metadata);
      assert.ok(!('oracleContext' in r));
      // The trajectory: an attempt header with the gym's own trajectory file, the agent's events, the result.
      const traj = (await fs.readFile(path.join(dir, r.trajectory), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.equal(r.trajectory, path.join('trajectories', `${r.task}__${r.sample}.jsonl`));
      assert.deepEqual(
        traj.map((e) => e.type),
        ['attempt', 'submitted', 'result'],
      );
      assert.equal(traj[0].episodeId, r.episodeId);
      assert.equal(traj[0].gymTrajectory, r.gymTrajectory);
      assert.ok(existsSync(r.gymTrajectory!), 'the gym trajectory exists');
    }
    const inv = lines.find((r) => r.task === 'inventory-discount-bug')!;
    assert.deepEqual(inv.verdict!.failToPass, { passed: 7, failed: 0 });
    assert.deepEqual(inv.verdict!.passToPass, { passed: 26, failed: 0 });
    assert.equal(lines.find((r) => r.task === 'semver-pinned')!.metadata.library, 'semver');

    const manifest = JSON.parse(await fs.readFile(path.join(dir, 'run.json'), 'utf8'));
    assert.equal(manifest.suite, 'examples');
    assert.equal(manifest.agent, 'gold');
    assert.equal(manifest.model, 'test-model');
    assert.equal(manifest.options.samples, 2);
    assert.deepEqual(
      manifest.taskIds,
      allTasks.map((t) => t.id),
    );
    assert.match(manifest.started, /^\d{4}-\d\d-\d\dT/);
  });

  test('infrastructure failures are retried with the attempt recorded; wrong answers are not; the verdict comes from the gym', async () => {
    const dir = await outDir();
    const seen = new Map<string, number>();
    const attemptOf = (task: Task, ctx: AgentContext) => {
      const key = `${task.id}#${ctx.sample}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      return seen.get(key)!;
    };
    const agent = agentOf('mixed', async (task, ctx) => {
      const n = attemptOf(task, ctx);
      switch (task.id) {
        case 'roman-numerals': // flaky-infra: the model endpoint is down the first time
          if (n === 1)
            return {
              verdict: null,
              submitted: false,
              stopReason: 'error',
              steps: 0,
              usage,
              infraError: { code: 'MODEL_UNAVAILABLE', message: 'connection refused' },
            };
          return writeGoldAndSubmit(task, ctx);
        case 'parse-duration': // a GymError with an infra code is thrown the first time
          if (n === 1) throw new GymError('SANDBOX_UNAVAILABLE', 'the sandbox went away');
          return writeGoldAndSubmit(task, ctx);
        case 'median-edge-cases': // noop: submits the start state, a wrong answer
          return submit(ctx);
        case 'semver-pinned': // always an infrastructure failure
          return {
            verdict: null,
            submitted: false,
            stopReason: 'error',
            steps: 0,
            usage,
            infraError: { code: 'MODEL_UNAVAILABLE', message: 'still down' },
          };
        case 'inventory-discount-bug': // claims a passing verdict without submitting: the gym has none
          return { verdict: { reward: 1, status: 'passed' }, submitted: true, stopReason: 'submitted', steps: 0, usage };
        default: // a non-infrastructure error thrown: recorded as an error, not retried
          throw new GymError('INVALID_ARGUMENT', 'an agent bug');
      }
    });
    const outcome = await runExperiment(base({ agent, outDir: dir, samples: 1, concurrency: 3, retries: 2 }));
    const lines = await resultLines(dir);
    const of = (task: string) =>
      lines
        .filter((r) => r.task === task)
        .map((r) => ({ attempt: r.attempt, final: r.final, status: r.status, infra: r.infra, code: r.infraError?.code }));

    assert.deepEqual(of('roman-numerals'), [
      { attempt: 1, final: false, status: 'error', infra: true, code: 'MODEL_UNAVAILABLE' },
      { attempt: 2, final: true, status: 'passed', infra: false, code: undefined },
    ]);
    assert.deepEqual(of('parse-duration'), [
      { attempt: 1, final: false, status: 'error', infra: true, code: 'SANDBOX_UNAVAILABLE' },
      { attempt: 2, final: true, status: 'passed', infra: false, code: undefined },
    ]);
    assert.deepEqual(
      of('median-edge-cases'),
      [{ attempt: 1, final: true, status: 'failed', infra: false, code: undefined }],
      'a wrong answer is never retried',
    );
    assert.deepEqual(
      of('semver-pinned'),
      [
        { attempt: 1, final: false, status: 'error', infra: true, code: 'MODEL_UNAVAILABLE' },
        { attempt: 2, final: false, status: 'error', infra: true, code: 'MODEL_UNAVAILABLE' },
        { attempt: 3, final: true, status: 'error', infra: true, code: 'MODEL_UNAVAILABLE' },
      ],
      'retried twice, then written as an infrastructure failure',
    );
    assert.deepEqual(of('inventory-discount-bug'), [{ attempt: 1, final: true, status: 'failed', infra: false, code: undefined }]);
    assert.match(lines.find((r) => r.task === 'inventory-discount-bug')!.notes!.join(), /gym has no verdict/);
    assert.deepEqual(of('java-bracket-matcher'), [{ attempt: 1, final: true, status: 'error', infra: true, code: 'INVALID_ARGUMENT' }]);
    assert.equal(seen.get('median-edge-cases#0'), 1);
    assert.equal(seen.get('semver-pinned#0'), 3);

    // The median start state fails the hidden edge cases: a scored failure with F2P counts.
    const median = lines.find((r) => r.task === 'median-edge-cases')!;
    assert.equal(median.verdict!.status, 'failed');
    assert.ok(median.verdict!.failToPass!.failed > 0);

    // Each retry is its own episode, recorded in the same trajectory file.
    const traj = (await fs.readFile(path.join(dir, 'trajectories', 'roman-numerals__0.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      traj.filter((e) => e.type === 'attempt').map((e) => e.attempt),
      [1, 2],
    );

    // Metrics: infrastructure failures are not wrong answers, but samples that did not pass; --exclude-errors leaves them out.
    const s = summarize(outcome.results);
    assert.equal(s.infraFailures, 2, 'semver-pinned and the agent bug');
    assert.equal(s.tasks, 6);
    assert.equal(s.passAtK[1]!.estimate, 2 / 6);
    const old = summarize(outcome.results, { excludeErrors: true });
    assert.equal(old.tasks, 4);
    assert.equal(old.passAtK[1]!.estimate, 2 / 4);
  });

  test('--resume after a kill: a torn last line is cut, finished pairs are skipped, nothing is written twice', async () => {
    const dir = await outDir();
    const tasks = ['parse-duration', 'roman-numerals', 'semver-pinned'];
    const first = goldAgent();
    await runExperiment(base({ agent: first, outDir: dir, tasks, samples: 2, concurrency: 2 }));
    const full = await fs.readFile(path.join(dir, 'results.jsonl'), 'utf8');
    const lines = full.split('\n').filter(Boolean);
    assert.equal(lines.length, 6);
    // As if killed while writing the third line.
    await fs.writeFile(path.join(dir, 'results.jsonl'), `${lines[0]}\n${lines[1]}\n${lines[2]!.slice(0, 57)}`);
    const read = await readResults(path.join(dir, 'results.jsonl'));
    assert.equal(read.records.length, 2);
    assert.equal(read.tornTail, lines[2]!.slice(0, 57));

    // Other options are refused; so is reusing the directory without --resume.
    await expectGymError(
      runExperiment(base({ agent: goldAgent(), outDir: dir, tasks, samples: 3, resume: true })),
      'INVALID_ARGUMENT',
      /different options.*samples: 2 → 3/,
    );
    await expectGymError(
      runExperiment(base({ agent: goldAgent(), outDir: dir, tasks, samples: 2 })),
      'INVALID_ARGUMENT',
      /already holds a run.*--resume/,
    );
    await expectGymError(
      runExperiment(base({ agent: { ...goldAgent(), name: 'other' }, outDir: dir, tasks, samples: 2, resume: true })),
      'INVALID_ARGUMENT',
      /agent: "gold" → "other"/,
    );

    // The suite's task list changed under the run (here: as if a task had been added since).
    const manifestFile = path.join(dir, 'run.json');
    const saved = await fs.readFile(manifestFile, 'utf8');
    await fs.writeFile(manifestFile, JSON.stringify({ ...JSON.parse(saved), taskIds: tasks.slice(0, 2) }));
    await expectGymError(
      runExperiment(base({ agent: goldAgent(), outDir: dir, tasks, samples: 2, resume: true })),
      'INVALID_ARGUMENT',
      /tasks changed since the run started \(\+semver-pinned\)/,
    );
    await fs.writeFile(manifestFile, saved);

    const second = goldAgent();
    const outcome = await runExperiment(base({ agent: second, outDir: dir, tasks, samples: 2, concurrency: 2, resume: true }));
    assert.equal(outcome.skipped, 2);
    assert.equal(second.created.length, 4, 'only the pairs without a final result ran again');
    const after = await resultLines(dir);
    const expected = tasks.flatMap((t) => [`${t}#0`, `${t}#1`]).sort();
    assert.deepEqual(pairs(after), expected, 'the full set, no duplicates');
    assert.deepEqual(pairs(outcome.results), expected);
    const manifest = JSON.parse(await fs.readFile(path.join(dir, 'run.json'), 'utf8'));
    assert.equal(manifest.resumed.length, 1);
    assert.equal(manifest.runId, after[0]!.runId);
    assert.ok(after.every((r) => r.runId === manifest.runId));
  });

  test('stopping a run records nothing for the episodes in flight; a resume finishes the rest', async () => {
    const dir = await outDir();
    const tasks = ['parse-duration', 'roman-numerals', 'median-edge-cases'];
    const stop = new AbortController();
    let started = 0;
    const agent = agentOf('gold', async (task, ctx) => {
      if (++started === 3) {
        // The third episode is in flight when the run is stopped.
        stop.abort();
        await new Promise((r) => setTimeout(r, 50));
        assert.ok(ctx.signal.aborted, 'the agent is told');
      }
      return writeGoldAndSubmit(task, ctx);
    });
    const outcome = await runExperiment(base({ agent, outDir: dir, tasks, samples: 2, concurrency: 1, signal: stop.signal }));
    assert.equal(outcome.aborted, true);
    assert.equal(outcome.results.length, 2);
    assert.equal((await resultLines(dir)).length, 2);

    const rest = goldAgent();
    const resumed = await runExperiment(base({ agent: rest, outDir: dir, tasks, samples: 2, concurrency: 2, resume: true }));
    assert.equal(resumed.aborted, false);
    assert.equal(rest.created.length, 4);
    assert.deepEqual(pairs(await resultLines(dir)), tasks.flatMap((t) => [`${t}#0`, `${t}#1`]).sort());
  });

  test('an agent running past the time limit is cancelled, or abandoned, as an AGENT_TIMEOUT that is not retried', async () => {
    const dir = await outDir();
    const agent = agentOf('slow', async (task, ctx) => {
      if (task.id === 'parse-duration') {
        // Stops when told.
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        return {
          verdict: null,
          submitted: false,
          stopReason: 'error',
          steps: 0,
          usage,
          infraError: { code: 'CANCELLED', message: 'aborted' },
        };
      }
      // Never returns.
      return new Promise<AgentResult>(() => {});
    });
    const outcome = await runExperiment(
      base({ agent, outDir: dir, tasks: ['parse-duration', 'roman-numerals'], timeLimitMs: 300, agentGraceMs: 200, concurrency: 2 }),
    );
    assert.deepEqual(
      outcome.results.map((r) => [r.task, r.attempt, r.final, r.status, r.infraError?.code]),
      [
        ['parse-duration', 1, true, 'error', 'AGENT_TIMEOUT'],
        ['roman-numerals', 1, true, 'error', 'AGENT_TIMEOUT'],
      ],
    );
    assert.equal(agent.created.length, 2, 'no retries');
  });

  test('unknown tasks and bad settings are refused before anything runs', async () => {
    const dir = await outDir();
    await expectGymError(runExperiment(base({ agent: goldAgent(), outDir: dir, tasks: ['nope'] })), 'TASK_NOT_FOUND', /'nope'/);
    await expectGymError(runExperiment(base({ agent: goldAgent(), outDir: dir, samples: 0 })), 'INVALID_ARGUMENT', /samples/);
    await expectGymError(runExperiment(base({ agent: goldAgent(), outDir: dir, concurrency: 1000 })), 'INVALID_ARGUMENT', /concurrency/);
    assert.equal(existsSync(path.join(dir, 'run.json')), false);
  });
});

describe('results.jsonl', () => {
  const line = (task: string, sample: number) => JSON.stringify({ task, sample, attempt: 1, final: true, status: 'passed', infra: false });

  test('a whole last record without its newline is kept, and the next append starts a new line', async () => {
    const dir = await tempDir();
    try {
      const file = path.join(dir, 'results.jsonl');
      await fs.writeFile(file, `${line('a', 0)}\n${line('a', 1)}`);
      const read = await readResults(file);
      assert.equal(read.records.length, 2);
      const writer = await ResultsWriter.open(file, read.validBytes);
      await writer.append(JSON.parse(line('b', 0)));
      await writer.close();
      assert.deepEqual(
        (await readResults(file)).records.map((r) => `${r.task}#${r.sample}`),
        ['a#0', 'a#1', 'b#0'],
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  test('a torn last line is cut before appending; a bad line in the middle is an error', async () => {
    const dir = await tempDir();
    try {
      const file = path.join(dir, 'results.jsonl');
      await fs.writeFile(file, `${line('a', 0)}\n{"task":"a","sam`);
      const read = await readResults(file);
      assert.equal(read.records.length, 1);
      assert.equal(read.tornTail, '{"task":"a","sam');
      const writer = await ResultsWriter.open(file, read.validBytes);
      await writer.append(JSON.parse(line('a', 1)));
      await writer.close();
      assert.equal(await fs.readFile(file, 'utf8'), `${line('a', 0)}\n${line('a', 1)}\n`);

      await fs.writeFile(file, `${line('a', 0)}\nnot json\n${line('a', 1)}\n`);
      await expectGymError(readResults(file), 'INVALID_ARGUMENT', /line 2 .*only the last line may be cut short/);
      assert.deepEqual(await readResults(path.join(dir, 'missing.jsonl')), { records: [], validBytes: 0 });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  test('trajectory file names keep task ids readable and safe', () => {
    assert.equal(trajectoryName('roman-numerals', 3), 'roman-numerals__3.jsonl');
    assert.equal(trajectoryName('neo4j---driver/62e60f43', 0), 'neo4j---driver_62e60f43__0.jsonl');
  });
});

describe('task facts for reports', () => {
  test('metadata: language, kind and short scalars only', () => {
    const task = pythonTask({
      files: { 'a.py': '' },
      metadata: { library: 'numpy', level: 'class_runnable', year: 2023, flaky: false, long: 'x'.repeat(500), nested: { a: 1 } },
    });
    assert.deepEqual(reportMetadata(task), {
      language: 'python',
      kind: 'function',
      library: 'numpy',
      level: 'class_runnable',
      year: 2023,
      flaky: false,
    });
  });
});

describe("the suite's part in a run", () => {
  test(
    'annotations (Suite.annotateResult) land at the top level of the result line, a key ' +
      'that is a result field is refused with a note; the agent never sees private metadata',
    async () => {
      const seen: (string | undefined)[] = [];
      const agentMetadata: Record<string, unknown>[] = [];
      const registry = new SuiteRegistry([
        {
          ...examplesSuite(),
          privateMetadata: ['difficulty'],
          annotateResult: (task, { diff }) => {
            seen.push(diff);
            return {
              addedLines: diff?.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++')).length,
              task: 'overwritten?',
              nothing: undefined,
            };
          },
        },
      ]);
      registry.enable('examples');
      const { gym, cleanup } = await makeGym({ registry });
      const dir = await tempDir('benchgym-run-');
      try {
        const outcome = await runExperiment({
          gym,
          outDir: path.join(dir, 'run'),
          suite: 'examples',
          tasks: ['roman-numerals'],
          agent: agentOf('gold', (task, ctx) => (agentMetadata.push(ctx.task.metadata), writeGoldAndSubmit(task, ctx))),
          model: { model: 'test-model' },
          retryDelayMs: () => 0,
        });
        assert.equal(outcome.results.length, 1);
        const [line] = await resultLines(path.join(dir, 'run'));
        const r = line as ResultRecord & { addedLines?: number };
        assert.equal(r.status, 'passed');
        assert.equal(seen.length, 1);
        assert.ok(seen[0]?.includes('+++'), 'the suite gets the final diff');
        assert.ok(typeof r.addedLines === 'number' && r.addedLines > 0);
        assert.equal(r.task, 'roman-numerals');
        assert.ok(!('nothing' in r));
        assert.ok(
          r.notes?.some((n) => /annotation 'task' ignored/.test(n)),
          JSON.stringify(r.notes),
        );
        assert.equal(agentMetadata.length, 1);
        assert.ok(!('difficulty' in agentMetadata[0]!), JSON.stringify(agentMetadata[0]));
      } finally {
        await cleanup();
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
  );
});
