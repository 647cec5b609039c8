/**
 * The image env kind on the Docker backend, with a stand-in for CoderEval's image (benchgym's
 * Python base image): a task scored inside a user-named image; an image that is named but not
 * loaded is ENV_UNAVAILABLE naming what to do. CoderEval's own image cannot be pulled here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { loadCoderEval } from '../../../envs/codereval/index.ts';
import { goldPatch } from '../../../src/scoring/gold.ts';
import { buildTask } from '../../../envs/codereval/tasks.ts';
import { baseImageName } from '../../../src/env/images.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import { makeGym } from '../../helpers.ts';
import { dockerSkipReason } from '../../sandbox/docker/skip.ts';
import { CODEREVAL_DIR, SKIP_WITHOUT_DATA } from './data.ts';

const STAND_IN = baseImageName('python', '3.11');

test(
  'a CoderEval task in a user-named image (Docker): the reference ' + 'passes, the stub fails; an unloaded image is ENV_UNAVAILABLE',
  async (t) => {
    if (SKIP_WITHOUT_DATA) return t.skip(SKIP_WITHOUT_DATA);
    const skip = await dockerSkipReason([STAND_IN]);
    if (skip) return t.skip(skip);
    const loaded = await loadCoderEval(CODEREVAL_DIR, 'codereval', { projects: { noProjects: true } });
    // int_to_string's test needs nothing but Python: run it "inside the project" of the stand-in.
    const source = loaded.sources.get('62ece4982e6aefcf4aabbd68')!;
    const inImage = buildTask('codereval', {
      ...source,
      needs: ['is run in a stand-in image by this test'],
      image: STAND_IN,
      imagePython: 'python3',
    });
    assert.deepEqual([inImage.env.kind, (inImage.env as { image?: string }).image], ['image', STAND_IN]);
    const missing = buildTask('codereval', {
      ...source,
      needs: ['is run in a stand-in image by this test'],
      image: `benchgym-test/no-such-codereval-image:${randomBytes(4).toString('hex')}`,
    });

    const sandboxes = new DockerSandboxFactory({ serverId: `test-codereval-${randomBytes(4).toString('hex')}`, poolSize: 0 });
    const { gym, cleanup } = await makeGym({ sandboxes });
    try {
      const gold = await gym.score(inImage, await goldPatch(inImage, sandboxes));
      assert.equal(gold.status, 'passed', JSON.stringify(gold));
      const start = await gym.score(inImage, '');
      assert.equal(start.status, 'failed', JSON.stringify(start));
      const unloaded = await gym.score(missing, '');
      assert.equal(unloaded.status, 'error');
      assert.equal(unloaded.error?.code, 'ENV_UNAVAILABLE');
      assert.match(unloaded.error!.message, /is not loaded \(docker load it first\)/);
    } finally {
      await cleanup();
    }
  },
);
