/**
 * Builds what the package runs (`npm run build`, and `npm pack` through prepack): dist/ with the
 * compiled JavaScript (ESM, source maps, type declarations), next to it every file the code reads
 * at run time (suites' data, scripts, the executor's Go source, viewer and terminal assets), and
 * the executor prebuilt for linux amd64 and arm64. Run from a checkout with its dev dependencies.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildExecutorTo, EXECUTOR_BINARY_NAME, findGo, type ExecutorArch } from '../src/sandbox/executor/build.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
/** The folders compiled into dist/, each with its run-time files. */
const SOURCES = ['src', 'envs', 'agents', 'bin'];
/** Not needed at run time: the TypeScript (compiled), docs, caches; and the prebuilt folder, made below. */
const SKIP = (name: string) =>
  name.endsWith('.ts') ||
  name.endsWith('.md') ||
  name === '__pycache__' ||
  name === '.pytest_cache' ||
  name === 'prebuilt' ||
  name === 'benchgym.js';
const ARCHES: ExecutorArch[] = ['amd64', 'arm64'];

async function copyRunTimeFiles(from: string, to: string): Promise<number> {
  let copied = 0;
  for (const entry of await fs.readdir(from, { withFileTypes: true })) {
    if (SKIP(entry.name)) continue;
    const src = path.join(from, entry.name);
    if (entry.isDirectory()) copied += await copyRunTimeFiles(src, path.join(to, entry.name));
    else if (entry.isFile()) {
      await fs.mkdir(to, { recursive: true });
      await fs.copyFile(src, path.join(to, entry.name));
      copied++;
    }
  }
  return copied;
}

await fs.rm(DIST, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(ROOT, 'tsconfig.build.json')],
  { stdio: 'inherit' },
);
let files = 0;
for (const dir of SOURCES) files += await copyRunTimeFiles(path.join(ROOT, dir), path.join(DIST, dir));
process.stderr.write(`build: compiled to dist/, ${files} run-time files copied next to it\n`);

// The executor, static, for both architectures: a machine with Node alone needs no Go.
const go = findGo();
if (!go) throw new Error('building the package needs Go (1.22 or later) for the prebuilt executor: set BENCHGYM_GO or put go on PATH');
const prebuilt = path.join(DIST, 'src', 'sandbox', 'executor', 'prebuilt');
for (const arch of ARCHES) {
  const dir = path.join(prebuilt, `linux-${arch}`);
  await fs.mkdir(dir, { recursive: true });
  const hash = await buildExecutorTo(path.join(dir, EXECUTOR_BINARY_NAME), {
    arch,
    go,
    cacheDir: path.join(os.tmpdir(), 'benchgym-build'),
  });
  await fs.writeFile(path.join(dir, 'version'), `${hash}\n`);
  process.stderr.write(`build: executor linux/${arch} ${hash}\n`);
}
