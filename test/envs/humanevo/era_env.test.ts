/**
 * The env of a change's era, derived from what the repository's files say at the commit:
 * the declarations read (nothing run), the Python chosen among this machine's, and the
 * resolver's fallbacks (no uv; nothing fits).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { buildTasks } from '../../../envs/humanevo/builder.ts';
import { LocalSandboxFactory } from '../../../src/sandbox/local/index.ts';
import {
  choosePython,
  declarationsOf,
  EraEnvResolver,
  harnessRequirement,
  satisfiesSpec,
  type ProjectDeclarations,
} from '../../../envs/humanevo/era_env.ts';
import type { AvailablePython } from '../../../src/env/python.ts';
import { TEST_CACHE_DIR, tempDir } from '../../helpers.ts';
import { buildTwoEraFixture, FixtureRepo } from './fixtures.ts';

const MACHINE: AvailablePython[] = ['3.6.15', '3.7.16', '3.8.18', '3.9.18', '3.10.13', '3.11.7', '3.12.1', '3.13.0'].map((full) => ({
  version: full.split('.').slice(0, 2).join('.'),
  full,
  exe: `/py/${full}`,
}));
const only = (...versions: string[]) => MACHINE.filter((p) => versions.includes(p.version));

function decl(over: Partial<ProjectDeclarations> = {}): ProjectDeclarations {
  return {
    requires: [],
    listed: {},
    dependencies: [],
    test_dependencies: [],
    sources: [],
    runner: 'pytest',
    runner_evidence: { pytest: [], nose: [] },
    ...over,
  };
}

describe('satisfiesSpec', () => {
  test('PEP 440 clauses at their own precision, wildcards, ~=, and poetry ^ / ~', () => {
    const cases: [string, string, boolean][] = [
      ['3.7.16', '>=3.5, <3.8', true],
      ['3.8.18', '>=3.5, <3.8', false],
      ['3.7.16', '<=3.7', true],
      ['3.7.16', '<3.7.2', false],
      ['3.6.15', '>=3.6.1', true],
      ['3.6.15', '>=2.7, !=3.0.*, !=3.1.*, !=3.2.*', true],
      ['3.2.5', '>=2.7, !=3.0.*, !=3.1.*, !=3.2.*', false],
      ['3.13.0', '~=3.7', true],
      ['3.8.18', '~=3.7.2', false],
      ['3.9.18', '^3.8', true],
      ['3.9.18', '~3.8', false],
      ['3.10.13', '>=3.10', true],
      ['3.9.18', '>=3.10', false],
      ['3.11.7', '==3.*', true],
      ['3.11.7', '>=3.6 || <3', true],
      ['3.11.7', 'garbage', true],
    ];
    for (const [v, spec, want] of cases) assert.equal(satisfiesSpec(v, spec), want, `${v} ${spec}`);
  });
});

describe('choosePython', () => {
  test('the newest listed version this machine has that meets requires-python', () => {
    const d = decl({
      requires: [{ spec: '>=3.5, <3.8', from: 'setup.py python_requires' }],
      listed: { '3.5': ['tox.ini envlist'], '3.6': ['tox.ini envlist'], '3.7': ['setup.py classifiers'], '3.8': ['.travis.yml'] },
    });
    const c = choosePython(d, '2019-04-01T00:00:00Z', MACHINE);
    assert.equal(c.python, '3.7');
    assert.match((c as { from: string }).from, /newest listed.*setup\.py classifiers.*python_requires >=3\.5, <3\.8/);
    // Among the versions this machine provides: without 3.7, 3.6.
    assert.equal(choosePython(d, '2019-04-01T00:00:00Z', only('3.6', '3.11')).python, '3.6');
  });

  test('listed versions this machine lacks: the nearest newer one', () => {
    const d = decl({ listed: { '2.7': ['setup.py classifiers'], '3.3': ['setup.py classifiers'], '3.4': ['tox.ini envlist'] } });
    const c = choosePython(d, '2015-01-01T00:00:00Z', MACHINE);
    assert.equal(c.python, '3.6');
    assert.match((c as { from: string }).from, /nearest .* listed 3\.3, 3\.4/);
  });

  test('nothing listed: the Python current at the commit date (among those meeting requires-python)', () => {
    assert.equal(choosePython(decl(), '2021-06-01T00:00:00Z', MACHINE).python, '3.9');
    assert.equal(choosePython(decl(), '2024-11-01T00:00:00Z', MACHINE).python, '3.13');
    assert.equal(choosePython(decl(), '2012-01-01T00:00:00Z', MACHINE).python, '3.6', 'older than every Python here: the oldest');
    assert.equal(
      choosePython(decl({ requires: [{ spec: '>=3.10', from: 'pyproject.toml requires-python' }] }), '2021-06-01T00:00:00Z', MACHINE)
        .python,
      '3.10',
    );
    assert.equal(choosePython(decl(), '2021-06-01T00:00:00Z', only('3.8', '3.12')).python, '3.8');
  });

  test('a Python-2-only era, or a specifier nothing here meets: no Python, with why', () => {
    const py2 = choosePython(decl({ listed: { '2.6': ['.travis.yml'], '2.7': ['.travis.yml'] } }), '2014-03-13T00:00:00Z', MACHINE);
    assert.equal(py2.python, null);
    assert.match((py2 as { why: string }).why, /lists only Python 2\.6, 2\.7 \(\.travis\.yml\)/);
    const none = choosePython(
      decl({ requires: [{ spec: '>=3.14', from: 'pyproject.toml requires-python' }] }),
      '2026-01-01T00:00:00Z',
      MACHINE,
    );
    assert.equal(none.python, null);
    assert.match(
      (none as { why: string }).why,
      /no Python on this machine \(3\.6, .*3\.13\) meets \(pyproject\.toml requires-python >=3\.14\)/,
    );
  });
});

describe('declarationsOf (python_project.py)', () => {
  test('setup.py read with ast: python_requires, classifiers, install_requires through a name, tests_require, extras', async () => {
    const d = await declarationsOf({
      'setup.py':
        `from setuptools import setup
DEPS = ["six>=1.5"]
setup(name="x", python_requires=">=3.6", install_requires=DEPS + ["attrs"], tests_require=["pytest>=3"],
      extras_require={"test": ["hypothesis"], "docs": ["sphinx"]},
      classifiers=["Programming Language :: Python :: 3.6", "Programming Language :: Python :: 3.7", ` +
        `"Programming Language :: Python :: 3 :: Only"])
`,
    });
    assert.deepEqual(d.requires, [{ spec: '>=3.6', from: 'setup.py python_requires' }]);
    assert.deepEqual(Object.keys(d.listed).sort(), ['3.6', '3.7']);
    assert.deepEqual(d.dependencies, ['six>=1.5', 'attrs']);
    assert.deepEqual(d.test_dependencies, ['pytest>=3', 'hypothesis']);
    assert.equal(d.runner, 'pytest');
  });

  test('setup.cfg, tox.ini (braces), .travis.yml, workflow matrices and requirement files', async () => {
    const d = await declarationsOf({
      'setup.cfg':
        '[metadata]\nclassifiers =\n    Programming Language :: Python :: 3.8\n[options]\npython_requires = ' +
        '>=3.8\ninstall_requires =\n    requests>=2\n[options.extras_require]\ntesting =\n    mock\n[nosetests]\nverbosity = 2\n',
      'tox.ini':
        '[tox]\nenvlist = py{38,39}-django, pypy3, flake8\n[testenv]\ndeps =\n    ' +
        '-rrequirements-test.txt\n    freezegun\ncommands = nosetests {posargs}\n',
      '.travis.yml': 'language: python\npython:\n  - "3.6"\n  - 3.7  # newest\n',
      '.github/workflows/ci.yml': 'jobs:\n  test:\n    strategy:\n      matrix:\n        python-version: ["3.10", "3.11"]\n',
      'requirements-test.txt': '# tests\nnose==1.3.7\n-e .\nhttps://example.org/x.tar.gz\n',
      // The documentation's builds (glom's requirements-docs.txt) are not the tests'.
      'requirements-docs.txt': 'Sphinx==1.7.4\nalabaster==0.7.10\nfutures==3.2.0\n',
      'docs/requirements.txt': 'sphinx-rtd-theme\n',
      'requirements/rtd.txt': 'readthedocs-sphinx-ext\n',
    });
    assert.deepEqual(d.requires, [{ spec: '>=3.8', from: 'setup.cfg python_requires' }]);
    assert.deepEqual(Object.keys(d.listed).sort(), ['3.10', '3.11', '3.6', '3.7', '3.8', '3.9']);
    assert.deepEqual(d.listed['3.9'], ['tox.ini envlist']);
    assert.deepEqual(d.dependencies, ['requests>=2']);
    assert.deepEqual(d.test_dependencies.sort(), ['freezegun', 'mock', 'nose==1.3.7']);
    assert.equal(d.runner, 'nose');
  });

  test('pyproject.toml: PEP 621 and poetry (^ and ~ as PEP 440); the runner from what the tests import', async () => {
    const d = await declarationsOf(
      {
        'pyproject.toml':
          '[tool.poetry]\nname = "x"\n[tool.poetry.dependencies]\npython = "^3.8"\nattrs ' +
          '= "^21.2"\nclick = "~7.1"\n[tool.poetry.dev-dependencies]\nhypothesis = "*"\n',
      },
      { 'tests/test_a.py': 'import unittest\n\nclass T(unittest.TestCase):\n    pass\n' },
    );
    assert.deepEqual(d.requires, [{ spec: '^3.8', from: 'pyproject.toml tool.poetry.dependencies.python' }]);
    assert.deepEqual(d.dependencies, ['attrs>=21.2,<22', 'click>=7.1,<7.2']);
    assert.deepEqual(d.test_dependencies, ['hypothesis']);
    assert.equal(d.runner, 'unittest');
    const pep621 = await declarationsOf({
      'pyproject.toml':
        '[project]\nrequires-python = ">=3.10"\ndependencies = ["numpy"]\n[project.optional-dependencies]\ntest = ["pytest"]\n',
    });
    assert.deepEqual(
      [pep621.requires[0]!.spec, pep621.dependencies, pep621.test_dependencies, pep621.runner],
      ['>=3.10', ['numpy'], ['pytest'], 'pytest'],
    );
  });
});

describe('EraEnvResolver on the two-era fixture (no uv: nothing resolved, no network)', () => {
  test('each era gets its declared Python; the same declarations share one derivation; nothing fitting is unavailable', async () => {
    const { repo, commits } = await buildTwoEraFixture(await tempDir('benchgym-era-env-'));
    const resolver = new EraEnvResolver(repo, { uv: null, pythons: MACHINE });
    const old = await resolver.envFor(commits.deepMerge!, '2019-04-01T10:00:00Z');
    const modern = await resolver.envFor(commits.describe!, '2023-04-01T10:00:00Z');
    assert.ok('spec' in old && 'spec' in modern);
    assert.equal(old.spec.kind === 'python' && old.spec.version, '3.7');
    assert.equal(modern.spec.kind === 'python' && modern.spec.version, '3.11');
    assert.equal(old.derivation.runner, 'pytest', 'tox.ini runs pytest');
    assert.equal(old.derivation.cutoff, null, 'without uv the env is not era-constrained, and says so');
    assert.ok(
      modern.spec.kind === 'python' && modern.spec.requirements.length === 0,
      'no dependencies declared: only the runner, which the env builder adds',
    );
    assert.equal(
      await resolver.envFor(commits.modernise!, '2023-04-01T10:00:00Z'),
      modern,
      'same declarations, same date: the same derivation',
    );
    const without = new EraEnvResolver(repo, { uv: null, pythons: only('3.12', '3.13') });
    const gone = await without.envFor(commits.deepMerge!, '2019-04-01T10:00:00Z');
    assert.ok('unavailable' in gone);
    assert.match(gone.unavailable, /no Python on this machine \(3\.12, 3\.13\) meets \(setup\.py python_requires >=3\.5, <3\.8\)/);
  });
});

test('build-tasks: a change whose era env cannot be had here is rejected as env-unavailable, apart from the test checks', async () => {
  const dir = await tempDir('benchgym-era-env-');
  const { repo, commits } = await buildTwoEraFixture(path.join(dir, 'repo'));
  const sandboxes = new LocalSandboxFactory({ baseDir: path.join(dir, 'sandboxes'), cacheDir: TEST_CACHE_DIR });
  try {
    const report = await buildTasks({
      repo,
      language: 'python',
      env: { kind: 'python', version: '3.11', requirements: [] },
      eraEnv: { uv: null, pythons: only('3.12', '3.13') },
      to: commits.deepMerge,
      sandboxes,
    });
    assert.equal(report.validated, 0);
    assert.deepEqual({ ...report.rejected }, { 'env-unavailable': 1 });
    assert.equal(report.rejections[0]!.function, 'deep_merge');
    assert.match(report.rejections[0]!.detail!, /no Python on this machine \(3\.12, 3\.13\) meets/);
    assert.equal(report.testRuns, 0, 'nothing is run');
    assert.deepEqual(report.envs, []);
  } finally {
    await sandboxes.close();
  }
});

test(
  'with uv: the declared requirements and pytest resolved for the ' + "era's Python at the commit's date, never before the harness floor",
  async () => {
    const dir = await tempDir('benchgym-era-env-');
    const { repo, commits } = await buildTwoEraFixture(path.join(dir, 'repo'));
    // A stand-in uv that records how it was asked (no network).
    const uv = path.join(dir, 'uv');
    await fs.writeFile(
      uv,
      `#!/bin/sh\necho "$@" >> "${dir}/uv.log"\n[ "$1" = "--version" ] && { echo "uv 0.0.0"; exit 0; }\necho "pytest==3.5.1"\n`,
      { mode: 0o755 },
    );
    const resolver = new EraEnvResolver(repo, { uv, pythons: MACHINE });
    const early = await resolver.envFor(commits.deepMerge!, '2015-06-01T00:00:00Z');
    assert.ok('spec' in early);
    assert.deepEqual(early.spec, { kind: 'python', version: '3.7', requirements: ['pytest==3.5.1'] });
    assert.equal(early.derivation.cutoff, '2019-03-01T00:00:00Z', 'the harness floor (pytest with --rootdir, setuptools 40.8 for sdists)');
    const later = await resolver.envFor(commits.deepMerge!, '2019-04-01T10:00:00Z');
    assert.ok('spec' in later && later.derivation.cutoff === '2019-04-01T10:00:00Z');
    const calls = (await fs.readFile(path.join(dir, 'uv.log'), 'utf8'))
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('pip compile'));
    assert.equal(calls.length, 2, 'one resolution per distinct cut-off');
    assert.match(calls[0]!, /--python-version 3\.7 --exclude-newer 2019-03-01T00:00:00Z/);
    assert.match(calls[1]!, /--exclude-newer 2019-04-01T10:00:00Z/);
  },
);

test('the harness owns the test runner: pins of pytest, its plugins, py and coverage are dropped, their names kept', () => {
  assert.equal(harnessRequirement('pytest==2.8.7'), 'pytest>=3.5', 'no older than the scorer needs');
  assert.equal(harnessRequirement('pluggy==0.3.1'), 'pluggy', "pytest's own plugin manager, which would hold it at 3.2");
  assert.equal(harnessRequirement('py==1.4.14'), 'py');
  assert.equal(harnessRequirement('pytest-cov==1.6'), 'pytest-cov');
  assert.equal(harnessRequirement('coverage[toml]>=5 ; python_version > "3"'), 'coverage[toml] ; python_version > "3"');
  assert.equal(harnessRequirement('pyyaml==3.11'), 'pyyaml==3.11', 'a name that only starts with py is the project’s');
  assert.equal(harnessRequirement('pytest_mock'), 'pytest_mock');
  assert.equal(harnessRequirement('six>=1.0'), 'six>=1.0');
});

test(
  'with uv: a declared requirement no release of which resolves ' + 'for the era is left out and named; the rest resolve together',
  async () => {
    const dir = await tempDir('benchgym-era-env-');
    const r = new FixtureRepo(path.join(dir, 'repo'));
    await r.init();
    const repo = r.dir;
    // A 2013 requirements file: a Python-2-only backport, an old runner pinned, a coverage service.
    const commit = await r.commit('old', {
      'setup.py': "from setuptools import setup\nsetup(name='old', version='0.1', install_requires=['six>=1.0'])\n",
      'requirements.txt': 'wsgiref==0.1.2\n',
      'test-requirements.txt': 'pytest==2.8.7\npy==1.4.14\npytest-cov==1.6\ncoveralls\npyyaml==3.11\n',
    });
    // A stand-in uv (no network) that cannot build wsgiref and pins every other name it is asked for.
    const uv = path.join(dir, 'uv');
    await fs.writeFile(
      uv,
      `#!/bin/sh
[ "$1" = "--version" ] && { echo "uv 0.0.0"; exit 0; }
for a; do last="$a"; done
tr '\\n' ' ' < "$last" >> "${dir}/uv.log"; echo >> "${dir}/uv.log"
grep -q wsgiref "$last" && { echo "error: Failed to build \\\`wsgiref==0.1.2\\\`" >&2; exit 1; }
sed -e 's/[<>=;[ ].*//' -e 's/$/==1.0/' "$last"
`,
      { mode: 0o755 },
    );
    const resolver = new EraEnvResolver(repo, { uv, pythons: MACHINE });
    const env = await resolver.envFor(commit, '2013-06-01T00:00:00Z');
    assert.ok('spec' in env, JSON.stringify(env));
    assert.deepEqual(
      env.derivation.dropped?.map((d) => d.requirement),
      ['wsgiref==0.1.2'],
    );
    assert.match(env.derivation.dropped![0]!.why, /Failed to build `wsgiref==0\.1\.2`/);
    assert.deepEqual([...env.derivation.requirements].sort(), ['py', 'pytest-cov', 'pytest>=3.5', 'pyyaml==3.11', 'six>=1.0']);
    assert.deepEqual([...env.spec.requirements].sort(), ['py==1.0', 'pytest-cov==1.0', 'pytest==1.0', 'pyyaml==1.0', 'six==1.0']);
    const asked = (await fs.readFile(path.join(dir, 'uv.log'), 'utf8')).trim().split('\n');
    assert.ok(
      asked.every((l) => !/coveralls|pytest==2\.8\.7|py==1\.4\.14/.test(l)),
      'no pin of the runner, no coverage service, ever asked for',
    );
    assert.ok(
      asked.some((l) => l.trim() === 'wsgiref==0.1.2'),
      'each requirement tried alone (the runner is one of them here)',
    );
  },
);

test('with uv: a runtime requirement that resolves with nothing leaves the era unavailable only when nothing is left', async () => {
  const dir = await tempDir('benchgym-era-env-');
  const r = new FixtureRepo(path.join(dir, 'repo'));
  await r.init();
  const repo = r.dir;
  await r.commit('old', { 'setup.py': "from setuptools import setup\nsetup(name='old', version='0.1', install_requires=['six>=1.0'])\n" });
  // Resolves each requirement alone, never all of them together: a conflict, not a missing release.
  const uv = path.join(dir, 'uv');
  await fs.writeFile(
    uv,
    `#!/bin/sh
[ "$1" = "--version" ] && { echo "uv 0.0.0"; exit 0; }
for a; do last="$a"; done
[ "$(wc -l < "$last")" -gt 2 ] && { echo "error: No solution found: six>=1.0 conflicts with pytest" >&2; exit 1; }
sed -e 's/[<>=;[ ].*//' -e 's/$/==1.0/' "$last"
`,
    { mode: 0o755 },
  );
  const head = await r.commit('tests', { 'requirements-dev.txt': 'pytest\nmock\n' });
  const env = await new EraEnvResolver(repo, { uv, pythons: MACHINE }).envFor(head, '2013-06-01T00:00:00Z');
  assert.ok('unavailable' in env, 'every requirement resolves alone, so nothing is left out, and together they conflict');
  assert.match(env.unavailable, /cannot be resolved as of 2019-03-01T00:00:00Z: .*conflicts with pytest/);
});
