import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { builtinSuites } from '../../../bin/builtins.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { runCli } from '../../cli/cli.ts';
import { makeGym, tempDir, TEST_CACHE_DIR } from '../../helpers.ts';
import { dockerSkipReason } from '../../sandbox/docker/skip.ts';
import { kubernetesSkipReason, testFactory } from '../../sandbox/kubernetes/skip.ts';
import { buildSwebenchFixture, type SwebenchFixture } from './fixture.ts';

/** What the planted hook prints when git runs it in the scoring sandbox (the scoring log keeps the stderr of the harness's git). */
const HOOK_MARK = 'BENCHGYM-PLANTED-HOOK-RAN';

/**
 * The gold fix, plus git's own files: a post-checkout hook (the harness checks test files out
 * of HEAD after its tamper checks) and the repository's config made to run it as the
 * fsmonitor of every `git status`. `git apply` and `--3way` refuse the `.git` paths; before
 * this rule, `patch --fuzz=5` wrote them all and the instance resolved with the hook run.
 */
function withPlantedHook(fx: SwebenchFixture): string {
  const hook = ['#!/bin/sh', `echo ${HOOK_MARK} "$0" >&2`];
  return [
    fx.goldPatch.trimEnd(),
    'diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout',
    'new file mode 100755',
    '--- /dev/null',
    '+++ b/.git/hooks/post-checkout',
    `@@ -0,0 +1,${hook.length} @@`,
    ...hook.map((l) => `+${l}`),
    '--- a/.git/config',
    '+++ b/.git/config',
    '@@ -1,0 +2,1 @@',
    '+\tfsmonitor = .git/hooks/post-checkout',
    '',
  ].join('\n');
}

/** The notes name the refusal and the path; the scoring log shows no try applied and no hook ran. */
function assertRefused(notes: string[], log: string): void {
  assert.ok(
    notes.some((n) => /^PATCH_REFUSED: .*\.git\/hooks\/post-checkout.*inside \.git/.test(n)),
    JSON.stringify(notes),
  );
  assert.ok(
    notes.some((n) => /^PATCH_APPLY_FAILED/.test(n)),
    JSON.stringify(notes),
  );
  assert.doesNotMatch(log, new RegExp(HOOK_MARK), 'the planted hook ran in the scoring sandbox');
  assert.match(log, /BENCHGYM_APPLIED none/);
}

describe("swe-bench-java: a candidate patch that writes git's own files is refused (local, Docker, Kubernetes)", () => {
  let root: string;
  let fx: SwebenchFixture;
  before(async () => {
    root = await tempDir('benchgym-swebench-gitdir-');
    fx = await buildSwebenchFixture(root);
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  const registryFor = () => {
    const registry = new SuiteRegistry(builtinSuites({ reposDir: fx.reposDir }));
    registry.enable(`swe-bench-java=${fx.dataset}`);
    return registry;
  };

  const local =
    'benchgym score (local): a hook and config planted through the patch --fuzz fallback: refused, no hook run, ' +
    'not resolved: the patch did not apply (an error of the harness, counted apart from infrastructure errors)';
  test(local, { timeout: 15 * 60_000 }, async () => {
    const predictions = path.join(root, 'all_preds.jsonl');
    await fs.writeFile(
      predictions,
      JSON.stringify({ instance_id: fx.instanceId, model_patch: withPlantedHook(fx), model_name_or_path: 'm' }) + '\n',
    );
    const out = path.join(root, 'run-local');
    const r = await runCli(
      [
        'score',
        '--suite',
        'swe-bench-java',
        '--dataset',
        fx.dataset,
        '--repos-dir',
        fx.reposDir,
        '--predictions',
        predictions,
        '--out',
        out,
      ].concat(['--data-dir', path.join(root, 'data-dir')]),
    );
    assert.equal(r.code, 0, r.stderr);
    const results = JSON.parse(await fs.readFile(path.join(out, 'results.json'), 'utf8'));
    // Refused, it is a patch that does not apply: the harness reports that as the instance's error (PATCH_APPLY_FAILED),
    // listed apart from infrastructure errors and counted in the headline's denominator.
    assert.deepEqual(
      [results.resolved_ids, results.unresolved_ids, results.error_ids, results.patch_apply_failed_ids],
      [[], [], [fx.instanceId], [fx.instanceId]],
      JSON.stringify(results),
    );
    const report = JSON.parse(await fs.readFile(path.join(out, 'logs', fx.instanceId, 'report.json'), 'utf8'))[fx.instanceId];
    assert.deepEqual(
      [report.resolved, report.patch_successfully_applied, report.error?.code],
      [false, false, 'PATCH_APPLY_FAILED'],
      JSON.stringify(report),
    );
    assertRefused(report.notes, await fs.readFile(path.join(out, 'logs', fx.instanceId, 'test_output.txt'), 'utf8'));
  });

  test('gym.score (docker): the same patch is refused the same way', { timeout: 20 * 60_000 }, async (t) => {
    const skip = await dockerSkipReason();
    if (skip) return t.skip(skip);
    const sandboxes = new DockerSandboxFactory({
      serverId: `test-gitdir-${randomBytes(4).toString('hex')}`,
      images: { cacheDir: TEST_CACHE_DIR },
    });
    const { gym, cleanup } = await makeGym({ registry: registryFor(), sandboxes });
    try {
      const task = await gym.registry.task('swe-bench-java', fx.instanceId);
      const v = await gym.score(task, withPlantedHook(fx));
      const seen = JSON.stringify({ reward: v.reward, status: v.status, notes: v.notes, error: v.error });
      assert.deepEqual([v.reward, v.status, v.error], [0, 'failed', undefined], seen);
      assertRefused(v.notes, await fs.readFile(v.logRef!, 'utf8'));
    } finally {
      await cleanup();
    }
  });

  test('gym.score (kubernetes): the same patch is refused the same way', { timeout: 20 * 60_000 }, async (t) => {
    const skip = await kubernetesSkipReason();
    if (skip) return t.skip(skip);
    const { gym, cleanup } = await makeGym({ registry: registryFor(), sandboxes: testFactory({ images: { cacheDir: TEST_CACHE_DIR } }) });
    try {
      const task = await gym.registry.task('swe-bench-java', fx.instanceId);
      const v = await gym.score(task, withPlantedHook(fx));
      const seen = JSON.stringify({ reward: v.reward, status: v.status, notes: v.notes, error: v.error });
      assert.deepEqual([v.reward, v.status, v.error], [0, 'failed', undefined], seen);
      assertRefused(v.notes, await fs.readFile(v.logRef!, 'utf8'));
    } finally {
      await cleanup();
    }
  });
});
