/** The report's charts: inline SVG drawn here, so report.html fetches nothing. */
import type { Interval } from '../metrics.ts';
import type { ReportData, RunNumbers } from './data.ts';
import { esc, pct } from './format.ts';
import { breakdownTable, comparisonTitle, shownKs } from './tables.ts';

/** Okabe–Ito: distinguishable with the common colour-vision deficiencies. */
const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];

export interface BarSeries {
  name: string;
  values: (number | undefined)[];
  intervals?: (Interval | undefined)[];
}

/** A generous estimate of a character's width in the 11 px labels: estimates err towards space left over, never overlap. */
const CHAR_PX = 7;
const LEGEND_LINE = 20;

/** `text` cut in the middle to fit `px` (at CHAR_PX a character): run names often differ only at their end. */
function fit(text: string, px: number): string {
  const max = Math.max(3, Math.floor(px / CHAR_PX));
  if (text.length <= max) return text;
  const head = Math.ceil((max - 1) / 2);
  return `${text.slice(0, head)}…${text.slice(text.length - (max - 1 - head))}`;
}

/**
 * Legend entries laid out as text flows: left to right from `x0`, onto a new line when the next
 * would pass `x1`; a name too long for a line of its own is cut to fit it (its full name is the
 * entry's tooltip).
 */
function legendLayout(names: string[], x0: number, x1: number): { items: { x: number; line: number; label: string }[]; height: number } {
  const items: { x: number; line: number; label: string }[] = [];
  let x = x0;
  let line = 0;
  for (const name of names) {
    const label = fit(name, x1 - x0 - 18);
    const w = 18 + label.length * CHAR_PX;
    if (x > x0 && x + w > x1) {
      x = x0;
      line++;
    }
    items.push({ x, line, label });
    x += w + 16;
  }
  return { items, height: names.length ? (line + 1) * LEGEND_LINE + 6 : 0 };
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
  const labelH = 46;
  // Wide enough for the title (at most 9 px a character in bold 14 px) and, up to 640 px, for the longest legend name on a line of its own.
  const longest = Math.max(0, ...series.map((s) => s.name.length));
  const width = Math.max(
    left + plotW + 16,
    Math.ceil(left + opts.title.length * 9 + 16),
    Math.min(640, left + 18 + longest * CHAR_PX + 16),
  );
  const legend = legendLayout(
    series.map((s) => s.name),
    left,
    width - 16,
  );
  const legendTop = top + plotH + labelH;
  const height = legendTop + legend.height;
  const y = (v: number) => top + plotH - v * plotH;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart"${opts.id ? ` id="${esc(opts.id)}"` : ''} width="${width}" ` +
      `height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(opts.title)}">`,
  );
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
      parts.push(
        `<rect class="bar" data-series="${esc(s.name)}" data-group="${esc(group)}" ` +
          `data-value="${v}" x="${x + 1}" y="${y(0) - h}" width="${barW - 2}" height="${h}" ` +
          `fill="${color}"><title>${esc(`${s.name} · ${group}: ${pct(v)}`)}</title></rect>`,
      );
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
    const label = fit(group, groupW - 6);
    parts.push(
      `<text class="group" x="${gx + (series.length * barW) / 2}" y="${top + plotH + 18}" ` +
        `text-anchor="middle">${esc(label)}<title>${esc(group)}</title></text>`,
    );
  });
  parts.push(`<line class="axis" x1="${left}" x2="${left + plotW}" y1="${y(0)}" y2="${y(0)}"/>`);
  legend.items.forEach((item, si) => {
    const ly = legendTop + item.line * LEGEND_LINE;
    parts.push(
      `<g class="legend-item"><rect class="swatch" x="${item.x}" y="${ly}" width="12" height="12" ` +
        `fill="${PALETTE[si % PALETTE.length]}"/><text class="legend" x="${item.x + 18}" ` +
        `y="${ly + 10}">${esc(item.label)}<title>${esc(series[si]!.name)}</title></text></g>`,
    );
  });
  parts.push('</svg>');
  return parts.join('');
}

/** The report's charts: overall pass@k (and resolved), and pass@k per value of each breakdown key. */
export function reportCharts(data: ReportData): string[] {
  const out: string[] = [];
  const ks = shownKs(data);
  // Overall: one group per metric, one bar per run.
  const metrics: { name: string; get: (r: RunNumbers) => (Interval & { tasks: number }) | undefined }[] = ks.map((k) => ({
    name: `pass@${k}`,
    get: (r) => r.summary.passAtK[k],
  }));
  if (data.runs.some((r) => r.summary.resolved)) metrics.push({ name: 'resolved', get: (r) => r.summary.resolved });
  out.push(
    `<figure>${groupedBarChart({
      id: 'chart-overall',
      title: data.runs.length > 1 ? comparisonTitle(data) : 'Overall',
      groups: metrics.map((m) => m.name),
      series: data.runs.map((r) => ({
        name: r.run.label,
        values: metrics.map((m) => m.get(r)?.estimate),
        intervals: metrics.map((m) => m.get(r)),
      })),
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
    out.push(
      `<figure>${groupedBarChart({ id: `chart-by-${key.replace(/[^A-Za-z0-9_-]/g, '_')}`, title, groups: values, series })}</figure>`,
    );
  }
  return out;
}
