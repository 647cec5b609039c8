/**
 * The aware vs ignored report on hand-made runs: one run directory per (model, setting,
 * docstring style), as `benchgym run --context ... --prompt-variant ...` writes them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { evolvingTables, humanevoReportSections } from '../../../envs/humanevo/report.ts';
import { writeReport } from '../../../src/runner/report.ts';
import type { ResultRecord } from '../../../src/runner/results.ts';
import { tempDir } from '../../helpers.ts';
import { resultLine, writeRunDir } from '../../runner/run_dir.ts';

interface Spec {
  model: string;
  context: 'aware' | 'ignored';
  variant: 'default' | 'brief';
  /** task → [language, level, passed] */
  outcomes: Record<string, ['python' | 'java', string, boolean]>;
}

function records(s: Spec): ResultRecord[] {
  return Object.entries(s.outcomes).map(([task, [language, level, passed]]) =>
    resultLine({
      runId: `${s.model}-${s.context}-${s.variant}`,
      suite: 'humanevo',
      task,
      sample: 0,
      agent: 'single-shot',
      model: s.model,
      status: passed ? 'passed' : 'failed',
      metadata: { language, kind: 'function', dependencyLevel: level, context: s.context, promptVariant: s.variant },
    }),
  );
}

// Model m: Python EI 3/4, aware 1/4; Java EI 1/2, aware 1/2. Brief: Python EI 2/4, aware 1/4.
const TASKS = {
  p1: ['python', 'standalone'],
  p2: ['python', 'intra-class'],
  p3: ['python', 'inter-class'],
  p4: ['python', 'inter-class'],
  j1: ['java', 'inter-class'],
  j2: ['java', 'intra-class'],
} as const;
function outcomes(passed: string[]): Spec['outcomes'] {
  return Object.fromEntries(Object.entries(TASKS).map(([t, [l, lv]]) => [t, [l, lv, passed.includes(t)]])) as Spec['outcomes'];
}
const SPECS: Spec[] = [
  { model: 'm', context: 'ignored', variant: 'default', outcomes: outcomes(['p1', 'p3', 'p4', 'j1']) },
  { model: 'm', context: 'aware', variant: 'default', outcomes: outcomes(['p1', 'j1']) },
  { model: 'm', context: 'ignored', variant: 'brief', outcomes: outcomes(['p1', 'p3']) },
  { model: 'm', context: 'aware', variant: 'brief', outcomes: outcomes(['p3']) },
];

test("Tables 2, 4, 5 and 6 in the paper's shape, with the relative change", () => {
  const t = evolvingTables(SPECS.flatMap(records))!;
  assert.deepEqual(t.table2, [
    ['Model', 'Python EI', 'Python HumanEvo', 'Java EI', 'Java HumanEvo'],
    ['m', '75.0%', '25.0% (↓66.7%)', '50.0%', '50.0%'],
  ]);
  assert.deepEqual(t.table5, [
    ['Dependency level', 'Model', 'Python EI', 'Python HumanEvo', 'Java EI', 'Java HumanEvo'],
    ['standalone', 'm', '100.0%', '100.0%', '—', '—'],
    ['intra-class', 'm', '0.0%', '0.0%', '0.0%', '0.0%'],
    ['inter-class', 'm', '100.0%', '0.0% (↓100.0%)', '100.0%', '100.0%'],
  ]);
  assert.deepEqual(t.table6.slice(1), [
    ['m', 'Detailed', '75.0%', '25.0% (↓66.7%)', '50.0%', '50.0%'],
    ['m', 'Brief', '50.0%', '25.0% (↓50.0%)', '0.0%', '0.0%'],
  ]);
  // EA✓EI✗: none; both: p1 (python), j1 (java); EI only: p3, p4.
  assert.deepEqual(t.table4.slice(1), [
    ['m', 'Python', '0', '1', '2', '4'],
    ['m', 'Java', '0', '1', '0', '2'],
  ]);
  assert.equal(evolvingTables(records(SPECS[0]!).map((r) => ({ ...r, metadata: { language: 'python' } }))), null);
});

test('benchgym report puts the tables in report.md and report.html when runs carry the settings', async () => {
  const root = await tempDir();
  const dirs: string[] = [];
  for (const s of SPECS) {
    const dir = path.join(root, `${s.context}-${s.variant}`);
    await writeRunDir(dir, records(s), { context: s.context, promptVariant: s.variant });
    dirs.push(dir);
  }
  const out = await writeReport(dirs, path.join(root, 'report'), { sections: humanevoReportSections });
  const md = await fs.readFile(out.md, 'utf8');
  assert.match(md, /## Evolving-aware vs evolving-ignored \(HumanEvo\)/);
  assert.match(md, /\| m \| 75\.0% \| 25\.0% \(↓66\.7%\) \| 50\.0% \| 50\.0% \|/);
  assert.match(md, /### Table 6: by docstring style/);
  assert.match(await fs.readFile(out.html, 'utf8'), /Table 5: by dependency level/);
  await fs.rm(root, { recursive: true, force: true });
});

test('a run asking for a context keeps the tasks that offer it', async () => {
  const { offering } = await import('../../../src/runner/selection.ts');
  const { TaskSchema } = await import('../../../src/tasks/schema.ts');
  const task = (id: string, contexts: string[]) =>
    TaskSchema.parse({
      id,
      suite: 'humanevo',
      language: 'python',
      kind: 'function',
      prompt: 'p',
      env: { kind: 'python' },
      workspace: { type: 'files', files: {} },
      defaultContext: 'aware',
      contexts: Object.fromEntries(contexts.map((c) => [c, { description: c, workspace: { type: 'files', files: {} } }])),
      tests: { hidden: { runner: { type: 'pytest' } } },
    });
  const tasks = [task('a', ['ignored']), task('b', [])];
  assert.deepEqual(
    offering(tasks, 'ignored', false).map((t) => t.id),
    ['a'],
  );
  assert.deepEqual(
    offering(tasks, 'aware', false).map((t) => t.id),
    ['a', 'b'],
  );
  assert.deepEqual(
    offering(tasks, undefined, false).map((t) => t.id),
    ['a', 'b'],
  );
  assert.throws(() => offering(tasks, 'ignored', true), /task 'b' does not offer it/);
  assert.throws(() => offering(tasks, 'future', false), /no task of the suite offers it/);
});

test('an infrastructure failure is a task not solved in every table (excludeErrors leaves it out)', () => {
  const line = (task: string, context: 'aware' | 'ignored', status: ResultRecord['status']) =>
    resultLine({
      suite: 'humanevo',
      task,
      sample: 0,
      agent: 'single-shot',
      model: 'm',
      status,
      ...(status === 'error' ? { infra: true } : {}),
      metadata: { language: 'python', kind: 'function', dependencyLevel: 'standalone', context, promptVariant: 'default' },
    });
  const results = [
    line('p1', 'ignored', 'passed'),
    line('p2', 'ignored', 'error'),
    line('p1', 'aware', 'passed'),
    line('p2', 'aware', 'passed'),
  ];
  const counted = evolvingTables(results)!;
  assert.deepEqual(counted.table2[1], ['m', '50.0%', '100.0% (↑100.0%)', '—', '—']);
  assert.deepEqual(counted.table4[1], ['m', 'Python', '1', '1', '0', '2'], 'p2: solved aware, not ignored (an error)');
  const old = evolvingTables(results, { excludeErrors: true })!;
  assert.deepEqual(old.table2[1], ['m', '100.0%', '100.0%', '—', '—']);
  assert.deepEqual(old.table4[1], ['m', 'Python', '0', '1', '0', '1']);
});
