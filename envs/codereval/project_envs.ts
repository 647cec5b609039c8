import { execFile } from 'node:child_process';
import { existsSync, readFileSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { eraCutoff, eraLock } from '../../src/env/era.ts';
import { findPython } from '../../src/env/python.ts';
import { GymError } from '../../src/errors.ts';
import type { PythonEnvSpec } from '../../src/tasks/schema.ts';
import { ownValue } from '../../src/own.ts';

/**
 * Each project's env at its commit (issue 16, point 2): the Python and the dependencies the
 * project declares there (setup.py, setup.cfg, pyproject.toml, requirements.txt, read by
 * `project_meta.py` without running any of it), with everything constrained to what PyPI
 * held at the commit's date (the era machinery GitChameleon uses, `src/env/era.ts`). The
 * derived table, `project-envs.json`, is what envs are built from; uv is needed only to
 * regenerate it.
 */

export const ProjectEnvEntry = z.object({
  project: z.string(),
  repo: z.string(),
  commit: z.string().regex(/^[0-9a-f]{40}$/),
  date: z.string(),
  python: z.string().regex(/^3\.\d+$/),
  /**
   * Why that Python: the project's classifiers, its python_requires, the commit's date alone, or an adjustment (PROJECT_ENV_ADJUSTMENTS).
   */
  pythonFrom: z.enum(['classifiers', 'python_requires', 'date', 'adjusted']),
  /** The requirements as the project declares them (deduplicated), markers kept. */
  requirements: z.array(z.string()),
  /** The files they came from, relative to the project's root. */
  sources: z.array(z.string()),
  cutoff: z.string(),
  /** The resolution at the cut-off: exact pins, given to pip as constraints. */
  constraints: z.array(z.string()),
  /** What PROJECT_ENV_ADJUSTMENTS changed, and why (absent when nothing was). */
  adjusted: z.string().optional(),
  /** Debian packages the requirements load at run time (SYSTEM_PACKAGES_OF), absent when none. */
  systemPackages: z.array(z.string()).optional(),
});
export type ProjectEnvEntry = z.infer<typeof ProjectEnvEntry>;

export const PROJECT_ENVS_FILE = fileURLToPath(new URL('./project-envs.json', import.meta.url));
const META_SCRIPT = fileURLToPath(new URL('./project_meta.py', import.meta.url));
/** The files project_meta.py reads (and the requirement files they include). */
const META_FILE = /(^|\/)(setup\.py|setup\.cfg|pyproject\.toml|[^/]*requirements[^/]*\.(txt|in)|requirements\/[^/]+\.(txt|in))$/;

/** CPython feature releases by date: the newest one out at a commit's date is the latest it can have used. */
export const PYTHON_RELEASES: [string, string][] = [
  ['3.6', '2016-12-23'],
  ['3.7', '2018-06-27'],
  ['3.8', '2019-10-14'],
  ['3.9', '2020-10-05'],
  ['3.10', '2021-10-04'],
  ['3.11', '2022-10-24'],
];

const minor = (v: string) => Number(v.split('.')[1]);

/** Does `3.X` satisfy a python_requires such as `>=3.6, !=3.0.*, <4` (the clauses on 3.x; others ignored)? */
export function satisfiesPythonRequires(version: string, spec: string | null | undefined): boolean {
  if (!spec) return true;
  const m = minor(version);
  for (const clause of spec
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean)) {
    const c = /^(>=|<=|==|!=|~=|>|<|\^)?\s*(\d+)(?:\.(\d+|\*))?/.exec(clause);
    if (!c) continue;
    const [, op = '==', major, min] = c;
    if (major !== '3') {
      if ((op === '<' || op === '<=') && Number(major) <= 2) return false;
      if ((op === '==' || op === '^') && Number(major) !== 3) return false;
      continue;
    }
    if (min === '*') {
      if (op === '!=') return false; // != 3.*
      continue;
    }
    const n = min === undefined ? 0 : Number(min); // `<3` is `<3.0`
    const ok = { '>=': m >= n, '>': m > n, '<=': m <= n, '<': m < n, '==': m === n, '!=': m !== n, '~=': m >= n, '^': m >= n }[op];
    if (ok === false) return false;
  }
  return true;
}

/**
 * The Python of a project at a date: the newest release out then that its python_requires
 * allows, among its `Programming Language :: Python :: 3.X` classifiers when it lists any
 * that fit (a project tested on 3.6-3.8 in 2022 gets 3.8, not 3.10).
 */
export function choosePython(
  meta: { python_requires: string | null; classifiers: string[] },
  date: string,
): { python: string; from: ProjectEnvEntry['pythonFrom'] } {
  const t = Date.parse(date);
  const out = PYTHON_RELEASES.filter(([, released]) => Date.parse(released) <= t).map(([v]) => v);
  const allowed = out.filter((v) => satisfiesPythonRequires(v, meta.python_requires));
  const classified = allowed.filter((v) => meta.classifiers.includes(v));
  if (classified.length) return { python: classified[classified.length - 1]!, from: 'classifiers' };
  if (allowed.length) return { python: allowed[allowed.length - 1]!, from: meta.python_requires ? 'python_requires' : 'date' };
  return { python: out[out.length - 1] ?? '3.6', from: 'date' };
}

export const ProjectMeta = z.object({
  requirements: z.array(z.string()),
  python_requires: z.string().nullable(),
  classifiers: z.array(z.string()),
  sources: z.array(z.string()),
});
export type ProjectMeta = z.infer<typeof ProjectMeta>;

/**
 * What the project at `commit` declares: `project_meta.py` on its tree (exported, never run), for the root and the package folders given.
 */
export async function readProjectMeta(repoDir: string, commit: string, packageDirs: string[]): Promise<ProjectMeta> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-codereval-meta-'));
  try {
    // Only the metadata files: a size-capped clone may lack big blobs elsewhere (rdflib's test data).
    const { git } = await import('../../src/repo/index.ts');
    // `ls-tree -l`: "<mode> blob <id> <size>\t<path>"; small .txt files too, for `-r other.txt` includes.
    const files = (await git(['-C', repoDir, 'ls-tree', '-r', '-l', '-z', commit]))
      .split('\0')
      .map((l) => /^\d+ blob [0-9a-f]+\s+(\d+)\t(.*)$/s.exec(l))
      .filter((m): m is RegExpExecArray => Boolean(m))
      .filter((m) => META_FILE.test(m[2]!) || (m[2]!.endsWith('.txt') && Number(m[1]) < 64 * 1024))
      .map((m) => m[2]!);
    for (const f of files) {
      const text = await git(['-C', repoDir, 'show', `${commit}:${f}`]).catch(() => undefined);
      if (text === undefined) continue;
      await fs.mkdir(path.dirname(path.join(tmp, f)), { recursive: true });
      await fs.writeFile(path.join(tmp, f), text);
    }
    const python = (await findPython('3.11')) ?? 'python3';
    const out = await new Promise<string>((resolve, reject) =>
      execFile(python, ['-I', META_SCRIPT, tmp, ...packageDirs], { timeout: 60_000, maxBuffer: 1 << 24 }, (err, stdout, stderr) =>
        err
          ? reject(
              new GymError('ENV_BUILD_FAILED', `reading the metadata of ${repoDir} at ${commit}: ${String(stderr).trim().slice(-1000)}`),
            )
          : resolve(String(stdout)),
      ),
    );
    const meta = ProjectMeta.parse(JSON.parse(out));
    return { ...meta, requirements: [...new Set(meta.requirements.map((r) => r.trim()))] };
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/** The package folders (below the root) holding their own metadata on the way to the tasks' files. */
export async function packageDirsOf(repoDir: string, commit: string, taskPaths: string[]): Promise<string[]> {
  const { runGit } = await import('../../src/repo/index.ts');
  const dirs = new Set<string>();
  for (const p of taskPaths) {
    const parts = p.split('/').slice(0, -1);
    for (let i = 1; i <= parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  const found: string[] = [];
  for (const d of [...dirs].sort()) {
    const r = await runGit(['-C', repoDir, 'ls-tree', '--name-only', commit, `${d}/`]);
    if (r.exitCode === 0 && r.stdout.split('\n').some((f) => /\/(setup\.py|setup\.cfg|pyproject\.toml|requirements\.txt)$/.test(f)))
      found.push(d);
  }
  return found;
}

/** Both dataset projects are borgmatic-collective/borgmatic. */
const BORGMATIC_TEST_IMPORTS = {
  add: ['flexmock==0.10.4', 'PyYAML'],
  why:
    'flexmock==0.10.4 of its test_requirements.txt and PyYAML, which platform tests import (`from flexmock import ' +
    "flexmock`, `from yaml import ScalarNode`) and setup.py does not declare (the platform's venv had both)",
};

/**
 * Where what a project declares at its commit is not what its platform tests ran with, by
 * hand and with the reason (each checked by running the project's platform tests):
 * - `python`: the env's Python instead of the derived one;
 * - `add`: requirements the tests import that the project declares only outside the files read
 *   (a dev requirements file) or not at all.
 */
export const PROJECT_ENV_ADJUSTMENTS: Record<string, { python?: string; add?: string[]; why: string }> = {
  'rak-n-rok/Krake': {
    python: '3.9',
    add: ['webargs==8.*', 'factory-boy==2.*'],
    why:
      "Python 3.9 (Krake's CI runs 3.8-3.11): its PyYAML==5.* (5.4.1) has wheels up to 3.9 only, and its sdist no longer " +
      "builds (Cython 3: 'build_ext' object has no attribute 'cython_sources'); webargs==8.*, which krake/setup.py adds " +
      'only under `if sys.version_info < (3, 10)`, a branch project_meta.py does not read; factory-boy==2.* (and its ' +
      'Faker) of its `dev` extra, which the platform test of the Kubernetes observer imports through krake/tests/factories',
  },
  'pexip/os-python-cachetools': {
    python: '3.10',
    why:
      'Python 3.10 (the classifiers stop at 3.9): the platform tests of the func.py ' +
      'decorators call staticmethod(lfu_cache)(...), callable only from 3.10',
  },
  'witten/borgmatic': BORGMATIC_TEST_IMPORTS,
  'witten/atticmatic': BORGMATIC_TEST_IMPORTS,
  'ansible-security/ansible_collections.ibm.qradar': {
    add: ['ansible-core'],
    why:
      'ansible-core: an Ansible collection runs inside Ansible, which its ' +
      'requirements do not list; the platform test imports ansible.module_utils',
  },
  'mozilla/relman-auto-nag': {
    python: '3.10',
    why: 'Python 3.10 (the date gives 3.11): its requirements.txt pins numpy==1.21.5, which has no build for 3.11',
  },
  'jaywink/federation': {
    add: ['django>=3.2,<4'],
    why: "django>=3.2,<4 of its dev-requirements.txt: 10 platform tests import federation's django helpers",
  },
};

/** Derives a project's entry: its metadata at the commit, its Python, and the era resolution (uv). */
export async function deriveProjectEnv(opts: {
  project: string;
  repo: string;
  repoDir: string;
  commit: string;
  date: string;
  taskPaths: string[];
  uv: string;
}): Promise<ProjectEnvEntry> {
  const dirs = await packageDirsOf(opts.repoDir, opts.commit, opts.taskPaths);
  const declared = await readProjectMeta(opts.repoDir, opts.commit, dirs);
  const adjustment = ownValue(PROJECT_ENV_ADJUSTMENTS, opts.project);
  const meta = adjustment?.add ? { ...declared, requirements: [...declared.requirements, ...adjustment.add] } : declared;
  const chosen = choosePython(meta, opts.date);
  const { python, from } = adjustment?.python ? { python: adjustment.python, from: 'adjusted' as const } : chosen;
  // pytest is resolved with the rest: the env builder installs a test runner, and today's would not fit the era's pluggy.
  const runner = meta.requirements.some((r) => /^pytest\s*([<>=!~;[]|$)/i.test(r)) ? [] : ['pytest'];
  const harness = meta.requirements.some((r) => /^dill\s*([<>=!~;[]|$)/i.test(r)) ? [] : [PLATFORM_HARNESS];
  const { cutoff, lock } = await eraLock(opts.uv, python, eraCutoff(new Date(opts.date), python), [
    ...meta.requirements,
    ...harness,
    ...runner,
  ]);
  const system = systemPackagesFor(meta.requirements);
  return {
    project: opts.project,
    repo: opts.repo,
    commit: opts.commit,
    date: opts.date,
    python,
    pythonFrom: from,
    requirements: [...meta.requirements, ...harness],
    sources: meta.sources,
    cutoff,
    constraints: lock,
    ...(adjustment ? { adjusted: adjustment.why } : {}),
    ...(system.length ? { systemPackages: system } : {}),
  };
}

/**
 * The system libraries PyPI packages load at run time, which the platform's image had
 * installed: a project whose requirements name one gets these Debian packages in its env.
 */
export const SYSTEM_PACKAGES_OF: Record<string, string[]> = {
  // ctypes.util.find_library('magic'): federation's and packtools' file-type checks.
  'python-magic': ['libmagic1'],
};

/** The Debian packages `requirements` need (by SYSTEM_PACKAGES_OF), sorted. */
export function systemPackagesFor(requirements: string[]): string[] {
  const names = requirements
    .map((r) => /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(r)?.[1]?.toLowerCase().replace(/[._]/g, '-'))
    .filter((n): n is string => Boolean(n));
  return [...new Set(names.flatMap((n) => ownValue(SYSTEM_PACKAGES_OF, n) ?? []))].sort();
}

/** The platform's harness serialises its test data with dill: every project env has it (at the era's release). */
export const PLATFORM_HARNESS = 'dill';

/** The stored table, by dataset project. */
export function projectEnvTable(file = PROJECT_ENVS_FILE): Map<string, ProjectEnvEntry> {
  if (!existsSync(file)) return new Map();
  const parsed = z.array(ProjectEnvEntry).safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success)
    throw new GymError('TASK_INVALID', `${file}: not a CoderEval project env table (${parsed.error.issues[0]?.message})`);
  return new Map(parsed.data.map((e) => [e.project, e]));
}

/**
 * The env of a project: its declared requirements, constrained to their era. Shared by every
 * task of the project (the env key is the content: same Python, requirements, constraints).
 */
export function projectEnvSpec(entry: ProjectEnvEntry): PythonEnvSpec {
  // The era's pytest stands in for the builder's own pin (which would clash with the era's pluggy).
  const pytest = entry.constraints.find((c) => /^pytest==/i.test(c));
  return {
    kind: 'python',
    version: entry.python,
    requirements: [...entry.requirements, ...(pytest ? [pytest] : [])],
    constraints: entry.constraints,
    ...(entry.systemPackages?.length ? { systemPackages: entry.systemPackages } : {}),
  };
}
