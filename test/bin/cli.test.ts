/**
 * Start-up loads what a command uses: `--version` and `--help` import no suite, agent, backend or
 * server, and `tasks --suite examples` imports that suite alone and no container client. Read
 * off the modules a real `benchgym` process loads (a loader hook that names each one).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const HOOK =
  `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent("export async function load(url, ctx, next) { if (url.startsWith('file:')) ` +
  `process.stderr.write('LOADED ' + url + '\\\\n'); return next(url, ctx); }"));
`;

/** The files (relative to the checkout, or node_modules/<package>) a `benchgym ARGS` process loads. */
async function loadedBy(args: string[], opts: { dataDir?: boolean } = {}): Promise<string[]> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-cli-imports-'));
  try {
    const hook = path.join(dir, 'hook.mjs');
    await fs.writeFile(hook, HOOK);
    const argv = [
      '--import',
      pathToFileURL(hook).href,
      path.join(ROOT, 'bin', 'benchgym.js'),
      ...args,
      ...(opts.dataDir ? ['--data-dir', dir] : []),
    ];
    const { stderr } = await run(process.execPath, argv, { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
    return [...new Set([...stderr.matchAll(/^LOADED (\S+)$/gm)].map((m) => fileURLToPath(m[1]!.split('?')[0]!)))].map((f) =>
      f.includes('/node_modules/') ? `node_modules/${f.split('/node_modules/').at(-1)}` : path.relative(ROOT, f),
    );
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const packageOf = (f: string) =>
  f.startsWith('node_modules/')
    ? f
        .split('/')
        .slice(1, f.split('/')[1]!.startsWith('@') ? 3 : 2)
        .join('/')
    : null;

test('--version and --help load no suite, agent, sandbox backend, server or their libraries', async () => {
  for (const args of [['--version'], ['--help']]) {
    const files = await loadedBy(args);
    assert.ok(files.includes('src/cli/main.ts'), `the hook sees the CLI's modules: ${files.join(', ')}`);
    const heavy = files.filter((f) => /^(envs|agents)\/|^src\/(sandbox|server|episode|tools|viewer|runner)\//.test(f));
    assert.deepEqual(heavy, [], `benchgym ${args[0]}`);
    const libraries = [...new Set(files.map(packageOf).filter((p) => p !== null))].filter((p) => p !== 'tsx' && p !== 'esbuild');
    assert.deepEqual(libraries, [], `benchgym ${args[0]}: libraries`);
  }
});

test('tasks --suite examples loads that suite, and neither the others, the agents, Docker nor Kubernetes', async () => {
  const files = await loadedBy(['tasks', '--suite', 'examples'], { dataDir: true });
  assert.ok(
    files.some((f) => f.startsWith('envs/examples/')),
    files.join(', '),
  );
  assert.deepEqual(
    files.filter((f) => /^envs\/(codereval|swebench|humanevo)\/|^agents\/|^src\/sandbox\/(docker|kubernetes)\//.test(f)),
    [],
  );
  const libraries = new Set(files.map(packageOf));
  for (const lib of ['dockerode', '@kubernetes/client-node', 'openai', 'node-pty', 'express', '@modelcontextprotocol/sdk'])
    assert.equal(libraries.has(lib), false, lib);
});
