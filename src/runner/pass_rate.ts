/**
 * The headline pass rate of every summary (`benchgym run`, `report`, `score`, `validate`, the
 * viewer): samples that hit an infrastructure error are samples that did not pass, so they stay
 * in the denominator; the rate over the scored samples alone is shown beside it. Leaving errors
 * out of the headline would let a wrong answer that ends in an error (a sandbox killed by the
 * code under test) look like no answer at all. `excludeErrors` puts the old figure first.
 */

import { isError, type OutcomeRecord } from './metrics.ts';

/** Samples that passed, that failed, and that ended in an infrastructure error. */
export interface PassCounts {
  passed: number;
  failed: number;
  errors: number;
}

export interface PassRate extends PassCounts {
  /** Every sample: passed + failed + errors. */
  total: number;
  /** Passed over every sample (errors count as not passed); null without samples. */
  rate: number | null;
  /** Passed over the scored samples (errors left out); null without any. */
  scoredRate: number | null;
}

/** The counts of final results. */
export function passCountsOf(records: Pick<OutcomeRecord, 'status' | 'infra'>[]): PassCounts {
  const errors = records.filter(isError).length;
  const passed = records.filter((r) => !isError(r) && r.status === 'passed').length;
  return { passed, failed: records.length - errors - passed, errors };
}

export function passRate(c: PassCounts): PassRate {
  const total = c.passed + c.failed + c.errors;
  const scored = c.passed + c.failed;
  return { ...c, total, rate: total ? c.passed / total : null, scoredRate: scored ? c.passed / scored : null };
}

export interface PassRateWords {
  /** The samples' noun, before the verb (`samples`, `instances`); none by default. */
  noun?: string;
  /** What the passing ones did (default `passed`; `resolved`, `valid`). */
  verb?: string;
  /** What the others are over (default `scored`; `checked`). */
  scored?: string;
  /** The old denominator first: the scored samples only. */
  excludeErrors?: boolean;
}

const percent = (x: number | null) => (x === null ? 'n/a' : `${(100 * x).toFixed(1)}%`);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The headline, both figures when there were errors.
 *
 * @example passRateLine({ passed: 1, failed: 0, errors: 2 }) // '1/3 passed (33.3%), 2 errors; over the 1 scored: 100.0%'
 * @example passRateLine({ passed: 1, failed: 0, errors: 2 }, { excludeErrors:
 * true }) // '1/1 scored passed (100.0%), 2 errors left out; over all 3: 33.3%'
 */
export function passRateLine(c: PassCounts, words: PassRateWords = {}): string {
  const r = passRate(c);
  const verb = words.verb ?? 'passed';
  const scoredWord = words.scored ?? 'scored';
  const noun = words.noun ? `${words.noun} ` : '';
  const scored = r.passed + r.failed;
  if (!r.errors) return `${r.passed}/${r.total} ${noun}${verb} (${percent(r.rate)})`;
  if (words.excludeErrors) {
    return (
      `${r.passed}/${scored} ${scoredWord} ${noun}${verb} (${percent(r.scoredRate)}), ` +
      `${plural(r.errors, 'error')} left out; over all ${r.total}: ${percent(r.rate)}`
    );
  }
  return (
    `${r.passed}/${r.total} ${noun}${verb} (${percent(r.rate)}), ` +
    `${plural(r.errors, 'error')}; over the ${scored} ${scoredWord}: ${percent(r.scoredRate)}`
  );
}
