import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { GymError } from '../../src/errors.ts';
import type { DatasetForm } from './dataset.ts';

// The general machinery (cut-offs, uv resolution, wheel checks) is shared with CoderEval's project envs.
export { eraCutoff, eraLock, lacksWheelFor, PYTHON_WHEEL_ERA, uploadTime, uvCompile } from '../../src/env/era.ts';

/**
 * Dependency drift. An exact pin (`gradio==3.24.0`) says nothing of what it pulls in: pip
 * resolves today's newest compatible releases (a `gradio_client` without
 * `gradio_client.serializing`, a Werkzeug without what flask 3.0.0 code calls), so
 * problems that passed with the authors' envs fail. For the libraries listed here, the
 * env's dependencies are constrained to what PyPI held when the pin was uploaded: a pip
 * constraints file per env, computed once by `uv pip compile --exclude-newer CUTOFF` and
 * stored in `era-constraints.json` (pip has no upload-date cut-off; uv is only needed to
 * regenerate the table, never to build envs).
 */
export const ERA_CONSTRAINED: Record<DatasetForm, Set<string>> = {
  v1: new Set(['geopandas', 'matplotlib']),
  v2: new Set(['gradio', 'flask']),
};

/**
 * Distributions never constrained: their releases of the era need a system library the
 * envs do not have (rtree before 1.0 loads libspatialindex from the system; the 1.x wheels
 * bundle it), so they resolve to today's release, as when the authors built their envs.
 */
export const UNCONSTRAINED = new Set(['rtree']);

export const EraEntry = z.object({
  python: z.string(),
  /** The env's requirements, sorted: the key. */
  requirements: z.array(z.string()),
  library: z.string(),
  cutoff: z.string(),
  constraints: z.array(z.string()),
});
export type EraEntry = z.infer<typeof EraEntry>;

export const ERA_FILE = fileURLToPath(new URL('./era-constraints.json', import.meta.url));

/** The table's key of an env: its Python and its sorted requirements. */
export function eraKey(python: string, requirements: string[]): string {
  return JSON.stringify([python, [...requirements].sort()]);
}

let table: Map<string, EraEntry> | undefined;

/** The stored table, keyed by (Python, sorted requirements); read once. */
export function eraTable(): Map<string, EraEntry> {
  if (!table) {
    const raw = JSON.parse(readFileSync(ERA_FILE, 'utf8')) as unknown;
    const parsed = z.array(EraEntry).safeParse(raw);
    if (!parsed.success)
      throw new GymError('TASK_INVALID', `${ERA_FILE}: not an era constraints table (${parsed.error.issues[0]?.message})`);
    table = new Map(parsed.data.map((e) => [eraKey(e.python, e.requirements), e]));
  }
  return table;
}

/** The era constraints of an env, when its library is listed and the table has its requirements. */
export function eraConstraintsOf(form: DatasetForm, library: string, python: string, requirements: string[]): EraEntry | undefined {
  if (!ERA_CONSTRAINED[form].has(library.toLowerCase())) return undefined;
  return eraTable().get(eraKey(python, requirements));
}
