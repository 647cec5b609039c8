import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Gym } from '../../src/episode/gym.ts';
import { PathRedactor } from '../../src/episode/redact.ts';
import { GymError } from '../../src/errors.ts';
import { PROJECT_ROOT } from '../../src/tasks/registry.ts';
import { makeGym, startExample, testContext } from '../helpers.ts';

describe('PathRedactor', () => {
  const r = new PathRedactor([
    { root: '/srv/data/sandboxes', placeholder: '<sandboxes>' },
    { root: '/srv/data', placeholder: '<data>' },
    { root: '/opt/benchgym', placeholder: '<benchgym>' },
    { root: undefined, placeholder: '<none>' },
  ]);

  test('replaces the longest root first and keeps the paths the agent is told', () => {
    const workdir = '/srv/data/sandboxes/i1/lsb-1/workspace';
    const text = `fatal: '/srv/data/sandboxes/i1/lsb-1/baseline.git' and /srv/data/logs/x.log, /opt/benchgym/envs/a, ${workdir}/a.py`;
    assert.equal(
      r.redact(text, [workdir]),
      `fatal: '<sandboxes>/i1/lsb-1/baseline.git' and <data>/logs/x.log, <benchgym>/envs/a, ${workdir}/a.py`,
    );
    assert.equal(r.redact('/srv/database and /srv/data.'), '/srv/database and <data>.');
  });

  test('redacts infrastructure errors (message and details), leaves the others alone', () => {
    const e = r.error(new GymError('INTERNAL', "ENOENT: open '/srv/data/x'", { stderr: ['/opt/benchgym/y'] }));
    assert.equal(e.message, "ENOENT: open '<data>/x'");
    assert.deepEqual(e.details, { stderr: ['<benchgym>/y'] });
    const own = new GymError('PATH_OUTSIDE_WORKSPACE', "'/srv/data/x' is outside the workspace");
    assert.equal(r.error(own), own);
  });
});

describe('errors a tool shows the agent carry no server paths', () => {
  let gym: Gym;
  let dataDir: string;
  let cleanup: () => Promise<void>;
  before(async () => {
    // Without bubblewrap the command can reach the sandbox's baseline repository and break get_diff.
    ({ gym, dataDir, cleanup } = await makeGym({ isolation: 'none' }));
  });
  after(async () => cleanup());

  test('a SANDBOX_UNAVAILABLE from get_diff names <sandboxes>, not the data dir', async () => {
    const id = await startExample(gym, 'roman-numerals');
    const broke = await gym.callTool('run_command', { command: 'rm -rf "$(dirname "$PWD")/baseline.git"' }, testContext(), id);
    assert.equal((broke.data as { exitCode: number }).exitCode, 0);
    let caught: unknown;
    try {
      await gym.callTool('get_diff', {}, testContext(), id);
    } catch (err) {
      caught = err;
    }
    assert.ok(caught instanceof GymError, `expected a GymError, got ${String(caught)}`);
    assert.equal(caught.code, 'SANDBOX_UNAVAILABLE');
    const shown = JSON.stringify(caught.toJSON());
    for (const root of [dataDir, await fs.realpath(dataDir), PROJECT_ROOT])
      assert.ok(!shown.includes(root), `the error shows ${root}: ${shown}`);
    assert.match(caught.message, /<sandboxes>\//);
    // The trajectory (the server's record) keeps the real message.
    await gym.episode(id).trajectory.flush();
    const trajectory = await fs.readFile(path.join(dataDir, 'trajectories', `${id}.jsonl`), 'utf8');
    assert.ok(trajectory.includes(path.join(dataDir, 'sandboxes')), 'the trajectory keeps the full error');
  });
});
