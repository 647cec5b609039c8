/**
 * The report's core tables as rows (`[header, ...rows]`), shared by the Markdown and HTML
 * renderings; suites' sections render their own (ReportSection).
 */
import { DEFAULT_VIEW_URL, runId, sampleLink } from '../../protocol/viewer_links.ts';
import { shellQuote } from '../../shell_quote.ts';
import { duration } from '../progress.ts';
import { FAILED_AFTER_CANDIDATE_NOTE } from '../../scoring/after_candidate.ts';
import { passCountsOf, passRateLine } from '../pass_rate.ts';
import { SANDBOX_FAILED_AFTER_AGENT_NOTE } from '../record.ts';
import type { ListCounts, ResultRecord } from '../results.ts';
import type { ReportData } from './data.ts';
import { int, withCI, type Cell } from './format.ts';

/** The k values shown: those of any run, at most four (1 and the largest always). */
export function shownKs(data: ReportData): number[] {
  const all = [...new Set(data.runs.flatMap((r) => r.ks))].sort((a, b) => a - b);
  if (all.length <= 4) return all;
  return [...new Set([all[0]!, ...all.slice(1, -1).slice(0, 2), all[all.length - 1]!])];
}

/** The heading of the comparison of several runs, by what they differ in. */
export function comparisonTitle(data: ReportData): string {
  switch (data.kind) {
    case 'agent':
      return 'Baseline vs feedback: agents compared';
    case 'model':
      return 'Model vs model';
    default:
      return 'Runs compared';
  }
}

/** Each run's headline: samples passed over all of them (errors did not pass), and over the scored ones when there were errors. */
export function headlines(data: ReportData): string[] {
  return data.runs.map((r) => `${r.run.label}: ${passRateLine(r.counts, { noun: 'samples', excludeErrors: data.excludeErrors })}`);
}

/** pass@k (and resolved) with intervals, one row per run, and the samples passed (both figures). */
export function overallTable(data: ReportData): string[][] {
  const ks = shownKs(data);
  const anyResolved = data.runs.some((r) => r.summary.resolved);
  const head = [
    'run',
    'tasks',
    'samples/task',
    'samples passed',
    ...ks.map((k) => `pass@${k} [95% CI]`),
    ...(anyResolved ? ['resolved [95% CI]'] : []),
  ];
  head.push('infra failures');
  const rows = data.runs.map((r) => [
    r.run.label,
    String(r.summary.tasks),
    r.summary.minSamples === r.summary.maxSamples ? String(r.summary.maxSamples) : `${r.summary.minSamples}–${r.summary.maxSamples}`,
    passRateLine(r.counts, { excludeErrors: data.excludeErrors }),
    ...ks.map((k) => withCI(r.summary.passAtK[k])),
    ...(anyResolved ? [withCI(r.summary.resolved)] : []),
    `${r.summary.infraFailures}${r.summary.tasksAllInfra ? ` (${r.summary.tasksAllInfra} tasks with no scored sample)` : ''}`,
  ]);
  return [head, ...rows];
}

/** What each run is: directory, suite, agent, model, samples, how complete. */
export function runsTable(data: ReportData): string[][] {
  const head = ['run', 'directory', 'suite', 'agent', 'model', 'samples', 'tasks', 'results', 'started', 'run id'];
  const rows = data.runs.map((r) => {
    const m = r.run.manifest;
    const expected = m.taskIds.length * (m.options?.samples ?? 1);
    return [
      r.run.label,
      r.run.dir,
      m.suite,
      m.agent,
      m.model,
      String(m.options?.samples ?? 1),
      String(m.taskIds.length),
      `${r.run.results.length}/${expected}${r.run.results.length < expected ? ' (incomplete)' : ''}`,
      m.started,
      m.runId,
    ];
  });
  return [head, ...rows];
}

/** pass@k per value of a metadata key, the runs side by side. */
export function breakdownTable(data: ReportData, key: string): string[][] {
  const values = [...new Set(data.runs.flatMap((r) => (r.byKey.get(key) ?? []).map((g) => g.value)))];
  values.sort((a, b) => (a === '(none)' ? 1 : b === '(none)' ? -1 : a.localeCompare(b, undefined, { numeric: true })));
  const ks = shownKs(data);
  const head = [key, ...data.runs.flatMap((r) => ks.map((k) => `${data.runs.length > 1 ? `${r.run.label}: ` : ''}pass@${k}`)), 'tasks'];
  const rows = values.map((value) => {
    const cells = data.runs.flatMap((r) => {
      const g = r.byKey.get(key)?.find((x) => x.value === value);
      return ks.map((k) => withCI(g?.summary.passAtK[k]));
    });
    const tasks = Math.max(...data.runs.map((r) => r.byKey.get(key)?.find((x) => x.value === value)?.summary.tasks ?? 0));
    return [value, ...cells, String(tasks)];
  });
  return [head, ...rows];
}

/** Infrastructure failures: final, retried, recovered, by code. */
export function infraTable(data: ReportData): string[][] {
  const head = ['run', 'final infra failures', 'retried attempts', 'recovered by a retry', 'codes'];
  const rows = data.runs.map((r) => [
    r.run.label,
    String(r.infra.final),
    String(r.infra.retriedAttempts),
    String(r.infra.recovered),
    [...r.infra.codes].map(([c, n]) => `${c} × ${n}`).join(', ') || '—',
  ]);
  return [head, ...rows];
}

/** Model calls, tokens, cost, steps and time. */
export function costTable(data: ReportData): string[][] {
  const head = [
    'run',
    'episodes',
    'model calls',
    'prompt tokens',
    'completion tokens',
    'cost (USD)',
    'cost / result',
    'mean steps',
    'mean time / result',
  ];
  const rows = data.runs.map((r) => [
    r.run.label,
    String(r.cost.episodes),
    int(r.cost.calls),
    int(r.cost.prompt),
    int(r.cost.completion),
    r.cost.priced ? `$${r.cost.usd.toFixed(4)}` : 'n/a',
    r.cost.priced && r.run.results.length ? `$${(r.cost.usd / r.run.results.length).toFixed(4)}` : 'n/a',
    r.cost.meanSteps === undefined ? 'n/a' : r.cost.meanSteps.toFixed(1),
    r.cost.meanMs === undefined ? 'n/a' : duration(r.cost.meanMs),
  ]);
  return [head, ...rows];
}

/** Feedback rounds of agents that report them (`rounds`, `passedRound`); undefined when none do. */
export function roundsTable(data: ReportData): string[][] | undefined {
  const withRounds = data.runs.filter((r) => r.rounds);
  if (!withRounds.length) return undefined;
  const maxRound = Math.max(1, ...withRounds.flatMap((r) => [...r.rounds!.passedRound.keys()]));
  const head = ['run', 'mean rounds', ...Array.from({ length: maxRound }, (_, i) => `visible tests first passed in round ${i + 1}`)];
  const rows = withRounds.map((r) => [
    r.run.label,
    r.rounds!.mean.toFixed(2),
    ...Array.from({ length: maxRound }, (_, i) => String(r.rounds!.passedRound.get(i + 1) ?? 0)),
  ]);
  return [head, ...rows];
}

/** Passed / samples per task and run (errors counted, or left out with `excludeErrors`). */
export function taskTable(data: ReportData): string[][] {
  const head = ['task', ...data.runs.map((r) => `${r.run.label}: passed/${data.excludeErrors ? 'scored' : 'samples'}`)];
  const rows = data.tasks.map((task) => [
    task,
    ...data.runs.map((r) => {
      const mine = r.run.results.filter((x) => x.task === task);
      if (!mine.length) return '—';
      const c = passCountsOf(mine);
      const errors = c.errors ? ` (${c.errors} error${c.errors === 1 ? '' : 's'}${data.excludeErrors ? ' left out' : ''})` : '';
      return `${c.passed}/${data.excludeErrors ? c.passed + c.failed : mine.length}${errors}`;
    }),
  ]);
  return [head, ...rows];
}

/** Why a sample did not pass, in a few words: the infrastructure error, how the agent stopped, what the verdict said. */
export function failureReason(r: ResultRecord): string {
  if (r.infra)
    return `infrastructure error${r.infraError ? ` ${r.infraError.code} (${r.infraError.source}): ${r.infraError.message}` : ''}`;
  if (r.status === 'passed') return '';
  // Counted failed because the sandbox failed twice after the agent's or the candidate's code ran.
  const twice = [...(r.notes ?? []), ...(r.verdict?.notes ?? [])].find((n) =>
    [SANDBOX_FAILED_AFTER_AGENT_NOTE, FAILED_AFTER_CANDIDATE_NOTE].some((p) => n.startsWith(`${p}:`)),
  );
  if (twice) return twice;
  const parts: string[] = [];
  if (r.stopReason && r.stopReason !== 'submitted') parts.push(`stopped: ${r.stopReason}`);
  if (r.agentError) parts.push(`agent error: ${r.agentError}`);
  const v = r.verdict;
  if (!v) parts.push(r.submitted ? 'no verdict' : 'not submitted');
  else if (v.failToPass || v.passToPass) {
    const list = (name: string, c?: ListCounts) => (c && c.failed ? [`${name} ${c.failed} of ${c.passed + c.failed} failing`] : []);
    parts.push(...list('FAIL_TO_PASS', v.failToPass), ...list('PASS_TO_PASS', v.passToPass));
  } else {
    const t = v.tests;
    const all = t.passed + t.failed + t.error + t.skipped;
    parts.push(
      all ? `hidden tests: ${t.failed} failed, ${t.error} errors of ${all}` : 'no test results (the code may not import or compile)',
    );
  }
  return parts.join('; ') || 'failed';
}

/**
 * Every (task, sample) of every run: its status, why it failed and a link to it in the run
 * viewer (`benchgym view DIR...`), ordered by task, then run, then sample.
 */
export function sampleTable(data: ReportData, viewer = DEFAULT_VIEW_URL): Cell[][] {
  const several = data.runs.length > 1;
  const head: Cell[] = ['task', 'sample', ...(several ? ['run'] : []), 'status', 'steps', 'failure reason', 'viewer'];
  const rows: Cell[][] = [];
  const byTask = data.runs.map((r) => {
    const m = new Map<string, ResultRecord[]>();
    for (const x of r.run.results) m.set(x.task, [...(m.get(x.task) ?? []), x]);
    return m;
  });
  for (const task of data.tasks) {
    data.runs.forEach((r, ri) => {
      for (const x of [...(byTask[ri]!.get(task) ?? [])].sort((a, b) => a.sample - b.sample)) {
        rows.push([
          task,
          String(x.sample),
          ...(several ? [r.run.label] : []),
          x.status,
          String(x.steps ?? ''),
          failureReason(x) || '—',
          { text: 'open', href: sampleLink(runId(r.run.dir), task, x.sample, viewer) },
        ]);
      }
    });
  }
  return [head, ...rows];
}

/** How to open the per-sample links: the viewer serves these runs' directories. */
export function viewerNote(data: ReportData): string {
  return `The links open the run viewer: start it with \`benchgym view ${data.runs.map((r) => shellQuote(r.run.dir)).join(' ')}\` (it serves ${DEFAULT_VIEW_URL}).`;
}

/** How the overall numbers are computed, under the Overall table. */
export function methodNote(data: Pick<ReportData, 'excludeErrors'>): string {
  const errors = data.excludeErrors
    ? 'Infrastructure failures (status "error") are left out of every denominator here (--exclude-errors) and counted apart; ' +
      '"samples passed" shows the rate over all samples too.'
    : 'An infrastructure failure (status "error") is a sample that did not pass: it stays in every denominator (a wrong answer must not hide in an error) ' +
      'and is counted apart; "samples passed" shows the rate over the scored samples too (benchgym report --exclude-errors leaves errors out of every figure).';
  return (
    'pass@k is the unbiased estimator of Chen et al. (2021), 1 − C(n−c, k)/C(n, k) per task, averaged over tasks (tasks with fewer than k samples are left out); ' +
    'resolved is the share of tasks whose single sample has reward 1. Intervals are 95% percentile bootstrap intervals over tasks (1000 resamples, seed 1). ' +
    errors
  );
}
