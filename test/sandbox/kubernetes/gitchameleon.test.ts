import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../../src/episode/gym.ts';
import type { Task } from '../../../src/tasks/schema.ts';
import { builtinRegistry, makeGym, testContext } from '../../helpers.ts';
import { GITCHAMELEON_TASK } from './gitchameleon_task.ts';
import { SKIP_WITHOUT_DATA, V2_DIR } from '../../envs/gitchameleon/data.ts';
import { kubernetesSkipReason, testFactory } from './skip.ts';

/** A GitChameleon problem, episode through submit, in a pod: the visible test, the docs of the pinned version, the verdict. */
describe('kubernetes sandbox: a GitChameleon episode through submit', async () => {
  const skip = SKIP_WITHOUT_DATA || (await kubernetesSkipReason());
  if (skip) {
    test(`skipped: ${skip}`, { skip }, () => {});
    return;
  }
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let task: Task;
  let id: string;
  const ctx = () => ({ ...testContext(), onOutput: undefined });

  before(async () => {
    const registry = builtinRegistry(`gitchameleon=${V2_DIR}`);
    task = await registry.task('gitchameleon', GITCHAMELEON_TASK);
    ({ gym, cleanup } = await makeGym({ registry, sandboxes: testFactory() }));
    // The env image is built (once per machine) and loaded onto the node here, outside the test's time.
    const started = await gym.callTool('start_episode', { suite: 'gitchameleon', task_id: GITCHAMELEON_TASK }, ctx());
    id = (started.data as { episodeId: string }).episodeId;
  });
  after(async () => cleanup?.());

  test(
    `problem ${GITCHAMELEON_TASK}: the starter fails the visible test, ` +
      `view_docs reads jinja2 3.1, the reference solution passes and is scored 1`,
    { timeout: 120_000 },
    async () => {
      assert.equal(gym.episode(id).sandbox.backend, 'kubernetes');
      const [file, gold] = Object.entries(task.solution!.files!)[0]!;
      assert.match((await gym.callTool('view_file', { path: file }, ctx(), id)).text, /def /);

      const failing = (await gym.callTool('run_tests', {}, ctx(), id)).data as { counts: Record<string, number> };
      assert.ok(failing.counts.failed + failing.counts.error >= 1, JSON.stringify(failing.counts));

      const docs = await gym.callTool('view_docs', { symbol: 'jinja2.pass_eval_context' }, ctx(), id);
      assert.match(docs.text, /^Documentation of jinja2\.pass_eval_context \(jinja2 3\.1\.\d/, docs.text.slice(0, 300));

      await gym.callTool('create_file', { path: file, content: String(gold), overwrite: true }, ctx(), id);
      const passing = (await gym.callTool('run_tests', {}, ctx(), id)).data as { counts: Record<string, number> };
      assert.equal(passing.counts.failed + passing.counts.error, 0, JSON.stringify(passing.counts));
      assert.ok(passing.counts.passed >= 1);

      const verdict = (await gym.callTool('submit', {}, ctx(), id)).data as {
        status: string;
        reward: number;
        tests: { name: string; status: string }[];
      };
      assert.equal(verdict.status, 'passed', JSON.stringify(verdict));
      assert.equal(verdict.reward, 1);
      assert.ok(
        verdict.tests.length >= 1 &&
          verdict.tests.every((t) => t.name.startsWith(`hidden_tests/test_sample_${GITCHAMELEON_TASK}.py::`) && t.status === 'passed'),
        JSON.stringify(verdict.tests),
      );
    },
  );
});
