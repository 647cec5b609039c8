import { z } from 'zod';
import { GymError } from '../errors.ts';

/**
 * How a verdict is reached. `strict` (episodes, runs, validation): plugins the scorer does
 * not name stay off, bytecode never runs, and the report is cross-checked against the
 * session's own record; each known trick gives reward 0 with a `TAMPER_SUSPECTED` note.
 * `faithful` (replays of published predictions): the benchmark's own harness, as fallible
 * as it is.
 */
export const ScoringMode = z.enum(['strict', 'faithful']);
export type ScoringMode = z.infer<typeof ScoringMode>;

export const SCORING_MODES = ScoringMode.options;

/** The prefix of every note that turned a pass into reward 0 because a trick was detected. */
export const TAMPER = 'TAMPER_SUSPECTED';

/** `--scoring` of the CLI: a mode (or one of `extra`), or `fallback` when the flag is absent. */
export function scoringFlag(value: string | undefined, fallback: ScoringMode): ScoringMode;
export function scoringFlag<T extends string>(value: string | undefined, fallback: ScoringMode | T, extra: readonly T[]): ScoringMode | T;
export function scoringFlag(value: string | undefined, fallback: string, extra: readonly string[] = []): string {
  if (value === undefined) return fallback;
  if ((SCORING_MODES as readonly string[]).includes(value) || extra.includes(value)) return value;
  throw new GymError('INVALID_ARGUMENT', `invalid --scoring: '${value}' (${[...SCORING_MODES, ...extra].join(', ')})`);
}
