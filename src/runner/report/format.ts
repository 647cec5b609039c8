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

/** A Markdown table of `[header, ...rows]`. */
export function mdTable(rows: string[][]): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const [head, ...body] = rows;
  return [`| ${head!.map(cell).join(' | ')} |`, `|${head!.map(() => '---').join('|')}|`, ...body.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');
}

/** An HTML table of `[header, ...rows]`, scrolling sideways when wide; cells after the first are figures. */
export function htmlTable(rows: string[][]): string {
  const [head, ...body] = rows;
  return `<div class="scroll"><table><thead><tr>${head!.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${body.map((r) => `<tr>${r.map((c, i) => `<td${i ? ' class="num"' : ''}>${esc(c)}</td>`).join('')}</tr>`).join('')}</tbody></table></div>`;
}
