import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { git } from '../../../src/repo/index.ts';
import { CgroupDriver } from '../../../src/sandbox/local/cgroup.ts';
import { tempDir } from '../../helpers.ts';
import { runCli } from '../../cli/cli.ts';
import { buildSwebenchFixture, type SwebenchFixture } from './fixture.ts';

/**
 * A test run killed by the sandbox's memory limit: a candidate's patch is unresolved with an
 * OOM_KILLED note (its code outgrew the memory the task allows, which the gold fits in; an
 * infrastructure failure would let a patch leave the denominator by exhausting memory), and when
 * it is the instance's gold, `validate` reports an infrastructure error (never `invalid`). The fixture's gold patch plus a class
 * initialiser in
 * `Words` that starts a process growing past the local sandbox's default 2 GiB and fails the
 * class when it is killed (the cgroup's OOM count goes up: the local backend's mark on the run's result).
 */
const driver = await CgroupDriver.detect();
const noMemoryLimit = !driver
  ? 'no writable cgroups on this machine: the local sandbox has no memory limit to hit'
  : !driver.limitsMemory
    ? 'the memory cgroup controller is not delegated here: the local sandbox has no memory limit to hit'
    : false;

const HOG = `  // Grows a process past the sandbox's memory limit (tail keeps a line without an end in memory).
  static {
    try {
      int rc = new ProcessBuilder("sh", "-c", "head -c 3500m /dev/zero | tail > /dev/null").inheritIO().start().waitFor();
      // Killed by the limit, the class cannot load: every listed test fails.
      if (rc != 0) throw new IllegalStateException("the memory hog ended with exit " + rc);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
`;

/** The gold patch with the memory hog added to the class every listed test loads. */
async function oomPatch(fx: SwebenchFixture): Promise<string> {
  const scratch = `${fx.origin}-oom`;
  await git(['clone', '-q', fx.origin, scratch]);
  try {
    await git(['checkout', '-q', fx.fix], { cwd: scratch });
    const file = path.join(scratch, 'core/src/main/java/com/acme/core/Words.java');
    const text = await fs.readFile(file, 'utf8');
    assert.ok(text.includes('  private Words() {}\n'));
    await fs.writeFile(file, text.replace('  private Words() {}\n', `  private Words() {}\n\n${HOG}`));
    return await git(['diff', fx.base, '--', 'core/src/main'], { cwd: scratch });
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

describe('swe-bench-java: a run killed by the memory limit', { skip: noMemoryLimit }, () => {
  let root: string;
  let fx: SwebenchFixture;
  let patch: string;
  before(async () => {
    root = await tempDir('benchgym-swebench-oom-');
    fx = await buildSwebenchFixture(root);
    patch = await oomPatch(fx);
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  test('score: unresolved with an OOM_KILLED note; as the gold, validate: error, not invalid', { timeout: 10 * 60_000 }, async () => {
    const row = JSON.parse((await fs.readFile(fx.dataset, 'utf8')).trim());
    const predictions = path.join(root, 'preds.jsonl');
    await fs.writeFile(predictions, JSON.stringify({ instance_id: fx.instanceId, model_patch: patch, model_name_or_path: 'hog' }) + '\n');
    const out = path.join(root, 'run');
    const dataDir = path.join(root, 'data-dir');
    const r = await runCli([
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
      '--data-dir',
      dataDir,
    ]);
    const results = JSON.parse(await fs.readFile(path.join(out, 'results.json'), 'utf8'));
    assert.deepEqual(
      { error: results.error_ids, unresolved: results.unresolved_ids, resolved: results.resolved_ids },
      { error: [], unresolved: [fx.instanceId], resolved: [] },
      `${r.stdout}\n${r.stderr}`,
    );
    const report = JSON.parse(await fs.readFile(path.join(out, 'logs', fx.instanceId, 'report.json'), 'utf8'))[fx.instanceId];
    assert.equal(report.resolved, false);
    assert.match(JSON.stringify(report), /OOM_KILLED: the test run was killed by the sandbox's memory limit/, JSON.stringify(report));

    // The same patch as the instance's gold: validate calls it an infrastructure error.
    const dataset = path.join(root, 'data', 'hog.jsonl');
    await fs.writeFile(dataset, JSON.stringify({ ...row, patch }) + '\n');
    const v = await runCli([
      'validate',
      '--suite',
      'swe-bench-java',
      '--dataset',
      dataset,
      '--repos-dir',
      fx.reposDir,
      '--data-dir',
      dataDir,
      '--json',
    ]);
    const rows = JSON.parse(v.stdout) as
      { taskId: string; status: string; reasons: string[] }[] | { results: { taskId: string; status: string; reasons: string[] }[] };
    const list = Array.isArray(rows) ? rows : rows.results;
    const mine = list.find((x) => x.taskId === fx.instanceId);
    assert.ok(mine, v.stdout);
    assert.equal(mine.status, 'error', JSON.stringify(mine));
    assert.match(mine.reasons.join('\n'), /gold: OOM_KILLED: the test run was killed by the sandbox's memory limit/);
  });
});
