/**
 * CoderEval's report section (Acc@k per oracle_context category, §4.3) on hand-made runs, and
 * where the suites' sections sit among the core's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { coderevalReportSections } from '../../../envs/codereval/report.ts';
import { humanevoReportSections } from '../../../envs/humanevo/report.ts';
import { loadRuns, renderHtml, renderMarkdown, reportData, writeReport } from '../../../src/runner/report.ts';
import type { ResultRecord } from '../../../src/runner/results.ts';
import { tempDir } from '../../helpers.ts';
import { resultLine, writeRunDir } from '../../runner/run_dir.ts';

type Line = ResultRecord & { oracleContext?: Record<string, boolean[]> };

function line(
  agent: string,
  task: string,
  sample: number,
  passed: boolean,
  metadata: Record<string, string>,
  extra: Partial<Line> = {},
): Line {
  return resultLine({
    suite: 'codereval',
    task,
    sample,
    agent,
    model: 'm',
    status: passed ? 'passed' : 'failed',
    metadata: { language: 'python', kind: 'function', ...metadata },
    steps: 2,
    ...extra,
  });
}

// APIInvocation: a's first token hit by sample 0 only, a's second and c's never: 1/3 at k = 1 and 2.
// TypeReference: b's one token hit by sample 1 only: 0 at k = 1, 1 at k = 2. All four: 1/4, 2/4.
const CODEREVAL: Line[] = [
  line('a', 'a', 0, true, { level: 'self_contained' }, { oracleContext: { APIInvocation: [true, false] }, rounds: 1, passedRound: 1 }),
  line('a', 'a', 1, false, { level: 'self_contained' }, { oracleContext: { APIInvocation: [false, false] }, rounds: 2 }),
  line('a', 'b', 0, false, { level: 'self_contained' }, { oracleContext: { TypeReference: [false] }, rounds: 2 }),
  line('a', 'b', 1, true, { level: 'self_contained' }, { oracleContext: { TypeReference: [true] }, rounds: 2, passedRound: 2 }),
  line('a', 'c', 0, false, { level: 'file_runnable' }, { oracleContext: { APIInvocation: [false] }, rounds: 2 }),
  line('a', 'c', 1, false, { level: 'file_runnable' }, { oracleContext: { APIInvocation: [false] }, rounds: 2 }),
];

let root: string;
let coderevalDir: string;
let plainDir: string;
let humanevoDir: string;
before(async () => {
  root = await tempDir('benchgym-codereval-report-');
  coderevalDir = path.join(root, 'codereval');
  plainDir = path.join(root, 'plain');
  humanevoDir = path.join(root, 'humanevo');
  await writeRunDir(coderevalDir, CODEREVAL);
  await writeRunDir(
    plainDir,
    CODEREVAL.map(({ oracleContext: _, ...l }) => l),
  );
  await writeRunDir(
    humanevoDir,
    ['p1', 'p2'].map((t, i) =>
      line(
        'b',
        t,
        0,
        i === 0,
        { context: i ? 'aware' : 'ignored', promptVariant: 'default', dependencyLevel: 'standalone' },
        { suite: 'humanevo' },
      ),
    ),
  );
});
after(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

test('Acc@k per oracle_context category and over all tokens, at the k the report shows, in Markdown and HTML', async () => {
  const { md, html } = await writeReport([coderevalDir], path.join(root, 'one'), { sections: coderevalReportSections });
  const text = await fs.readFile(md, 'utf8');
  assert.ok(
    text.includes(
      [
        '## Acc@k (CoderEval)',
        '',
        '| run | oracle_context category | Acc@1 | Acc@2 | tokens |',
        '|---|---|---|---|---|',
        '| a · m | APIInvocation | 33.3% | 33.3% | 3 |',
        '| a · m | TypeReference | 0.0% | 100.0% | 1 |',
        '| a · m | all | 25.0% | 50.0% | 4 |',
        '',
        'Acc@k (CoderEval §4.3): the share of oracle_context tokens that appear in ' +
          'the code added by at least one of the first k samples, per token category; ' +
          'a sample that left no code (or ended in an infrastructure failure before any) hits no token.',
        '',
      ].join('\n'),
    ),
    text,
  );
  const page = await fs.readFile(html, 'utf8');
  assert.match(page, /<h2>Acc@k \(CoderEval\)<\/h2><div class="scroll"><table><thead><tr><th>run<\/th><th>oracle_context category<\/th>/);
  assert.match(
    page,
    /<td>a · m<\/td><td class="num">all<\/td><td class="num">25\.0%<\/td><td class="num">50\.0%<\/td><td class="num">4<\/td>/,
  );
});

test('runs without oracle_context get the note saying why there is no Acc@k', async () => {
  const data = reportData(await loadRuns([plainDir]));
  assert.match(
    renderMarkdown(data, coderevalReportSections),
    new RegExp(
      String.raw`## Acc@k \(CoderEval\)\n\nNot available: Acc@k counts oracle_context tokens \(CoderEval §4\.3\), ` +
        'and these tasks carry no `oracle_context` ' +
        String.raw`metadata\.\n`,
    ),
  );
  assert.match(
    renderHtml(data, coderevalReportSections),
    /<h2>Acc@k \(CoderEval\)<\/h2><p class="note">Not available: .*<code>oracle_context<\/code> metadata\.<\/p>/,
  );
  assert.doesNotMatch(renderMarkdown(data), /Acc@k/, 'without the section the core says nothing of Acc@k');
});

test("the suites' sections sit where they ask: HumanEvo's after the breakdowns, CoderEval's after the feedback rounds", async () => {
  const data = reportData(await loadRuns([coderevalDir, humanevoDir]));
  const sections = [...coderevalReportSections, ...humanevoReportSections];
  for (const text of [renderMarkdown(data, sections), renderHtml(data, sections)]) {
    const at = (heading: string) => {
      const i = text.search(new RegExp(`(## |<h2>)${heading.replace(/[()]/g, '\\$&')}`));
      assert.ok(i >= 0, `${heading} is in the report`);
      return i;
    };
    const order = [
      'By level',
      'Evolving-aware vs evolving-ignored (HumanEvo)',
      'Feedback rounds',
      'Acc@k (CoderEval)',
      'Infrastructure failures',
    ].map(at);
    assert.deepEqual(
      [...order].sort((x, y) => x - y),
      order,
      'in this order',
    );
  }
});
