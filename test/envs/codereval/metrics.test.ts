import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  accAtK,
  annotateCoderEvalResult,
  containsToken,
  oracleContextAccAtK,
  oracleContextTokens,
  runnableLevelSplits,
  standaloneOf,
  summarizeCoderEval,
  type CoderEvalOutcome,
} from '../../../envs/codereval/metrics.ts';
import { pythonTask } from '../../helpers.ts';

describe('Acc@k (CoderEval §4.3)', () => {
  test('a unit counts when at least one of its first k samples hits; later samples do not count', () => {
    const hits = [
      [false, false, true],
      [true, false, false],
      [false, false, false],
      [false, true],
    ];
    assert.equal(accAtK(hits, 1), 1 / 4);
    assert.equal(accAtK(hits, 2), 2 / 4);
    // The 2-sample unit is left out of k = 3.
    assert.equal(accAtK(hits, 3), 2 / 3);
    assert.equal(accAtK([[false]], 2), undefined);
  });

  test('oracle_context tokens are found as whole identifiers in the samples', () => {
    const tokens = ['Time', 'FixedOffset', 'divmod', 'zone.localize'];
    const samples = ['t = Time(h, m, s)\nreturn t', 'from pytz import FixedOffset\nh, r = divmod(x, 60)\nreturn zone.localize(t)'];
    assert.equal(oracleContextAccAtK(tokens, samples, 1), 1 / 4);
    assert.equal(oracleContextAccAtK(tokens, samples, 2), 1);
    assert.equal(containsToken('TimeZone()', 'Time'), false);
    assert.equal(containsToken('x = Time.now()', 'Time'), true);
  });

  test('Acc@k from the oracle_context hits the runner records', () => {
    const records: CoderEvalOutcome[] = [
      { task: 'a', sample: 0, status: 'failed', infra: false, oracleContext: { apis: [true, false], vars: [false] } },
      { task: 'a', sample: 1, status: 'passed', infra: false, oracleContext: { apis: [false, true], vars: [false] } },
    ];
    const s = summarizeCoderEval(records);
    assert.equal(s.accAtK?.[1]?.apis?.value, 0.5);
    assert.equal(s.accAtK?.[2]?.apis?.value, 1);
    assert.equal(s.accAtK?.[2]?.vars?.value, 0);
    assert.equal(s.accAtK?.[2]?.all?.value, 2 / 3);
  });

  test(
    'Acc@k: a sample that left no code, or ended in an infrastructure failure, ' +
      'is a sample that hit no token (excludeErrors leaves the errors out)',
    () => {
      const records: CoderEvalOutcome[] = [
        { task: 'a', sample: 0, status: 'error', infra: true },
        { task: 'a', sample: 1, status: 'failed', infra: false },
        { task: 'a', sample: 2, status: 'passed', infra: false, oracleContext: { apis: [true] } },
      ];
      const counted = summarizeCoderEval(records, { ks: [1, 2, 3] }).accAtK!;
      assert.deepEqual(
        [counted[1]?.apis?.value, counted[2]?.apis?.value, counted[3]?.apis?.value],
        [0, 0, 1],
        'the first two samples hit nothing',
      );
      assert.ok(Math.abs(summarizeCoderEval(records).passAtK[1]!.estimate - 1 / 3) < 1e-12);
      const old = summarizeCoderEval(records, { ks: [1, 2], excludeErrors: true });
      assert.deepEqual([old.accAtK?.[1]?.apis?.value, old.accAtK?.[2]?.apis?.value], [0, 1], 'two samples: the error left out');
      assert.equal(old.passAtK[1]?.estimate, 0.5);
    },
  );
});

describe('the oracle_context hits the runner records (annotateCoderEvalResult)', () => {
  test('oracle_context as CoderEval stores it (JSON strings per category) is checked against the added lines', () => {
    // Each list is itself a JSON string, inside a JSON string.
    const codereval = JSON.stringify({ apis: JSON.stringify(['divmod', 'FixedOffset']), classes: JSON.stringify(['Time']), vars: '[]' });
    assert.deepEqual(oracleContextTokens(codereval), { apis: ['divmod', 'FixedOffset'], classes: ['Time'] });
    assert.deepEqual(oracleContextTokens(['a', 'b']), { tokens: ['a', 'b'] });
    assert.equal(oracleContextTokens(undefined), undefined);
    const task = pythonTask({ files: { 'a.py': '' }, metadata: { oracle_context: codereval } });
    const diff = [
      '--- a/t.py',
      '+++ b/t.py',
      '@@ -1,2 +1,3 @@',
      '-    return Time(0)',
      '+    h, m = divmod(x, 60)',
      '+    return TimeZone(h)',
    ].join('\n');
    assert.deepEqual(
      annotateCoderEvalResult(task, { diff })?.oracleContext,
      { apis: [true, false], classes: [false] },
      'removed lines and longer identifiers do not count',
    );
    assert.equal(annotateCoderEvalResult(pythonTask({ files: { 'a.py': '' } }), { diff })?.oracleContext, undefined);
  });

  test('nothing is recorded without a diff', () => {
    const task = pythonTask({ files: { 'a.py': '' }, metadata: { oracle_context: { APIInvocation: ['divmod'] } } });
    assert.equal(annotateCoderEvalResult(task, { diff: undefined }), undefined);
    assert.deepEqual(annotateCoderEvalResult(task, { diff: '+++ b/a.py\n+divmod(1, 2)' }), { oracleContext: { APIInvocation: [true] } });
  });
});

describe("CoderEval's splits: Acc@k per token category, by runnable level and standalone", () => {
  // Hand-made: task s (self_contained) has 1 TypeReference token hit by sample 1 only and 1
  // APIInvocation token hit by sample 0; task f (file_runnable) has 2 VarReference tokens, one
  // never hit and one hit by sample 1, and 1 APIInvocation token never hit.
  const records: CoderEvalOutcome[] = [
    {
      task: 's',
      sample: 0,
      status: 'passed',
      infra: false,
      metadata: { level: 'self_contained' },
      oracleContext: { TypeReference: [false], APIInvocation: [true] },
    },
    {
      task: 's',
      sample: 1,
      status: 'failed',
      infra: false,
      metadata: { level: 'self_contained' },
      oracleContext: { TypeReference: [true], APIInvocation: [false] },
    },
    {
      task: 'f',
      sample: 0,
      status: 'failed',
      infra: false,
      metadata: { level: 'file_runnable' },
      oracleContext: { VarReference: [false, false], APIInvocation: [false] },
    },
    {
      task: 'f',
      sample: 1,
      status: 'failed',
      infra: false,
      metadata: { level: 'file_runnable' },
      oracleContext: { VarReference: [false, true], APIInvocation: [false] },
    },
    { task: 'x', sample: 0, status: 'failed', infra: false, metadata: {} },
    { task: 'x', sample: 1, status: 'failed', infra: false, metadata: {} },
  ];

  test('standaloneOf reads the runnable level', () => {
    assert.equal(standaloneOf({ level: 'slib_runnable' }), 'standalone');
    assert.equal(standaloneOf({ level: 'plib_runnable' }), 'non-standalone');
    assert.equal(standaloneOf({ level: 'somewhere' }), '(none)');
    assert.equal(standaloneOf(undefined), '(none)');
  });

  test('per category over all tasks: the known shares of tokens hit within the first k samples', () => {
    const acc = summarizeCoderEval(records, { ks: [1, 2] }).accAtK!;
    assert.deepEqual(Object.fromEntries(Object.entries(acc[1]!).map(([c, v]) => [c, [v.value, v.tokens]])), {
      TypeReference: [0, 1],
      APIInvocation: [0.5, 2],
      VarReference: [0, 2],
      all: [0.2, 5],
    });
    assert.deepEqual(Object.fromEntries(Object.entries(acc[2]!).map(([c, v]) => [c, v.value])), {
      TypeReference: 1,
      APIInvocation: 0.5,
      VarReference: 0.5,
      all: 0.6,
    });
  });

  test("by level (in the paper's order) and standalone vs non-standalone, each with pass@k and Acc@k", () => {
    const { byLevel, byStandalone } = runnableLevelSplits(records, { ks: [1, 2] });
    assert.deepEqual(
      byLevel.map((g) => g.value),
      ['self_contained', 'file_runnable', '(none)'],
    );
    const self = byLevel[0]!.summary;
    assert.equal(self.passAtK[1]?.estimate, 0.5);
    assert.equal(self.accAtK?.[2]?.TypeReference?.value, 1);
    assert.equal(self.accAtK?.[1]?.APIInvocation?.value, 1);
    const file = byLevel[1]!.summary;
    assert.equal(file.passAtK[2]?.estimate, 0);
    assert.equal(file.accAtK?.[2]?.VarReference?.value, 0.5);
    assert.equal(file.accAtK?.[2]?.APIInvocation?.value, 0);
    assert.equal(byLevel[2]!.summary.accAtK, undefined, 'tasks without oracle_context have no Acc@k');
    assert.deepEqual(
      byStandalone.map((g) => [g.value, g.summary.tasks]),
      [
        ['standalone', 1],
        ['non-standalone', 1],
        ['(none)', 1],
      ],
    );
    assert.equal(byStandalone[0]!.summary.accAtK?.[2]?.all?.value, 1);
    assert.equal(byStandalone[1]!.summary.accAtK?.[2]?.all?.value, 1 / 3);
  });
});
