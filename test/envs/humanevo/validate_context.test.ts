/**
 * `benchgym validate --context ignored`: HumanEvo's evolving-ignored start state validated the
 * way an agent's work there is scored (an episode in that context, submitted untouched and
 * with the reference written in, the target carried into the aware start state).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { humanevoSuite } from '../../../envs/humanevo/index.ts';
import type { Gym } from '../../../src/episode/gym.ts';
import { validateTask } from '../../../src/scoring/validate.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym } from '../../helpers.ts';
import { runCli } from '../../cli/cli.ts';
import { buildFixture, type BuiltFixture } from './setup.ts';

let f: BuiltFixture;
let gym: Gym;
let cleanup: () => Promise<void>;

before(async () => {
  f = await buildFixture('python');
  const registry = new SuiteRegistry([humanevoSuite()]);
  registry.enable(`humanevo=${f.file}`);
  ({ gym, cleanup } = await makeGym({ registry }));
});
after(async () => {
  await cleanup?.();
  await f?.cleanup();
});

test('validate --context ignored: each task offering it valid there, the rest listed; --out resumes per context', async () => {
  const tasks = await gym.registry.tasks('humanevo');
  const withIgnored = tasks
    .filter((t) => t.contexts.ignored)
    .map((t) => t.id)
    .sort();
  assert.ok(withIgnored.length >= 2, 'the fixture offers the ignored context for most of its tasks');
  const out = path.join(f.dir, 'validation.jsonl');
  const dataDir = path.join(f.dir, 'data');
  const args = ['validate', '--suite', `humanevo=${f.file}`, '--concurrency', '1', '--out', out, '--data-dir', dataDir];
  const first = await runCli([...args, '--context', 'ignored', '--json']);
  assert.equal(first.code, 0, first.stderr);
  const report = JSON.parse(first.stdout);
  assert.equal(report.context, 'ignored');
  assert.deepEqual(report.results.map((r: { taskId: string }) => r.taskId).sort(), withIgnored);
  assert.deepEqual(
    report.withoutContext.sort(),
    tasks
      .filter((t) => !t.contexts.ignored)
      .map((t) => t.id)
      .sort(),
  );
  for (const r of report.results) {
    assert.equal(r.status, 'valid', `${r.taskId}: ${r.reasons.join('; ')}`);
    assert.equal(r.context, 'ignored');
    assert.equal(r.startState.reward, 0);
    assert.equal(r.gold.reward, 1);
    assert.ok(
      r.gold.notes.some((n: string) => /ignored/.test(n)),
      `the verdict says the work was carried from the ignored context: ${r.gold.notes.join('; ')}`,
    );
  }
  // The aware results are not in the file yet: validated now; the ignored ones are resumed.
  const aware = await runCli(args);
  assert.equal(aware.code, 0, aware.stderr);
  assert.doesNotMatch(aware.stderr, /resumed from/);
  const again = await runCli([...args, '--context', 'ignored']);
  assert.equal(again.code, 0, again.stderr);
  assert.equal((again.stderr.match(/resumed from/g) ?? []).length, withIgnored.length);
  assert.match(again.stdout, /humanevo \[ignored\]: (\d+)\/\1 valid \(100\.0%\); 0 invalid/);
  const lines = (await fs.readFile(out, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { context?: string });
  assert.equal(lines.filter((l) => l.context === 'ignored').length, withIgnored.length);
  assert.equal(lines.filter((l) => l.context === undefined).length, tasks.length);
  const unknown = await runCli([...args, '--context', 'future']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /--context: no task offers a 'future' start state .*aware, ignored/);
});

test('a reference that does not solve the task is invalid in the ignored context too', async () => {
  const task = (await gym.registry.tasks('humanevo')).find((t) => t.contexts.ignored)!;
  const file = String(task.metadata.targetFile);
  // The reference replaced by the aware start state's file: the target stubbed, nothing solved.
  assert.equal(task.workspace.type, 'dir');
  const stub = await fs.readFile(path.join((task.workspace as { path: string }).path, file), 'utf8');
  assert.match(stub, /raise NotImplementedError/);
  // And the reference as written in the ignored start state: its own stubbed file.
  const ignored = task.contexts.ignored!;
  const ignoredFile = String(task.metadata.ignoredTargetFile ?? file);
  const ignoredStub = await fs.readFile(path.join((ignored.workspace as { path: string }).path, ignoredFile), 'utf8');
  const stubbed = {
    ...task,
    solution: { files: { [file]: stub } },
    contexts: { ...task.contexts, ignored: { ...ignored, solution: { files: { [ignoredFile]: ignoredStub } } } },
  };
  const v = await validateTask(gym, stubbed, { context: 'ignored' });
  assert.equal(v.context, 'ignored');
  assert.equal(v.status, 'invalid', JSON.stringify(v));
  assert.match(v.reasons.join('; '), /the gold solution fails/);
  const none = await validateTask(
    gym,
    (await gym.registry.tasks('humanevo')).find((t) => !t.contexts.ignored) ?? { ...task, contexts: {} },
    { context: 'ignored' },
  );
  assert.equal(none.status, 'error');
  assert.match(none.reasons[0]!, /has no 'ignored' start state/);
});
