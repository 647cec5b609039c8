/**
 * `benchgym report`: reads run directories and writes report.md and a self-contained
 * report.html. The numbers are computed once (report/data.ts) and rendered twice
 * (report/markdown.ts, report/html.ts); suites add their own sections (ReportSection), which
 * render with the table helpers exported here.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { loadRuns, reportData, type ReportData } from './report/data.ts';
import { renderHtml } from './report/html.ts';
import { renderMarkdown } from './report/markdown.ts';
import type { ReportSection } from './report/section.ts';

export { groupedBarChart, type BarSeries } from './report/charts.ts';
export {
  comparisonKind,
  loadRun,
  loadRuns,
  REPORT_BOOTSTRAP,
  reportData,
  type LoadedRun,
  type ReportData,
  type RunNumbers,
} from './report/data.ts';
export { esc, htmlTable, mdTable, pct, withCI } from './report/format.ts';
export { renderHtml } from './report/html.ts';
export { renderMarkdown } from './report/markdown.ts';
export type { ReportSection } from './report/section.ts';
export { headlines, shownKs } from './report/tables.ts';

/** Where `--out` puts the two files: a directory, or a file name whose extension is swapped. */
export function reportPaths(out: string): { md: string; html: string } {
  const abs = path.resolve(out);
  if (/\.(md|html?)$/i.test(abs)) {
    const base = abs.replace(/\.(md|html?)$/i, '');
    return { md: `${base}.md`, html: `${base}.html` };
  }
  return { md: path.join(abs, 'report.md'), html: path.join(abs, 'report.html') };
}

/** What a report holds besides the core's sections: the breakdown keys (default: those worth one), the suites' sections. */
export interface ReportOptions {
  keys?: string[];
  sections?: readonly ReportSection[];
  /** Leave infrastructure failures out of every denominator (by default they are samples that did not pass). */
  excludeErrors?: boolean;
}

/**
 * Reads the runs and writes report.md and report.html.
 *
 * @example
 * await writeReport(['runs/a', 'runs/b'], 'cmp.html', { sections: suites.flatMap((s) => s.reportSections ?? []) });
 */
export async function writeReport(
  dirs: string[],
  out: string,
  opts: ReportOptions = {},
): Promise<{ md: string; html: string; data: ReportData }> {
  const runs = await loadRuns(dirs);
  const data = reportData(runs, { keys: opts.keys, excludeErrors: opts.excludeErrors });
  const sections = opts.sections ?? [];
  const paths = reportPaths(out);
  await fs.mkdir(path.dirname(paths.md), { recursive: true });
  await fs.writeFile(paths.md, renderMarkdown(data, sections));
  await fs.writeFile(paths.html, renderHtml(data, sections));
  return { ...paths, data };
}
