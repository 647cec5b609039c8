import type { ReportData } from './data.ts';
import { mdTable, signedPp } from './format.ts';
import { sectionsAt, type ReportSection } from './section.ts';
import { breakdownTable, comparisonTitle, costTable, headlines, infraTable, methodNote, overallTable } from './tables.ts';
import { roundsTable, runsTable, sampleTable, taskTable, viewerNote } from './tables.ts';

/** report.md: the core's sections, with the suites' sections where they ask to be. */
export function renderMarkdown(data: ReportData, sections: readonly ReportSection[] = []): string {
  const out: string[] = [
    '# benchgym report',
    '',
    `Generated ${data.generated} from ${data.runs.length} run${data.runs.length === 1 ? '' : 's'}.`,
    '',
  ];
  const suiteSections = (placement: NonNullable<ReportSection['placement']>) => {
    for (const s of sectionsAt(sections, placement)) {
      const body = s.markdown(data);
      if (body !== undefined) out.push(`## ${s.title}`, '', body, '');
    }
  };
  out.push('## Runs', '', mdTable(runsTable(data)), '');
  out.push('## Overall', '', ...headlines(data).map((h) => `- ${h}`), '', mdTable(overallTable(data)), '', methodNote(data), '');
  if (data.deltas.length) {
    out.push(`## ${comparisonTitle(data)}`, '');
    for (const d of data.deltas) {
      out.push(
        d.diff
          ? `- pass@1 of **${d.b}** minus **${d.a}**: ${signedPp(d.diff)} ` +
              `over the ${d.diff.tasks} tasks both scored (paired bootstrap over tasks).`
          : `- **${d.b}** and **${d.a}** scored no task in common.`,
      );
    }
    out.push('');
  }
  for (const key of data.keys) out.push(`## By ${key}`, '', mdTable(breakdownTable(data, key)), '');
  suiteSections('after-breakdowns');
  const rounds = roundsTable(data);
  if (rounds) out.push('## Feedback rounds', '', mdTable(rounds), '');
  suiteSections('after-metrics');
  out.push('## Infrastructure failures', '', mdTable(infraTable(data)), '');
  out.push('## Cost and tokens', '', mdTable(costTable(data)), '');
  out.push('## Per task', '', mdTable(taskTable(data)), '');
  out.push('## Per sample', '', viewerNote(data), '', mdTable(sampleTable(data)), '');
  return out.join('\n');
}
