import type { Task } from '../tasks/schema.ts';
import { TAMPER, type ScoringMode } from './mode.ts';
import type { Verdict } from './verdict.ts';

/** `benchgym score --scoring`: one mode, or `both` (faithful, then strict on what faithful passes). */
export type ReplayScoring = ScoringMode | 'both';

/** A verdict of the replay's mode; with `both`, a faithful verdict carrying the strict one when faithful passed. */
export type ReplayVerdict = Verdict & { strictVerdict?: Verdict };

/** What strict mode made of a sample faithful mode passed: its status and why (the TAMPER notes, else the failing test). */
export interface StrictOutcome {
  status: Verdict['status'];
  reason: string;
}

/**
 * The scorer of a replay. `both` scores faithfully, and again strictly only where the faithful
 * verdict is a pass (strict mode only adds reasons to fail, so a faithful failure stays one), or,
 * with `strictWhere`, where the faithful verdict says strict scoring may decide otherwise.
 */
export function replayScorer(
  score: (task: Task, patch: string, scoring: ScoringMode) => Promise<Verdict>,
  mode: ReplayScoring,
  strictWhere?: (faithful: Verdict) => boolean,
): (task: Task, patch: string) => Promise<ReplayVerdict> {
  // A suite that tells where strict may differ (strictWhere) has those verdicts scored strictly under `faithful` too.
  if (mode === 'strict' || (mode === 'faithful' && !strictWhere)) return (task, patch) => score(task, patch, mode);
  const rescore = strictWhere ?? ((v: Verdict) => v.reward === 1);
  return async (task, patch) => {
    const faithful: ReplayVerdict = await score(task, patch, 'faithful');
    if (rescore(faithful)) faithful.strictVerdict = await score(task, patch, 'strict');
    return faithful;
  };
}

/** The strict outcome to report beside a faithful pass, if strict mode scored it. */
export async function strictOutcome(
  v: ReplayVerdict,
  reason: (v: Verdict) => string | Promise<string>,
): Promise<StrictOutcome | undefined> {
  const s = v.strictVerdict;
  if (!s) return undefined;
  const tamper = s.notes.filter((n) => n.startsWith(TAMPER));
  return { status: s.status, reason: tamper.length ? tamper.join('; ') : await reason(s) };
}

/** The report's lines on where strict and faithful differ (faithful passes that strict does not). */
export function formatModeDifferences(rows: { id: string; ours: string; theirs?: string; strict?: StrictOutcome }[]): string[] {
  const checked = rows.filter((r) => r.strict);
  const differ = checked.filter((r) => r.strict!.status !== 'passed');
  const published = differ.filter((r) => r.theirs === 'passed').length;
  const out = [
    `strict vs faithful: ${checked.length} faithful passes scored strictly, ${differ.length} ` +
      `not passed in strict mode (${published} of them published as passed)`,
  ];
  for (const r of differ)
    out.push(`  STRICT ${r.strict!.status} ${r.id}${r.theirs ? ` (published: ${r.theirs})` : ''}: ${r.strict!.reason}`);
  return out;
}
