import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tempDir } from '../../helpers.ts';
import { runCli } from '../../cli/cli.ts';
import { buildSwebenchFixture, type SwebenchFixture } from './fixture.ts';

/**
 * `benchgym score --suite swe-bench-java`: predictions in the harness's format replayed,
 * results.json in the harness's run-report shape, logs per instance. One mvn run (the gold
 * patch); the empty, unappliable and unknown predictions are decided before any build.
 */
describe('swe-bench-java: benchgym score replays all_preds.jsonl', () => {
  let root: string;
  let fx: SwebenchFixture;
  before(async () => {
    root = await tempDir('benchgym-swebench-replay-');
    fx = await buildSwebenchFixture(root);
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  test(
    "results.json: resolved, empty, unappliable (the harness's error), cannot-fail " +
      '(apart) and unknown ids; per-instance report.json, patch.diff, test_output.txt',
    { timeout: 30 * 60_000 },
    async () => {
      // Four instances of the fixture under different ids; calc-10 lists a class that passes before any fix among its FAIL_TO_PASS.
      const row = JSON.parse((await fs.readFile(fx.dataset, 'utf8')).trim());
      const dataset = path.join(root, 'data', 'four.jsonl');
      const ids = ['acme__calc-10', 'acme__calc-7', 'acme__calc-8', 'acme__calc-9'];
      const calc = 'core:com.acme.core.CalcTest';
      const cannotFail = {
        ...row,
        instance_id: 'acme__calc-10',
        FAIL_TO_PASS: JSON.stringify([...JSON.parse(row.FAIL_TO_PASS), calc]),
        PASS_TO_PASS: JSON.stringify(JSON.parse(row.PASS_TO_PASS).filter((t: string) => t !== calc)),
      };
      await fs.writeFile(
        dataset,
        [cannotFail, ...ids.slice(1).map((id) => ({ ...row, instance_id: id }))].map((r) => JSON.stringify(r)).join('\n') + '\n',
      );
      const predictions = path.join(root, 'all_preds.jsonl');
      const noApply = fx.goldPatch.replace(/split\(" "\)/g, 'split("nothing like this")');
      await fs.writeFile(
        predictions,
        [
          { instance_id: 'acme__calc-7', model_patch: 'an earlier line for the same instance is replaced', model_name_or_path: 'm' },
          { instance_id: 'acme__calc-7', model_patch: fx.goldPatch, model_name_or_path: 'm' },
          { instance_id: 'acme__calc-8', model_patch: '', model_name_or_path: 'm' },
          { instance_id: 'acme__calc-9', model_patch: noApply, model_name_or_path: 'm' },
          { instance_id: 'nobody__else-1', model_patch: fx.goldPatch, model_name_or_path: 'm' },
          { instance_id: 'acme__calc-10', model_patch: fx.goldPatch, model_name_or_path: 'm' },
        ]
          .map((r) => JSON.stringify(r))
          .join('\n') + '\n',
      );
      const out = path.join(root, 'run');
      // Four Maven runs (calc-7's gold, calc-10's gold and start state): minutes on a loaded machine.
      const r = await runCli(
        [
          'score',
          '--suite',
          'swe-bench-java',
          '--dataset',
          dataset,
          '--repos-dir',
          fx.reposDir,
          '--predictions',
          predictions,
          '--out',
          out,
          '--data-dir',
          path.join(root, 'data-dir'),
        ],
        15 * 60_000,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /swe-bench-java: 2\/4 resolved \(4 submitted, 2 completed, 1 empty, 1 errors \(1 patches that do not apply\), 1 unknown ids\)/,
      );
      // calc-10's resolution is apart: in neither figure; calc-9's patch that does not apply is a completed, unresolved instance in the
      // second.
      assert.match(
        r.stdout,
        new RegExp(
          String.raw`\nresolved: 33\.3% of the 3 instances; 50\.0% of the 2 completed \(1 whose patch does not apply among ` +
            String.raw`them\); 1 resolved apart: FAIL_TO_PASS tests that cannot fail \(CANNOT_FAIL\)\n`,
        ),
      );
      assert.match(
        r.stdout,
        new RegExp(
          String.raw`\n {2}CANNOT_FAIL acme__calc-10: CANNOT_FAIL: 1 FAIL_TO_PASS test\(s\) already pass on the untouched ` +
            String.raw`start state .*core:com\.acme\.core\.CalcTest`,
        ),
      );
      const results = JSON.parse(await fs.readFile(path.join(out, 'results.json'), 'utf8'));
      assert.deepEqual(results, {
        total_instances: 4,
        submitted_instances: 4,
        completed_instances: 2,
        resolved_instances: 2,
        unresolved_instances: 0,
        empty_patch_instances: 1,
        error_instances: 1,
        completed_ids: ['acme__calc-10', 'acme__calc-7'],
        incomplete_ids: ['acme__calc-8', 'acme__calc-9'],
        empty_patch_ids: ['acme__calc-8'],
        submitted_ids: ids,
        resolved_ids: ['acme__calc-10', 'acme__calc-7'],
        unresolved_ids: [],
        error_ids: ['acme__calc-9'],
        unknown_ids: ['nobody__else-1'],
        patch_apply_failed_ids: ['acme__calc-9'],
        cannot_fail_ids: ['acme__calc-10'],
        strict_checked_ids: [],
        strict_differs_ids: [],
        schema_version: 2,
      });
      const report = JSON.parse(await fs.readFile(path.join(out, 'logs', 'acme__calc-7', 'report.json'), 'utf8'))['acme__calc-7'];
      assert.equal(report.resolved, true);
      assert.equal(report.patch_successfully_applied, true);
      assert.deepEqual(report.tests_status.FAIL_TO_PASS, { success: fx.failToPass, failure: [] });
      assert.equal(await fs.readFile(path.join(out, 'logs', 'acme__calc-7', 'patch.diff'), 'utf8'), fx.goldPatch);
      assert.match(
        await fs.readFile(path.join(out, 'logs', 'acme__calc-7', 'test_output.txt'), 'utf8'),
        /BENCHGYM_APPLIED git apply[\s\S]*mvn -o/,
      );
      const failed = JSON.parse(await fs.readFile(path.join(out, 'logs', 'acme__calc-9', 'report.json'), 'utf8'))['acme__calc-9'];
      assert.equal(failed.patch_successfully_applied, false);
      assert.equal(failed.resolved, false);
      assert.ok(failed.notes.some((n: string) => /PATCH_APPLY_FAILED/.test(n)));
      assert.equal(failed.error.code, 'PATCH_APPLY_FAILED', 'the harness reports it as an error');

      // Resumable: a second run into the same OUT scores nothing already complete (no mvn run).
      const testOutput = path.join(out, 'logs', 'acme__calc-7', 'test_output.txt');
      const before = (await fs.stat(testOutput)).mtimeMs;
      const args = [
        'score',
        '--suite',
        'swe-bench-java',
        '--dataset',
        dataset,
        '--repos-dir',
        fx.reposDir,
        '--predictions',
        predictions,
        '--out',
        out,
        '--data-dir',
        path.join(root, 'data-dir'),
      ];
      const again = await runCli(args);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stderr, /resolved {4}acme__calc-7 \(resumed: report\.json of an earlier run\)/);
      assert.match(again.stdout, /3 resumed from the reports of an earlier run/);
      assert.deepEqual(JSON.parse(await fs.readFile(path.join(out, 'results.json'), 'utf8')), results);
      assert.equal((await fs.stat(testOutput)).mtimeMs, before, 'the resumed instance was scored again');

      // Killed while scoring acme__calc-9: its report.json never written. It alone is scored again.
      await fs.rm(path.join(out, 'logs', 'acme__calc-9', 'report.json'));
      const resumed = await runCli(args);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stderr, /patch does not apply acme__calc-9 \(\d+\.\d s\)/);
      assert.match(resumed.stdout, /2 resumed from the reports of an earlier run/);
      assert.deepEqual(JSON.parse(await fs.readFile(path.join(out, 'results.json'), 'utf8')), results);

      // Another patch for the same instance, or --rescore: scored again.
      const other = path.join(root, 'other_preds.jsonl');
      await fs.writeFile(
        other,
        JSON.stringify({ instance_id: 'acme__calc-9', model_patch: `${noApply}\n`, model_name_or_path: 'm' }) + '\n',
      );
      const changed = await runCli(args.map((a) => (a === predictions ? other : a)).concat(['--tasks', 'acme__calc-9']));
      assert.match(changed.stderr, /patch does not apply acme__calc-9 \(\d+\.\d s\)/, changed.stderr);
      const rescored = await runCli([...args, '--tasks', 'acme__calc-9', '--rescore']);
      assert.match(rescored.stderr, /patch does not apply acme__calc-9 \(\d+\.\d s\)/, rescored.stderr);
      assert.doesNotMatch(rescored.stdout, /resumed/);
    },
  );

  test('bad predictions and options are named', async () => {
    const predictions = path.join(root, 'bad.jsonl');
    await fs.writeFile(predictions, '{"model_patch": ""}\n');
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
      path.join(root, 'bad'),
      '--data-dir',
      path.join(root, 'data-dir'),
    ]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /bad\.jsonl:1: invalid prediction: 'instance_id'/);
    const noRepos = await runCli([
      'score',
      '--suite',
      'swe-bench-java',
      '--dataset',
      fx.dataset,
      '--repos-dir',
      path.join(root, 'nowhere'),
      '--predictions',
      predictions,
    ]);
    assert.match(noRepos.stderr, /invalid --repos-dir: .*nowhere does not exist/);
  });
});
