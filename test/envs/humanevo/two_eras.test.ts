/**
 * A history that spans two Python eras (issue 17): `confkit` in 2019 declares Python
 * 3.5-3.7 and imports `collections.Mapping` (gone in 3.10); in 2023 it declares 3.10+ and
 * uses `match`. Built with the env of each change's era, both eras give their task, each
 * tested with its own era's Python, and each is valid under `benchgym validate` and in the
 * evolving-ignored setting; with one env for the whole history, the newest Python loses
 * the old task and the oldest loses the new one. The era envs install pytest (as PyPI
 * held it at the commit, when uv is here): the test skips when PyPI cannot be reached.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { buildTasks, type BuildOptions, type BuildReport } from '../../../envs/humanevo/builder.ts';
import { humanevoSuite } from '../../../envs/humanevo/index.ts';
import type { BuiltTaskRecord } from '../../../envs/humanevo/record.ts';
import { AGENTS } from '../../../agents/index.ts';
import { availablePythons } from '../../../src/env/python.ts';
import type { Gym } from '../../../src/episode/gym.ts';
import { agentUnderTest } from '../../../src/runner/agents.ts';
import { readResults } from '../../../src/runner/results.ts';
import { runExperiment } from '../../../src/runner/runner.ts';
import { validateTasks } from '../../../src/scoring/validate.ts';
import { LocalSandboxFactory } from '../../../src/sandbox/local/index.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { promises as fs } from 'node:fs';
import { makeGym, TEST_CACHE_DIR, tempDir, testContext } from '../../helpers.ts';
import { buildTwoEraFixture } from './fixtures.ts';

async function pypiReachable(): Promise<boolean> {
  try {
    const res = await fetch('https://pypi.org/simple/pytest/', { method: 'HEAD', signal: AbortSignal.timeout(10_000) });
    return res.ok;
  } catch {
    return false;
  }
}

const pythons = await availablePythons();
const has = (v: string) => pythons.some((p) => p.version === v);
const SKIP = !(await pypiReachable())
  ? 'PyPI is not reachable: the era envs install their test runner from it'
  : !['3.5', '3.6', '3.7'].some(has) || !['3.10', '3.11'].some(has)
    ? `this machine lacks a Python of one era (it has ${pythons.map((p) => p.version).join(', ')})`
    : false;

describe('build-tasks over two Python eras', { skip: SKIP }, () => {
  let dir: string;
  let repo: string;
  let commits: Record<string, string>;
  let file: string;
  let era: { report: BuildReport; records: BuiltTaskRecord[] };

  async function build(extra: Partial<BuildOptions>): Promise<{ report: BuildReport; records: BuiltTaskRecord[] }> {
    const sandboxes = new LocalSandboxFactory({ baseDir: path.join(dir, 'sandboxes'), cacheDir: TEST_CACHE_DIR });
    const records: BuiltTaskRecord[] = [];
    try {
      const report = await buildTasks({
        repo,
        language: 'python',
        env: { kind: 'python', version: '3.11', requirements: [] },
        sandboxes,
        testTimeoutMs: 300_000,
        onTask: (r) => void records.push(r),
        ...extra,
      });
      return { report, records };
    } finally {
      await sandboxes.close();
    }
  }
  const byName = (records: BuiltTaskRecord[]) => Object.fromEntries(records.map((r) => [r.target.qualname, r]));

  before(async () => {
    dir = await tempDir('benchgym-two-eras-');
    process.env.BENCHGYM_HUMANEVO_CACHE = path.join(dir, 'workspaces');
    ({ repo, commits } = await buildTwoEraFixture(path.join(dir, 'repo')));
    era = await build({ eraEnv: {} });
    file = path.join(dir, 'tasks.jsonl');
    await fs.writeFile(file, era.records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  });
  after(() => fs.rm(dir, { recursive: true, force: true }));

  test("both eras give their task, each tested with its era's declared Python; the envs are reported", () => {
    const tasks = byName(era.records);
    assert.deepEqual(Object.keys(tasks).sort(), ['deep_merge', 'describe']);
    assert.deepEqual({ ...era.report.rejected }, { 'no-added-function': 1 }, JSON.stringify(era.report.rejections));
    const old = tasks.deep_merge!;
    const modern = tasks.describe!;
    assert.equal(old.commit, commits.deepMerge);
    assert.ok(old.env.kind === 'python' && ['3.5', '3.6', '3.7'].includes(old.env.version), JSON.stringify(old.env));
    assert.ok(modern.env.kind === 'python' && ['3.10', '3.11'].includes(modern.env.version), JSON.stringify(modern.env));
    assert.match(old.env_derivation!.python_from, /newest listed Python.*setup\.py classifiers.*python_requires >=3\.5, <3\.8/);
    assert.match(modern.env_derivation!.python_from, /pyproject\.toml classifiers.*requires-python >=3\.10/);
    assert.equal(old.env_derivation!.runner, 'pytest');
    // The runner is pinned in the env (as of the commit when uv resolves it).
    assert.ok(old.env.kind === 'python' && old.env.requirements.some((r) => /^pytest==/.test(r)) === (old.env_derivation!.cutoff !== null));
    if (old.env_derivation!.cutoff) {
      assert.equal(old.env_derivation!.cutoff, '2019-04-01T10:00:00Z');
      const pytest = old.env.kind === 'python' ? old.env.requirements.find((r) => r.startsWith('pytest=='))! : '';
      // Not 4.4 (March 2019): pytest 3.6-5.x need atomicwrites, whose files of then are no longer on PyPI (re-uploaded in 2022).
      assert.match(pytest, /^pytest==3\./, 'pytest as PyPI holds it for April 2019');
    }
    assert.deepEqual(
      era.report.envs.map((e) => [e.python, e.changes, e.tasks]),
      [
        [old.env.kind === 'python' ? old.env.version : '', 1, 1],
        [modern.env.kind === 'python' ? modern.env.version : '', 1, 1],
      ],
    );
  });

  test('with one env for the whole history, the newest Python loses the old task and the oldest the new one', async () => {
    const newest = pythons[pythons.length - 1]!.version;
    const oldest = pythons[0]!.version;
    const onNewest = await build({ env: { kind: 'python', version: newest, requirements: [] }, to: commits.deepMerge });
    assert.deepEqual(
      onNewest.records.map((r) => r.target.qualname),
      [],
      `Python ${newest}: collections.Mapping is gone`,
    );
    assert.deepEqual(
      onNewest.report.rejections.filter((r) => r.function).map((r) => [r.function, r.reason]),
      [['deep_merge', 'change-tests-fail']],
    );
    const onOldest = await build({ env: { kind: 'python', version: oldest, requirements: [] }, from: commits.modernise });
    assert.deepEqual(
      onOldest.records.map((r) => r.target.qualname),
      [],
      `Python ${oldest}: match is a syntax error`,
    );
    assert.deepEqual(
      onOldest.report.rejections.filter((r) => r.function).map((r) => [r.function, r.reason]),
      [['describe', 'change-tests-fail']],
    );
  });

  test("benchgym validate (validateTasks): both tasks valid in the aware setting, each in its era's env", async () => {
    const registry = new SuiteRegistry([humanevoSuite()]);
    registry.enable(`humanevo=${file}`);
    const { gym, cleanup } = await makeGym({ registry });
    try {
      const results = await validateTasks(gym, await gym.registry.tasks('humanevo'));
      assert.deepEqual(
        results.map((r) => [r.taskId.replace(/^[0-9a-f]+-/, ''), r.status]),
        [
          ['deep_merge', 'valid'],
          ['describe', 'valid'],
        ],
        JSON.stringify(results),
      );
    } finally {
      await cleanup();
    }
  });

  test('evolving-ignored: the untouched start state fails, the gold function carried from the newest version passes', async () => {
    const registry = new SuiteRegistry([humanevoSuite()]);
    registry.enable(`humanevo=${file}`);
    const { gym, cleanup } = await makeGym({ registry });
    try {
      for (const rec of era.records) {
        const started = await gym.callTool('start_episode', { task_id: rec.instance_id, context: 'ignored' }, testContext());
        const id = (started.data as { episodeId: string }).episodeId;
        const verdict = (await gym.callTool('submit', {}, testContext(), id)).data as { reward: number };
        assert.equal(verdict.reward, 0, `${rec.target.qualname}: the stub fails`);
      }
      const outDir = path.join(dir, 'run-ignored');
      await runExperiment({
        gym: gym as Gym,
        outDir,
        suite: 'humanevo',
        agent: agentUnderTest(AGENTS, 'replay', {}, true),
        model: { model: 'gold' },
        context: 'ignored',
      });
      const { records } = await readResults(path.join(outDir, 'results.jsonl'));
      assert.deepEqual(records.map((r) => [r.metadata.targetSymbol, r.metadata.context, r.status]).sort(), [
        ['deep_merge', 'ignored', 'passed'],
        ['describe', 'ignored', 'passed'],
      ]);
    } finally {
      await cleanup();
    }
  });
});
