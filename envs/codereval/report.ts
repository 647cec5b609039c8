/**
 * CoderEval's section of `benchgym report`: Acc@k per oracle_context token category (§4.3,
 * reported per category for RQ2 in §5.2), beside the core's Pass@k. Runs whose tasks carry no
 * oracle_context get a note saying why there is no Acc@k.
 */
import { esc, htmlTable, mdTable, pct, shownKs, type ReportData, type ReportSection } from '../../src/runner/report.ts';
import { summarizeAccAtK, type CoderEvalOutcome } from './metrics.ts';

const ACC_NOTE =
  'Acc@k (CoderEval §4.3): the share of oracle_context tokens that appear in ' +
  'the code added by at least one of the first k samples, per token category; ' +
  'a sample that left no code (or ended in an infrastructure failure before any) hits no token.';
const NOT_AVAILABLE =
  'Not available: Acc@k counts oracle_context tokens (CoderEval §4.3), and these tasks carry no `oracle_context` metadata.';

/** Acc@k rows per run and token category ('all' last), at the k the report shows; undefined when no run recorded oracle_context hits. */
function accTable(data: ReportData): string[][] | undefined {
  const withAcc = data.runs.flatMap((r) => {
    const acc = summarizeAccAtK(r.run.results as CoderEvalOutcome[], r.ks, { excludeErrors: data.excludeErrors });
    return acc ? [{ label: r.run.label, acc }] : [];
  });
  if (!withAcc.length) return undefined;
  const categories = [...new Set(withAcc.flatMap((r) => Object.values(r.acc).flatMap((row) => Object.keys(row))))].sort((a, b) =>
    a === 'all' ? 1 : b === 'all' ? -1 : a.localeCompare(b),
  );
  const ks = shownKs(data);
  const head = ['run', 'oracle_context category', ...ks.map((k) => `Acc@${k}`), 'tokens'];
  const rows: string[][] = [];
  for (const r of withAcc) {
    for (const c of categories)
      rows.push([r.label, c, ...ks.map((k) => pct(r.acc[k]?.[c]?.value)), String(r.acc[ks[0]!]?.[c]?.tokens ?? 0)]);
  }
  return [head, ...rows];
}

export const coderevalReportSections: readonly ReportSection[] = [
  {
    title: 'Acc@k (CoderEval)',
    placement: 'after-metrics',
    markdown(data) {
      const acc = accTable(data);
      return acc ? `${mdTable(acc)}\n\n${ACC_NOTE}` : NOT_AVAILABLE;
    },
    html(data) {
      const acc = accTable(data);
      return acc
        ? `${htmlTable(acc)}<p class="note">${esc(ACC_NOTE)}</p>`
        : '<p class="note">Not available: Acc@k counts oracle_context tokens (CoderEval ' +
            '§4.3), and these tasks carry no <code>oracle_context</code> metadata.</p>';
    },
  },
];
