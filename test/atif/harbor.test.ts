/**
 * The ATIF export of real runs and of a server's episodes, validated by harbor's own pydantic
 * models and validator (PyPI `harbor`, in a venv of its own). Skips, saying why, when harbor
 * cannot be installed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { promisify } from 'node:util';
import { exportGymTrajectories, exportRun } from '../../src/atif/export.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { PROJECT_ROOT } from '../../src/project.ts';
import { OpenEnvSession } from '../../src/server/openenv/session.ts';
import { makeGym, tempDir } from '../helpers.ts';
import { HARBOR, pythonWith } from '../python_venv.ts';
import { writeRuns } from './run_fixture.ts';

const SCRIPT = path.join(PROJECT_ROOT, 'test', 'atif', 'python', 'validate_atif.py');
type Json = Record<string, any>;

const found = await pythonWith(HARBOR);

let gym: Gym;
let dataDir: string;
let cleanup: () => Promise<void>;
let root: string;
before(async () => {
  if (found.skip) return;
  ({ gym, dataDir, cleanup } = await makeGym());
  root = await tempDir('benchgym-harbor-');
});
after(async () => {
  await cleanup?.();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

test(
  "harbor's ATIF models accept the export of a swe-agent run, a replay run and a server's OpenEnv episode",
  { skip: found.skip ?? false, timeout: 10 * 60_000 },
  async () => {
    const runs = await writeRuns(gym, root);
    const session = new OpenEnvSession(gym);
    await session.reset({ task_id: 'roman-numerals' });
    await session.step({ tool_name: 'view_file', arguments: { path: 'no-such-file.py' } });
    await session.step({ tool_name: 'submit' });
    await session.close();
    const files = [
      ...(await exportRun(runs.swe, path.join(root, 'atif-swe'))).written,
      ...(await exportRun(runs.gold, path.join(root, 'atif-gold'))).written,
      ...(await exportGymTrajectories(path.join(dataDir, 'trajectories'), path.join(root, 'atif-served'))).written,
    ];
    assert.ok(files.length >= 7, `${files.length} files: 1 + 2 run attempts, and the gym's episodes`);
    const { stdout } = await promisify(execFile)(found.python!, [SCRIPT, ...files], { timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });
    const checked = JSON.parse(stdout) as Record<string, Json>;
    for (const file of files) {
      const c = checked[file]!;
      assert.equal(c.valid, true, `${path.basename(file)}: ${c.errors.join('; ')}`);
      assert.equal(c.schema_version, 'ATIF-v1.7');
      assert.equal(c.results, c.tool_calls, `${path.basename(file)}: every tool call has its observation`);
      assert.equal(c.round_trip, true);
    }
    const swe = checked[files[0]!]!;
    assert.deepEqual(swe.sources, ['system', 'user', 'agent', 'agent', 'agent']);
    assert.equal(swe.tool_calls, 5);
    assert.equal(swe.reward, 1);
    for (const f of files.slice(1, 3)) assert.equal(checked[f]!.reward, 1, 'the gold solutions');
  },
);
