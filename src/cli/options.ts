import { parseArgs, type ParseArgsConfig } from 'node:util';
import { GymError } from '../errors.ts';

/** Parses a command's flags strictly, naming the unknown or malformed one. */
export function parseFlags<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (err) {
    throw new GymError('INVALID_ARGUMENT', (err as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ''));
  }
}

export function intFlag(value: string | undefined, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new GymError('INVALID_ARGUMENT', `invalid --${name}: '${value}' (a whole number from ${min} to ${max})`);
  return n;
}

export function numberFlag(value: string | undefined, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new GymError('INVALID_ARGUMENT', `invalid --${name}: '${value}' (a number from ${min} to ${max})`);
  return n;
}

/** A comma-separated list, or undefined when it names nothing. */
export function listFlag(value: string | undefined): string[] | undefined {
  const list = value?.split(',').map((s) => s.trim()).filter(Boolean);
  return list?.length ? list : undefined;
}
