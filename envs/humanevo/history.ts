import { execFile } from 'node:child_process';
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

/** A file's content at a commit, or undefined when it does not exist there. */
export async function fileAt(repo: string, commit: string, file: string): Promise<string | undefined> {
  const exists = (await runGit(['-C', repo, 'cat-file', '-e', `${commit}:${file}`])).exitCode === 0;
  return exists ? gitIn(repo, ['show', `${commit}:${file}`]) : undefined;
}

export async function filesAt(repo: string, commit: string): Promise<string[]> {
  return (await gitIn(repo, ['ls-tree', '-r', '--name-only', '-z', commit])).split('\0').filter(Boolean);
}

/** The commit's tree written into `dir` (no .git): `git archive | tar -x`. */
export async function exportTree(repo: string, commit: string, dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  await new Promise<void>((resolve, reject) => {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
    execFile('sh', ['-c', 'git -C "$1" archive --format=tar "$2" | tar -x -C "$3"', 'sh', repo, commit, dir], { env, maxBuffer: 1 << 26 }, (err, _o, stderr) => {
      if (err) reject(new GymError('ENV_BUILD_FAILED', `exporting ${commit} of ${repo} failed: ${String(stderr).trim().slice(-1000)}`));
      else resolve();
    });
  });
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
