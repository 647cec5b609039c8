import { readFileSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { eraCutoff, eraLock, uploadTime } from '../../src/env/era.ts';
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

function eraKey(python: string, requirements: string[]): string {
  return JSON.stringify([python, [...requirements].sort()]);
}

let table: Map<string, EraEntry> | undefined;

/** The stored table, keyed by (Python, sorted requirements); read once. */
export function eraTable(): Map<string, EraEntry> {
  if (!table) {
    const raw = JSON.parse(readFileSync(ERA_FILE, 'utf8')) as unknown;
    const parsed = z.array(EraEntry).safeParse(raw);
    if (!parsed.success) throw new GymError('TASK_INVALID', `${ERA_FILE}: not an era constraints table (${parsed.error.issues[0]?.message})`);
    table = new Map(parsed.data.map((e) => [eraKey(e.python, e.requirements), e]));
  }
  return table;
}

/** The era constraints of an env, when its library is listed and the table has its requirements. */
export function eraConstraintsOf(form: DatasetForm, library: string, python: string, requirements: string[]): EraEntry | undefined {
  if (!ERA_CONSTRAINED[form].has(library.toLowerCase())) return undefined;
  return eraTable().get(eraKey(python, requirements));
}

/**
 * Regenerates the table for every env of the listed libraries in a dataset:
 * `node --import tsx envs/gitchameleon/era.ts --dataset DIR [--uv PATH]` (uv from PyPI:
 * `pip install uv`). Entries for other datasets' envs are kept.
 */
async function main(): Promise<void> {
  const { parseArgs } = await import('node:util');
  const { values } = parseArgs({ options: { dataset: { type: 'string', multiple: true }, uv: { type: 'string', default: 'uv' } } });
  const { loadGitChameleon } = await import('./index.ts');
  const entries = new Map<string, EraEntry>();
  try {
    for (const e of eraTable().values()) entries.set(eraKey(e.python, e.requirements), e);
  } catch {
    // no table yet
  }
  for (const dataset of values.dataset ?? []) {
    const { form, tasks } = await loadGitChameleon(dataset);
    for (const task of tasks) {
      const library = String(task.metadata.library);
      if (task.env.kind !== 'python' || !ERA_CONSTRAINED[form].has(library.toLowerCase())) continue;
      const requirements = [...task.env.requirements].sort();
      const key = eraKey(task.env.version, requirements);
      if (entries.has(key)) continue;
      const pin = requirements.find((r) => r.toLowerCase().startsWith(`${library.toLowerCase()}==`))!;
      const { cutoff, lock } = await eraLock(values.uv!, task.env.version, eraCutoff(await uploadTime(library, pin.split('==')[1]!), task.env.version), requirements);
      // The problem's exact pins stay as they are; an unpinned requirement ("numpy") is
      // constrained too, unless its era release cannot work here (UNCONSTRAINED).
      const names = new Set([...requirements.filter((r) => r.includes('==')).map((r) => r.split('==')[0]!.toLowerCase().replace(/_/g, '-')), ...UNCONSTRAINED]);
      const constraints = lock.filter((l) => !names.has(l.split('==')[0]!.toLowerCase().replace(/_/g, '-')));
      entries.set(key, { python: task.env.version, requirements, library, cutoff, constraints });
      process.stderr.write(`${form} ${task.id}: ${requirements.join(' ')} before ${cutoff}: ${constraints.length} constraints\n`);
    }
  }
  const sorted = [...entries.values()].sort((a, b) => a.library.localeCompare(b.library) || a.python.localeCompare(b.python) || a.requirements.join(' ').localeCompare(b.requirements.join(' '), undefined, { numeric: true }));
  await fs.writeFile(ERA_FILE, '[\n' + sorted.map((e) => JSON.stringify(e)).join(',\n') + '\n]\n');
  process.stderr.write(`${ERA_FILE}: ${sorted.length} envs\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  });
}
