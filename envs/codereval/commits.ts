import { spawn } from 'node:child_process';
import { z } from 'zod';
import { GymError } from '../../src/errors.ts';
import { runGit } from '../../src/repo/index.ts';

/**
 * Each task's project state (issue 16, point 1): the commit whose version of the task's file
 * is the dataset's file with the ground truth in place, found by content. The path's history
 * (renames followed) is walked and every version compared with the expected text, modulo
 * line endings and trailing whitespace; when none is equal, the closest by line diff is kept
 * and recorded as such. A project's commit is then the one where most of its tasks' files
 * are in their matched state at once (the env shared by its tasks).
 */

/** The file as the platform had it: `lsp-context` with `<PLACEHOLDER>` replaced by the ground truth. */
export function expectedFile(lspContext: string, groundTruth: string): string {
  const at = lspContext.indexOf('<PLACEHOLDER>');
  if (at < 0) throw new GymError('TASK_INVALID', 'lsp-context has no <PLACEHOLDER>');
  return lspContext.slice(0, at) + groundTruth + lspContext.slice(at + '<PLACEHOLDER>'.length);
}

/** The lines compared: CRLF/CR as LF, trailing whitespace dropped, trailing blank lines dropped. */
export function comparableLines(text: string): string[] {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.replace(/\s+$/, ''));
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * `comparableLines` with leading tabs as four spaces: the platform's test files hold their
 * copy of the module indented with spaces where the project indents with tabs (cpburnz's
 * sqlparams), so its copy is compared modulo that.
 */
export function platformComparableLines(text: string): string[] {
  return comparableLines(text).map((l) => l.replace(/^\t+/, (tabs) => '    '.repeat(tabs.length)));
}

/**
 * Lines added plus lines removed between two texts (Myers' O(ND) greedy walk); stops at
 * `max` and answers `max` then.
 */
export function lineDiffCount(a: readonly string[], b: readonly string[], max = 20_000): number {
  const ids = new Map<string, number>();
  const id = (s: string) => {
    let v = ids.get(s);
    if (v === undefined) ids.set(s, (v = ids.size));
    return v;
  };
  const A = a.map(id);
  const B = b.map(id);
  const n = A.length;
  const m = B.length;
  const limit = Math.min(max, n + m);
  const off = limit + 1;
  const v = new Int32Array(2 * limit + 3);
  for (let d = 0; d <= limit; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!) ? v[off + k + 1]! : v[off + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && A[x] === B[y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) return d;
    }
  }
  return limit;
}

/** One version of a file in a repository's history: the commit that wrote it, and where. */
export interface FileVersion {
  commit: string;
  /** Committer date, ISO 8601. */
  date: string;
  path: string;
  blob: string;
  /** Reachable from HEAD, a branch, a remote branch or a tag (not only from review refs such as Gerrit's refs/changes). */
  published: boolean;
}

const ZERO = /^0+$/;

/** `git log --raw` of paths over `revs` (one path with `follow`: renames followed): each commit that wrote a version. */
async function logPath(repo: string, files: string | string[], revs: string[], follow: boolean): Promise<Omit<FileVersion, 'published'>[]> {
  const paths = typeof files === 'string' ? [files] : files;
  const log = (renames: string[]) =>
    runGit(['-C', repo, 'log', ...revs, '--format=%x01%H %cI', '--raw', '--no-abbrev', ...renames, '--', ...paths], {
      timeoutMs: 10 * 60_000,
    });
  let r = await log(follow ? ['-M', '--follow'] : ['--no-renames']);
  // Following renames reads old blobs; a clone without some of them (a shallow or size-capped copy) still has the path's own history.
  if (follow && r.exitCode !== 0 && /unable to read|missing/.test(r.stderr)) r = await log(['--no-renames']);
  if (r.exitCode !== 0)
    throw new GymError(
      'ENV_BUILD_FAILED',
      `git log of ${paths.join(' ')} in ${repo} failed (exit ${r.exitCode}): ${r.stderr.trim().slice(-1000)}`,
    );
  const out = r.stdout;
  const versions: Omit<FileVersion, 'published'>[] = [];
  for (const chunk of out.split('\x01')) {
    const lines = chunk.split('\n');
    const [commit, date] = (lines[0] ?? '').split(' ');
    if (!commit || !date) continue;
    for (const line of lines.slice(1)) {
      // :100644 100644 <old> <new> M\tpath   or   :... <old> <new> R097\told\tnew
      const m = /^:\d+ \d+ [0-9a-f]+ ([0-9a-f]+) ([A-Z])\d*\t(.*)$/.exec(line);
      if (!m || ZERO.test(m[1]!) || m[2] === 'D') continue;
      const paths = m[3]!.split('\t');
      versions.push({ commit, date, blob: m[1]!, path: paths[paths.length - 1]! });
    }
  }
  return versions;
}

/**
 * Every version of `file` in the repository (all refs), the published ones marked. `--follow`
 * finds the names the file had, but it walks one line of history (a side branch that wrote
 * an old name after the rename is missed): the versions are then listed by all the names.
 */
export function fileVersions(repo: string, file: string): Promise<FileVersion[]> {
  // Tasks of one file share its history (infrared's 28 tasks are in a handful of files, over 169k commits).
  const key = JSON.stringify([repo, file]);
  let versions = versionCache.get(key);
  if (!versions) {
    versions = listVersions(repo, file);
    versionCache.set(key, versions);
    versions.catch(() => versionCache.delete(key));
  }
  return versions;
}

const versionCache = new Map<string, Promise<FileVersion[]>>();

/**
 * The names `file` was renamed to later (`--follow` walks back to older names only): from
 * each commit that removed it, the path its content went to (mozilla's `auto_nag/` became
 * `bugbot/`, and the platform's copy was made after that). Followed a few steps on.
 */
export async function laterNames(repo: string, file: string, depth = 3): Promise<string[]> {
  const found: string[] = [];
  let frontier = [file];
  for (let step = 0; step < depth && frontier.length; step++) {
    const next: string[] = [];
    for (const name of frontier) {
      const removed = await runGit(['-C', repo, 'log', '--all', '--diff-filter=D', '--no-renames', '--format=%H', '--', name], {
        timeoutMs: 10 * 60_000,
      });
      if (removed.exitCode !== 0) continue;
      for (const commit of removed.stdout.split('\n').filter(Boolean)) {
        const diff = await runGit(['-C', repo, 'diff-tree', '-r', '-M', '--name-status', '--no-commit-id', `${commit}^`, commit]);
        if (diff.exitCode !== 0) continue;
        for (const line of diff.stdout.split('\n')) {
          const [status, from, to] = line.split('\t');
          if (status?.startsWith('R') && from === name && to && to !== file && !found.includes(to)) {
            found.push(to);
            next.push(to);
          }
        }
      }
    }
    frontier = next;
  }
  return found;
}

async function listVersions(repo: string, file: string): Promise<FileVersion[]> {
  const followed = await logPath(repo, file, ['--all'], true);
  const names = [...new Set([file, ...followed.map((v) => v.path), ...(await laterNames(repo, file))])];
  const published = new Set(
    (await logPath(repo, names, ['HEAD', '--branches', '--tags', '--remotes'], false)).map((v) => `${v.commit} ${v.blob}`),
  );
  const all = [...followed, ...(await logPath(repo, names, ['--all'], false))];
  const seen = new Set<string>();
  const out: FileVersion[] = [];
  for (const v of all) {
    const key = `${v.commit} ${v.blob}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ ...v, published: published.has(key) });
  }
  return out;
}

/** The contents of blobs, by id (`git cat-file --batch`). */
export function readBlobs(repo: string, blobs: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(blobs)];
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
    const child = spawn('git', ['-c', 'core.fsmonitor=false', '-C', repo, 'cat-file', '--batch'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => (stderr += String(c)));
    child.on('error', (err) => reject(new GymError('ENV_UNAVAILABLE', `git cat-file failed to start: ${err.message}`)));
    child.on('close', (code) => {
      if (code !== 0)
        return reject(
          new GymError('ENV_BUILD_FAILED', `git cat-file --batch in ${repo} failed (exit ${code}): ${stderr.trim().slice(-500)}`),
        );
      const buf = Buffer.concat(chunks);
      const out = new Map<string, string>();
      let at = 0;
      while (at < buf.length) {
        const nl = buf.indexOf(0x0a, at);
        if (nl < 0) break;
        const header = buf.toString('utf8', at, nl).split(' ');
        at = nl + 1;
        if (header[1] === 'missing') continue;
        const size = Number(header[2]);
        out.set(header[0]!, buf.toString('utf8', at, at + size));
        at += size + 1;
      }
      resolve(out);
    });
    child.stdin.end(unique.map((b) => `${b}\n`).join(''));
  });
}

/** One task to place: its id, project, file path, and the file as the platform had it. */
export interface TaskFile {
  id: string;
  project: string;
  path: string;
  expected: string;
  /** Where the platform's copy had the file (from its test file's path), when that differs from `path` (neo4j's src/ layout). */
  layoutPath?: string;
  /** The platform's test file above its `__main__` block: the file as the platform's copy had it (imports may be rewritten). */
  platformText?: string;
}

/** The platform's test file without its `__main__` check: the source file of the platform's copy. */
export function platformSource(testSource: string): string {
  const at = testSource.search(/^if __name__ == ['"]__main__['"]\s*:/m);
  return at < 0 ? testSource : testSource.slice(0, at);
}

export const TaskMatch = z.object({
  /** The GitHub repository searched (the dataset's project, or what it became). */
  repo: z.string(),
  /** The first commit whose version of the file is the matched one. */
  commit: z.string().regex(/^[0-9a-f]{40}$/),
  date: z.string(),
  match: z.enum(['exact', 'nearest']),
  /** Lines added plus removed between the matched version and the expected file (0 when exact). */
  diffLines: z.number().int().nonnegative(),
  /** The file's path at that commit, when a rename separates it from the dataset's. */
  path: z.string().optional(),
  /** The file is in its matched state at the project's commit. */
  atProjectCommit: z.boolean(),
  /** How many versions of the file the history holds. */
  versions: z.number().int().positive(),
  /**
   * When the match is not at the platform's layout path (its test file's folder): the
   * nearest version that is, the candidate state of the platform's own copy.
   */
  layout: z
    .object({ path: z.string(), commit: z.string().regex(/^[0-9a-f]{40}$/), date: z.string(), diffLines: z.number().int().nonnegative() })
    .optional(),
  /**
   * The version nearest to the platform's own copy of the file (its test file above the
   * `__main__` check), which can be later than the dataset's text: the state the platform
   * test runs against. Omitted when it is the match itself.
   */
  platform: z
    .object({ path: z.string(), commit: z.string().regex(/^[0-9a-f]{40}$/), date: z.string(), diffLines: z.number().int().nonnegative() })
    .optional(),
  /** The platform version is in its state at the project's platform commit. */
  atPlatformCommit: z.boolean().optional(),
});
export type TaskMatch = z.infer<typeof TaskMatch>;

export const ProjectState = z.object({
  repo: z.string(),
  commit: z.string().regex(/^[0-9a-f]{40}$/),
  date: z.string(),
  tasks: z.number().int().nonnegative(),
  /** Tasks whose file is in its matched state at this commit. */
  atCommit: z.number().int().nonnegative(),
  /** The same over the platform versions: the commit the platform's copy of the project most likely was. */
  platformCommit: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .optional(),
  platformDate: z.string().optional(),
  atPlatformCommit: z.number().int().nonnegative().optional(),
});
export type ProjectState = z.infer<typeof ProjectState>;

export const ProjectsTable = z.object({
  /** How the table was made (the command), never benchmark text. */
  generatedBy: z.string(),
  projects: z.record(z.string(), ProjectState),
  tasks: z.record(z.string(), TaskMatch),
  /** Tasks with no matched state, and why. */
  notFound: z.record(z.string(), z.object({ project: z.string(), reason: z.string() })),
});
export type ProjectsTable = z.infer<typeof ProjectsTable>;

/**
 * A task's best version: exact when one is equal, else the nearest by line diff. Ties go to
 * the version at the platform's layout path, then to published commits, then the earliest.
 */
export async function matchTask(
  repo: string,
  repoName: string,
  task: TaskFile,
): Promise<
  | { match: Omit<TaskMatch, 'atProjectCommit'>; blob: string; platform?: { path: string; commit: string; date: string; blob: string } }
  | { reason: string }
> {
  const seen = new Set<string>();
  const versions = [...(await fileVersions(repo, task.path)), ...(task.layoutPath ? await fileVersions(repo, task.layoutPath) : [])].filter(
    (v) => {
      const key = `${v.commit} ${v.path} ${v.blob}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    },
  );
  const where = task.layoutPath ?? task.path;
  if (!versions.length)
    return { reason: `${task.path}${task.layoutPath ? ` (or ${task.layoutPath})` : ''} is in no commit of ${repoName}` };
  const blobs = await readBlobs(
    repo,
    versions.map((v) => v.blob),
  );
  const want = comparableLines(task.expected);
  const score = new Map<string, number>();
  for (const [blob, text] of blobs) {
    const have = comparableLines(text);
    score.set(blob, have.length === want.length && have.every((l, i) => l === want[i]) ? 0 : lineDiffCount(have, want));
  }
  const ranked = versions
    .filter((v) => score.has(v.blob))
    .sort(
      (x, y) =>
        score.get(x.blob)! - score.get(y.blob)! ||
        Number(y.path === where) - Number(x.path === where) ||
        Number(y.published) - Number(x.published) ||
        Date.parse(x.date) - Date.parse(y.date),
    );
  const best = ranked[0];
  if (!best) return { reason: `no version of ${task.path} could be read in ${repoName}` };
  const diffLines = score.get(best.blob)!;
  let platform: { path: string; commit: string; date: string; diffLines: number; blob: string } | undefined;
  if (task.platformText !== undefined) {
    const theirs = platformComparableLines(task.platformText);
    const pscore = new Map([...blobs].map(([blob, text]) => [blob, lineDiffCount(platformComparableLines(text), theirs)]));
    const p = versions
      .filter((v) => pscore.has(v.blob))
      // Ties: the match itself, then the layout path, then the latest (the platform's copy was made after the dataset's text).
      .sort(
        (x, y) =>
          pscore.get(x.blob)! - pscore.get(y.blob)! ||
          Number(y.blob === best.blob) - Number(x.blob === best.blob) ||
          Number(y.path === where) - Number(x.path === where) ||
          Number(y.published) - Number(x.published) ||
          Date.parse(y.date) - Date.parse(x.date),
      )[0];
    // A version as far from the platform's text as half its lines is no match.
    if (p && pscore.get(p.blob)! <= theirs.length / 2)
      platform = { path: p.path, commit: p.commit, date: p.date, diffLines: pscore.get(p.blob)!, blob: p.blob };
  }
  const atLayout = task.layoutPath && best.path !== task.layoutPath ? ranked.find((v) => v.path === task.layoutPath) : undefined;
  return {
    blob: best.blob,
    ...(platform ? { platform } : {}),
    match: {
      repo: repoName,
      commit: best.commit,
      date: best.date,
      match: diffLines === 0 ? 'exact' : 'nearest',
      diffLines,
      ...(best.path !== task.path ? { path: best.path } : {}),
      versions: new Set(versions.map((v) => v.blob)).size,
      ...(atLayout
        ? { layout: { path: atLayout.path, commit: atLayout.commit, date: atLayout.date, diffLines: score.get(atLayout.blob)! } }
        : {}),
      ...(platform && (platform.blob !== best.blob || platform.path !== best.path)
        ? { platform: { path: platform.path, commit: platform.commit, date: platform.date, diffLines: platform.diffLines } }
        : {}),
    },
  };
}

/** The blob at `commit:path` for many pairs (`git cat-file --batch-check`); undefined where absent. */
async function blobsAt(repo: string, pairs: { commit: string; path: string }[]): Promise<(string | undefined)[]> {
  const r = await runGit(['-C', repo, 'cat-file', '--batch-check'], { input: pairs.map((p) => `${p.commit}:${p.path}\n`).join('') });
  if (r.exitCode !== 0)
    throw new GymError('ENV_BUILD_FAILED', `git cat-file --batch-check in ${repo} failed: ${r.stderr.trim().slice(-500)}`);
  return r.stdout
    .split('\n')
    .slice(0, pairs.length)
    .map((l) => (/^[0-9a-f]+ blob /.test(l) ? l.split(' ')[0] : undefined));
}

/**
 * The project's commit: among the commits its tasks' matches came from, the one where most
 * tasks' files are in their matched state (ties: the latest). Returns the commit and which
 * tasks match there.
 */
export async function projectCommit(
  repo: string,
  matched: { id: string; commit: string; date: string; path: string; blob: string }[],
): Promise<{ commit: string; date: string; at: Set<string> }> {
  const candidates = [...new Map(matched.map((m) => [m.commit, m.date])).entries()];
  const pairs = candidates.flatMap(([commit]) => matched.map((m) => ({ commit, path: m.path })));
  const found = await blobsAt(repo, pairs);
  let best: { commit: string; date: string; at: Set<string> } | undefined;
  candidates.forEach(([commit, date], ci) => {
    const at = new Set(matched.filter((m, ti) => found[ci * matched.length + ti] === m.blob).map((m) => m.id));
    if (!best || at.size > best.at.size || (at.size === best.at.size && Date.parse(date) > Date.parse(best.date)))
      best = { commit, date, at };
  });
  return best!;
}
