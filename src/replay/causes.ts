/**
 * Why a replayed sample's verdict differs from the published one, as far as the replay can
 * tell: from the verdict's own notes (src/scoring/note_codes.ts), from the failure it reports,
 * and from what the suite knows (`ReplayAdapter.apart` and `explain`: tasks invalid or
 * unavailable here, known differences of the original harness). The driver judges every scored
 * submission with `judgeSubmission`; the summaries count and list the causes (agreement.ts).
 */
import { NOTE_CODES, noteWithCode } from '../scoring/note_codes.ts';
import type { ScoredSubmission } from './adapter.ts';

/** The causes a disagreement can have, in the order reports list them. */
export const CAUSE_KINDS = [
  'known-difference',
  'cannot-fail',
  'patch-not-applied',
  'test-compile-failed',
  'environment',
  'unexplained',
] as const;
export type CauseKind = (typeof CAUSE_KINDS)[number];

/** What each cause is, for people. */
export const CAUSE_TITLES: Record<CauseKind, string> = {
  'known-difference': 'known difference of the original harness',
  'cannot-fail': 'tests that cannot fail (the start state passes)',
  'patch-not-applied': 'patch did not apply',
  'test-compile-failed': "a test file of the candidate's did not compile",
  environment: 'environment difference',
  unexplained: 'not explained',
};

export interface ReplayCause {
  kind: CauseKind;
  /** The known difference's or the environment difference's name (`pysolbase-shared-log`, `no-network`), when it has one. */
  name?: string;
  /** One line: what happened, and where the evidence is. */
  detail: string;
  /**
   * The published verdict of this sample says nothing of the candidate (an artifact of the
   * original harness, tests that cannot fail): it is left out of the agreement over sound
   * verdicts. Default: true for `known-difference` and `cannot-fail`, false otherwise.
   */
  unsound?: boolean;
}

/** A task the replay does not compare: the suite knows it is invalid here, or its env cannot exist here. */
export interface TaskApart {
  standing: 'invalid' | 'unavailable';
  reason: string;
}

/** Is the published verdict of a sample with this cause one to compare with? */
export function publishedIsSound(cause: ReplayCause | undefined): boolean {
  if (!cause) return true;
  return !(cause.unsound ?? (cause.kind === 'known-difference' || cause.kind === 'cannot-fail'));
}

/** Failures that say the sandbox has no network (a request to a host outside). */
const NO_NETWORK = new RegExp(
  [
    'Temporary failure in name resolution',
    'Name or service not known',
    'Network is unreachable',
    'nodename nor servname',
    'Failed to establish a new connection',
    'getaddrinfo failed',
    'No address associated with hostname',
    'UnknownHostException',
  ].join('|'),
);
const MISSING_MODULE = /ModuleNotFoundError: No module named '([^']+)'/;

/**
 * The cause a verdict tells by itself: tests that cannot fail (any sample), and for a
 * disagreement a patch that did not apply, a test file of the candidate's that does not
 * compile, or an environment difference (no network here, a module the published run had,
 * our run's time limit where the published run passed). Undefined when it tells none.
 */
export function verdictCause(
  s: Pick<ScoredSubmission, 'verdict' | 'agree' | 'ours' | 'submission'>,
  reason: string,
): ReplayCause | undefined {
  const notes = s.verdict?.notes ?? [];
  const cannot = noteWithCode(notes, NOTE_CODES.cannotFail);
  if (cannot) return { kind: 'cannot-fail', detail: cannot };
  if (s.agree !== false) return undefined;
  const patch = noteWithCode(notes, NOTE_CODES.patchNotApplied);
  if (patch) return { kind: 'patch-not-applied', detail: patch };
  const compile = noteWithCode(notes, NOTE_CODES.testCompileFailed);
  if (compile) return { kind: 'test-compile-failed', detail: compile };
  if (s.ours !== 'failed' || s.submission.published !== 'passed') return undefined;
  if (NO_NETWORK.test(reason))
    return { kind: 'environment', name: 'no-network', detail: `the sandbox has no network; the published run reached one: ${reason}` };
  const module = MISSING_MODULE.exec(reason)?.[1];
  if (module)
    return { kind: 'environment', name: 'missing-module', detail: `the published run had '${module}', this env has not: ${reason}` };
  if (s.verdict?.timedOut)
    return { kind: 'environment', name: 'time-limit', detail: `our run hit its time limit where the published run passed: ${reason}` };
  return undefined;
}

/** What the suite knows beyond the verdict (ReplayAdapter's `apart` and `explain`). */
export interface SuiteKnowledge<Row = unknown> {
  apart?(task: ScoredSubmission<Row>['task']): TaskApart | undefined;
  explain?(scored: ScoredSubmission<Row>): ReplayCause | undefined;
}

/**
 * A scored submission judged: counted apart (its task invalid or unavailable here: it is then not
 * compared), else given a cause: the suite's, else the verdict's, else `unexplained` for a
 * disagreement. An agreeing sample keeps a cause only when one makes its published verdict unsound.
 */
export function judgeSubmission<Row>(s: ScoredSubmission<Row>, knows: SuiteKnowledge<Row> = {}): ScoredSubmission<Row> {
  const { agree, cause: _cause, apart: _apart, ...rest } = s;
  const apart = knows.apart?.(s.task) ?? (s.ours === 'unavailable' ? { standing: 'unavailable' as const, reason: s.reason } : undefined);
  if (apart) return { ...rest, apart };
  const cause =
    knows.explain?.(s) ?? verdictCause(s, s.reason) ?? (agree === false ? { kind: 'unexplained' as const, detail: s.reason } : undefined);
  const kept = cause && (agree === false || !publishedIsSound(cause)) ? cause : undefined;
  return { ...rest, ...(agree !== undefined ? { agree } : {}), ...(kept ? { cause: kept } : {}) };
}
