/**
 * What the GitChameleon suite knows when it replays published verdicts (README: "The data's own
 * flaws", "Replay"): problems invalid here (counted apart, never compared), problems whose hidden
 * tests the starter code already passes (their published verdicts say nothing of the answer), and
 * the published run's own time limit (its output says so) where the same answer passes here.
 */
import type { ScoredSubmission } from '../../src/replay/adapter.ts';
import type { ReplayCause, TaskApart } from '../../src/replay/causes.ts';
import type { Task } from '../../src/tasks/schema.ts';

/** A problem's flaw, by dataset form and example id. */
export interface ProblemFlaw {
  /** invalid: counted apart; cannot-fail: compared, but its published verdicts are not sound. */
  standing: 'invalid' | 'cannot-fail';
  reason: string;
}

/** The data's own flaws (README: "The data's own flaws"), as `benchgym validate` finds them on every backend. */
export const PROBLEM_FLAWS: Readonly<Record<'v1' | 'v2', Readonly<Record<string, ProblemFlaw>>>> = {
  v2: {
    '39': {
      standing: 'cannot-fail',
      reason: 'weak hidden tests: they check only that display_image() returns the constant the starter code already returns',
    },
    '40': {
      standing: 'cannot-fail',
      reason:
        'weak hidden tests: they check only that process_image() returns the constant the starter code already returns (the others skip)',
    },
    '284': {
      standing: 'cannot-fail',
      reason: "the hidden test defines its own patched_compute_stream and checks that, never calling the candidate's function",
    },
  },
  v1: {
    '24': {
      standing: 'cannot-fail',
      reason: "the expected query result is empty: the starter's `None == <empty array>` is an empty array, whose .all() is true",
    },
    '30': {
      standing: 'cannot-fail',
      reason: 'the test asserts only bounding_distance(G) is not None; the starter returns the function nx.diameter',
    },
    '42': {
      standing: 'invalid',
      reason: "the reference calls Google's geocoding service (network and an API key): it cannot pass offline",
    },
    '43': {
      standing: 'invalid',
      reason: "the reference calls Google's geocoding service (network and an API key): it cannot pass offline",
    },
    '59': {
      standing: 'invalid',
      reason:
        'the starter cell has a doubled escape that the harness unescapes into a line continuation: a syntax error in the reference too',
    },
  },
};

function flawOf(task: Pick<Task, 'id' | 'metadata'>): ProblemFlaw | undefined {
  const form = task.metadata.form === 'v1' ? 'v1' : 'v2';
  return Object.hasOwn(PROBLEM_FLAWS[form], task.id) ? PROBLEM_FLAWS[form][task.id] : undefined;
}

/** A problem invalid here: its rows are counted apart (ReplayAdapter.apart). */
export function problemApart(task: Pick<Task, 'id' | 'metadata'>): TaskApart | undefined {
  const flaw = flawOf(task);
  return flaw?.standing === 'invalid' ? { standing: 'invalid', reason: flaw.reason } : undefined;
}

/** The v2 harness's own words when a run hit its time limit (`Timeout: ... timed out after 120 seconds`). */
const PUBLISHED_TIMEOUT = /^Timeout\b|timed out after \d+ seconds/m;

/**
 * The suite's cause of a row (ReplayAdapter.explain): a published failure at the harness's time
 * limit where the same answer passes here (their machine's speed, not the answer), else the
 * problem's tests that the starter already passes.
 */
export function explainPrediction(
  s: Pick<ScoredSubmission<{ publishedOutput?: string }>, 'task' | 'ours' | 'submission' | 'row'>,
): ReplayCause | undefined {
  const output = s.row.publishedOutput ?? '';
  if (s.ours === 'passed' && s.submission.published === 'failed' && PUBLISHED_TIMEOUT.test(output)) {
    const line = output
      .split('\n')
      .find((l) => PUBLISHED_TIMEOUT.test(l))
      ?.trim()
      .slice(0, 200);
    return {
      kind: 'environment',
      name: 'published-time-limit',
      detail: `the published run hit the harness's time limit (${line}); here the same answer's tests pass within ours`,
    };
  }
  const flaw = flawOf(s.task);
  if (flaw?.standing === 'cannot-fail') return { kind: 'cannot-fail', detail: flaw.reason };
  return undefined;
}
