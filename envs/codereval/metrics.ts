/**
 * CoderEval's evaluation beyond pass@k (Yu et al., "CoderEval: A Benchmark of Pragmatic Code
 * Generation with Generative Pre-trained Models", ICSE 2024, arXiv:2302.00288):
 * - §3.2.2: each task's oracle_context, the types, variables and APIs defined outside the
 *   function that the reference function uses (TypeReference, VarReference, APIInvocation);
 * - §4.3 "Evaluation Metric": Pass@K with the unbiased estimator (the core's `passAtK`), and
 *   Acc@K over oracle_context tokens, reported per token category in RQ2 (§5.2);
 * - §3.2.3: the six runnable levels, and RQ1's (§5.1.3) standalone vs non-standalone split.
 * The runner records, per sample, which oracle_context tokens its code uses
 * (`annotateCoderEvalResult`, a result's `oracleContext`); Acc@k is computed from those.
 */
import {
  summarize,
  groupBy,
  isError,
  type BootstrapOptions,
  type ErrorPolicy,
  type MetricSummary,
  type OutcomeRecord,
} from '../../src/runner/metrics.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { LEVELS, STANDALONE_LEVELS } from './dataset.ts';

// ---------------------------------------------------------------------------
// §3.2.2: the oracle_context of a task.

/**
 * A task's oracle_context tokens per category, from its metadata (any form `OracleContext` in
 * metadata.ts allows): a token list, or lists per category, possibly JSON-encoded (each list
 * a JSON string inside a JSON string, as the CoderEval files store it). Empty lists are left
 * out; undefined when no token is left.
 */
export function oracleContextTokens(raw: unknown): Record<string, string[]> | undefined {
  const value = decoded(raw);
  const list = (v: unknown): string[] | undefined => {
    const d = decoded(v);
    return Array.isArray(d) ? d.filter((x): x is string => typeof x === 'string' && x.length > 0) : undefined;
  };
  if (Array.isArray(value)) {
    const l = list(value);
    return l?.length ? { tokens: l } : undefined;
  }
  if (value && typeof value === 'object') {
    const out: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(value)) {
      const l = list(v);
      if (l?.length) out[k] = l;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return undefined;
}

/** A value, or the value its JSON text holds; undefined for text that is not JSON. */
function decoded(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return undefined;
  }
}

/** A token appears as a whole identifier (`Time` is not found in `TimeZone`); dotted names match as written. */
export function containsToken(code: string, token: string): boolean {
  if (!token) return false;
  const escaped = token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![A-Za-z0-9_])${escaped}(?![A-Za-z0-9_])`).test(code);
}

/** Which oracle_context tokens each sample's code contains: `result[token][sample]`. */
export function oracleContextHits(tokens: string[], sampleCode: string[]): boolean[][] {
  return tokens.map((token) => sampleCode.map((code) => containsToken(code, token)));
}

/** What a sample's code is: the lines its diff adds (removed lines are the reference's, not the sample's). */
function addedCode(diff: string): string {
  return diff
    .split('\n')
    .filter((l) => l.startsWith('+') && !l.startsWith('+++'))
    .map((l) => l.slice(1))
    .join('\n');
}

/**
 * CoderEval's `Suite.annotateResult`: per oracle_context category, whether the code the
 * sample added holds each token (`oracleContext` at the top of its result line); nothing when
 * the task has no oracle_context or the episode left no diff.
 *
 * @example annotateCoderEvalResult(task, { diff }) // { oracleContext: { APIInvocation: [true, false] } }
 */
export function annotateCoderEvalResult(
  task: Task,
  outcome: { diff: string | undefined },
): { oracleContext: Record<string, boolean[]> } | undefined {
  const tokens = oracleContextTokens(task.metadata.oracle_context ?? task.metadata.oracleContext);
  if (!tokens || outcome.diff === undefined) return undefined;
  const code = addedCode(outcome.diff);
  const oracleContext: Record<string, boolean[]> = {};
  for (const [category, list] of Object.entries(tokens)) oracleContext[category] = list.map((t) => containsToken(code, t));
  return { oracleContext };
}

// ---------------------------------------------------------------------------
// §4.3: Acc@K.

/**
 * Acc@k as CoderEval defines it (§4.3, p. 7): "the percentage of target functions whose
 * individual oracle_context tokens appear in at least one of the top K generated samples". The
 * unit is an oracle_context token and it counts as hit when at least one of the first k samples
 * contains it; the paper reports it per token category (§5.2). It is about context tokens, not
 * tests: the share of tasks with a passing sample among the first k is the plain, biased pass@k
 * that the unbiased estimator replaces (the core's `firstKPassRate`).
 *
 * `hits[u][i]`: whether sample i hit unit u. Units with fewer than k samples are left out.
 */
export function accAtK(hits: boolean[][], k: number): number | undefined {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a whole number >= 1 (got ${k})`);
  const eligible = hits.filter((h) => h.length >= k);
  if (!eligible.length) return undefined;
  return eligible.filter((h) => h.slice(0, k).some(Boolean)).length / eligible.length;
}

/** CoderEval's Acc@k for one task's tokens and samples (samples in order). */
export function oracleContextAccAtK(tokens: string[], sampleCode: string[], k: number): number | undefined {
  return accAtK(oracleContextHits(tokens, sampleCode), k);
}

/** A result as CoderEval's metrics read it: the outcome, and the oracle_context hits the runner recorded. */
export interface CoderEvalOutcome extends OutcomeRecord {
  oracleContext?: Record<string, boolean[]>;
}

/** Acc@k per k, then per token category and 'all': the value and the tokens it is over. */
export type AccAtKTable = Record<number, Record<string, { value: number; tokens: number }>>;

/**
 * Acc@k per oracle_context category and over all tokens ('all'), from the recorded hits; undefined
 * when none were recorded. Every sample of a task counts, in order: one that recorded no hits (it
 * left no code, or ended before any) hit no token; with `excludeErrors` samples that ended in an
 * infrastructure failure are left out (the old denominator).
 */
export function summarizeAccAtK(records: CoderEvalOutcome[], ks: number[], opts: ErrorPolicy = {}): AccAtKTable | undefined {
  const byTask = new Map<string, CoderEvalOutcome[]>();
  for (const r of records) {
    if (opts.excludeErrors && isError(r)) continue;
    const list = byTask.get(r.task) ?? [];
    list.push(r);
    byTask.set(r.task, list);
  }
  // units[category] = one boolean[] (over samples) per token of every task.
  const units = new Map<string, boolean[][]>();
  for (const list of byTask.values()) {
    list.sort((a, b) => a.sample - b.sample);
    // The task's tokens, from any sample that recorded its hits.
    const recorded = list.find((r) => r.oracleContext)?.oracleContext;
    if (!recorded) continue;
    for (const [category, tokenHits] of Object.entries(recorded)) {
      for (let tok = 0; tok < tokenHits.length; tok++) {
        const overSamples = list.map((r) => Boolean(r.oracleContext?.[category]?.[tok]));
        for (const key of [category, 'all']) {
          const u = units.get(key) ?? [];
          u.push(overSamples);
          units.set(key, u);
        }
      }
    }
  }
  if (!units.size) return undefined;
  const out: AccAtKTable = {};
  for (const k of ks) {
    const row: Record<string, { value: number; tokens: number }> = {};
    for (const [category, hits] of units) {
      const value = accAtK(hits, k);
      if (value !== undefined) row[category] = { value, tokens: hits.filter((h) => h.length >= k).length };
    }
    out[k] = row;
  }
  return out;
}

/** The core's summary (pass@k with intervals), with Acc@k when oracle_context hits were recorded. */
export interface CoderEvalSummary extends MetricSummary {
  accAtK?: AccAtKTable;
}

/** pass@k for each k up to the samples drawn, and Acc@k at the same k (infrastructure failures counted as the core counts them). */
export function summarizeCoderEval(
  records: CoderEvalOutcome[],
  opts: BootstrapOptions & { ks?: number[] } & ErrorPolicy = {},
): CoderEvalSummary {
  const summary: CoderEvalSummary = summarize(records, opts);
  const acc = summarizeAccAtK(
    records,
    Object.keys(summary.passAtK)
      .map(Number)
      .sort((a, b) => a - b),
    opts,
  );
  if (acc) summary.accAtK = acc;
  return summary;
}

// ---------------------------------------------------------------------------
// §3.2.3 and RQ1: the runnable levels (LEVELS, STANDALONE_LEVELS in dataset.ts), standalone vs non-standalone.

/** 'standalone' or 'non-standalone' by a task's runnable `level`; '(none)' without one. */
export function standaloneOf(metadata: Record<string, unknown> | undefined): string {
  const level = metadata?.level;
  if (typeof level !== 'string' || !(LEVELS as readonly string[]).includes(level)) return '(none)';
  return STANDALONE_LEVELS.has(level) ? 'standalone' : 'non-standalone';
}

/**
 * CoderEval's splits of a run: per runnable level (in the paper's order) and standalone vs
 * non-standalone (RQ1), each with pass@k and Acc@k per oracle_context category (RQ2).
 */
export function runnableLevelSplits(
  records: CoderEvalOutcome[],
  opts: BootstrapOptions & { ks?: number[] } & ErrorPolicy = {},
): { byLevel: { value: string; summary: CoderEvalSummary }[]; byStandalone: { value: string; summary: CoderEvalSummary }[] } {
  const split = (groupOf: (r: CoderEvalOutcome) => string, order: string[]) =>
    groupBy(records, groupOf, order).map(({ value, records: list }) => ({ value, summary: summarizeCoderEval(list, opts) }));
  return {
    byLevel: split((r) => (typeof r.metadata?.level === 'string' ? r.metadata.level : '(none)'), [...LEVELS]),
    byStandalone: split((r) => standaloneOf(r.metadata), ['standalone', 'non-standalone']),
  };
}
