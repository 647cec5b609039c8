/**
 * HumanEvo episodes on the Docker backend: the aware start state keeps its cut history in
 * the container, retrieval sees each context's code, and both contexts score.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { humanevoSuite } from '../../../envs/humanevo/index.ts';
import type { Gym } from '../../../src/episode/gym.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym, testContext } from '../../helpers.ts';
import { dockerSkipReason } from '../../sandbox/docker/skip.ts';
import { buildFixture, type BuiltFixture } from './setup.ts';

const skip = (await dockerSkipReason()) ?? false;

describe('HumanEvo on the Docker backend', { skip }, () => {
  let f: BuiltFixture;
  let gym: Gym;
  let cleanup: () => Promise<void>;

  before(async () => {
    f = await buildFixture('python', { limit: 1 });
    const registry = new SuiteRegistry([humanevoSuite()]);
    registry.enable(`humanevo=${f.file}`);
    ({ gym, cleanup } = await makeGym({
      registry,
      sandboxes: new DockerSandboxFactory({ serverId: `test-humanevo-${randomBytes(4).toString('hex')}`, poolSize: 0 }),
    }));
  });
  after(async () => {
    await cleanup?.();
    await f?.cleanup();
  });

  const episode = async (context: string) => {
    const r = await gym.callTool('start_episode', { task_id: f.records[0]!.instance_id, context }, testContext());
    const id = (r.data as { episodeId: string }).episodeId;
    const run = async (command: string) =>
      (await gym.callTool('run_command', { command }, testContext(), id)).data as { stdout: string; exitCode: number };
    const top = async () =>
      ((await gym.callTool('retrieve_context', { k: 1 }, testContext(), id)).data.hits as { symbol: string }[])[0]!.symbol;
    const solve = async () => {
      await gym.callTool(
        'edit_file',
        {
          path: 'textkit/strings.py',
          old_str: '    raise NotImplementedError',
          new_str: '    words = re.findall(r"[a-z0-9]+", title.lower())\n    return sep.join(words)',
        },
        testContext(),
        id,
      );
      return (await gym.callTool('submit', {}, testContext(), id)).data as { reward: number };
    };
    return { run, top, solve };
  };

  test('aware: the history ends at the parent inside the container; the helper is retrieved; reward 1', async () => {
    const e = await episode('aware');
    const log = await e.run('git log --all --format=%H 2>&1');
    assert.deepEqual(log.stdout.trim().split('\n'), [f.commits.initial], log.stdout);
    assert.notEqual((await e.run(`git cat-file -e ${f.commits.futureCopy}`)).exitCode, 0);
    assert.equal(await e.top(), f.expect.retrieval.deletedHelper);
    assert.equal((await e.solve()).reward, 1);
  });

  test('ignored: the later copy is retrieved; the work scores in the aware start state', async () => {
    const e = await episode('ignored');
    assert.equal(await e.top(), f.expect.retrieval.futureCopy);
    assert.equal((await e.solve()).reward, 1);
  });
});
