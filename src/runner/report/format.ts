import type { Interval } from '../metrics.ts';

/** A share as a percentage with one decimal; 'n/a' for none. */
export function pct(x: number | undefined): string {
  return x === undefined ? 'n/a' : `${(100 * x).toFixed(1)}%`;
}

/** `42.0% [30.1%, 55.2%]`: an estimate with its interval. */
export function withCI(i: Interval | undefined): string {
  return i ? `${pct(i.estimate)} [${pct(i.lo)}, ${pct(i.hi)}]` : 'n/a';
}

/** `+12.5 pp [+3.0, +21.9]`: a difference of shares in percentage points. */
export function signedPp(i: Interval): string {
  const f = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
  return `${f(i.estimate)} pp [${f(i.lo)}, ${f(i.hi)}]`;
}

export function int(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Text made safe for HTML content and attribute values. */
export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A table cell: text, or a link. */
export type Cell = string | { text: string; href: string };

const cellText = (c: Cell) => (typeof c === 'string' ? c : c.text);

/** A Markdown table of `[header, ...rows]`. */
export function mdTable(rows: Cell[][]): string {
  const cell = (c: Cell) => {
    const s = cellText(c).replace(/\|/g, '\\|').replace(/\n/g, ' ');
    return typeof c === 'string' ? s : `[${s}](${c.href.replace(/[()\s]/g, encodeURIComponent)})`;
  };
  const [head, ...body] = rows;
  return [
    `| ${head!.map(cell).join(' | ')} |`,
    `|${head!.map(() => '---').join('|')}|`,
    ...body.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

/**
 * An HTML table of `[header, ...rows]`: it wraps long text (ids, paths, reasons) to fit the
 * page and scrolls sideways only when even wrapped it cannot; cells after the first are figures
 * unless `text` names them.
 */
export function htmlTable(rows: Cell[][], opts: { text?: number[]; className?: string } = {}): string {
  const [head, ...body] = rows;
  const td = (c: Cell, i: number) => {
    const cls = i && !opts.text?.includes(i) ? ' class="num"' : '';
    return `<td${cls}>${typeof c === 'string' ? esc(c) : `<a href="${esc(c.href)}">${esc(c.text)}</a>`}</td>`;
  };
  return (
    `<div class="scroll"><table${opts.className ? ` class="${esc(opts.className)}"` : ''}` +
    `><thead><tr>${head!.map((h) => `<th>${esc(cellText(h))}</th>`).join('')}</tr></thead><tbody>` +
    `${body.map((r) => `<tr>${r.map(td).join('')}</tr>`).join('')}</tbody></table></div>`
  );
}
