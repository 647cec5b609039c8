import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../errors.ts';
import { git, runGit } from './git.ts';

/** What `findFuture` found in a repository besides the history of its base commit. */
export interface FutureReport {
  /** The base commit, as a full object name. */
  base: string;
  /** True when nothing beyond the base's history is reachable or even stored. */
  ok: boolean;
  /** Commits in the object store that are not the base or one of its ancestors. */
  strayCommits: string[];
  /** How many objects of each type are stored but not reachable from the base. */
  strayObjects: Record<string, number>;
  /** Refs (branches, tags, stash, notes, remote refs, pseudo-refs) that point outside the base's history. */
  strayRefs: { ref: string; target: string }[];
  /** Reflog entries left (any entry counts: the reflog must be expired). */
  reflogEntries: number;
  /** Configured remotes (there must be none). */
  remotes: string[];
  /** Alternate object stores (there must be none: their objects are reachable by hash). */
  alternates: string[];
  /** One line per problem, for people. */
  problems: string[];
}

const PSEUDO_REFS = ['FETCH_HEAD', 'ORIG_HEAD', 'MERGE_HEAD', 'CHERRY_PICK_HEAD', 'REVERT_HEAD', 'BISECT_HEAD', 'AUTO_MERGE'];

/**
 * Inspects the git repository of work tree `dir` and lists everything that reaches beyond
 * `base`: stored commits that are not ancestors of it, stored objects of any type not
 * reachable from it (a dangling blob of the fixed file is a leak too), refs and pseudo-refs
 * outside its history, reflog entries, remotes and alternates. `ok` is true only when the
 * object store holds exactly the history of `base`, so `git log --all`, `git tag`,
 * `git reflog`, `git branch -a` and `git fsck --lost-found` can show nothing after it.
 *
 * @example const r = await findFuture('/tmp/ws', 'a1b2...'); if (!r.ok) console.log(r.problems)
 */
export async function findFuture(dir: string, base: string): Promise<FutureReport> {
  const opts = { cwd: dir, code: 'ENV_BUILD_FAILED' as const };
  const baseSha = (
    await git(['rev-parse', '--verify', '--end-of-options', `${base}^{commit}`], {
      ...opts,
      what: `resolving base commit ${base} in ${dir}`,
    })
  ).trim();
  const gitDir = path.resolve(dir, (await git(['rev-parse', '--git-common-dir'], opts)).trim());
  const problems: string[] = [];

  const history = new Set(lines(await git(['rev-list', baseSha], opts)));
  // Objects a lacking source never had are not stored, so they cannot be future (copyIncompleteHistory).
  const reachable = new Set(
    lines(await git(['rev-list', '--objects', '--missing=allow-any', baseSha], opts)).map((l) =>
      l.slice(0, l.indexOf(' ') === -1 ? l.length : l.indexOf(' ')),
    ),
  );

  const strayCommits: string[] = [];
  const strayObjects: Record<string, number> = {};
  const all = await git(['cat-file', '--batch-all-objects', '--batch-check=%(objecttype) %(objectname)'], opts);
  for (const line of lines(all)) {
    const [type, sha] = line.split(' ') as [string, string];
    if (reachable.has(sha)) continue;
    strayObjects[type] = (strayObjects[type] ?? 0) + 1;
    if (type === 'commit') strayCommits.push(sha);
  }
  if (strayCommits.length)
    problems.push(`${strayCommits.length} stored commit(s) are not in the history of ${baseSha.slice(0, 12)} (e.g. ${strayCommits[0]})`);
  const strayCount = Object.values(strayObjects).reduce((a, b) => a + b, 0);
  if (strayCount) problems.push(`${strayCount} stored object(s) are not reachable from the base (${JSON.stringify(strayObjects)})`);

  const strayRefs: { ref: string; target: string }[] = [];
  const refs = await git(['for-each-ref', '--format=%(refname) %(objectname) %(*objectname)'], opts);
  for (const line of lines(refs)) {
    const [ref, target, peeled] = line.split(' ') as [string, string, string | undefined];
    const commit = peeled || target;
    if (!history.has(commit)) strayRefs.push({ ref, target: commit });
  }
  for (const name of ['HEAD', ...PSEUDO_REFS]) {
    const file = path.join(gitDir, name);
    if (!existsSync(file)) continue;
    if (name !== 'HEAD') {
      strayRefs.push({ ref: name, target: (await fs.readFile(file, 'utf8')).trim().slice(0, 40) });
      continue;
    }
    const head = await runGit(['rev-parse', '--verify', '-q', 'HEAD'], { cwd: dir });
    if (head.exitCode === 0 && !history.has(head.stdout.trim())) strayRefs.push({ ref: 'HEAD', target: head.stdout.trim() });
  }
  for (const r of strayRefs) problems.push(`ref ${r.ref} points outside the base's history (${r.target})`);

  const reflog = await runGit(['log', '-g', '--all', '--format=%H'], { cwd: dir });
  let reflogEntries = lines(reflog.stdout).length;
  // `log -g --all` skips reflogs of deleted refs; the files themselves are the ground truth.
  reflogEntries = Math.max(reflogEntries, await countReflogLines(path.join(gitDir, 'logs')));
  if (reflogEntries) problems.push(`the reflog holds ${reflogEntries} entr${reflogEntries === 1 ? 'y' : 'ies'}`);

  const remotes = lines(await git(['remote'], opts));
  if (remotes.length) problems.push(`remote(s) configured: ${remotes.join(', ')}`);

  const alternatesFile = path.join(gitDir, 'objects', 'info', 'alternates');
  const alternates = existsSync(alternatesFile) ? lines(await fs.readFile(alternatesFile, 'utf8')) : [];
  if (alternates.length) problems.push(`alternate object stores: ${alternates.join(', ')}`);

  return { base: baseSha, ok: problems.length === 0, strayCommits, strayObjects, strayRefs, reflogEntries, remotes, alternates, problems };
}

/**
 * Throws ENV_BUILD_FAILED, listing the problems, unless `findFuture(dir, base)` is ok.
 * Builders call it on every workspace they make; tests call it to prove the cut.
 */
export async function assertNoFuture(dir: string, base: string): Promise<FutureReport> {
  const report = await findFuture(dir, base);
  if (!report.ok) {
    throw new GymError(
      'ENV_BUILD_FAILED',
      `the workspace at ${dir} reaches beyond base commit ${report.base}: ${report.problems.join('; ')}`,
      {
        report: { ...report, strayCommits: report.strayCommits.slice(0, 20) },
      },
    );
  }
  return report;
}

async function countReflogLines(logsDir: string): Promise<number> {
  if (!existsSync(logsDir)) return 0;
  let n = 0;
  for (const entry of await fs.readdir(logsDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const text = await fs.readFile(path.join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name), 'utf8');
    n += lines(text).length;
  }
  return n;
}

function lines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}
