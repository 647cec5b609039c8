import { reportCharts } from './charts.ts';
import type { ReportData } from './data.ts';
import { esc, htmlTable, signedPp } from './format.ts';
import { sectionsAt, type ReportSection } from './section.ts';
import { breakdownTable, comparisonTitle, costTable, headlines, infraTable, methodNote, overallTable } from './tables.ts';
import { roundsTable, runsTable, sampleTable, taskTable, viewerNote } from './tables.ts';

const CSS =
  `
:root { color-scheme: light; }
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto; max-width: 1100px; padding: 0 ` +
  `1rem; color: #1b1f24; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #d0d7de; ` +
  `padding-bottom: .2rem; }
p.meta, p.note, figcaption { color: #57606a; }
table { border-collapse: collapse; margin: .6rem 0; font-variant-numeric: tabular-nums; max-width: 100%; }
th, td { border: 1px solid #d0d7de; padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; overflow-wrap: break-word; }
td:not(.num) { overflow-wrap: anywhere; min-width: 6em; } td.num { overflow-wrap: normal; }
table.samples td:nth-last-child(2) { min-width: 16em; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5rem; } figure { margin: 0; }
svg.chart { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; }
svg .title { font-weight: 600; font-size: 14px; } svg .tick, svg .group, svg .legend, svg .value, svg .na { font-size: 11px; fill: ` +
  `#57606a; }
svg .grid { stroke: #eaeef2; } svg .axis { stroke: #57606a; } svg .ci { stroke: #1b1f24; stroke-width: 1.2; fill: none; }
.scroll { overflow-x: auto; max-width: 100%; }
details { margin: .6rem 0; } summary { cursor: pointer; color: #0969da; }
`;

/** report.html, self-contained (inline CSS and SVG): the core's sections, with the suites' sections where they ask to be. */
export function renderHtml(data: ReportData, sections: readonly ReportSection[] = []): string {
  const section = (title: string, body: string) => `<section><h2>${esc(title)}</h2>${body}</section>`;
  const parts: string[] = [];
  const suiteSections = (placement: NonNullable<ReportSection['placement']>) => {
    for (const s of sectionsAt(sections, placement)) {
      const body = s.html(data);
      if (body !== undefined) parts.push(section(s.title, body));
    }
  };
  parts.push(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, ` +
      `initial-scale=1"><title>benchgym report</title><style>${CSS}</style></head><body>`,
  );
  parts.push(
    `<h1>benchgym report</h1><p class="meta">Generated ${esc(data.generated)}` +
      ` from ${data.runs.length} run${data.runs.length === 1 ? '' : 's'}.</p>`,
  );
  parts.push(section('Runs', htmlTable(runsTable(data), { text: [1, 2, 3, 4, 8, 9] })));
  const headlineList = `<ul class="headlines">${headlines(data)
    .map((h) => `<li>${esc(h)}</li>`)
    .join('')}</ul>`;
  parts.push(section('Overall', `${headlineList}${htmlTable(overallTable(data))}<p class="note">${esc(methodNote(data))}</p>`));
  parts.push(`<div class="charts">${reportCharts(data).join('')}</div>`);
  if (data.deltas.length) {
    parts.push(
      section(
        comparisonTitle(data),
        `<ul>${data.deltas
          .map(
            (d) =>
              `<li>${
                d.diff
                  ? `pass@1 of <b>${esc(d.b)}</b> minus <b>${esc(d.a)}</b>: ${esc(signedPp(d.diff))}` +
                    ` over the ${d.diff.tasks} tasks both scored (paired bootstrap over tasks).`
                  : `<b>${esc(d.b)}</b> and <b>${esc(d.a)}</b> scored no task in common.`
              }</li>`,
          )
          .join('')}</ul>`,
      ),
    );
  }
  for (const key of data.keys) parts.push(section(`By ${key}`, htmlTable(breakdownTable(data, key))));
  suiteSections('after-breakdowns');
  const rounds = roundsTable(data);
  if (rounds) parts.push(section('Feedback rounds', htmlTable(rounds)));
  suiteSections('after-metrics');
  parts.push(section('Infrastructure failures', htmlTable(infraTable(data))));
  parts.push(section('Cost and tokens', htmlTable(costTable(data))));
  parts.push(section('Per task', `<details><summary>${data.tasks.length} tasks</summary>${htmlTable(taskTable(data))}</details>`));
  const samples = sampleTable(data);
  const textColumns = samples[0]!.map((_, i) => i).filter((i) => i !== 1 && samples[0]![i] !== 'steps');
  parts.push(
    section(
      'Per sample',
      `<p class="note">${esc(viewerNote(data))}</p><details id="samples"><summary>${samples.length - 1} samples: status, ` +
        `failure reason, a link into the viewer</summary>${htmlTable(samples, { text: textColumns, className: 'samples' })}</details>`,
    ),
  );
  parts.push('</body></html>');
  return parts.join('\n');
}
