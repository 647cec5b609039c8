/**
 * Fills the docs store the `with-docs` prompt variants come from: for each problem, the
 * pydoc text of its `name_of_class_or_func`, rendered in the problem's own env.
 *
 *   node --import tsx envs/gitchameleon/render_docs.ts --dataset PATH [--out FILE] [--tasks a,b] [--heavy] [--cache-dir DIR]
 *
 * Envs are built as scoring builds them (and shared with it). Heavy problems (torch, ...)
 * are skipped unless --heavy is given.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultDataDir } from '../../src/project.ts';
import { LocalInstanceFactory } from '../../src/sandbox/local/index.ts';
import { SuiteRegistry } from '../../src/tasks/registry.ts';
import { defaultDocsFile, renderDocs, writeDocsStore } from './docs.ts';
import { gitchameleonSuite, loadGitChameleon } from './index.ts';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      dataset: { type: 'string' },
      out: { type: 'string' },
      tasks: { type: 'string' },
      heavy: { type: 'boolean' },
      'cache-dir': { type: 'string' },
      'data-dir': { type: 'string' },
    },
  });
  if (!values.dataset) {
    process.stderr.write('usage: render_docs.ts --dataset PATH [--out FILE] [--tasks a,b] [--heavy] [--cache-dir DIR]\n');
    return 2;
  }
  const loaded = await loadGitChameleon(values.dataset);
  const out = path.resolve(
    values.out ?? defaultDocsFile(loaded.form, values['cache-dir'] ? path.join(values['cache-dir'], 'gitchameleon') : undefined),
  );
  const wanted = values.tasks ? new Set(values.tasks.split(',').map((s) => s.trim())) : undefined;
  const tasks = loaded.tasks.filter((t) => (wanted ? wanted.has(t.id) : values.heavy || !t.metadata.heavy));
  const registry = new SuiteRegistry([gitchameleonSuite()]);
  registry.enable(`gitchameleon=${path.resolve(values.dataset)}`);
  const cacheDir = values['cache-dir'] ?? process.env.BENCHGYM_CACHE;
  const sandboxes = new LocalInstanceFactory({
    dataDir: values['data-dir'] ?? defaultDataDir(),
    ...(cacheDir ? { cacheDir } : {}),
    privatePaths: registry.privatePaths(),
  });
  try {
    const entries = await renderDocs(sandboxes, tasks, loaded.docSymbols, {
      onResult: (id, r) =>
        process.stderr.write(r.error ? `no docs   ${id}: ${r.error}\n` : `docs      ${id}: ${r.symbol} (${r.chars} characters)\n`),
    });
    await writeDocsStore(out, entries);
    process.stdout.write(`${entries.length} of ${tasks.length} problems documented in ${out}\n`);
    return 0;
  } finally {
    await sandboxes.close();
  }
}

process.exitCode = await main();
