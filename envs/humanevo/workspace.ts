import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GymError } from '../../src/errors.ts';
import {
  functionSource,
  isSourcePath,
  isTestPath,
  listFunctions,
  projectNames,
  stubFunction,
  type Language,
  type SourceFunction,
} from './functions.ts';
import { checkoutNoFuture } from '../../src/repo/index.ts';
import { exportTree, fileAt, filesAt, overlay } from './history.ts';
import type { BuiltTaskRecord } from './record.ts';

/** Bump when the layout of materialised workspaces changes: old ones are then rebuilt. */
const LAYOUT_VERSION = 3;

/** Where materialised workspaces are kept (hidden from sandboxes with the data dir). */
export function workspaceCacheDir(): string {
  return (
    process.env.BENCHGYM_HUMANEVO_CACHE ?? path.join(process.env.BENCHGYM_HOME ?? path.join(os.homedir(), '.cache', 'benchgym'), 'humanevo')
  );
}

export function recordKey(rec: BuiltTaskRecord): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        LAYOUT_VERSION,
        rec.repo_path,
        rec.commit,
        rec.base_commit,
        rec.latest_commit,
        rec.target,
        rec.test_files,
        rec.production_files,
      ]),
    )
    .digest('hex')
    .slice(0, 16);
}

/** The target function in a source, found by its qualified name. */
export async function findFunction(language: Language, file: string, src: string, qualname: string): Promise<SourceFunction | undefined> {
  const fns = (await listFunctions(language, { [file]: src }, projectNames(language, [file]))).get(file);
  return Array.isArray(fns) ? fns.find((f) => f.qualname === qualname) : undefined;
}

/**
 * HumanEvo's evolving-aware start state (paper §3.1): the repository at the change's
 * parent with its history cut there, the change's production edits laid over it (its test
 * edits held back as hidden tests), and the target's body removed.
 */
export async function buildAwareWorkspace(rec: BuiltTaskRecord, dir: string): Promise<void> {
  // src/repo: only the parent's history is fetched; no remote, tags, other branches or reflog.
  await checkoutNoFuture({ source: rec.repo_path, commit: rec.base_commit, dest: dir });
  const edits: Record<string, string | undefined> = {};
  for (const f of rec.production_files) edits[f.path] = f.status === 'D' ? undefined : await fileAt(rec.repo_path, rec.commit, f.path);
  await overlay(dir, edits);
  await stubTarget(rec, dir, rec.commit);
}

/**
 * The evolving-ignored start state (what earlier benchmarks use): the newest commit, the
 * target stubbed there, the change's test files left out (so the hidden tests stay
 * hidden), and no history (which would hold the answer). Null when the
 * target no longer exists at the newest commit.
 */
export async function buildIgnoredWorkspace(rec: BuiltTaskRecord, dir: string): Promise<IgnoredState | null> {
  const file = await targetFileAt(rec, rec.latest_commit);
  if (!file) return null;
  await exportTree(rec.repo_path, rec.latest_commit, dir);
  // The change's test files (which hold the hidden tests, often grown since) are left out;
  // reverting them instead would leave tests importing code deleted since. conftest.py stays.
  const tests: Record<string, undefined> = {};
  for (const t of rec.test_files) if (path.posix.basename(t) !== 'conftest.py' && t !== file) tests[t] = undefined;
  await overlay(dir, tests);
  const latest = await stubTarget(rec, dir, rec.latest_commit, file);
  // The reference as written there: the newest file with the original function in place of the stub.
  const original = (await fileAt(rec.repo_path, rec.commit, rec.target.file))!;
  const originalFn = (await findFunction(rec.language, rec.target.file, original, rec.target.qualname))!;
  const lines = latest.src.split('\n');
  const solution = [
    ...lines.slice(0, latest.fn.lines[0] - 1),
    functionSource(original, originalFn),
    ...lines.slice(latest.fn.lines[1]),
  ].join('\n');
  return { file, lines: latest.fn.lines, solution };
}

/** The ignored start state's target: the file it is in at the newest commit (when it moved since) and the reference written there. */
export interface IgnoredState {
  file: string;
  /** The target's lines there. */
  lines: [number, number];
  solution: string;
}

/**
 * Where the target is at a later commit: its own file when it is still there; else the one
 * file that now defines it by the same qualified name (pydash's 2014 functions moved from
 * `pydash/__init__.py` into `pydash/arrays.py`, validators' modules into `src/`): the files with
 * its file's name first, then every source file. Null when it is gone or ambiguous.
 */
export async function targetFileAt(rec: BuiltTaskRecord, commit: string): Promise<string | null> {
  const has = async (f: string) => {
    const src = await fileAt(rec.repo_path, commit, f);
    return src !== undefined && Boolean(await findFunction(rec.language, f, src, rec.target.qualname));
  };
  if (await has(rec.target.file)) return rec.target.file;
  const sources = (await filesAt(rec.repo_path, commit)).filter((f) => isSourcePath(rec.language, f) && !isTestPath(rec.language, f));
  const base = path.posix.basename(rec.target.file);
  for (const pool of [sources.filter((f) => path.posix.basename(f) === base), sources.slice(0, 3000)]) {
    if (!pool.length) continue;
    const texts: Record<string, string> = {};
    for (const f of pool) texts[f] = (await fileAt(rec.repo_path, commit, f)) ?? '';
    const fns = await listFunctions(
      rec.language,
      texts,
      projectNames(rec.language, pool, (p) => texts[p]),
    );
    const found = pool.filter((f) => {
      const list = fns.get(f);
      return Array.isArray(list) && list.some((fn) => fn.qualname === rec.target.qualname);
    });
    if (found.length === 1) return found[0]!;
    if (found.length > 1) return null;
  }
  return null;
}

async function stubTarget(
  rec: BuiltTaskRecord,
  dir: string,
  commit: string,
  file = rec.target.file,
): Promise<{ src: string; fn: SourceFunction }> {
  const src = await fileAt(rec.repo_path, commit, file);
  const fn = src === undefined ? undefined : await findFunction(rec.language, file, src, rec.target.qualname);
  if (!src || !fn)
    throw new GymError('TASK_INVALID', `${rec.instance_id}: ${rec.target.qualname} is not in ${file} at ${commit.slice(0, 12)}`);
  await fs.writeFile(path.join(dir, file), stubFunction(rec.language, src, fn));
  return { src, fn };
}

export interface MaterialisedTask {
  aware: string;
  /** Null when the target is gone at the newest commit. */
  ignored: string | null;
  /** The ignored start state's target file (its file then, or where it moved) and reference. */
  ignoredTarget?: IgnoredState;
}

/** Builds (once) and returns the two start states of a record. */
export async function materialise(rec: BuiltTaskRecord, cacheDir = workspaceCacheDir()): Promise<MaterialisedTask> {
  if (!existsSync(rec.repo_path))
    throw new GymError('ENV_UNAVAILABLE', `${rec.instance_id}: the repository ${rec.repo_path} is not on this machine`);
  const root = path.join(cacheDir, `${rec.instance_id.replace(/[^\w.-]+/g, '_')}-${recordKey(rec)}`);
  const ready = path.join(root, 'ready.json');
  if (existsSync(ready)) return JSON.parse(await fs.readFile(ready, 'utf8')) as MaterialisedTask;
  const tmp = `${root}.tmp-${process.pid}-${Date.now()}`;
  await fs.rm(tmp, { recursive: true, force: true });
  try {
    await buildAwareWorkspace(rec, path.join(tmp, 'aware'));
    const ignored = await buildIgnoredWorkspace(rec, path.join(tmp, 'ignored'));
    const out: MaterialisedTask = {
      aware: path.join(root, 'aware'),
      ignored: ignored ? path.join(root, 'ignored') : null,
      ...(ignored ? { ignoredTarget: ignored } : {}),
    };
    await fs.writeFile(path.join(tmp, 'ready.json'), JSON.stringify(out));
    await fs.mkdir(path.dirname(root), { recursive: true });
    await fs.rename(tmp, root).catch(async (err: NodeJS.ErrnoException) => {
      // Another process finished first: use its copy.
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      await fs.rm(tmp, { recursive: true, force: true });
    });
    return JSON.parse(await fs.readFile(ready, 'utf8')) as MaterialisedTask;
  } catch (err) {
    await fs.rm(tmp, { recursive: true, force: true });
    throw err;
  }
}
