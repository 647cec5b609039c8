import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import type { Gym } from '../../src/episode/gym.ts';
import type { LocalSandbox } from '../../src/sandbox/local/index.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;

before(async () => {
  ({ gym, cleanup } = await makeGym());
});
after(() => cleanup());

test('ends the episode without scoring and removes its sandbox; the diff stays readable', async () => {
  const id = await startExample(gym, 'roman-numerals');
  const call = (name: string, args: Record<string, unknown> = {}) => gym.callTool(name, args, testContext(), id);
  const root = (gym.episode(id).sandbox as LocalSandbox).root;
  await call('create_file', { path: 'work.py', content: 'x = 1\n' });

  const r = await call('end_episode');
  assert.equal(r.text, `Episode ${id} ended.`);
  assert.deepEqual(r.data, { episodeId: id, state: 'ended' });
  assert.equal(existsSync(root), false);
  assert.equal(gym.episode(id).verdict, undefined);

  await expectGymError(call('view_file', { path: 'roman.py' }), 'EPISODE_ENDED', /ended/);
  await expectGymError(call('run_command', { command: 'true' }), 'EPISODE_ENDED');
  await expectGymError(call('submit'), 'EPISODE_ENDED', /without a submission/);

  const diff = await call('get_diff');
  assert.deepEqual((diff.data as { files: string[] }).files, ['work.py']);

  const again = await call('end_episode');
  assert.match(again.text, /was already ended/);

  const records = (await fs.readFile(gym.episode(id).trajectory.file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(records.filter((x) => x.type === 'end').length, 1);
  assert.equal(
    records.some((x) => x.type === 'verdict'),
    false,
  );
});

test('ending a submitted episode keeps its verdict', async () => {
  const id = await startExample(gym, 'roman-numerals');
  await gym.callTool('submit', {}, testContext(), id);
  const r = await gym.callTool('end_episode', {}, testContext(), id);
  assert.match(r.text, /was already submitted/);
  assert.equal(gym.episode(id).state, 'submitted');
  assert.equal(gym.episode(id).verdict?.reward, 0);
});
