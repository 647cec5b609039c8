import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bootstrapCI,
  breakdown,
  breakdownBy,
  breakdownKeys,
  firstKPassRate,
  groupBy,
  meanPassAtK,
  pairedBootstrapDiff,
  passAtK,
  percentile,
  resolvedRate,
  seededRandom,
  summarize,
  type OutcomeRecord,
} from '../../src/runner/metrics.ts';

/** The Codex paper's numpy code, transcribed: 1 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)). */
function codexNumpy(n: number, c: number, k: number): number {
  if (n - c < k) return 1.0;
  const arange: number[] = [];
  for (let i = n - c + 1; i < n + 1; i++) arange.push(i);
  return 1 - arange.map((x) => 1.0 - k / x).reduce((a, b) => a * b, 1);
}

function combBig(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let r = 1n;
  for (let i = 1; i <= k; i++) r = (r * BigInt(n - k + i)) / BigInt(i);
  return r;
}

/** 1 - C(n-c, k) / C(n, k), exactly in integers, then one division. */
function combinatorial(n: number, c: number, k: number): number {
  const num = combBig(n - c, k);
  const den = combBig(n, k);
  // Scale before dividing so the ratio keeps ~15 significant digits.
  const scale = 10n ** 18n;
  return 1 - Number((num * scale) / den) / 1e18;
}

describe('pass@k', () => {
  test("agrees with the paper's numpy formula and with the combinatorial formula on 300 random (n, c, k)", () => {
    const random = seededRandom(20240229);
    const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
    for (let i = 0; i < 300; i++) {
      const n = int(1, 120);
      const c = int(0, n);
      const k = int(1, n);
      const got = passAtK(n, c, k)!;
      assert.ok(Math.abs(got - codexNumpy(n, c, k)) < 1e-12, `n=${n} c=${c} k=${k}: ${got} vs numpy ${codexNumpy(n, c, k)}`);
      assert.ok(Math.abs(got - combinatorial(n, c, k)) < 1e-9, `n=${n} c=${c} k=${k}: ${got} vs comb ${combinatorial(n, c, k)}`);
      assert.ok(got >= 0 && got <= 1);
    }
  });

  test('edge cases: c = 0, c = n, k = n, n < k', () => {
    for (const n of [1, 2, 5, 10, 200]) {
      for (const k of [1, 2, 5, 10].filter((k) => k <= n)) {
        assert.equal(passAtK(n, 0, k), 0, `c=0 n=${n} k=${k}`);
        assert.equal(passAtK(n, n, k), 1, `c=n n=${n} k=${k}`);
      }
      // k = n: 1 iff any sample passed.
      assert.equal(passAtK(n, 0, n), 0);
      for (const c of [1, Math.ceil(n / 2), n]) assert.equal(passAtK(n, c, n), 1);
    }
    assert.equal(passAtK(4, 2, 5), undefined, 'fewer samples than k: no estimate');
    assert.ok(Math.abs(passAtK(10, 3, 1)! - 0.3) < 1e-15, 'floating point, as numpy gives it');
    assert.ok(Math.abs(passAtK(10, 3, 5)! - (1 - 21 / 252)) < 1e-12);
    assert.throws(() => passAtK(3, 4, 1), RangeError);
    assert.throws(() => passAtK(3, 1, 0), RangeError);
  });

  test('pass@1 is the share of passing samples; the benchmark value averages tasks, skipping those with n < k', () => {
    const tasks = [
      { task: 'a', passed: [true, false, false, false] },
      { task: 'b', passed: [true, true, true, true] },
      { task: 'c', passed: [false] },
    ];
    assert.equal(meanPassAtK(tasks, 1), (0.25 + 1 + 0) / 3);
    // c has one sample: out of pass@2.
    assert.ok(Math.abs(meanPassAtK(tasks, 2)! - (passAtK(4, 1, 2)! + 1) / 2) < 1e-12);
    assert.equal(meanPassAtK(tasks, 10), undefined);
  });
});

describe('the first-k pass rate and the resolved rate', () => {
  test('firstKPassRate is the plain share of tasks with a pass in the first k samples', () => {
    const tasks = [
      { task: 'a', passed: [false, true] },
      { task: 'b', passed: [false, false] },
    ];
    assert.equal(firstKPassRate(tasks, 1), 0);
    assert.equal(firstKPassRate(tasks, 2), 0.5);
  });

  test('resolved rate: single-sample tasks with reward 1', () => {
    assert.equal(
      resolvedRate([
        { task: 'a', passed: [true] },
        { task: 'b', passed: [false] },
        { task: 'c', passed: [true] },
      ]),
      2 / 3,
    );
    assert.equal(resolvedRate([]), undefined);
  });
});

describe('bootstrap intervals', () => {
  const values = Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? 1 : i % 5 === 0 ? 0.5 : 0));

  test('contain the point estimate and are the same for the same seed', () => {
    const a = bootstrapCI(values, { seed: 7 })!;
    const b = bootstrapCI(values, { seed: 7 })!;
    assert.deepEqual(a, b);
    assert.ok(a.lo <= a.estimate && a.estimate <= a.hi, JSON.stringify(a));
    assert.ok(a.lo < a.hi);
    const other = bootstrapCI(values, { seed: 8 })!;
    assert.equal(other.estimate, a.estimate);
    assert.notDeepEqual([other.lo, other.hi], [a.lo, a.hi]);
    // A 99% interval is at least as wide.
    const wide = bootstrapCI(values, { seed: 7, confidence: 0.99 })!;
    assert.ok(wide.lo <= a.lo && wide.hi >= a.hi);
  });

  test('degenerate inputs', () => {
    assert.equal(bootstrapCI([]), undefined);
    assert.deepEqual(bootstrapCI([1, 1, 1]), { estimate: 1, lo: 1, hi: 1 });
    assert.equal(percentile([1, 2, 3, 4], 0.5), 2.5);
  });

  test('paired differences over the common tasks', () => {
    const a = new Map([
      ['t1', 0],
      ['t2', 1],
      ['t3', 0],
      ['only-a', 1],
    ]);
    const b = new Map([
      ['t1', 1],
      ['t2', 1],
      ['t3', 1],
      ['only-b', 0],
    ]);
    const d = pairedBootstrapDiff(a, b, { seed: 3 })!;
    assert.equal(d.tasks, 3);
    assert.ok(Math.abs(d.estimate - 2 / 3) < 1e-12);
    assert.ok(d.lo <= d.estimate && d.estimate <= d.hi);
  });
});

describe('summaries', () => {
  const rec = (task: string, sample: number, status: OutcomeRecord['status'], metadata: Record<string, unknown> = {}): OutcomeRecord => ({
    task,
    sample,
    status,
    infra: status === 'error',
    metadata,
  });

  const records = [
    rec('a', 0, 'passed'),
    rec('a', 1, 'error'),
    rec('a', 2, 'failed'),
    rec('b', 0, 'error'),
    rec('b', 1, 'error'),
    rec('b', 2, 'error'),
    rec('c', 0, 'failed'),
    rec('c', 1, 'failed'),
    rec('c', 2, 'passed'),
  ];

  test('infrastructure failures are samples that did not pass: in every denominator, and counted apart', () => {
    const s = summarize(records, { seed: 1 });
    assert.equal(s.excludeErrors, false);
    assert.equal(s.tasks, 3, 'b counts: three samples that did not pass');
    assert.equal(s.tasksAllInfra, 1);
    assert.equal(s.infraFailures, 4);
    assert.equal(s.samples, 9);
    assert.equal(s.passedSamples, 2);
    // a: n=3, c=1 → 1/3; b: n=3, c=0 → 0; c: n=3, c=1 → 1/3.
    assert.ok(Math.abs(s.passAtK[1]!.estimate - (1 / 3 + 0 + 1 / 3) / 3) < 1e-12);
    assert.deepEqual(Object.keys(s.passAtK).map(Number), [1, 3]);
    // pass@3 (any of the three passed): a 1, b 0, c 1.
    assert.ok(Math.abs(s.passAtK[3]!.estimate - 2 / 3) < 1e-12);
    assert.equal(s.passAtK[3]!.tasks, 3);
    assert.equal(s.resolved, undefined, 'several samples: no resolved rate');
  });

  test('excludeErrors: the old denominator, scored samples only', () => {
    const s = summarize(records, { seed: 1, excludeErrors: true });
    assert.equal(s.excludeErrors, true);
    assert.equal(s.tasks, 2, 'b has no scored sample');
    assert.equal(s.tasksAllInfra, 1);
    assert.equal(s.infraFailures, 4);
    assert.equal(s.samples, 5);
    assert.equal(s.passedSamples, 2);
    // a: n=2, c=1 → 0.5; c: n=3, c=1 → 1/3.
    assert.ok(Math.abs(s.passAtK[1]!.estimate - (0.5 + 1 / 3) / 2) < 1e-12);
    assert.equal(s.passAtK[3]!.tasks, 1, 'only c has 3 scored samples');
  });

  test('single-sample runs get a resolved rate: an error is a task not resolved (or, excluding errors, left out)', () => {
    const three = [rec('a', 0, 'passed'), rec('b', 0, 'failed'), rec('c', 0, 'error')];
    const s = summarize(three);
    assert.ok(Math.abs(s.resolved!.estimate - 1 / 3) < 1e-12);
    assert.equal(s.resolved?.tasks, 3);
    const old = summarize(three, { excludeErrors: true });
    assert.equal(old.resolved?.estimate, 0.5);
    assert.equal(old.resolved?.tasks, 2);
  });

  test('breakdowns by metadata, and which keys are worth one', () => {
    const records = [
      rec('a', 0, 'passed', { library: 'numpy', topic: 'x', language: 'python' }),
      rec('b', 0, 'failed', { library: 'numpy', topic: 'y', language: 'python' }),
      rec('c', 0, 'passed', { library: 'pandas', topic: 'z', language: 'python' }),
      rec('d', 0, 'passed', { topic: 'w', language: 'python' }),
    ];
    // topic is unique per task, language has one value: neither groups anything.
    assert.deepEqual(breakdownKeys(records), ['library']);
    const byLib = breakdown(records, 'library');
    assert.deepEqual(
      byLib.map((g) => [g.value, g.summary.tasks, g.summary.passAtK[1]?.estimate]),
      [
        ['numpy', 2, 0.5],
        ['pandas', 1, 1],
        ['(none)', 1, 1],
      ],
    );
  });

  test('breakdownBy: the groups named first, in their order, then the others, (none) last', () => {
    const records = [
      rec('a', 0, 'passed', { g: 'z' }),
      rec('b', 0, 'failed', { g: 'y' }),
      rec('c', 0, 'passed'),
      rec('d', 0, 'failed', { g: 'x' }),
      rec('e', 0, 'passed', { g: 'y' }),
    ];
    const groupOf = (r: OutcomeRecord) => (typeof r.metadata?.g === 'string' ? r.metadata.g : '(none)');
    assert.deepEqual(
      groupBy(records, groupOf, ['y']).map((g) => [g.value, g.records.map((r) => r.task)]),
      [
        ['y', ['b', 'e']],
        ['x', ['d']],
        ['z', ['a']],
        ['(none)', ['c']],
      ],
    );
    assert.deepEqual(
      breakdownBy(records, groupOf, ['y']).map((g) => [g.value, g.summary.tasks, g.summary.passAtK[1]?.estimate]),
      [
        ['y', 2, 0.5],
        ['x', 1, 0],
        ['z', 1, 1],
        ['(none)', 1, 1],
      ],
    );
  });
});
