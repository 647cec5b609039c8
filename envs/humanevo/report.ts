import { isError, meanPassAtK, taskOutcomes, type ErrorPolicy } from '../../src/runner/metrics.ts';
import { esc, htmlTable, mdTable, type ReportData, type ReportSection } from '../../src/runner/report.ts';
import type { ResultRecord } from '../../src/runner/results.ts';

/**
 * HumanEvo's comparison (paper §5): Pass@1 in the evolving-ignored setting (EI) beside the
 * evolving-aware one (HumanEvo), per model and language (Table 2), by dependency level
 * (Table 5) and by docstring style (Table 6), with the relative change; and the overlap of
 * solved tasks between the two settings (Table 4). Results say their setting in
 * `metadata.context` (aware | ignored) and their docstring style in `metadata.promptVariant`
 * (detailed, the default, or brief).
 */

export interface EvolvingTables {
  table2: string[][];
  table4: string[][];
  table5: string[][];
  table6: string[][];
}

type Setting = 'ignored' | 'aware';
const LANGUAGES = ['python', 'java'] as const;

function settingOf(r: ResultRecord): Setting | undefined {
  const c = r.metadata?.context;
  return c === 'aware' || c === 'ignored' ? c : undefined;
}

function styleOf(r: ResultRecord): 'detailed' | 'brief' | undefined {
  const v = String(r.metadata?.promptVariant ?? 'default');
  return v === 'default' || v === 'detailed' ? 'detailed' : v === 'brief' ? 'brief' : undefined;
}

function pass1(records: ResultRecord[], policy: ErrorPolicy): number | undefined {
  return records.length ? meanPassAtK(taskOutcomes(records, policy).tasks, 1) : undefined;
}

function pct(v: number | undefined): string {
  return v === undefined ? '—' : `${(v * 100).toFixed(1)}%`;
}

/** `22.0% (↓24.1%)`: the aware value and its change relative to the ignored one, as the paper prints it. */
function awareCell(ei: number | undefined, ea: number | undefined): string {
  if (ea === undefined) return '—';
  if (ei === undefined || ei === 0 || ei === ea) return pct(ea);
  const change = ((ea - ei) / ei) * 100;
  return `${pct(ea)} (${change < 0 ? '↓' : '↑'}${Math.abs(change).toFixed(1)}%)`;
}

/** A model's label: the model, with the agent when the records come from more than one agent. */
function modelsOf(records: ResultRecord[]): { label: string; records: ResultRecord[] }[] {
  const agents = new Set(records.map((r) => r.agent)).size > 1;
  const by = new Map<string, ResultRecord[]>();
  for (const r of records) {
    const label = agents ? `${r.agent} · ${r.model}` : r.model;
    by.set(label, [...(by.get(label) ?? []), r]);
  }
  return [...by].sort(([a], [b]) => a.localeCompare(b)).map(([label, rs]) => ({ label, records: rs }));
}

function pairCells(records: ResultRecord[], policy: ErrorPolicy): string[] {
  const cells: string[] = [];
  for (const lang of LANGUAGES) {
    const of = (s: Setting) =>
      pass1(
        records.filter((r) => r.metadata?.language === lang && settingOf(r) === s),
        policy,
      );
    const ei = of('ignored');
    cells.push(pct(ei), awareCell(ei, of('aware')));
  }
  return cells;
}

const HEAD = ['Python EI', 'Python HumanEvo', 'Java EI', 'Java HumanEvo'];

/** The tables, or null when the results hold no HumanEvo setting; an infrastructure failure is a task not solved unless `excludeErrors`. */
export function evolvingTables(results: ResultRecord[], policy: ErrorPolicy = {}): EvolvingTables | null {
  const scored = results.filter((r) => settingOf(r) !== undefined);
  if (!scored.length) return null;
  const models = modelsOf(scored);
  const detailed = (rs: ResultRecord[]) => rs.filter((r) => styleOf(r) === 'detailed');

  const table2 = [['Model', ...HEAD], ...models.map((m) => [m.label, ...pairCells(detailed(m.records), policy)])];

  const table5 = [['Dependency level', 'Model', ...HEAD]];
  for (const level of ['standalone', 'intra-class', 'inter-class']) {
    for (const m of models) {
      const rs = detailed(m.records).filter((r) => r.metadata?.dependencyLevel === level);
      if (rs.length) table5.push([level, m.label, ...pairCells(rs, policy)]);
    }
  }

  const table6 = [['Model', 'Docstring', ...HEAD]];
  for (const m of models) {
    for (const style of ['detailed', 'brief'] as const) {
      const rs = m.records.filter((r) => styleOf(r) === style);
      if (rs.length) table6.push([m.label, style === 'detailed' ? 'Detailed' : 'Brief', ...pairCells(rs, policy)]);
    }
  }

  // Table 4: tasks solved (first sample) in one setting, the other, or both.
  const table4 = [['Model', 'Language', 'EA✓ EI✗', 'EA✓ EI✓', 'EA✗ EI✓', 'tasks in both']];
  for (const m of models) {
    for (const lang of LANGUAGES) {
      const first = (s: Setting) =>
        new Map(
          detailed(m.records)
            .filter((r) => r.metadata?.language === lang && settingOf(r) === s && r.sample === 0 && !(policy.excludeErrors && isError(r)))
            .map((r) => [r.task, r.status === 'passed']),
        );
      const ea = first('aware');
      const ei = first('ignored');
      const both = [...ea.keys()].filter((t) => ei.has(t));
      if (!both.length) continue;
      const count = (a: boolean, i: boolean) => String(both.filter((t) => ea.get(t) === a && ei.get(t) === i).length);
      table4.push([
        m.label,
        lang === 'python' ? 'Python' : 'Java',
        count(true, false),
        count(true, true),
        count(false, true),
        String(both.length),
      ]);
    }
  }
  return { table2, table4, table5, table6 };
}

export const EVOLVING_NOTE =
  'EI: evolving-ignored (the repository at its newest commit as context); HumanEvo: evolving-aware (the repository ' +
  'as the developer saw it). Pass@1 over tasks; in brackets the change of HumanEvo relative to EI, as in the paper. ' +
  'Tables 2, 4 and 5 use the detailed docstrings (the default prompt); Table 6 compares the docstring styles.';

/** The tables' headings, in the paper's numbering. */
const TITLES: Record<keyof EvolvingTables, string> = {
  table2: 'Table 2: Pass@1 by setting',
  table4: 'Table 4: tasks solved in one setting, the other, or both',
  table5: 'Table 5: by dependency level',
  table6: 'Table 6: by docstring style',
};
const ORDER = ['table2', 'table4', 'table5', 'table6'] as const;

function tablesOf(data: ReportData): EvolvingTables | null {
  return evolvingTables(
    data.runs.flatMap((r) => r.run.results),
    { excludeErrors: data.excludeErrors },
  );
}

/** HumanEvo's section of `benchgym report`, after the breakdowns: present when results carry HumanEvo's settings. */
export const humanevoReportSections: readonly ReportSection[] = [
  {
    title: 'Evolving-aware vs evolving-ignored (HumanEvo)',
    placement: 'after-breakdowns',
    markdown(data) {
      const evo = tablesOf(data);
      if (!evo) return undefined;
      return [EVOLVING_NOTE, ...ORDER.flatMap((t) => ['', `### ${TITLES[t]}`, '', mdTable(evo[t])])].join('\n');
    },
    html(data) {
      const evo = tablesOf(data);
      if (!evo) return undefined;
      return `<p class="note">${esc(EVOLVING_NOTE)}</p>${ORDER.map((t) => `<h3>${TITLES[t]}</h3>${htmlTable(evo[t])}`).join('')}`;
    },
  },
];
