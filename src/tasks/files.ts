import { promises as fs } from 'node:fs';
import path from 'node:path';

/** Reads every regular file below `dir` into a map of POSIX relative paths to contents. */
export async function readFileTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(rel: string): Promise<void> {
    let entries;
    try {
      entries = await fs.readdir(path.join(dir, rel), { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name === '__pycache__' || entry.name === '.pytest_cache' || entry.name === 'target') continue;
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(childRel);
      else if (entry.isFile()) out[childRel] = await fs.readFile(path.join(dir, childRel), 'utf8');
    }
  }
  await walk('');
  return out;
}
