import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../errors.ts';
import { withDirLock, OncePerKey } from '../lock.ts';
import { FULL_SHA, git, runGit } from './git.ts';
import { absentFiles } from './absent.ts';
import { assertNoFuture, type FutureReport } from './future.ts';
import { checkRepoName, repoSource, type RepoSourceOptions } from './source.ts';

export interface CheckoutOptions {
  /** A local git dir or work tree (bare or not), or a URL git can fetch from. */
  source: string;
  /** The base commit: a full object name (abbreviations cannot be fetched by name). */
  commit: string;
  /** The work tree to create; must not exist or be empty. */
  dest: string;
  /** The one branch the workspace has, at `commit` (default `main`). */
  branch?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface Checkout {
  dir: string;
  commit: string;
  branch: string;
  /** The proof that nothing after `commit` is stored (see `findFuture`). */
  report: FutureReport;
  /**
   * Files of `commit` the source lacks the contents of (a local mirror that left out its
   * largest files): not in the work tree, kept out of it by a sparse checkout. Absent when none.
   */
  missing?: string[];
}

/**
 * Makes `dest` a git work tree at `commit` with **no future**: only the history of `commit`
 * is fetched (by object name, no tags), one branch points at it, there is no remote, no
 * FETCH_HEAD or ORIG_HEAD, the reflog is expired, unreachable objects are pruned and the
 * repository is repacked; `assertNoFuture` then proves that no object outside the history
 * of `commit` is stored. Sources whose server refuses fetching an unadvertised commit are
 * fetched whole and cut the same way.
 *
 * Errors: INVALID_ARGUMENT (not a full object name, `dest` not empty), ENV_BUILD_FAILED
 * (the source lacks the commit or an object of its history; git failed).
 *
 * @example await checkoutNoFuture({ source: '/mirrors/google+gson/repo', commit: 'aa236ec3...', dest: '/tmp/ws' })
 */
export async function checkoutNoFuture(opts: CheckoutOptions): Promise<Checkout> {
  const commit = opts.commit.toLowerCase();
  if (!FULL_SHA.test(commit)) throw new GymError('INVALID_ARGUMENT', `base commit '${opts.commit}' is not a full object name`);
  const branch = opts.branch ?? 'main';
  if ((await runGit(['check-ref-format', '--branch', branch])).exitCode !== 0) {
    throw new GymError('INVALID_ARGUMENT', `invalid branch name '${branch}'`);
  }
  const dest = path.resolve(opts.dest);
  if (existsSync(dest) && (await fs.readdir(dest)).length > 0) {
    throw new GymError('INVALID_ARGUMENT', `checkout destination ${dest} exists and is not empty`);
  }
  const g = { cwd: dest, timeoutMs: opts.timeoutMs, signal: opts.signal };
  const source = /^[a-z][a-z0-9+.-]*:\/\//i.test(opts.source) ? opts.source : path.resolve(opts.source);
  await fs.mkdir(dest, { recursive: true });
  try {
    await git(['init', '-q', '-b', branch], g);
    // Protocol v2 lets a client ask for any commit the server has; v0 servers refuse unadvertised ones.
    const bySha = await runGit(['-c', 'protocol.version=2', 'fetch', '-q', '--no-tags', '--no-write-fetch-head', source, commit], g);
    if (bySha.exitCode !== 0) {
      const whole = await runGit(['fetch', '-q', '--no-tags', '--no-write-fetch-head', source, '+refs/*:refs/benchgym-fetch/*'], g);
      const has = await runGit(['cat-file', '-e', `${commit}^{commit}`], g);
      const stderr = (bySha.stderr + whole.stderr).trim();
      if ((whole.exitCode !== 0 || has.exitCode !== 0) && !source.includes('://') && INCOMPLETE_SOURCE.test(stderr)) {
        const missing = await copyIncompleteHistory(source, commit, dest, branch, g);
        if (missing) return { ...missing, report: await assertNoFuture(dest, commit) };
      }
      if (whole.exitCode !== 0 || has.exitCode !== 0) {
        // A remote that cannot be reached is this machine's lack, not the task's fault.
        const unreachable =
          source.includes('://') &&
          /Could not resolve host|unable to access|Failed to connect|Connection (refused|timed out)|Network is unreachable/i.test(stderr);
        throw new GymError(
          unreachable ? 'ENV_UNAVAILABLE' : 'ENV_BUILD_FAILED',
          `cannot fetch commit ${commit} from ${opts.source}: ${stderr.slice(-2000)}`,
          {
            source: opts.source,
            commit,
          },
        );
      }
    }
    await git(['update-ref', `refs/heads/${branch}`, commit], g);
    await git(['reset', '-q', '--hard', commit], g);
    await cutFuture(dest, branch, g);
    const report = await assertNoFuture(dest, commit);
    return { dir: dest, commit, branch, report };
  } catch (err) {
    await fs.rm(dest, { recursive: true, force: true });
    throw err;
  }
}

/** What git says when a local source lacks objects its history reaches (upload-pack cannot pack them). */
const INCOMPLETE_SOURCE =
  /pack-objects died|missing (blob|tree) object|unable to read [0-9a-f]{40}|fatal: bad object|did not send all necessary objects/;

/**
 * The history of `commit` from a local repository that lacks some of its objects: only the
 * objects `commit` reaches are copied (so there is no future to cut), git's own
 * `--missing=allow-any` packing skipping the absent ones; the files of `commit` whose
 * contents are absent are kept out of the work tree by a sparse checkout, so status, diff
 * and reset never ask for them. `null` when the commit or one of its trees is absent too.
 */
async function copyIncompleteHistory(
  source: string,
  commit: string,
  dest: string,
  branch: string,
  g: { cwd: string; timeoutMs?: number; signal?: AbortSignal },
): Promise<{ dir: string; commit: string; branch: string; missing: string[] } | null> {
  const src = { ...g, cwd: source };
  const objects = await runGit(['rev-list', '--objects', '--missing=allow-any', commit], src);
  if (objects.exitCode !== 0) return null;
  // A whole (not thin) pack with its index, written straight into the new repository.
  const pack = await runGit(['pack-objects', '--missing=allow-any', '-q', path.join(dest, '.git', 'objects', 'pack', 'pack')], {
    ...src,
    input: objects.stdout,
  });
  if (pack.exitCode !== 0 || (await runGit(['cat-file', '-e', `${commit}^{tree}`], g)).exitCode !== 0) return null;
  // Every tree of the commit must be there to list its files; only blobs may be absent.
  const missing = await absentFiles(dest, commit, { timeoutMs: g.timeoutMs, signal: g.signal });
  if (missing === null) return null;
  await git(['update-ref', `refs/heads/${branch}`, commit], g);
  await git(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], g);
  if (missing.length) {
    await git(['sparse-checkout', 'set', '--no-cone', '--stdin'], {
      ...g,
      input: ['/*', ...missing.map((f) => `!/${f.replace(/[\\*?[\]!#]/g, (c) => `\\${c}`)}`)].join('\n') + '\n',
    });
  }
  await git(['reset', '-q', '--hard', commit], g);
  // No reflog and no ORIG_HEAD, as cutFuture leaves it (there is nothing else to cut).
  await fs.rm(path.join(dest, '.git', 'logs'), { recursive: true, force: true });
  await fs.rm(path.join(dest, '.git', 'ORIG_HEAD'), { force: true });
  return { dir: dest, commit, branch, missing };
}

/**
 * Removes everything but `branch` and the history it reaches from the repository of work tree
 * `dir`: other refs, remotes, pseudo-refs, reflogs, unreachable objects. Used after a
 * checkout, and usable on a repository someone else cloned (e.g. to cut history at a
 * change's parent after `git checkout -B main <parent>`).
 */
export async function cutFuture(dir: string, branch: string, g: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<void> {
  const opts = { cwd: dir, ...g };
  const gitDir = path.resolve(dir, (await git(['rev-parse', '--git-common-dir'], opts)).trim());
  for (const remote of (await git(['remote'], opts)).split('\n').filter(Boolean)) await git(['remote', 'remove', remote], opts);
  const keep = `refs/heads/${branch}`;
  const refs = (await git(['for-each-ref', '--format=%(refname)'], opts)).split('\n').filter((r) => r && r !== keep);
  if (refs.length) await git(['update-ref', '--stdin'], { ...opts, input: refs.map((r) => `delete ${r}\n`).join('') });
  await git(['symbolic-ref', 'HEAD', keep], opts);
  for (const name of [
    'FETCH_HEAD',
    'ORIG_HEAD',
    'MERGE_HEAD',
    'CHERRY_PICK_HEAD',
    'REVERT_HEAD',
    'BISECT_HEAD',
    'AUTO_MERGE',
    'packed-refs.lock',
  ]) {
    await fs.rm(path.join(gitDir, name), { force: true });
  }
  await fs.rm(path.join(gitDir, 'objects', 'info', 'alternates'), { force: true });
  await fs.rm(path.join(gitDir, 'logs'), { recursive: true, force: true });
  await git(['reflog', 'expire', '--expire=now', '--expire-unreachable=now', '--all'], opts);
  await git(['-c', 'gc.auto=0', 'gc', '-q', '--prune=now'], opts);
  // gc may keep unreachable objects in a cruft pack on newer gits; a full repack drops them.
  await git(['repack', '-a', '-d', '-q'], opts);
  await git(['prune', '--expire=now'], opts);
  // gc rewrites the reflog of the kept branch; the reflog must stay empty.
  await fs.rm(path.join(gitDir, 'logs'), { recursive: true, force: true });
}

/** The files a cached checkout's source lacked, from its marker (older markers hold only a date). */
async function markerMissing(marker: string): Promise<string[] | undefined> {
  try {
    const parsed = JSON.parse(await fs.readFile(marker, 'utf8')) as { missing?: unknown };
    return Array.isArray(parsed.missing) ? parsed.missing.map(String) : undefined;
  } catch {
    return undefined;
  }
}

export interface CachedCheckoutOptions extends RepoSourceOptions {
  /** The cache root; checkouts live in `<cacheDir>/repos/<owner>__<name>/<commit>`. */
  cacheDir: string;
  /** `owner/name`. */
  repo: string;
  commit: string;
  branch?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

const onceCheckout = new OncePerKey<Checkout>();

/**
 * A checkout with no future (see `checkoutNoFuture`) of `repo` at `commit`, made once per
 * machine in the cache dir (a directory lock across processes) and reused. The source is
 * the repo's mirror in `reposDir` when there is one, else GitHub (unless `allowNetwork` is
 * false). The directory is shared: callers copy it (a sandbox seed) and never write to it.
 * Each reuse runs `assertNoFuture` again, so a tampered cache entry is rebuilt, never served.
 */
export async function cachedCheckout(opts: CachedCheckoutOptions): Promise<Checkout> {
  checkRepoName(opts.repo);
  const commit = opts.commit.toLowerCase();
  if (!FULL_SHA.test(commit)) throw new GymError('INVALID_ARGUMENT', `base commit '${opts.commit}' is not a full object name`);
  const branch = opts.branch ?? 'main';
  const dir = path.join(
    path.resolve(opts.cacheDir),
    'repos',
    opts.repo.replace('/', '__'),
    `${commit}-${branch.replace(/[^A-Za-z0-9._-]/g, '_')}`,
  );
  const marker = `${dir}.ready`;
  return onceCheckout.run(dir, () =>
    withDirLock(`${dir}.lock`, async () => {
      if (existsSync(marker)) {
        const report = await assertNoFuture(dir, commit).catch(() => null);
        const missing = await markerMissing(marker);
        if (report) return { dir, commit, branch, report, ...(missing ? { missing } : {}) };
        await fs.rm(marker, { force: true });
      }
      await fs.rm(dir, { recursive: true, force: true });
      const source = await repoSource(opts.repo, opts);
      const checkout = await checkoutNoFuture({ source, commit, dest: dir, branch, timeoutMs: opts.timeoutMs, signal: opts.signal });
      // The marker keeps what the source lacked, for every later reuse.
      await fs.writeFile(
        marker,
        JSON.stringify({ at: new Date().toISOString(), ...(checkout.missing ? { missing: checkout.missing } : {}) }),
      );
      return checkout;
    }),
  );
}
