/**
 * The generic replay: what `benchgym score` reports for a suite whose adapter gives only its
 * rows and submissions (ReplayAdapter's optional parts).
 */
import { passRate, passRateLine } from '../runner/pass_rate.ts';
import { formatModeDifferences, strictOutcome, type StrictOutcome } from '../scoring/compare.ts';
import type { Verdict } from '../scoring/verdict.ts';
import type { ReplayContext, ReplayReport, ReplayRow, ScoredSubmission } from './adapter.ts';
import { agreementFigures, formatAgreement, type AgreementFigures } from './agreement.ts';
import type { ReplayCause, TaskApart } from './causes.ts';

/** One submission replayed: ours beside the published verdict. */
export interface SubmissionResult {
  taskId: string;
  sample: number;
  line: number;
  ours: ScoredSubmission['ours'];
  theirs?: 'passed' | 'failed';
  agree?: boolean;
  /** One line from our verdict: the first failing test and its message, or the error. */
  reason: string;
  /** Why it disagrees, or why its published verdict is not sound. */
  cause?: ReplayCause;
  /** Its task is invalid or unavailable here: counted apart, never compared. */
  apart?: TaskApart;
  durationMs: number;
  /** `--scoring both`: what strict mode made of a faithful pass. */
  strict?: StrictOutcome;
}

/** The short reason a verdict gives: why it failed, or the error. */
export function verdictReason(v: Verdict): string {
  if (v.status === 'error') return `${v.error?.code}: ${(v.error?.message ?? '').split('\n')[0]}`;
  if (v.status === 'passed') return `${v.tests.filter((t) => t.status === 'passed').length} passed`;
  const bad = v.tests.find((t) => t.status === 'failed' || t.status === 'error');
  const note = v.notes.find((n) => /PATCH_APPLY_FAILED|time limit|no test results/.test(n));
  if (bad) return `${bad.name}: ${(bad.message ?? bad.status).split('\n')[0]!.slice(0, 200)}`;
  if (note) return note;
  return `exit code ${v.exitCode}${v.tests.length ? `, ${v.tests.map((t) => `${t.status}`).join(' ')}` : ''}`;
}

/** The reason of a scored submission: its verdict's, or the error scoring threw. */
export function scoredReason(s: Pick<ScoredSubmission, 'verdict' | 'error' | 'ours'>): string {
  if (s.verdict) return verdictReason(s.verdict);
  if (s.error) return `${s.error.code}: ${s.error.message.split('\n')[0]}`;
  return s.ours === 'skipped' ? 'nothing to score' : '';
}

export async function genericResult(s: ScoredSubmission): Promise<SubmissionResult> {
  const strict = s.verdict ? await strictOutcome(s.verdict, verdictReason) : undefined;
  const { taskId, sample, line, published } = s.submission;
  return {
    taskId,
    sample,
    line,
    ours: s.ours,
    ...(published ? { theirs: published } : {}),
    ...(s.agree !== undefined ? { agree: s.agree } : {}),
    reason: s.reason,
    ...(s.cause ? { cause: s.cause } : {}),
    ...(s.apart ? { apart: s.apart } : {}),
    durationMs: s.durationMs,
    ...(strict ? { strict } : {}),
  };
}

export function genericProgress(r: SubmissionResult): string {
  const published = r.theirs ? ` (published: ${r.theirs}${r.agree === false ? ', DISAGREE' : ''})` : '';
  return (
    `${r.ours.padEnd(11)} ${r.taskId} #${r.sample}${published} ` +
    `${(r.durationMs / 1000).toFixed(1)} s${r.ours === 'passed' ? '' : `: ${r.reason}`}`
  );
}

export const refuseUnknownRows = (rows: ReplayRow<unknown>[], taskOf: (row: unknown) => string) =>
  `rows for tasks not in the dataset: ${rows
    .slice(0, 10)
    .map((r) => `${taskOf(r.row)} (line ${r.line})`)
    .join(', ')}`;

export interface GenericSummary {
  submissions: number;
  /** Of the submissions not counted apart: passed, failed, errors. */
  passed: number;
  failed: number;
  unavailable: number;
  /** Scored, but of tasks the suite knows to be invalid here: in no rate. */
  apart: number;
  errors: number;
  skipped: number;
  /** Passed over passed, failed and errors (a scoring error is a submission that did not pass); null for none. */
  passRate: number | null;
  /** Passed over passed and failed: the figure beside the headline. */
  scoredPassRate: number | null;
  /** Submissions with a published verdict that both sides decided, and how many agree. */
  compared: number;
  agreed: number;
  agreement: number | null;
  /** Both agreements (as measured, over sound published verdicts), the disagreements by cause, the tasks apart. */
  agreementFigures: AgreementFigures;
}

export function genericSummary(results: SubmissionResult[]): GenericSummary {
  const count = (o: SubmissionResult['ours']) => results.filter((r) => r.ours === o && (o === 'unavailable' || !r.apart)).length;
  const figures = agreementFigures(results);
  const compared = results.filter((r) => r.agree !== undefined);
  const agreed = compared.filter((r) => r.agree).length;
  const rate = passRate({ passed: count('passed'), failed: count('failed'), errors: count('error') });
  return {
    submissions: results.length,
    passed: count('passed'),
    failed: count('failed'),
    unavailable: count('unavailable'),
    apart: results.filter((r) => r.apart && r.ours !== 'unavailable').length,
    errors: count('error'),
    skipped: count('skipped'),
    passRate: rate.rate,
    scoredPassRate: rate.scoredRate,
    compared: compared.length,
    agreed,
    agreement: compared.length ? agreed / compared.length : null,
    agreementFigures: figures,
  };
}

/** The replay's headline: passed over every submission scored or failing to score, the rate over the decided ones beside it. */
export function replayHeadline(s: Pick<GenericSummary, 'passed' | 'failed' | 'errors'>, excludeErrors?: boolean): string {
  return `${passRateLine({ passed: s.passed, failed: s.failed, errors: s.errors }, { excludeErrors })}; ${s.failed} failed`;
}

/** What the headline says of the submissions in no rate: unavailable here, counted apart, not scored. */
export function apartWords(s: Pick<GenericSummary, 'unavailable' | 'apart'> & { skipped?: number }): string {
  return `${s.unavailable} unavailable here${s.apart ? `, ${s.apart} counted apart` : ''}${s.skipped ? `, ${s.skipped} not scored` : ''}`;
}

export async function genericReport(
  results: SubmissionResult[],
  { suite, dataset, predictions, scoring, excludeErrors }: ReplayContext,
): Promise<ReplayReport> {
  const summary = genericSummary(results);
  const out = [
    `\n${suite}: ${summary.submissions} submissions: ${replayHeadline(summary, excludeErrors)}, ${apartWords(summary)}; scoring ${scoring}`,
  ];
  out.push(
    ...formatAgreement(results, summary.agreementFigures, {
      what: 'the published verdicts',
      disagreement: (r) => `  DISAGREE ${r.taskId} #${r.sample} (line ${r.line}): ours ${r.ours}, theirs ${r.theirs}: ${r.reason}`,
    }),
  );
  for (const r of results.filter((x) => x.ours === 'error')) out.push(`  ERROR ${r.taskId} #${r.sample}: ${r.reason}`);
  if (scoring === 'both')
    out.push(
      ...formatModeDifferences(results.map((r) => ({ id: `${r.taskId} #${r.sample}`, ours: r.ours, theirs: r.theirs, strict: r.strict }))),
    );
  return {
    json: { suite, dataset, predictions, scoring, summary, results },
    text: out.join('\n') + '\n',
    exitCode: summary.errors > 0 ? 1 : 0,
  };
}
