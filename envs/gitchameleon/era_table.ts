// A maintenance script, not part of the suite: it regenerates era-constraints.json (era.ts reads it).
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { eraCutoff, eraLock, uploadTime } from '../../src/env/era.ts';
import { ERA_CONSTRAINED, ERA_FILE, eraKey, eraTable, UNCONSTRAINED, type EraEntry } from './era.ts';
import { loadGitChameleon } from './index.ts';

/**
 * Regenerates the table for every env of the listed libraries in a dataset:
 * `node --import tsx envs/gitchameleon/era_table.ts --dataset DIR [--uv PATH]` (uv from PyPI:
 * `pip install uv`). Entries for other datasets' envs are kept.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { dataset: { type: 'string', multiple: true }, uv: { type: 'string', default: 'uv' } } });
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
      const { cutoff, lock } = await eraLock(
        values.uv!,
        task.env.version,
        eraCutoff(await uploadTime(library, pin.split('==')[1]!), task.env.version),
        requirements,
      );
      // The problem's exact pins stay as they are; an unpinned requirement ("numpy") is
      // constrained too, unless its era release cannot work here (UNCONSTRAINED).
      const names = new Set([
        ...requirements.filter((r) => r.includes('==')).map((r) => r.split('==')[0]!.toLowerCase().replace(/_/g, '-')),
        ...UNCONSTRAINED,
      ]);
      const constraints = lock.filter((l) => !names.has(l.split('==')[0]!.toLowerCase().replace(/_/g, '-')));
      entries.set(key, { python: task.env.version, requirements, library, cutoff, constraints });
      process.stderr.write(`${form} ${task.id}: ${requirements.join(' ')} before ${cutoff}: ${constraints.length} constraints\n`);
    }
  }
  const sorted = [...entries.values()].sort(
    (a, b) =>
      a.library.localeCompare(b.library) ||
      a.python.localeCompare(b.python) ||
      a.requirements.join(' ').localeCompare(b.requirements.join(' '), undefined, { numeric: true }),
  );
  await fs.writeFile(ERA_FILE, '[\n' + sorted.map((e) => JSON.stringify(e)).join(',\n') + '\n]\n');
  process.stderr.write(`${ERA_FILE}: ${sorted.length} envs\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  });
}
