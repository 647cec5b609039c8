import { parseArgs, type ParseArgsConfig } from 'node:util';
import { GymError } from '../errors.ts';

/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between two short words. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The known word closest to `word`, when it is close enough to be a typo of it (or `word` is a prefix of just it). */
export function closest(word: string, known: Iterable<string>): string | undefined {
  const candidates = [...known];
  const prefixed = candidates.filter((k) => word.length >= 2 && k.startsWith(word));
  if (prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of candidates) {
    const distance = editDistance(word, k);
    if (distance < bestDistance) [best, bestDistance] = [k, distance];
  }
  return bestDistance <= Math.max(1, Math.min(3, Math.floor(Math.max(word.length, best?.length ?? 0) / 3))) ? best : undefined;
}

/** "unknown option --prot; did you mean --port?" for the first flag of `args` that `options` lacks, else undefined. */
function unknownFlagMessage(args: string[], options: NonNullable<ParseArgsConfig['options']>): string | undefined {
  for (const arg of args) {
    if (arg === '--') return undefined;
    const long = /^--([^=]+)/.exec(arg)?.[1];
    const short = long === undefined ? /^-([^-])/.exec(arg)?.[1] : undefined;
    if (long !== undefined && !Object.hasOwn(options, long)) {
      const guess = closest(long, Object.keys(options));
      return `unknown option --${long}${guess ? `; did you mean --${guess}?` : ''} (--help lists the options)`;
    }
    if (short !== undefined && !Object.values(options).some((o) => o.short === short))
      return `unknown option -${short} (--help lists the options)`;
  }
  return undefined;
}

/** Parses a command's flags strictly, naming the unknown or malformed one (and the flag it is a typo of). */
export function parseFlags<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
): ReturnType<typeof parseArgs<{ args: string[]; options: T; strict: true; allowPositionals: true }>> {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (err) {
    const code = (err as { code?: string }).code;
    const unknown = code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? unknownFlagMessage(args, options) : undefined;
    throw new GymError('INVALID_ARGUMENT', unknown ?? (err as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ''));
  }
}

export function intFlag(value: string | undefined, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new GymError('INVALID_ARGUMENT', `invalid --${name}: '${value}' (a whole number from ${min} to ${max})`);
  return n;
}

export function numberFlag(value: string | undefined, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max)
    throw new GymError('INVALID_ARGUMENT', `invalid --${name}: '${value}' (a number from ${min} to ${max})`);
  return n;
}

/** A comma-separated list, or undefined when it names nothing. */
export function listFlag(value: string | undefined): string[] | undefined {
  const list = value
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return list?.length ? list : undefined;
}
