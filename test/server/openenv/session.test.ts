import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { examplesSuite } from '../../../envs/examples/index.ts';
import type { Gym } from '../../../src/episode/gym.ts';
import { OpenEnvSession } from '../../../src/server/openenv/session.ts';
import { seededOrder } from '../../../src/server/openenv/task_order.ts';
import { OpenEnvValidationError } from '../../../src/server/openenv/wire.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import type { Verdict } from '../../../src/scoring/verdict.ts';
import { makeGym, trajectoryRecords } from '../../helpers.ts';

type Json = Record<string, any>;

/** The gold solution of an examples task, as files. */
async function gold(gym: Gym, taskId: string): Promise<Record<string, string>> {
  const files = (await gym.registry.task('examples', taskId)).solution?.files;
  assert.ok(files && Object.keys(files).length, `${taskId} has a gold solution`);
  return files;
}

async function callTool(session: OpenEnvSession, tool_name: string, args: Json = {}): Promise<Json> {
  return (await session.step({ type: 'call_tool', tool_name, arguments: args })) as Json;
}

describe('an OpenEnv session over the gym', () => {
  let gym: Gym;
  let dataDir: string;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ gym, dataDir, cleanup } = await makeGym());
  });
  after(() => cleanup());

  test('before a reset: the gym tools, a state with no episode, and an episode tool refused as tool_not_found', async () => {
    const session = new OpenEnvSession(gym);
    assert.deepEqual(session.state(), { episode_id: null, step_count: 0 });
    const listed = (await session.step({ type: 'list_tools' })) as Json;
    assert.deepEqual(
      listed.observation.tools.map((t: Json) => t.name),
      ['list_suites', 'list_tasks', 'start_episode'],
    );
    assert.equal(listed.reward, null);
    assert.equal(listed.done, false);
    const refused = await callTool(session, 'view_file', { path: 'roman.py' });
    assert.equal(refused.observation.result, null);
    assert.equal(refused.observation.error.error_type, 'tool_not_found');
    assert.match(refused.observation.error.message, /'view_file' is a tool of an episode, and this session has none yet: reset first/);
    const tasks = await callTool(session, 'list_tasks', {});
    assert.equal(tasks.observation.result.data.total, 6);
    await session.close();
  });

  test(
    'reset, work, submit the gold solution: reward 1 and done; ' + 'state reports the episode; its trajectory records every step',
    async () => {
      const session = new OpenEnvSession(gym);
      const reset = (await session.reset({ task_id: 'roman-numerals', episode_id: 'my-run-7' })) as Json;
      assert.equal(reset.reward, null);
      assert.equal(reset.done, false);
      const episodeId = reset.observation.data.episodeId as string;
      assert.match(reset.observation.text, /Episode ep-[0-9a-f]+ started for examples\/roman-numerals/);
      assert.equal(reset.observation.metadata.task_id, 'roman-numerals');
      assert.match(reset.observation.metadata.prompt, /to_roman/);
      assert.deepEqual(
        session.listedTools().map((t) => t.name),
        gym.episodeTools(gym.episode(episodeId)).map((t) => t.name),
        "after the reset, the episode's tools",
      );

      const viewed = await callTool(session, 'view_file', { path: 'roman.py' });
      assert.equal(viewed.reward, 0);
      assert.equal(viewed.done, false);
      assert.equal(viewed.observation.error, null);
      assert.equal(viewed.observation.result.is_error, false);
      assert.equal(viewed.observation.result.data.path, 'roman.py');
      assert.deepEqual(viewed.observation.result.data, viewed.observation.result.structured_content);
      assert.match(viewed.observation.result.content[0].text, /roman\.py \(lines 1-/);
      assert.equal(viewed.observation.metadata.step_count, 1);

      for (const [file, content] of Object.entries(await gold(gym, 'roman-numerals'))) {
        const written = await callTool(session, 'create_file', { path: file, content, overwrite: true });
        assert.equal(written.observation.error, null, JSON.stringify(written.observation.error));
      }
      const submitted = await callTool(session, 'submit');
      assert.equal(submitted.observation.result.data.status, 'passed', submitted.observation.result.content[0].text);
      assert.equal(submitted.reward, 1);
      assert.equal(submitted.done, true);
      const state = session.state();
      assert.equal(state.episode_id, episodeId);
      assert.equal(state.label, 'my-run-7');
      assert.equal(state.state, 'submitted');
      assert.equal(state.reward, 1);
      assert.equal(state.step_count, 3);

      const steps = await trajectoryRecords(dataDir, episodeId, 'step');
      assert.deepEqual(
        steps.map((s) => s.tool),
        ['view_file', 'create_file', 'submit'],
      );
      assert.equal((await trajectoryRecords(dataDir, episodeId, 'verdict')).length, 1);
      await session.close();
    },
  );

  test('submitting the untouched workspace: reward 0, done; a later step is an EPISODE_ENDED observation, still done', async () => {
    const session = new OpenEnvSession(gym);
    await session.reset({ task_id: 'roman-numerals' });
    const submitted = await callTool(session, 'submit');
    assert.equal(submitted.observation.result.data.status, 'failed');
    assert.equal(submitted.reward, 0);
    assert.equal(submitted.done, true);
    const after = await callTool(session, 'view_file', { path: 'roman.py' });
    assert.equal(after.observation.error.error_type, 'execution_error');
    assert.match(after.observation.error.message, /^EPISODE_ENDED: /);
    assert.equal(after.observation.metadata.error.code, 'EPISODE_ENDED');
    assert.equal(after.done, true);
    await session.close();
  });

  test('a failed tool is an observation with its error type and benchgym code; it counts as a step, as on every protocol', async () => {
    const session = new OpenEnvSession(gym);
    await session.reset({ task_id: 'roman-numerals' });
    const missing = await callTool(session, 'view_file', { path: 'nope.py' });
    assert.deepEqual(missing.observation.error, { error_type: 'execution_error', message: "FILE_NOT_FOUND: no such file: 'nope.py'" });
    assert.equal(missing.observation.metadata.error.code, 'FILE_NOT_FOUND');
    const badArgs = await callTool(session, 'view_file', { path: 3 });
    assert.equal(badArgs.observation.error.error_type, 'invalid_args');
    assert.match(badArgs.observation.error.message, /^INVALID_ARGUMENT: invalid arguments for view_file: 'path'/);
    const otherSuite = await callTool(session, 'start_episode', { task_id: 'roman-numerals' });
    assert.equal(otherSuite.observation.error.error_type, 'tool_not_found');
    assert.match(otherSuite.observation.error.message, /'start_episode' is not a tool of this episode/);
    const unknown = await callTool(session, 'no_such_tool');
    assert.match(unknown.observation.error.message, /unknown tool 'no_such_tool' \(its tools: view_file, /);
    assert.equal(unknown.reward, null, 'nothing ran');
    assert.equal(session.state().step_count, 2, 'the two episode-tool calls counted; the refused ones did not');
    await session.close();
  });

  test("an action that is not OpenEnv's is refused before anything runs, naming each problem", async () => {
    const session = new OpenEnvSession(gym);
    await assert.rejects(session.step({ type: 'bogus' }), (err: unknown) => {
      assert.ok(err instanceof OpenEnvValidationError);
      assert.deepEqual(
        err.issues.map((i) => i.loc.join('.')),
        ['data.type', 'data.tool_name'],
      );
      return true;
    });
    await assert.rejects(
      session.step({ tool_name: 'view_file', extra: 1 }),
      /Invalid action: data\.extra: Extra inputs are not permitted: 'extra'/,
    );
    await assert.rejects(session.reset({ task: 'roman-numerals' }), /Invalid reset data: data\.task: Extra inputs are not permitted/);
    await assert.rejects(session.reset({ seed: -1 }), /data\.seed: Too small/);
    assert.deepEqual(session.state(), { episode_id: null, step_count: 0 }, 'no episode was started');
    await session.close();
  });

  test(
    'reset without a task_id takes the suite in the seeded order; the ' +
      'same seed gives the same order; a new reset ends the episode before',
    async () => {
      const ids = (await gym.registry.tasks('examples')).map((t) => t.id);
      const order = seededOrder(ids, 42);
      const a = new OpenEnvSession(gym);
      const first = (await a.reset({ seed: 42 })) as Json;
      assert.equal(first.observation.metadata.task_id, order[0]);
      assert.equal(a.state().task_index, 0);
      assert.equal(a.state().seed, 42);
      const firstId = first.observation.data.episodeId as string;
      const second = (await a.reset({})) as Json;
      assert.equal(second.observation.metadata.task_id, order[1]);
      assert.equal(gym.episode(firstId).state, 'ended', 'the reset ended the episode the session held');
      const b = new OpenEnvSession(gym);
      assert.equal(
        ((await b.reset({ seed: 42 })) as Json).observation.metadata.task_id,
        order[0],
        'another session, the same seed: the same task',
      );
      const c = new OpenEnvSession(gym);
      await c.reset({ task_id: 'parse-duration', seed: 7 });
      assert.equal(c.state().task_id, 'parse-duration', 'a task_id wins; the seed orders the resets after it');
      assert.equal(((await c.reset({})) as Json).observation.metadata.task_id, seededOrder(ids, 7)[0]);
      await Promise.all([a.close(), b.close(), c.close()]);
    },
  );

  test('close ends every episode the session owns, its forks too; the trajectory says ended', async () => {
    const session = new OpenEnvSession(gym);
    const reset = (await session.reset({ task_id: 'roman-numerals' })) as Json;
    const id = reset.observation.data.episodeId as string;
    const fork = await callTool(session, 'fork_episode');
    const forkId = fork.observation.result.data.episodeId as string;
    assert.equal(gym.episode(forkId).state, 'running');
    await session.close();
    assert.equal(gym.episode(id).state, 'ended');
    assert.equal(gym.episode(forkId).state, 'ended');
    assert.deepEqual(
      (await trajectoryRecords(dataDir, id, 'end')).map((r) => r.state),
      ['ended'],
    );
    await assert.rejects(session.reset({ task_id: 'roman-numerals' }), /CANCELLED|closed/);
  });

  test('closing while a step runs cancels it and ends the episode', async () => {
    const session = new OpenEnvSession(gym);
    const id = ((await session.reset({ task_id: 'roman-numerals' })) as Json).observation.data.episodeId as string;
    const running = callTool(session, 'run_command', { command: 'sleep 30', timeout_s: 60 });
    await new Promise((r) => setTimeout(r, 500));
    const t0 = Date.now();
    await session.close();
    const outcome = await running;
    assert.ok(Date.now() - t0 < 15_000, 'the command did not run its 30 s');
    assert.match(outcome.observation.error.message, /CANCELLED/);
    assert.equal(gym.episode(id).state, 'ended');
  });

  test('the step budget: metadata says truncated once it is spent, and submit still scores', async () => {
    const session = new OpenEnvSession(gym);
    await session.reset({ task_id: 'roman-numerals', max_steps: 1 });
    const one = await callTool(session, 'list_dir', {});
    assert.equal(one.observation.metadata.truncated, true);
    assert.equal(one.done, false);
    const refused = await callTool(session, 'list_dir', {});
    assert.match(refused.observation.error.message, /^BUDGET_EXHAUSTED: /);
    const submitted = await callTool(session, 'submit');
    assert.equal(submitted.done, true);
    assert.equal(submitted.reward, 0);
    await session.close();
  });
});

test('a verdict that is an infrastructure failure has reward null, never 0: no answer was judged', async () => {
  const failing: Verdict = {
    taskId: 'roman-numerals',
    suite: 'examples',
    reward: 0,
    status: 'error',
    tests: [],
    notes: [],
    error: { code: 'ENV_BUILD_FAILED', message: 'the scoring env could not be built' },
    durationMs: 1,
  };
  const suite = { ...examplesSuite(), score: async () => failing };
  const registry = new SuiteRegistry([suite]);
  registry.enable('examples');
  const { gym, cleanup } = await makeGym({ registry });
  try {
    const session = new OpenEnvSession(gym);
    await session.reset({ task_id: 'roman-numerals' });
    const submitted = await callTool(session, 'submit');
    assert.equal(submitted.observation.result.data.status, 'error');
    assert.equal(submitted.reward, null);
    assert.equal(submitted.done, true);
    assert.equal(session.state().reward, null);
    await session.close();
  } finally {
    await cleanup();
  }
});
