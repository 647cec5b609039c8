import { z } from 'zod';
import { GymError } from '../errors.ts';
import type { SandboxFactory } from './types.ts';

/**
 * The sandbox backends as the composition root registers them (bin/sandboxes.ts): a name, a
 * line on what it is, its CLI flags, and a loader of its builder (the flags' zod schema and the
 * factory), imported only when `--sandbox` names it. Nothing else in the core names a backend.
 */

/** A CLI flag, as node:util's parseArgs declares it. */
export type BackendFlag = { type: 'string' } | { type: 'boolean' };

/** What every backend is built with, whatever its flags: the gym's folders and what its commands must not see. */
export interface SandboxBackendContext {
  /** The gym's data folder (trajectories, logs; the local backend keeps its sandboxes there). */
  dataDir: string;
  /** Built envs (venvs, the Maven repository) and image build caches; undefined: the backend's default (the data dir). */
  cacheDir?: string;
  /** A Gradle used instead of projects' wrappers (`--gradle`). */
  gradle?: string;
  /** Host paths commands must not see: the served suites' private files. */
  privatePaths: readonly string[];
  /** 'episodes' (serve, run, validate...) or 'scoring' (benchgym score: every sandbox scores once, no warm pool is kept). */
  purpose: 'episodes' | 'scoring';
}

/**
 * A backend's entry in the table: what `--help` and the flag parser need, declared without
 * loading anything, and `load` for the rest.
 */
export interface SandboxBackend {
  /** What `--sandbox` names it by. */
  name: string;
  /** One line on what its sandboxes are (`--help`, the unknown-name error). */
  summary: string;
  /** Its own CLI flags; two backends may share one (same type): each reads it. */
  flags: Readonly<Record<string, BackendFlag>>;
  /** The `--help` lines of its flags (indented six spaces), or '' for none. */
  usage: string;
  /** Imports the backend's builder (only when it is chosen: dockerode and @kubernetes/client-node take seconds to load). */
  load(): Promise<SandboxBackendBuilder>;
}

/** How a backend turns its flags into a factory: a schema for their values and a builder. */
export interface SandboxBackendBuilder<O = unknown> {
  /** Its flags' values checked: a bad one is INVALID_ARGUMENT naming the flag (parseBackendOptions). */
  options: z.ZodType<O>;
  create(options: O, ctx: SandboxBackendContext): Promise<SandboxFactory>;
}

/** The backend `--sandbox` names (default: the first registered), or INVALID_ARGUMENT listing the registered ones. */
export function backendNamed(table: readonly SandboxBackend[], name: string | undefined): SandboxBackend {
  const wanted = name ?? table[0]?.name;
  const backend = table.find((b) => b.name === wanted);
  if (!backend)
    throw new GymError(
      'INVALID_ARGUMENT',
      `invalid --sandbox: '${wanted ?? ''}' (registered: ${table.map((b) => b.name).join(', ') || 'none'})`,
    );
  return backend;
}

/** Every registered backend's flags, for a command's flag parser. */
export function backendFlags(table: readonly SandboxBackend[]): Record<string, BackendFlag> {
  const out: Record<string, BackendFlag> = {};
  for (const b of table) {
    for (const [flag, spec] of Object.entries(b.flags)) {
      if (out[flag] && out[flag].type !== spec.type)
        throw new GymError('INVALID_ARGUMENT', `--${flag} is declared twice with different types (backend ${b.name})`);
      out[flag] = spec;
    }
  }
  return out;
}

/** The `--sandbox` lines of a command's `--help`: every backend's summary and flags. */
export function backendUsage(table: readonly SandboxBackend[]): string {
  const names = table.map((b) => b.name).join(' | ');
  return [
    `  --sandbox NAME     ${names} (default ${table[0]?.name ?? 'none'}):`,
    ...table.flatMap((b) => [`    ${b.name}: ${b.summary}`, ...(b.usage ? [b.usage] : [])]),
  ].join('\n');
}

/** The backend's options from parsed flag values: its own flags only, checked by its builder's schema. */
export function parseBackendOptions<O>(
  backend: SandboxBackend,
  builder: SandboxBackendBuilder<O>,
  values: Readonly<Record<string, unknown>>,
): O {
  const own = Object.fromEntries(Object.keys(backend.flags).map((flag) => [flag, values[flag]]));
  const parsed = builder.options.safeParse(own);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const flag = String(issue.path[0] ?? '');
  const given = flag in own ? ` '${String(own[flag])}'` : '';
  throw new GymError('INVALID_ARGUMENT', `invalid --${flag}:${given} (${issue.message})`);
}

/** The factory of the backend `values.sandbox` names, built from its flags. */
export async function sandboxFactoryFrom(
  table: readonly SandboxBackend[],
  values: Readonly<Record<string, unknown>> & { sandbox?: string },
  ctx: SandboxBackendContext,
): Promise<SandboxFactory> {
  const backend = backendNamed(table, values.sandbox);
  const builder = await backend.load();
  return builder.create(parseBackendOptions(backend, builder, values), ctx);
}

/** A flag holding a whole number from `min` to `max` (`fallback`, else undefined, when not given), for backends' schemas. */
export function wholeNumberFlag<F extends number | undefined = undefined>(min: number, max: number, fallback?: F) {
  return z
    .string()
    .optional()
    .transform((v, ctx): number | F => {
      if (v === undefined) return fallback as F;
      const n = Number(v);
      if (v.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `a whole number from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });
}

/** A backend's builder, its options' type checked against its schema here and erased for the table. */
export function defineBuilder<O>(builder: SandboxBackendBuilder<O>): SandboxBackendBuilder {
  return builder as unknown as SandboxBackendBuilder;
}
