/** --resume --rerun-errors and --limit / --shuffle through runExperiment, over the examples suite. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import type { AgentResult } from '../../src/agent/types.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { readResults } from '../../src/runner/results.ts';
import { runExperiment, type AgentUnderTest } from '../../src/runner/runner.ts';
import { sampleTasks } from '../../src/runner/selection.ts';
import { makeGym, tempDir } from '../helpers.ts';

const usage = { promptTokens: 0, completionTokens: 0, costUsd: 0, calls: 0 };
let gym: Gym;
let cleanup: () => Promise<void>;
let root: string;

before(async () => {
  ({ gym, cleanup } = await makeGym());
  root = await tempDir('benchgym-rerun-');
});
after(async () => {
  await cleanup?.();
  await fs.rm(root, { recursive: true, force: true });
});

/** An agent that, while `down` holds, reports the model endpoint down; else stops without submitting (a failed sample). */
function flakyAgent(state: { down: boolean; runs: string[] }): AgentUnderTest {
  return {
    name: 'flaky',
    create: (task) => ({
      run: async (ctx): Promise<AgentResult> => {
        state.runs.push(`${task.id}#${ctx.sample}`);
        if (state.down)
          return {
            verdict: null,
            submitted: false,
            stopReason: 'error',
            steps: 0,
            usage,
            infraError: { code: 'MODEL_UNAVAILABLE', message: 'the endpoint is down' },
          };
        ctx.record({ type: 'note', text: 'endpoint back' });
        return { verdict: null, submitted: false, stopReason: 'model_stopped', steps: 0, usage };
      },
    }),
  };
}

test(
  '--limit and --shuffle pick the same tasks on every resume; ' +
    '--rerun-errors retries infrastructure failures and keeps the earlier error',
  async () => {
    const outDir = path.join(root, 'run');
    const state = { down: true, runs: [] as string[] };
    const all = await gym.registry.tasks('examples');
    const picked = sampleTasks(all, { shuffle: 'seven', limit: 2 }).map((t) => t.id);
    const base = {
      gym,
      outDir,
      suite: 'examples',
      agent: flakyAgent(state),
      model: { model: 'm' },
      retries: 0,
      retryDelayMs: () => 0,
      limit: 2,
      shuffle: 'seven',
    };

    const first = await runExperiment(base);
    assert.deepEqual(first.manifest.taskIds, picked, 'the seeded sample, in its order');
    assert.equal(first.manifest.options.limit, 2);
    assert.equal(first.manifest.options.shuffle, 'seven');
    assert.deepEqual(
      first.results.map((r) => `${r.task} ${r.status} ${r.infraError?.code}`),
      picked.map((t) => `${t} error MODEL_UNAVAILABLE`),
    );

    // A plain resume keeps the infrastructure failures as they are.
    state.down = false;
    const plain = await runExperiment({ ...base, resume: true });
    assert.equal(plain.written.length, 0);
    assert.deepEqual(
      state.runs,
      picked.map((t) => `${t}#0`),
    );

    // Another seed is another selection: refused on resume.
    await assert.rejects(
      runExperiment({ ...base, shuffle: 'eight', resume: true }),
      /--resume with different options .*shuffle: "seven" → "eight"/,
    );
    await assert.rejects(runExperiment({ ...base, rerunErrors: true }), /needs resume/);

    const rerun = await runExperiment({ ...base, resume: true, rerunErrors: true });
    assert.deepEqual(
      rerun.written.map((r) => `${r.task} ${r.status} attempt ${r.attempt} infra ${r.infra}`),
      picked.map((t) => `${t} failed attempt 2 infra false`),
    );
    assert.deepEqual(
      rerun.results.map((r) => r.status),
      ['failed', 'failed'],
      'the new result supersedes the error',
    );
    assert.equal(rerun.skipped, 0);

    const { records } = await readResults(path.join(outDir, 'results.jsonl'));
    assert.deepEqual(
      records.map((r) => `${r.task}@${r.attempt} ${r.status}`).sort(),
      picked.flatMap((t) => [`${t}@1 error`, `${t}@2 failed`]).sort(),
      'the earlier error stays in results.jsonl',
    );
    const trajectory = (await fs.readFile(path.join(outDir, rerun.written[0]!.trajectory), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; attempt: number; infraError?: { code: string } });
    assert.deepEqual(
      trajectory.filter((e) => e.type === 'result').map((e) => `${e.attempt} ${e.infraError?.code ?? 'ok'}`),
      ['1 MODEL_UNAVAILABLE', '2 ok'],
      'and in the trajectory',
    );

    // Nothing left: a second rerun runs nothing.
    state.runs.length = 0;
    const again = await runExperiment({ ...base, resume: true, rerunErrors: true });
    assert.equal(again.written.length, 0);
    assert.deepEqual(state.runs, []);
  },
);
