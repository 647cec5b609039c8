/**
 * The evolving-ignored start state of a target that moved since it was written (pydash's
 * functions, validators' src layout): found where it is at the newest commit, stubbed
 * there, its reference written there, and work done there scored in the aware start state.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { buildTasks } from '../../../envs/humanevo/builder.ts';
import { humanevoSuite } from '../../../envs/humanevo/index.ts';
import type { BuiltTaskRecord } from '../../../envs/humanevo/record.ts';
import { targetFileAt } from '../../../envs/humanevo/workspace.ts';
import type { Gym } from '../../../src/episode/gym.ts';
import { LocalSandboxFactory } from '../../../src/sandbox/local/index.ts';
import { validateTask } from '../../../src/scoring/validate.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym, TEST_CACHE_DIR, tempDir, testContext } from '../../helpers.ts';
import { buildMovedTargetFixture } from './fixtures.ts';

let dir: string;
let rec: BuiltTaskRecord;
let commits: Record<string, string>;
let gym: Gym;
let cleanup: () => Promise<void>;

before(async () => {
  dir = await tempDir('benchgym-humanevo-moved-');
  process.env.BENCHGYM_HUMANEVO_CACHE = path.join(dir, 'workspaces');
  const fixture = await buildMovedTargetFixture(path.join(dir, 'repo'));
  commits = fixture.commits;
  const records: BuiltTaskRecord[] = [];
  const sandboxes = new LocalSandboxFactory({ baseDir: path.join(dir, 'sandboxes'), cacheDir: TEST_CACHE_DIR });
  try {
    await buildTasks({
      repo: fixture.repo,
      language: 'python',
      env: { kind: 'python', version: '3.11', requirements: [] },
      sandboxes,
      onTask: (r) => void records.push(r),
    });
  } finally {
    await sandboxes.close();
  }
  assert.deepEqual(
    records.map((r) => [r.target.qualname, r.target.file]),
    [['shout', 'wordy/__init__.py']],
  );
  rec = records[0]!;
  const file = path.join(dir, 'tasks.jsonl');
  await fs.writeFile(file, JSON.stringify(rec) + '\n');
  const registry = new SuiteRegistry([humanevoSuite()]);
  registry.enable(`humanevo=${file}`);
  ({ gym, cleanup } = await makeGym({ registry }));
});
after(async () => {
  await cleanup?.();
  await fs.rm(dir, { recursive: true, force: true });
});

test('the target is found where it moved: its own file first, then the one file defining it', async () => {
  assert.equal(await targetFileAt(rec, commits.shout!), 'wordy/__init__.py');
  assert.equal(await targetFileAt(rec, commits.move!), 'wordy/voice.py');
  assert.equal(await targetFileAt({ ...rec, target: { ...rec.target, qualname: 'nowhere' } }, commits.move!), null);
});

test(
  'the ignored start state: stubbed in its new file, the prompt ' + 'names it, its reference written there; valid in both settings',
  async () => {
    const [task] = await gym.registry.tasks('humanevo');
    const ignored = task!.contexts.ignored!;
    assert.ok(ignored, 'the task offers the ignored context');
    assert.equal(task!.metadata.ignoredTargetFile, 'wordy/voice.py');
    assert.equal(ignored.workspace.type, 'dir');
    const root = (ignored.workspace as { path: string }).path;
    assert.match(
      await fs.readFile(path.join(root, 'wordy/voice.py'), 'utf8'),
      /def shout\(text\):\n    """Upper-case[^\n]*"""\n    raise NotImplementedError/,
    );
    assert.ok(!existsSync(path.join(root, 'tests/test_wordy.py')), 'the hidden tests are not in it');
    assert.match(ignored.prompt!, /`shout` in `wordy\/voice\.py`/);
    assert.deepEqual(Object.keys(ignored.solution!.files!), ['wordy/voice.py']);
    for (const context of [undefined, 'ignored']) {
      const v = await validateTask(gym, task!, context ? { context } : {});
      assert.equal(v.status, 'valid', `${context ?? 'aware'}: ${JSON.stringify(v)}`);
    }
  },
);

test("an episode in the ignored context: the body written in the new file is carried into the aware start state's old one", async () => {
  const started = await gym.callTool('start_episode', { task_id: rec.instance_id, context: 'ignored' }, testContext());
  const id = (started.data as { episodeId: string }).episodeId;
  const episode = gym.episode(id);
  const stub = (await episode.sandbox.readFile('wordy/voice.py')).toString('utf8');
  await episode.sandbox.writeFile(
    'wordy/voice.py',
    stub.replace(/raise NotImplementedError[^\n]*/, 'return text.upper().rstrip("!") + "!"'),
  );
  const verdict = (await gym.callTool('submit', {}, testContext(), id)).data as { reward: number; notes: string[] };
  assert.equal(verdict.reward, 1, JSON.stringify(verdict));
  assert.ok(
    verdict.notes.some((n) => /carried from the episode's wordy\/voice\.py into the aware start state \(wordy\/__init__\.py\)/.test(n)),
    verdict.notes.join('; '),
  );
});
