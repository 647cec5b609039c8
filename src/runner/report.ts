import { promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../errors.ts';
import { MANIFEST_FILE, readManifest, RESULTS_FILE, type RunManifest } from './manifest.ts';
import { breakdown, breakdownKeys, mean, pairedBootstrapDiff, passAtKPerTask, summarize, taskOutcomes, type Interval, type MetricSummary } from './metrics.ts';
import { duration } from './progress.ts';
import { EVOLVING_NOTE, evolvingTables } from '../../envs/humanevo/report.ts';
import { finalResults, readResults, type ResultRecord } from './results.ts';

/** One run directory, read back. */
export interface LoadedRun {
  dir: string;
  manifest: RunManifest;
  /** Every line of results.jsonl (retried attempts included). */
  attempts: ResultRecord[];
  /** The final result of each (task, sample). */
  results: ResultRecord[];
  /** A short name telling this run from the others in a report. */
  label: string;
}

/** The bootstrap settings every number in a report uses. */
export const REPORT_BOOTSTRAP = { resamples: 1000, confidence: 0.95, seed: 1 };

export async function loadRun(dir: string): Promise<Omit<LoadedRun, 'label'>> {
  const abs = path.resolve(dir);
  const manifest = await readManifest(abs);
  if (!manifest) throw new GymError('INVALID_ARGUMENT', `${abs} is not a run directory (no ${MANIFEST_FILE})`);
  const { records } = await readResults(path.join(abs, RESULTS_FILE));
  return { dir: abs, manifest, attempts: records, results: finalResults(records) };
}

export async function loadRuns(dirs: string[]): Promise<LoadedRun[]> {
  if (!dirs.length) throw new GymError('INVALID_ARGUMENT', 'give at least one run directory');
  const runs = await Promise.all(dirs.map(loadRun));
  return labelRuns(runs);
}

/** What the runs differ in: the agent, the model, both, or neither. */
export function comparisonKind(runs: Pick<LoadedRun, 'manifest'>[]): 'single' | 'agent' | 'model' | 'both' | 'same' {
  if (runs.length < 2) return 'single';
  const agents = new Set(runs.map((r) => r.manifest.agent)).size > 1;
  const models = new Set(runs.map((r) => r.manifest.model)).size > 1;
  return agents && models ? 'both' : agents ? 'agent' : models ? 'model' : 'same';
}

function labelRuns(runs: Omit<LoadedRun, 'label'>[]): LoadedRun[] {
  const kind = comparisonKind(runs);
  const base = runs.map((r) => (kind === 'agent' ? r.manifest.agent : kind === 'model' ? r.manifest.model : `${r.manifest.agent} · ${r.manifest.model}`));
  return runs.map((r, i) => {
    const duplicate = base.filter((b) => b === base[i]).length > 1;
    return { ...r, label: duplicate ? `${base[i]} (${path.basename(r.dir)})` : base[i]! };
  });
}

// ---------------------------------------------------------------------------
// The numbers of a report, computed once for both renderings.

export interface RunNumbers {
  run: LoadedRun;
  summary: MetricSummary;
  ks: number[];
  byKey: Map<string, { value: string; summary: MetricSummary }[]>;
  infra: { final: number; retriedAttempts: number; recovered: number; codes: Map<string, number> };
  cost: { episodes: number; calls: number; prompt: number; completion: number; usd: number; meanSteps?: number; meanMs?: number };
  rounds?: { mean: number; passedRound: Map<number, number>; samples: number };
}

export interface ReportData {
  generated: string;
  runs: RunNumbers[];
  kind: ReturnType<typeof comparisonKind>;
  keys: string[];
  /** pass@1 of each run after the first, against the first, over the tasks both scored. */
  deltas: { a: string; b: string; k: number; diff?: Interval & { tasks: number } }[];
  tasks: string[];
}

export function reportData(runs: LoadedRun[], opts: { keys?: string[] } = {}): ReportData {
  const keys = opts.keys?.length ? opts.keys : breakdownKeys(runs.flatMap((r) => r.results));
  const numbers = runs.map((run): RunNumbers => {
    const summary = summarize(run.results, REPORT_BOOTSTRAP);
    const ks = Object.keys(summary.passAtK).map(Number).sort((a, b) => a - b);
    const byKey = new Map(keys.map((key) => [key, breakdown(run.results, key, REPORT_BOOTSTRAP)]));
    const codes = new Map<string, number>();
    for (const r of run.results.filter((x) => x.infra)) codes.set(r.infraError?.code ?? 'unknown', (codes.get(r.infraError?.code ?? 'unknown') ?? 0) + 1);
    const retried = run.attempts.filter((a) => !a.final);
    const recoveredPairs = new Set(run.results.filter((r) => !r.infra && r.attempt > 1).map((r) => `${r.task}#${r.sample}`));
    const finished = run.results;
    const withRounds = finished.filter((r) => !r.infra && typeof r.rounds === 'number');
    const passedRound = new Map<number, number>();
    for (const r of withRounds) if (r.status === 'passed' && typeof r.passedRound === 'number') passedRound.set(r.passedRound, (passedRound.get(r.passedRound) ?? 0) + 1);
    return {
      run,
      summary,
      ks,
      byKey,
      infra: { final: summary.infraFailures, retriedAttempts: retried.length, recovered: recoveredPairs.size, codes },
      cost: {
        episodes: run.attempts.length,
        calls: sum(run.attempts.map((a) => a.tokens?.calls ?? 0)),
        prompt: sum(run.attempts.map((a) => a.tokens?.prompt ?? 0)),
        completion: sum(run.attempts.map((a) => a.tokens?.completion ?? 0)),
        usd: sum(run.attempts.map((a) => a.costUsd ?? 0)),
        meanSteps: mean(finished.map((r) => r.steps ?? 0)),
        meanMs: mean(finished.map((r) => r.durations?.totalMs ?? 0)),
      },
      ...(withRounds.length ? { rounds: { mean: mean(withRounds.map((r) => r.rounds!))!, passedRound, samples: withRounds.length } } : {}),
    };
  });
  const deltas: ReportData['deltas'] = [];
  if (numbers.length >= 2) {
    const perTask = (r: RunNumbers) => new Map(passAtKPerTask(taskOutcomes(r.run.results).tasks, 1).map((t) => [t.task, t.value]));
    const first = perTask(numbers[0]!);
    for (const other of numbers.slice(1)) {
      deltas.push({ a: numbers[0]!.run.label, b: other.run.label, k: 1, diff: pairedBootstrapDiff(first, perTask(other), REPORT_BOOTSTRAP) });
    }
  }
  const tasks = [...new Set(runs.flatMap((r) => r.results.map((x) => x.task)))].sort();
  return { generated: new Date().toISOString(), runs: numbers, kind: comparisonKind(runs), keys, deltas, tasks };
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
}

// ---------------------------------------------------------------------------
// Formatting.

function pct(x: number | undefined): string {
  return x === undefined ? 'n/a' : `${(100 * x).toFixed(1)}%`;
}

function withCI(i: Interval | undefined): string {
  return i ? `${pct(i.estimate)} [${pct(i.lo)}, ${pct(i.hi)}]` : 'n/a';
}

function signedPp(i: Interval): string {
  const f = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
  return `${f(i.estimate)} pp [${f(i.lo)}, ${f(i.hi)}]`;
}

function int(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** The k values shown: those of any run, at most four (1 and the largest always). */
function shownKs(data: ReportData): number[] {
  const all = [...new Set(data.runs.flatMap((r) => r.ks))].sort((a, b) => a - b);
  if (all.length <= 4) return all;
  return [...new Set([all[0]!, ...all.slice(1, -1).slice(0, 2), all[all.length - 1]!])];
}

function comparisonTitle(data: ReportData): string {
  switch (data.kind) {
    case 'agent':
      return 'Baseline vs feedback: agents compared';
    case 'model':
      return 'Model vs model';
    default:
      return 'Runs compared';
  }
}

/** Table rows shared by the Markdown and HTML renderings: [header, ...rows]. */
function overallTable(data: ReportData): string[][] {
  const ks = shownKs(data);
  const anyResolved = data.runs.some((r) => r.summary.resolved);
  const head = ['run', 'tasks', 'samples/task', ...ks.map((k) => `pass@${k} [95% CI]`), ...(anyResolved ? ['resolved [95% CI]'] : []), 'infra failures'];
  const rows = data.runs.map((r) => [
    r.run.label,
    String(r.summary.tasks),
    r.summary.minSamples === r.summary.maxSamples ? String(r.summary.maxSamples) : `${r.summary.minSamples}–${r.summary.maxSamples}`,
    ...ks.map((k) => withCI(r.summary.passAtK[k])),
    ...(anyResolved ? [withCI(r.summary.resolved)] : []),
    `${r.summary.infraFailures}${r.summary.tasksAllInfra ? ` (${r.summary.tasksAllInfra} tasks unscored)` : ''}`,
  ]);
  return [head, ...rows];
}

function runsTable(data: ReportData): string[][] {
  const head = ['run', 'directory', 'suite', 'agent', 'model', 'samples', 'tasks', 'results', 'started', 'run id'];
  const rows = data.runs.map((r) => {
    const m = r.run.manifest;
    const expected = m.taskIds.length * (m.options?.samples ?? 1);
    return [r.run.label, r.run.dir, m.suite, m.agent, m.model, String(m.options?.samples ?? 1), String(m.taskIds.length), `${r.run.results.length}/${expected}${r.run.results.length < expected ? ' (incomplete)' : ''}`, m.started, m.runId];
  });
  return [head, ...rows];
}

function breakdownTable(data: ReportData, key: string): string[][] {
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

function infraTable(data: ReportData): string[][] {
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

function costTable(data: ReportData): string[][] {
  const head = ['run', 'episodes', 'model calls', 'prompt tokens', 'completion tokens', 'cost (USD)', 'cost / result', 'mean steps', 'mean time / result'];
  const rows = data.runs.map((r) => [
    r.run.label,
    String(r.cost.episodes),
    int(r.cost.calls),
    int(r.cost.prompt),
    int(r.cost.completion),
    `$${r.cost.usd.toFixed(4)}`,
    r.run.results.length ? `$${(r.cost.usd / r.run.results.length).toFixed(4)}` : 'n/a',
    r.cost.meanSteps === undefined ? 'n/a' : r.cost.meanSteps.toFixed(1),
    r.cost.meanMs === undefined ? 'n/a' : duration(r.cost.meanMs),
  ]);
  return [head, ...rows];
}

function roundsTable(data: ReportData): string[][] | undefined {
  const withRounds = data.runs.filter((r) => r.rounds);
  if (!withRounds.length) return undefined;
  const maxRound = Math.max(1, ...withRounds.flatMap((r) => [...r.rounds!.passedRound.keys()]));
  const head = ['run', 'mean rounds', ...Array.from({ length: maxRound }, (_, i) => `visible tests first passed in round ${i + 1}`)];
  const rows = withRounds.map((r) => [r.run.label, r.rounds!.mean.toFixed(2), ...Array.from({ length: maxRound }, (_, i) => String(r.rounds!.passedRound.get(i + 1) ?? 0))]);
  return [head, ...rows];
}

function accTable(data: ReportData): string[][] | undefined {
  const withAcc = data.runs.filter((r) => r.summary.accAtK);
  if (!withAcc.length) return undefined;
  const categories = [...new Set(withAcc.flatMap((r) => Object.values(r.summary.accAtK!).flatMap((row) => Object.keys(row))))].sort((a, b) => (a === 'all' ? 1 : b === 'all' ? -1 : a.localeCompare(b)));
  const ks = shownKs(data);
  const head = ['run', 'oracle_context category', ...ks.map((k) => `Acc@${k}`), 'tokens'];
  const rows: string[][] = [];
  for (const r of withAcc) {
    for (const c of categories) rows.push([r.run.label, c, ...ks.map((k) => pct(r.summary.accAtK![k]?.[c]?.value)), String(r.summary.accAtK![ks[0]!]?.[c]?.tokens ?? 0)]);
  }
  return [head, ...rows];
}

function taskTable(data: ReportData): string[][] {
  const head = ['task', ...data.runs.map((r) => `${r.run.label}: passed/scored`)];
  const rows = data.tasks.map((task) => [
    task,
    ...data.runs.map((r) => {
      const mine = r.run.results.filter((x) => x.task === task);
      if (!mine.length) return '—';
      const scored = mine.filter((x) => !x.infra);
      const infra = mine.length - scored.length;
      return `${scored.filter((x) => x.status === 'passed').length}/${scored.length}${infra ? ` (+${infra} infra)` : ''}`;
    }),
  ]);
  return [head, ...rows];
}

const METHOD =
  'pass@k is the unbiased estimator of Chen et al. (2021), 1 − C(n−c, k)/C(n, k) per task, averaged over tasks (tasks with fewer than k scored samples are left out); ' +
  'resolved is the share of tasks whose single sample has reward 1. Intervals are 95% percentile bootstrap intervals over tasks (1000 resamples, seed 1). ' +
  'Infrastructure failures (status "error") are never wrong answers: they are left out of every denominator and counted apart.';

// ---------------------------------------------------------------------------
// Markdown.

function mdTable(rows: string[][]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const [head, ...body] = rows;
  return [`| ${head!.map(esc).join(' | ')} |`, `|${head!.map(() => '---').join('|')}|`, ...body.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n');
}

export function renderMarkdown(data: ReportData): string {
  const out: string[] = ['# benchgym report', '', `Generated ${data.generated} from ${data.runs.length} run${data.runs.length === 1 ? '' : 's'}.`, ''];
  out.push('## Runs', '', mdTable(runsTable(data)), '');
  out.push('## Overall', '', mdTable(overallTable(data)), '', METHOD, '');
  if (data.deltas.length) {
    out.push(`## ${comparisonTitle(data)}`, '');
    for (const d of data.deltas) {
      out.push(d.diff ? `- pass@1 of **${d.b}** minus **${d.a}**: ${signedPp(d.diff)} over the ${d.diff.tasks} tasks both scored (paired bootstrap over tasks).` : `- **${d.b}** and **${d.a}** scored no task in common.`);
    }
    out.push('');
  }
  for (const key of data.keys) out.push(`## By ${key}`, '', mdTable(breakdownTable(data, key)), '');
  const evo = evolvingTables(data.runs.flatMap((r) => r.run.results));
  if (evo) {
    out.push('## Evolving-aware vs evolving-ignored (HumanEvo)', '', EVOLVING_NOTE, '');
    out.push('### Table 2: Pass@1 by setting', '', mdTable(evo.table2), '');
    out.push('### Table 4: tasks solved in one setting, the other, or both', '', mdTable(evo.table4), '');
    out.push('### Table 5: by dependency level', '', mdTable(evo.table5), '');
    out.push('### Table 6: by docstring style', '', mdTable(evo.table6), '');
  }
  const rounds = roundsTable(data);
  if (rounds) out.push('## Feedback rounds', '', mdTable(rounds), '');
  const acc = accTable(data);
  out.push('## Acc@k (CoderEval)', '');
  if (acc) out.push(mdTable(acc), '', ACC_NOTE, '');
  else out.push('Not available: Acc@k counts oracle_context tokens (CoderEval §4.3), and these tasks carry no `oracle_context` metadata.', '');
  out.push('## Infrastructure failures', '', mdTable(infraTable(data)), '');
  out.push('## Cost and tokens', '', mdTable(costTable(data)), '');
  out.push('## Per task', '', mdTable(taskTable(data)), '');
  return out.join('\n');
}

const ACC_NOTE = 'Acc@k (CoderEval §4.3): the share of oracle_context tokens that appear in the code added by at least one of the first k samples, per token category.';

// ---------------------------------------------------------------------------
// HTML: self-contained, inline CSS, inline SVG drawn here.

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function htmlTable(rows: string[][]): string {
  const [head, ...body] = rows;
  return `<div class="scroll"><table><thead><tr>${head!.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${body.map((r) => `<tr>${r.map((c, i) => `<td${i ? ' class="num"' : ''}>${esc(c)}</td>`).join('')}</tr>`).join('')}</tbody></table></div>`;
}

/** Okabe–Ito: distinguishable with the common colour-vision deficiencies. */
const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];

export interface BarSeries {
  name: string;
  values: (number | undefined)[];
  intervals?: (Interval | undefined)[];
}

/** A grouped bar chart of shares (0..1) with interval whiskers, as an SVG string. */
export function groupedBarChart(opts: { title: string; groups: string[]; series: BarSeries[]; id?: string }): string {
  const { groups, series } = opts;
  const plotH = 220;
  const top = 40;
  const left = 52;
  const barW = Math.max(8, Math.min(36, Math.floor(260 / Math.max(1, series.length))));
  const groupW = series.length * barW + 24;
  const plotW = Math.max(240, groups.length * groupW);
  const legendH = 22 * Math.ceil(series.length / 3);
  const labelH = 46;
  // Wide enough for the title (about 7.5 px a character at 14 px).
  const width = Math.max(left + plotW + 16, Math.ceil(left + opts.title.length * 7.5 + 16));
  const height = top + plotH + labelH + legendH;
  const y = (v: number) => top + plotH - v * plotH;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" class="chart"${opts.id ? ` id="${esc(opts.id)}"` : ''} width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(opts.title)}">`);
  parts.push(`<text class="title" x="${left}" y="22">${esc(opts.title)}</text>`);
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    parts.push(`<line class="grid" x1="${left}" x2="${left + plotW}" y1="${y(tick)}" y2="${y(tick)}"/>`);
    parts.push(`<text class="tick" x="${left - 6}" y="${y(tick) + 4}" text-anchor="end">${tick * 100}%</text>`);
  }
  groups.forEach((group, gi) => {
    const gx = left + gi * groupW + 12;
    series.forEach((s, si) => {
      const v = s.values[gi];
      const x = gx + si * barW;
      const color = PALETTE[si % PALETTE.length]!;
      if (v === undefined || !Number.isFinite(v)) {
        parts.push(`<text class="na" x="${x + barW / 2}" y="${y(0) - 4}" text-anchor="middle">n/a</text>`);
        return;
      }
      const h = Math.max(0, Math.min(1, v)) * plotH;
      parts.push(`<rect class="bar" data-series="${esc(s.name)}" data-group="${esc(group)}" data-value="${v}" x="${x + 1}" y="${y(0) - h}" width="${barW - 2}" height="${h}" fill="${color}"><title>${esc(`${s.name} · ${group}: ${pct(v)}`)}</title></rect>`);
      const ci = s.intervals?.[gi];
      if (ci) {
        const cx = x + barW / 2;
        parts.push(`<path class="ci" d="M${cx} ${y(ci.lo)}V${y(ci.hi)}M${cx - 4} ${y(ci.lo)}h8M${cx - 4} ${y(ci.hi)}h8"/>`);
      }
      if (series.length * groups.length <= 24) {
        const labelY = Math.min(y(Math.min(1, v)), ci ? y(ci.hi) : Infinity) - 4;
        parts.push(`<text class="value" x="${x + barW / 2}" y="${labelY}" text-anchor="middle">${(100 * v).toFixed(0)}</text>`);
      }
    });
    const label = group.length > 18 ? `${group.slice(0, 17)}…` : group;
    parts.push(`<text class="group" x="${gx + (series.length * barW) / 2}" y="${top + plotH + 18}" text-anchor="middle">${esc(label)}<title>${esc(group)}</title></text>`);
  });
  parts.push(`<line class="axis" x1="${left}" x2="${left + plotW}" y1="${y(0)}" y2="${y(0)}"/>`);
  series.forEach((s, si) => {
    const lx = left + (si % 3) * Math.floor(plotW / 3);
    const ly = top + plotH + labelH + Math.floor(si / 3) * 22 - 10;
    parts.push(`<rect class="swatch" x="${lx}" y="${ly - 10}" width="12" height="12" fill="${PALETTE[si % PALETTE.length]}"/><text class="legend" x="${lx + 18}" y="${ly}">${esc(s.name.length > 40 ? `${s.name.slice(0, 39)}…` : s.name)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}

function charts(data: ReportData): string[] {
  const out: string[] = [];
  const ks = shownKs(data);
  // Overall: one group per metric, one bar per run.
  const metrics: { name: string; get: (r: RunNumbers) => (Interval & { tasks: number }) | undefined }[] = ks.map((k) => ({ name: `pass@${k}`, get: (r) => r.summary.passAtK[k] }));
  if (data.runs.some((r) => r.summary.resolved)) metrics.push({ name: 'resolved', get: (r) => r.summary.resolved });
  out.push(
    `<figure>${groupedBarChart({
      id: 'chart-overall',
      title: data.runs.length > 1 ? comparisonTitle(data) : 'Overall',
      groups: metrics.map((m) => m.name),
      series: data.runs.map((r) => ({ name: r.run.label, values: metrics.map((m) => m.get(r)?.estimate), intervals: metrics.map((m) => m.get(r)) })),
    })}<figcaption>Bars: estimates; whiskers: 95% bootstrap intervals over tasks.</figcaption></figure>`,
  );
  for (const key of data.keys) {
    const values = breakdownTable(data, key)
      .slice(1)
      .map((row) => row[0]!);
    const series: BarSeries[] =
      data.runs.length > 1
        ? data.runs.map((r) => ({
            name: r.run.label,
            values: values.map((v) => r.byKey.get(key)?.find((g) => g.value === v)?.summary.passAtK[1]?.estimate),
            intervals: values.map((v) => r.byKey.get(key)?.find((g) => g.value === v)?.summary.passAtK[1]),
          }))
        : ks.map((k) => ({
            name: `pass@${k}`,
            values: values.map((v) => data.runs[0]!.byKey.get(key)?.find((g) => g.value === v)?.summary.passAtK[k]?.estimate),
            intervals: values.map((v) => data.runs[0]!.byKey.get(key)?.find((g) => g.value === v)?.summary.passAtK[k]),
          }));
    const title = data.runs.length > 1 ? `pass@1 by ${key}` : `pass@k by ${key}`;
    out.push(`<figure>${groupedBarChart({ id: `chart-by-${key.replace(/[^A-Za-z0-9_-]/g, '_')}`, title, groups: values, series })}</figure>`);
  }
  return out;
}

const CSS = `
:root { color-scheme: light; }
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto; max-width: 1100px; padding: 0 1rem; color: #1b1f24; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; }
p.meta, p.note, figcaption { color: #57606a; }
table { border-collapse: collapse; margin: .6rem 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d7de; padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; } td.num { white-space: nowrap; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5rem; } figure { margin: 0; }
svg.chart { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; }
svg .title { font-weight: 600; font-size: 14px; } svg .tick, svg .group, svg .legend, svg .value, svg .na { font-size: 11px; fill: #57606a; }
svg .grid { stroke: #eaeef2; } svg .axis { stroke: #57606a; } svg .ci { stroke: #1b1f24; stroke-width: 1.2; fill: none; }
.scroll { overflow-x: auto; max-width: 100%; }
details { margin: .6rem 0; } summary { cursor: pointer; color: #0969da; }
`;

export function renderHtml(data: ReportData): string {
  const section = (title: string, body: string) => `<section><h2>${esc(title)}</h2>${body}</section>`;
  const parts: string[] = [];
  parts.push(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>benchgym report</title><style>${CSS}</style></head><body>`);
  parts.push(`<h1>benchgym report</h1><p class="meta">Generated ${esc(data.generated)} from ${data.runs.length} run${data.runs.length === 1 ? '' : 's'}.</p>`);
  parts.push(section('Runs', htmlTable(runsTable(data))));
  parts.push(section('Overall', `${htmlTable(overallTable(data))}<p class="note">${esc(METHOD)}</p>`));
  parts.push(`<div class="charts">${charts(data).join('')}</div>`);
  if (data.deltas.length) {
    parts.push(section(comparisonTitle(data), `<ul>${data.deltas.map((d) => `<li>${d.diff ? `pass@1 of <b>${esc(d.b)}</b> minus <b>${esc(d.a)}</b>: ${esc(signedPp(d.diff))} over the ${d.diff.tasks} tasks both scored (paired bootstrap over tasks).` : `<b>${esc(d.b)}</b> and <b>${esc(d.a)}</b> scored no task in common.`}</li>`).join('')}</ul>`));
  }
  for (const key of data.keys) parts.push(section(`By ${key}`, htmlTable(breakdownTable(data, key))));
  const evo = evolvingTables(data.runs.flatMap((r) => r.run.results));
  if (evo) {
    parts.push(
      section(
        'Evolving-aware vs evolving-ignored (HumanEvo)',
        `<p class="note">${esc(EVOLVING_NOTE)}</p><h3>Table 2: Pass@1 by setting</h3>${htmlTable(evo.table2)}<h3>Table 4: tasks solved in one setting, the other, or both</h3>${htmlTable(evo.table4)}<h3>Table 5: by dependency level</h3>${htmlTable(evo.table5)}<h3>Table 6: by docstring style</h3>${htmlTable(evo.table6)}`,
      ),
    );
  }
  const rounds = roundsTable(data);
  if (rounds) parts.push(section('Feedback rounds', htmlTable(rounds)));
  const acc = accTable(data);
  parts.push(section('Acc@k (CoderEval)', acc ? `${htmlTable(acc)}<p class="note">${esc(ACC_NOTE)}</p>` : '<p class="note">Not available: Acc@k counts oracle_context tokens (CoderEval §4.3), and these tasks carry no <code>oracle_context</code> metadata.</p>'));
  parts.push(section('Infrastructure failures', htmlTable(infraTable(data))));
  parts.push(section('Cost and tokens', htmlTable(costTable(data))));
  parts.push(section('Per task', `<details><summary>${data.tasks.length} tasks</summary>${htmlTable(taskTable(data))}</details>`));
  parts.push('</body></html>');
  return parts.join('\n');
}

/** Where `--out` puts the two files: a directory, or a file name whose extension is swapped. */
export function reportPaths(out: string): { md: string; html: string } {
  const abs = path.resolve(out);
  if (/\.(md|html?)$/i.test(abs)) {
    const base = abs.replace(/\.(md|html?)$/i, '');
    return { md: `${base}.md`, html: `${base}.html` };
  }
  return { md: path.join(abs, 'report.md'), html: path.join(abs, 'report.html') };
}

/** Reads the runs and writes report.md and report.html. */
export async function writeReport(dirs: string[], out: string, opts: { keys?: string[] } = {}): Promise<{ md: string; html: string; data: ReportData }> {
  const runs = await loadRuns(dirs);
  const data = reportData(runs, opts);
  const paths = reportPaths(out);
  await fs.mkdir(path.dirname(paths.md), { recursive: true });
  await fs.writeFile(paths.md, renderMarkdown(data));
  await fs.writeFile(paths.html, renderHtml(data));
  return { ...paths, data };
}
