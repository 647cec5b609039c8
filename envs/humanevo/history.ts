import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../../src/errors.ts';
import { git, runGit } from '../../src/repo/index.ts';

/** `git <args>` in a repository (bare or not); stdout, or ENV_BUILD_FAILED with git's message. */
export function gitIn(repo: string, args: string[]): Promise<string> {
  return git(['-C', repo, ...args], { timeoutMs: 10 * 60_000 });
}

/** One step of the history: a commit (a pull request's merge, or a plain commit) and the parent it is compared with. */
export interface Change {
  commit: string;
  parent: string;
  date: string;
  subject: string;
  merge: boolean;
}

/**
 * The changes between `from` (exclusive) and `to` (default HEAD), oldest first, along the
 * first-parent line: each merge of a pull request is one change (compared with the branch
 * before it), and so is each commit made directly on the branch. Root commits have no parent
 * and are left out.
 */
export async function listChanges(repo: string, opts: { from?: string; to?: string } = {}): Promise<Change[]> {
  const to = opts.to ?? 'HEAD';
  const range = opts.from ? `${opts.from}..${to}` : to;
  const out = await gitIn(repo, ['log', '--first-parent', '--reverse', '--format=%H%x00%P%x00%cI%x00%s', range]);
  const changes: Change[] = [];
  for (const line of out.split('\n')) {
    if (!line) continue;
    const [commit, parents, date, subject] = line.split('\0') as [string, string, string, string];
    const ps = parents.split(' ').filter(Boolean);
    if (!ps.length) continue;
    changes.push({ commit, parent: ps[0]!, date, subject, merge: ps.length > 1 });
  }
  return changes;
}

export interface FileChange {
  status: 'A' | 'M' | 'D';
  path: string;
}

/** Files a change added, modified or deleted (renames split into a delete and an add). */
export async function changedFiles(repo: string, parent: string, commit: string): Promise<FileChange[]> {
  const out = await gitIn(repo, ['diff', '--name-status', '--no-renames', '-z', parent, commit]);
  const parts = out.split('\0').filter(Boolean);
  const files: FileChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const status = parts[i]![0] as string;
    if (status === 'A' || status === 'M' || status === 'D') files.push({ status, path: parts[i + 1]! });
    else if (status === 'T') files.push({ status: 'M', path: parts[i + 1]! });
  }
  return files;
}

/**
 * A tree the local copy cannot give whole: a blob (or tree) it lacks, as a copy made without its
 * largest files does. The builder rejects the change and walks on; other callers see ENV_BUILD_FAILED.
 */
export class UnexportableError extends GymError {
  constructor(message: string) {
    super('ENV_BUILD_FAILED', message, { unexportable: true });
  }
}

export const isUnexportable = (err: unknown): err is UnexportableError => err instanceof GymError && err.details?.unexportable === true;

/**
 * A file's content at a commit, or undefined when it does not exist there; UnexportableError
 * when the tree names it but the local copy lacks its blob (never taken for an absent file).
 */
export async function fileAt(repo: string, commit: string, file: string): Promise<string | undefined> {
  const exists = (await runGit(['-C', repo, 'cat-file', '-e', `${commit}:${file}`])).exitCode === 0;
  if (exists) return gitIn(repo, ['show', `${commit}:${file}`]);
  // rev-parse reads only the tree: it names the blob even when the blob is missing.
  const named = await runGit(['-C', repo, 'rev-parse', '--verify', '-q', `${commit}:${file}`]);
  if (named.exitCode === 0)
    throw new UnexportableError(`${file} at ${commit.slice(0, 10)}: the local copy lacks its blob ${named.stdout.trim().slice(0, 12)}`);
  return undefined;
}

export async function filesAt(repo: string, commit: string): Promise<string[]> {
  return (await gitIn(repo, ['ls-tree', '-r', '--name-only', '-z', commit])).split('\0').filter(Boolean);
}

/**
 * The commit's tree written into `dir` (no .git): `git archive | tar -x`, each side's exit code
 * checked (a blob the copy lacks ends git archive midway: tar alone may take the cut stream for
 * a whole one). UnexportableError when either fails.
 */
export async function exportTree(repo: string, commit: string, dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  const ended = (p: ReturnType<typeof spawn>) =>
    new Promise<number | null>((resolve, reject) => (p.on('error', reject), p.on('close', (code) => resolve(code))));
  const archive = spawn('git', ['-C', repo, 'archive', '--format=tar', commit], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const tar = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
  let errors = '';
  const keep = (b: Buffer) => void (errors = (errors + b.toString()).slice(-2000));
  archive.stderr!.on('data', keep);
  tar.stderr!.on('data', keep);
  tar.stdin!.on('error', () => {});
  archive.stdout!.pipe(tar.stdin!);
  const [a, t] = await Promise.all([ended(archive), ended(tar)]);
  if (a !== 0 || t !== 0)
    throw new UnexportableError(
      `exporting ${commit.slice(0, 10)} of ${repo} failed (git archive exit ${a}, tar exit ${t}): ${errors.trim().slice(-1000)}`,
    );
}

/** The full commit id of a revision. */
export async function resolveRev(repo: string, rev: string): Promise<string> {
  return (await gitIn(repo, ['rev-parse', '--verify', `${rev}^{commit}`])).trim();
}

/** Writes files (relative paths) into a directory; undefined content removes the file. */
export async function overlay(dir: string, files: Record<string, string | undefined>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(dir, rel);
    if (content === undefined) await fs.rm(abs, { force: true });
    else {
      await fs.mkdir(path.dirname(abs), { recursive: true });
      await fs.writeFile(abs, content);
    }
  }
}
