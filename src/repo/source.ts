import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../errors.ts';
import { runGit } from './git.ts';

/** `owner/name` as GitHub spells it (letters, digits, `-`, `_`, `.`). */
export const REPO_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9_.-]+$/;

export interface RepoSourceOptions {
  /** A directory of local mirrors (bare or not); searched before the network. */
  reposDir?: string;
  /** Clone from `https://github.com/<repo>.git` when no mirror is found (default true). */
  allowNetwork?: boolean;
}

/** Throws INVALID_ARGUMENT unless `repo` is `owner/name`. */
export function checkRepoName(repo: string): void {
  if (!REPO_NAME.test(repo) || repo.includes('..')) {
    throw new GymError('INVALID_ARGUMENT', `invalid repository name '${repo}': expected 'owner/name'`);
  }
}

/**
 * The candidate folder names of `owner/name`'s mirror inside a repos dir, in the order they
 * are tried: `owner/name`, `owner__name` (SWE-bench's instance prefix), `owner+name` (the
 * layout the `fetch` tool writes), `owner-name`, `name`; each with and without `.git`, and each
 * either a git dir itself or holding one in `repo/` or `.git/`.
 */
export function mirrorCandidates(repo: string): string[] {
  const [owner, name] = repo.split('/') as [string, string];
  const bases = [`${owner}/${name}`, `${owner}__${name}`, `${owner}+${name}`, `${owner}-${name}`, name];
  const out: string[] = [];
  for (const b of bases) for (const suffix of ['', '.git']) for (const inner of ['', 'repo']) out.push(path.join(b + suffix, inner));
  return out;
}

/** True when `dir` is a git directory or a work tree (bare or not). */
export async function isGitRepository(dir: string): Promise<boolean> {
  if (!existsSync(dir)) return false;
  const st = await fs.stat(dir).catch(() => null);
  if (!st?.isDirectory()) return false;
  // A mirror copied without its config (as some fetchers leave it) still has HEAD, objects and refs.
  if (existsSync(path.join(dir, 'HEAD')) && existsSync(path.join(dir, 'objects'))) return true;
  if (existsSync(path.join(dir, '.git'))) return true;
  const r = await runGit(['rev-parse', '--git-dir'], { cwd: dir });
  return r.exitCode === 0 && path.resolve(dir, r.stdout.trim()).startsWith(path.resolve(dir));
}

/**
 * The local mirror of `repo` under `reposDir`, or null when there is none.
 *
 * @example await locateMirror('google/gson', 'MIRRORS') // 'MIRRORS/google+gson/repo'
 */
export async function locateMirror(repo: string, reposDir: string): Promise<string | null> {
  checkRepoName(repo);
  for (const rel of mirrorCandidates(repo)) {
    const dir = path.join(reposDir, rel);
    if (await isGitRepository(dir)) return dir;
  }
  // GitHub names are case-insensitive (`fasterxml/jackson-core` is `FasterXML/jackson-core`):
  // the same candidates with the repos dir's own spelling of their first folder.
  const entries = await fs.readdir(reposDir).catch(() => [] as string[]);
  for (const rel of mirrorCandidates(repo)) {
    const [first, ...rest] = rel.split(path.sep);
    const actual = entries.find((e) => e !== first && e.toLowerCase() === first!.toLowerCase());
    if (!actual) continue;
    const sub = rest.length && rest[0] ? await fs.readdir(path.join(reposDir, actual)).catch(() => [] as string[]) : [];
    const second = rest[0] ? (sub.find((e) => e.toLowerCase() === rest[0]!.toLowerCase()) ?? rest[0]) : undefined;
    const dir = path.join(reposDir, actual, ...(second !== undefined ? [second, ...rest.slice(1)] : rest));
    if (await isGitRepository(dir)) return dir;
  }
  return null;
}

/**
 * Where to fetch `repo` from: its local mirror when `reposDir` has one, else the GitHub URL
 * (unless `allowNetwork` is false: then ENV_UNAVAILABLE naming the folders tried).
 */
export async function repoSource(repo: string, opts: RepoSourceOptions = {}): Promise<string> {
  checkRepoName(repo);
  if (opts.reposDir) {
    const mirror = await locateMirror(repo, opts.reposDir);
    if (mirror) return mirror;
  }
  if (opts.allowNetwork === false) {
    throw new GymError(
      'ENV_UNAVAILABLE',
      opts.reposDir
        ? `no mirror of ${repo} in ${opts.reposDir} (tried ` +
            `${mirrorCandidates(repo).slice(0, 5).join(', ')}, ...) and the network is not allowed`
        : `no repos dir given for ${repo} and the network is not allowed`,
      { repo },
    );
  }
  return `https://github.com/${repo}.git`;
}
