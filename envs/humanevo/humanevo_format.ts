import { locateMirror } from '../../src/repo/index.ts';
import { GymError } from '../../src/errors.ts';
import { describeIssues } from '../../src/validation.ts';
import { addedFunctions } from './candidates.ts';
import { defaultRunner } from './runner_specs.ts';
import { briefOf, isSourcePath, isTestPath, type Language } from './functions.ts';
import { changedFiles, gitIn, resolveRev } from './history.ts';
import { BUILT_FORMAT, BuiltTaskRecord, HumanEvoRecord, normalizeLevel } from './record.ts';

/** Does a raw record look like one of HumanEvo's own (paper Figure 2)? */
export function isHumanEvoRecord(raw: Record<string, unknown>): boolean {
  return raw.format === undefined && raw.instance_id !== undefined && typeof raw.repo === 'string' && typeof raw.base_commit === 'string';
}

function list(v: string[] | string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  if (Array.isArray(v)) return v;
  try {
    const parsed = JSON.parse(v) as unknown;
    return Array.isArray(parsed) ? parsed.map(String) : [v];
  } catch {
    return [v];
  }
}

/**
 * HumanEvo's records as build-tasks records: the repository is found under `reposDir`, the
 * change is the base commit's child on the first-parent line (or `commit` when given), the
 * target is the function the change adds with the record's name (and file, when given);
 * the record's docstrings, dependency level and test lists win over what the history says.
 */
export async function adaptHumanEvoRecords(raws: Record<string, unknown>[], opts: { reposDir?: string }): Promise<BuiltTaskRecord[]> {
  const out: BuiltTaskRecord[] = [];
  for (const [i, raw] of raws.entries()) {
    const parsed = HumanEvoRecord.safeParse(raw);
    if (!parsed.success) throw new GymError('TASK_INVALID', `HumanEvo record ${i + 1}: ${describeIssues(parsed.error)}`);
    out.push(await adaptOne(parsed.data, opts));
  }
  return out;
}

async function adaptOne(rec: HumanEvoRecord, opts: { reposDir?: string }): Promise<BuiltTaskRecord> {
  const where = `HumanEvo ${rec.instance_id}`;
  if (!opts.reposDir)
    throw new GymError('ENV_UNAVAILABLE', `${where}: set BENCHGYM_REPOS_DIR to the folder holding the repositories (${rec.repo})`);
  const repoPath = rec.repo.includes('/') ? await locateMirror(rec.repo, opts.reposDir) : null;
  if (!repoPath) throw new GymError('ENV_UNAVAILABLE', `${where}: no repository ${rec.repo} under ${opts.reposDir}`);
  const base = await resolveRev(repoPath, rec.base_commit).catch(() => {
    throw new GymError('ENV_UNAVAILABLE', `${where}: ${rec.repo} has no commit ${rec.base_commit}`);
  });
  const latest = await resolveRev(repoPath, 'HEAD');
  const commit = rec.commit ? await resolveRev(repoPath, rec.commit) : await childOnFirstParent(repoPath, base, latest);
  if (!commit)
    throw new GymError(
      'TASK_INVALID',
      `${where}: no commit follows ${base.slice(0, 12)} on the first-parent line of ${rec.repo}; give 'commit'`,
    );
  const files = await changedFiles(repoPath, base, commit);
  const language: Language = rec.language
    ? (rec.language.toLowerCase() as Language)
    : files.some((f) => f.path.endsWith('.java'))
      ? 'java'
      : 'python';
  const sources = files
    .filter((f) => f.status !== 'D' && isSourcePath(language, f.path) && !isTestPath(language, f.path))
    .map((f) => f.path);
  const wanted = rec.function_name?.split('.').pop();
  const date = (await gitIn(repoPath, ['show', '-s', '--format=%cI', commit])).trim();
  const candidates = (
    await addedFunctions(repoPath, language, { commit, parent: base, date, subject: '', merge: false }, sources, () => {})
  ).filter((c) => (!wanted || c.fn.name === wanted || c.fn.qualname === rec.function_name) && (!rec.file_path || c.file === rec.file_path));
  if (candidates.length !== 1)
    throw new GymError(
      'TASK_INVALID',
      `${where}: the change ${commit.slice(0, 12)} adds ${candidates.length} functions ` +
        `matching ${rec.function_name ?? '(no function_name)'}${rec.file_path ? ` in ${rec.file_path}` : ''}`,
    );
  const c = candidates[0]!;
  const tests = files.filter((f) => f.status !== 'D' && isTestPath(language, f.path)).map((f) => f.path);
  const f2p = list(rec.FAIL_TO_PASS) ?? [];
  const p2p = list(rec.PASS_TO_PASS) ?? [];
  const detailed = rec.detailed_docstring ?? c.fn.docstring ?? '';
  const parsed = BuiltTaskRecord.safeParse({
    format: BUILT_FORMAT,
    instance_id: String(rec.instance_id).replace(/[^A-Za-z0-9._\/@+-]+/g, '-'),
    repo: rec.repo,
    repo_path: repoPath,
    language,
    commit,
    base_commit: base,
    latest_commit: latest,
    date,
    version: rec.version,
    target: { file: c.file, qualname: c.fn.qualname, name: c.fn.name, cls: c.fn.cls, lines: c.fn.lines },
    signature: c.fn.signature,
    docstring_detailed: detailed,
    docstring_brief: rec.brief_docstring ?? briefOf(detailed || c.fn.name),
    dependency_level: normalizeLevel(rec.dependency_level) ?? c.fn.dependency,
    references: { project: c.fn.projectRefs, class: c.fn.classRefs },
    test_files: tests,
    production_files: files.filter((f) => !isTestPath(language, f.path)),
    fail_to_pass: f2p,
    pass_to_pass: p2p,
    env: language === 'python' ? { kind: 'python', version: '3.11', requirements: [] } : { kind: 'java', jdk: '17', build: 'maven' },
    test_runner: defaultRunner(language),
  });
  if (!parsed.success) throw new GymError('TASK_INVALID', `${where}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** The commit whose first parent is `base`, on the first-parent line ending at `tip`. */
async function childOnFirstParent(repo: string, base: string, tip: string): Promise<string | null> {
  const out = await gitIn(repo, ['rev-list', '--first-parent', '--parents', `${base}..${tip}`]);
  for (const line of out.split('\n')) {
    const [c, p] = line.split(' ');
    if (c && p === base) return c;
  }
  return null;
}
