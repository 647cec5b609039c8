import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GymError } from '../../src/errors.ts';
import { listFunctions, projectNames, stubFunction, type Language, type SourceFunction } from './functions.ts';
import { checkoutNoFuture } from '../../src/repo/index.ts';
import { exportTree, fileAt, overlay } from './history.ts';
import type { BuiltTaskRecord } from './record.ts';

/** Bump when the layout of materialised workspaces changes: old ones are then rebuilt. */
const LAYOUT_VERSION = 2;

/** Where materialised workspaces are kept (hidden from sandboxes with the data dir). */
export function workspaceCacheDir(): string {
  return process.env.BENCHGYM_HUMANEVO_CACHE ?? path.join(process.env.BENCHGYM_HOME ?? path.join(os.homedir(), '.cache', 'benchgym'), 'humanevo');
}

export function recordKey(rec: BuiltTaskRecord): string {
  return createHash('sha256')
    .update(JSON.stringify([LAYOUT_VERSION, rec.repo_path, rec.commit, rec.base_commit, rec.latest_commit, rec.target, rec.test_files, rec.production_files]))
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
export async function buildIgnoredWorkspace(rec: BuiltTaskRecord, dir: string): Promise<boolean> {
  const latest = await fileAt(rec.repo_path, rec.latest_commit, rec.target.file);
  if (latest === undefined || !(await findFunction(rec.language, rec.target.file, latest, rec.target.qualname))) return false;
  await exportTree(rec.repo_path, rec.latest_commit, dir);
  // The change's test files (which hold the hidden tests, often grown since) are left out;
  // reverting them instead would leave tests importing code deleted since. conftest.py stays.
  const tests: Record<string, undefined> = {};
  for (const t of rec.test_files) if (path.posix.basename(t) !== 'conftest.py') tests[t] = undefined;
  await overlay(dir, tests);
  await stubTarget(rec, dir, rec.latest_commit);
  return true;
}

async function stubTarget(rec: BuiltTaskRecord, dir: string, commit: string): Promise<void> {
  const src = await fileAt(rec.repo_path, commit, rec.target.file);
  const fn = src === undefined ? undefined : await findFunction(rec.language, rec.target.file, src, rec.target.qualname);
  if (!src || !fn) throw new GymError('TASK_INVALID', `${rec.instance_id}: ${rec.target.qualname} is not in ${rec.target.file} at ${commit.slice(0, 12)}`);
  await fs.writeFile(path.join(dir, rec.target.file), stubFunction(rec.language, src, fn));
}

export interface MaterialisedTask {
  aware: string;
  /** Null when the target is gone at the newest commit. */
  ignored: string | null;
}

/** Builds (once) and returns the two start states of a record. */
export async function materialise(rec: BuiltTaskRecord, cacheDir = workspaceCacheDir()): Promise<MaterialisedTask> {
  if (!existsSync(rec.repo_path)) throw new GymError('ENV_UNAVAILABLE', `${rec.instance_id}: the repository ${rec.repo_path} is not on this machine`);
  const root = path.join(cacheDir, `${rec.instance_id.replace(/[^\w.-]+/g, '_')}-${recordKey(rec)}`);
  const ready = path.join(root, 'ready.json');
  if (existsSync(ready)) return JSON.parse(await fs.readFile(ready, 'utf8')) as MaterialisedTask;
  const tmp = `${root}.tmp-${process.pid}-${Date.now()}`;
  await fs.rm(tmp, { recursive: true, force: true });
  try {
    await buildAwareWorkspace(rec, path.join(tmp, 'aware'));
    const hasIgnored = await buildIgnoredWorkspace(rec, path.join(tmp, 'ignored'));
    const out: MaterialisedTask = { aware: path.join(root, 'aware'), ignored: hasIgnored ? path.join(root, 'ignored') : null };
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
