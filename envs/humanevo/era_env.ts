import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { commitCutoff, eraLock, findUv, pythonCurrentAt } from '../../src/env/era.ts';
import { contentKey } from '../../src/env/key.ts';
import { availablePythons, type AvailablePython } from '../../src/env/python.ts';
import { GymError } from '../../src/errors.ts';
import type { PythonEnvSpec } from '../../src/tasks/schema.ts';
import { hostPython, isTestPath } from './functions.ts';
import { fileAt, filesAt } from './history.ts';
import { ownValue } from '../../src/own.ts';

/**
 * The environment of a change's era (issue 17, point 1): the Python the repository's own
 * files declared at the commit (requires-python specifiers; the versions its classifiers,
 * tox envlist and CI files list), else the Python current at the commit's date, among the
 * versions this machine provides; its dependencies and its test runner with versions as
 * PyPI held them at the commit's date (`src/env/era.ts`, shared with GitChameleon and
 * CoderEval). Derivations are cached by the content of the files they read, and envs are
 * built by content key, so every change of the same era shares one.
 */

const HELPER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'python_project.py');

/** The files python_project.py reads. */
const DECLARING_FILE = new RegExp(
  '^(' +
    [
      String.raw`setup\.py|setup\.cfg|pyproject\.toml|tox\.ini|\.travis\.yml|pytest\.ini|conftest\.py|(tests?|testing)\/conftest\.py`,
      String.raw`\.github\/workflows\/[^/]+\.ya?ml|[^/]*requirements[^/]*\.txt|requirements\/[^/]+\.txt`,
    ].join('|') +
    ')$',
);

export const ProjectDeclarations = z.object({
  requires: z.array(z.object({ spec: z.string(), from: z.string() })),
  /** `X.Y` → the files listing it. */
  listed: z.record(z.string(), z.array(z.string())),
  dependencies: z.array(z.string()),
  test_dependencies: z.array(z.string()),
  sources: z.array(z.string()),
  runner: z.enum(['pytest', 'nose', 'unittest']),
  runner_evidence: z.object({ pytest: z.array(z.string()), nose: z.array(z.string()) }),
});
export type ProjectDeclarations = z.infer<typeof ProjectDeclarations>;

/** What the env of a change was derived from, kept in its task record. */
export const EraEnvDerivation = z.object({
  python: z.string(),
  /** Why that Python, in one line. */
  python_from: z.string(),
  runner: z.enum(['pytest', 'nose', 'unittest']),
  /** The declared requirements resolved (plus the runner). */
  requirements: z.array(z.string()),
  sources: z.array(z.string()),
  /** The resolution's cut-off; null when it was not era-constrained (no uv). */
  cutoff: z.string().nullable(),
  /**
   * Declared requirements left out because none of their releases resolves on its own
   * for the env's Python at the cut-off (wsgiref==0.1.2, Python 2 only), each with why.
   */
  dropped: z.array(z.object({ requirement: z.string(), why: z.string() })).optional(),
});
export type EraEnvDerivation = z.infer<typeof EraEnvDerivation>;

/** Reads what the repository's files say at a commit (nothing is run). */
export async function readDeclarations(repo: string, commit: string): Promise<ProjectDeclarations> {
  const tree = await filesAt(repo, commit);
  const files: Record<string, string> = {};
  for (const f of tree.filter((p) => DECLARING_FILE.test(p))) {
    const text = await fileAt(repo, commit, f);
    if (text !== undefined && text.length < 512 * 1024) files[f] = text;
  }
  // What the tests import decides the runner when no configuration names it: the heads of a few test files.
  const tests: Record<string, string> = {};
  for (const f of tree.filter((p) => p.endsWith('.py') && isTestPath('python', p)).slice(0, 20)) {
    const text = await fileAt(repo, commit, f);
    if (text !== undefined) tests[f] = text.slice(0, 4096);
  }
  return declarationsOf(files, tests);
}

/** python_project.py on a set of files (and test file heads). */
export async function declarationsOf(files: Record<string, string>, tests: Record<string, string> = {}): Promise<ProjectDeclarations> {
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile(hostPython(), ['-I', HELPER], { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (err, out, errOut) => {
      if (err)
        reject(
          new GymError(
            'ENV_UNAVAILABLE',
            `the project metadata reader failed (${hostPython()} ${HELPER}): ${String(errOut).trim().slice(-1500) || err.message}`,
          ),
        );
      else resolve(String(out));
    });
    child.stdin?.end(JSON.stringify({ files, tests }));
  });
  return ProjectDeclarations.parse(JSON.parse(stdout));
}

const parts = (v: string) => v.split('.').map((p) => Number(p));

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d) return d;
  }
  return 0;
}

/**
 * Does an interpreter (its full version, `3.7.16`) satisfy a requires-python specifier
 * (`>=3.6, !=3.0.*, <4`, `~=3.7`, poetry's `^3.8`; `||` alternatives)? A clause is compared
 * at its own precision (`<=3.7` admits 3.7.16). A clause that does not parse is ignored.
 */
export function satisfiesSpec(full: string, spec: string): boolean {
  const v = parts(full);
  return spec.split('||').some((alt) =>
    alt
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean)
      .every((clause) => {
        const m = /^(===|==|!=|~=|>=|<=|>|<|\^|~)?\s*v?(\d+(?:\.\d+)*)(\.\*)?$/.exec(clause);
        if (!m) return true;
        const op = m[1] ?? '==';
        const want = parts(m[2]!);
        const at = v.slice(0, want.length);
        const cmp = compare(at, want);
        if (m[3]) return op === '!=' ? cmp !== 0 : op === '==' || op === '===' ? cmp === 0 : true;
        switch (op) {
          case '==':
          case '===':
            return cmp === 0;
          case '!=':
            return cmp !== 0;
          case '>=':
            return compare(v, want) >= 0;
          case '>':
            return cmp > 0;
          case '<=':
            return cmp <= 0;
          case '<':
            return compare(v, want) < 0;
          case '~=': {
            // ~=3.7 is >=3.7,==3.*; ~=3.7.2 is >=3.7.2,==3.7.*
            const prefix = want.slice(0, Math.max(1, want.length - 1));
            return compare(v, want) >= 0 && compare(v.slice(0, prefix.length), prefix) === 0;
          }
          case '^':
            return compare(v, want) >= 0 && v[0] === want[0];
          case '~':
            return compare(v, want) >= 0 && v[0] === want[0] && (want.length < 2 || v[1] === want[1]);
          default:
            return true;
        }
      }),
  );
}

export interface PythonChoice {
  python: string;
  from: string;
}

/**
 * The Python of a commit's env among the interpreters this machine has: the newest version
 * the repository lists (classifiers, tox, CI) that meets its requires-python; when it lists
 * none this machine has, the nearest newer one that meets the specifier; when it lists
 * none at all, the newest meeting the specifier that was out at the commit's date (else
 * the oldest meeting it). Null (with why) when nothing here fits: a Python-2-only era, or
 * a specifier no interpreter here meets.
 */
export function choosePython(
  decl: ProjectDeclarations,
  date: string,
  available: AvailablePython[],
): PythonChoice | { python: null; why: string } {
  const specs = decl.requires.map((r) => r.spec);
  const meets = (p: AvailablePython) => specs.every((s) => satisfiesSpec(p.full, s));
  const fitting = available.filter(meets);
  const specNote = decl.requires.length ? ` (${decl.requires.map((r) => `${r.from} ${r.spec}`).join('; ')})` : '';
  if (!fitting.length) {
    return {
      python: null,
      why: `no Python on this machine (${available.map((p) => p.version).join(', ') || 'none'}) meets${specNote || ' the declarations'}`,
    };
  }
  const listed = Object.keys(decl.listed).sort((a, b) => compare(parts(a), parts(b)));
  const listed3 = listed.filter((v) => v.startsWith('3.'));
  const where = (v: string) => [...new Set(ownValue(decl.listed, v) ?? [])].join(', ');
  if (listed.length && !listed3.length && !decl.requires.some((r) => /(^|[^.\d])3/.test(r.spec))) {
    return {
      python: null,
      why:
        `the repository lists only Python ${listed.join(', ')} ` +
        `(${[...new Set(listed.flatMap((v) => decl.listed[v]!))].join(', ')}); this machine's envs are Python 3`,
    };
  }
  const listedHere = fitting.filter((p) => listed3.includes(p.version));
  if (listedHere.length) {
    const p = listedHere[listedHere.length - 1]!;
    return { python: p.version, from: `the newest listed Python this machine has (${listed3.join(', ')}; ${where(p.version)})${specNote}` };
  }
  if (listed3.length) {
    const newest = parts(listed3[listed3.length - 1]!);
    const above = fitting.filter((p) => compare(parts(p.version), newest) > 0);
    const p = above[0] ?? fitting[fitting.length - 1]!;
    return {
      python: p.version,
      from:
        `the nearest Python this machine has to the listed ${listed3.join(', ')} ` +
        `(${[...new Set(listed3.flatMap((v) => decl.listed[v]!))].join(', ')})${specNote}`,
    };
  }
  const current = pythonCurrentAt(
    date,
    fitting.map((p) => p.version),
  )!;
  return { python: current, from: `current at the commit's date (${date.slice(0, 10)}) among this machine's Pythons${specNote}` };
}

/**
 * The earliest cut-off of an era env: the scorer runs pytest with `-c <pristine config>
 * --rootdir=.` (pytest 3.0 has no --rootdir: every test of such an env would vanish), and
 * uv builds a source-only release's metadata with setuptools >= 40.8 (February 2019). An
 * older commit gets the packages of March 2019 (pytest 3.5.1 on 3.6 and 3.7).
 */
export const HARNESS_FLOOR = '2019-03-01T00:00:00Z';

const latest = (a: string, b: string) => (new Date(a).getTime() >= new Date(b).getTime() ? a : b);

const UV_NETWORK_TROUBLE =
  /error sending request|Failed to fetch|dns error|Connection refused|connection reset|timed out|Network is unreachable|tcp connect error/i;

/** Development tools test requirement files name that running the tests does not need (and whose old releases often do not install). */
const DEV_TOOL = new RegExp(
  '^(' +
    [
      String.raw`tox|nox|sphinx[\w.-]*|black|flake8[\w.-]*|pyflakes|pycodestyle|pep8|pylint|mypy|isort|ipdb|ipython|pre-commit|twine`,
      String.raw`wheel|check-manifest|bumpversion|bump2version|readme[-_]renderer|restructuredtext[-_]lint|docutils|coveralls`,
      'python-coveralls|codecov',
    ].join('|') +
    String.raw`)\s*([<>=!~;[]|$)`,
  'i',
);

/**
 * The test runner and its coverage plugins belong to the harness, which runs every suite with
 * pytest flags pytest 3.0-era releases lack (`--rootdir`): a repository's pin of them
 * (boltons' `pytest==2.8.7` and `pluggy==0.3.1`, pydash's `py==1.4.14`, `pytest-cov==1.6` with `coverage==3.6`) is dropped and the
 * name kept, so the cut-off's release is taken.
 */
const HARNESS_OWNED = /^(pytest|pytest[-_][\w.-]+|py|pluggy|coverage|cov-core)(?=\s*([<>=!~;[]|$))\s*(\[[^\]]*\])?/i;

/** A requirement with the harness's own packages unpinned. */
export function harnessRequirement(req: string): string {
  const m = HARNESS_OWNED.exec(req.trim());
  if (!m) return req.trim();
  const marker = req.includes(';') ? req.slice(req.indexOf(';')).trim() : '';
  // pytest itself no older than the scorer's flags need (a pin elsewhere cannot hold it back unseen).
  const floor = m[1]!.toLowerCase() === 'pytest' ? PYTEST_FLOOR : '';
  return `${m[1]}${m[3] ?? ''}${floor}${marker ? ` ${marker}` : ''}`;
}

/** The oldest pytest the scorer's invocation runs on (`--rootdir`, pytest 3.5). */
export const PYTEST_FLOOR = '>=3.5';

/** The env of a change, or why it cannot be had here. */
export type EraEnv = { spec: PythonEnvSpec; derivation: EraEnvDerivation } | { unavailable: string };

export interface EraEnvOptions {
  /** Extra requirements of every env (the builder's `--requirement`). */
  requirements?: string[];
  /** The interpreters to choose among (default: what this machine provides). */
  pythons?: AvailablePython[];
  /** uv for the era resolution (default `$BENCHGYM_UV` or `uv` on PATH); null: resolve nothing, pip takes what fits the Python. */
  uv?: string | null;
  progress?: (message: string) => void;
}

/**
 * Derives the env of each change, caching by what decides it: the declaring files' content
 * and the commit's cut-off (the resolution at the same cut-off of the same files is the same).
 */
export class EraEnvResolver {
  private readonly cache = new Map<string, Promise<EraEnv>>();
  private pythons?: Promise<AvailablePython[]>;
  private uv?: Promise<string | null>;

  constructor(
    private readonly repo: string,
    private readonly opts: EraEnvOptions = {},
  ) {}

  async envFor(commit: string, date: string): Promise<EraEnv> {
    const decl = await readDeclarations(this.repo, commit);
    const pythons = await (this.pythons ??= this.opts.pythons ? Promise.resolve(this.opts.pythons) : availablePythons());
    const choice = choosePython(decl, date, pythons);
    if (choice.python === null) return { unavailable: choice.why };
    const uv = await (this.uv ??= this.opts.uv !== undefined ? Promise.resolve(this.opts.uv) : findUv());
    const cutoff = uv ? latest(commitCutoff(date, choice.python), HARNESS_FLOOR) : null;
    const key = contentKey({ decl, python: choice.python, cutoff: cutoff?.slice(0, 10) ?? null, extra: this.opts.requirements ?? [] });
    let env = this.cache.get(key);
    if (!env) {
      env = this.derive(decl, choice, uv, cutoff);
      this.cache.set(key, env);
    }
    return env;
  }

  private async derive(decl: ProjectDeclarations, choice: PythonChoice, uv: string | null, cutoff: string | null): Promise<EraEnv> {
    const declared = [
      ...new Set(
        [...decl.dependencies, ...decl.test_dependencies]
          .filter((r) => !DEV_TOOL.test(r.trim()))
          .map(harnessRequirement)
          .concat((this.opts.requirements ?? []).map((r) => r.trim())),
      ),
    ];
    // The harness runs every suite with pytest (unittest and nose-style tests included); nose-style needs pytest < 8.
    const pytestNamed = declared.some((r) => /^pytest\s*([<>=!~;[]|$)/i.test(r));
    const runner = [...(pytestNamed ? [] : [`pytest${PYTEST_FLOOR}`]), ...(decl.runner === 'nose' ? ['pytest<8'] : [])];
    const requirements = [...declared, ...runner];
    const derivation = (resolved: string | null, reqs: string[], dropped: EraEnvDerivation['dropped'] = []): EraEnvDerivation => ({
      python: choice.python,
      python_from: choice.from,
      runner: decl.runner,
      requirements: reqs,
      sources: decl.sources,
      cutoff: resolved,
      ...(dropped.length ? { dropped } : {}),
    });
    if (!uv) {
      // No era resolution here: pip takes the newest releases that support the chosen Python.
      const reqs = [...declared, ...(decl.runner === 'nose' && !pytestNamed ? ['pytest<8'] : [])];
      return { spec: { kind: 'python', version: choice.python, requirements: reqs }, derivation: derivation(null, reqs) };
    }
    this.opts.progress?.(`  era env: Python ${choice.python} (${choice.from}); resolving ${requirements.join(' ')} at ${cutoff}`);
    const failure = (err: unknown): string => {
      const msg = err instanceof Error ? err.message : String(err);
      // Not a fact about the era: the build stops instead of rejecting every change from here on.
      if (UV_NETWORK_TROUBLE.test(msg))
        throw new GymError('ENV_BUILD_FAILED', `resolving the era env needs PyPI, which uv could not reach: ${msg.slice(0, 600)}`);
      return msg.split('\n').slice(0, 3).join(' ').slice(0, 400);
    };
    let whole: string;
    try {
      const { cutoff: at, lock } = await eraLock(uv, choice.python, cutoff!, requirements);
      return { spec: { kind: 'python', version: choice.python, requirements: lock }, derivation: derivation(at, requirements) };
    } catch (err) {
      whole = failure(err);
    }
    // Which declared requirement cannot be had at all? Each alone, with the runner: the ones
    // that fail are left out (a Python-2-only backport in a 2013 requirements.txt), the rest
    // resolved together. One the resolution cannot do without is the era's verdict.
    const dropped: NonNullable<EraEnvDerivation['dropped']> = [];
    for (const req of declared) {
      try {
        await eraLock(uv, choice.python, cutoff!, [req, ...runner]);
      } catch (err) {
        dropped.push({ requirement: req, why: failure(err) });
      }
    }
    const kept = requirements.filter((r) => !dropped.some((d) => d.requirement === r));
    if (dropped.length && kept.length) {
      this.opts.progress?.(
        `  era env: left out ${dropped.map((d) => d.requirement).join(' ')} (no release resolves for Python ${choice.python} at ${cutoff})`,
      );
      try {
        const { cutoff: at, lock } = await eraLock(uv, choice.python, cutoff!, kept);
        return { spec: { kind: 'python', version: choice.python, requirements: lock }, derivation: derivation(at, kept, dropped) };
      } catch (err) {
        whole = failure(err);
      }
    }
    return { unavailable: `Python ${choice.python}: ${requirements.join(' ')} cannot be resolved as of ${cutoff}: ${whole}` };
  }
}
