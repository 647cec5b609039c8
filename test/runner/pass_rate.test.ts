import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { passRate, passRateLine } from '../../src/runner/pass_rate.ts';

describe('the headline pass rate', () => {
  test('errors in the denominator, the scored figure beside it; excludeErrors puts the old figure first', () => {
    assert.deepEqual(passRate({ passed: 1, failed: 0, errors: 2 }), {
      passed: 1,
      failed: 0,
      errors: 2,
      total: 3,
      rate: 1 / 3,
      scoredRate: 1,
    });
    assert.equal(
      passRateLine({ passed: 1, failed: 0, errors: 2 }, { noun: 'samples' }),
      '1/3 samples passed (33.3%), 2 errors; over the 1 scored: 100.0%',
    );
    const old = passRateLine({ passed: 1, failed: 0, errors: 2 }, { noun: 'samples', excludeErrors: true });
    assert.equal(old, '1/1 scored samples passed (100.0%), 2 errors left out; over all 3: 33.3%');
    assert.equal(
      passRateLine({ passed: 3, failed: 1, errors: 1 }, { verb: 'valid', scored: 'checked' }),
      '3/5 valid (60.0%), 1 error; over the 4 checked: 75.0%',
    );
    assert.equal(passRateLine({ passed: 2, failed: 1, errors: 0 }), '2/3 passed (66.7%)', 'no errors: one figure');
    assert.equal(passRateLine({ passed: 0, failed: 0, errors: 2 }), '0/2 passed (0.0%), 2 errors; over the 0 scored: n/a');
    assert.equal(passRateLine({ passed: 0, failed: 0, errors: 0 }), '0/0 passed (n/a)');
  });
});
