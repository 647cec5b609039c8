import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  choosePython,
  packageDirsOf,
  PROJECT_ENVS_FILE,
  projectEnvSpec,
  projectEnvTable,
  readProjectMeta,
  satisfiesPythonRequires,
  type ProjectEnvEntry,
} from '../../../envs/codereval/project_envs.ts';

describe('codereval project envs: the Python of a project at a date', () => {
  test('python_requires clauses on 3.x', () => {
    assert.equal(satisfiesPythonRequires('3.8', '>=3.6'), true);
    assert.equal(satisfiesPythonRequires('3.6', '>=3.7'), false);
    assert.equal(satisfiesPythonRequires('3.10', '>=2.7, !=3.0.*, !=3.1.*, <3.10'), false);
    assert.equal(satisfiesPythonRequires('3.9', '>=2.7, !=3.0.*, !=3.1.*, <3.10'), true);
    assert.equal(satisfiesPythonRequires('3.9', '!=3.9.*'), false);
    assert.equal(satisfiesPythonRequires('3.9', '^3.7'), true);
    assert.equal(satisfiesPythonRequires('3.9', '<3'), false);
    assert.equal(satisfiesPythonRequires('3.9', null), true);
  });
  test('the newest release out at the date, among the classifiers when they fit', () => {
    assert.deepEqual(choosePython({ python_requires: null, classifiers: [] }, '2022-07-18T10:00:00Z'), { python: '3.10', from: 'date' });
    assert.deepEqual(choosePython({ python_requires: null, classifiers: ['3.6', '3.7', '3.8'] }, '2022-07-04T00:00:00Z'), {
      python: '3.8',
      from: 'classifiers',
    });
    // 3.11 was not out in May 2022, whatever the classifiers say.
    assert.deepEqual(choosePython({ python_requires: null, classifiers: ['3.9', '3.10', '3.11'] }, '2022-05-01T00:00:00Z'), {
      python: '3.10',
      from: 'classifiers',
    });
    assert.deepEqual(choosePython({ python_requires: '<3.8', classifiers: ['3.5'] }, '2021-01-01T00:00:00Z'), {
      python: '3.7',
      from: 'python_requires',
    });
    assert.deepEqual(choosePython({ python_requires: null, classifiers: [] }, '2019-07-18T00:00:00Z'), { python: '3.7', from: 'date' });
  });
  test("the env: declared requirements, the era's pins as constraints, the era's pytest as the runner", () => {
    const entry: ProjectEnvEntry = {
      project: 'o/p',
      repo: 'o/p',
      commit: 'a'.repeat(40),
      date: '2022-01-01T00:00:00Z',
      python: '3.9',
      pythonFrom: 'date',
      requirements: ['attrs>=19'],
      sources: ['setup.py'],
      cutoff: '2022-01-02T00:00:00Z',
      constraints: ['attrs==21.4.0', 'pytest==6.2.5', 'pluggy==1.0.0'],
    };
    assert.deepEqual(projectEnvSpec(entry), {
      kind: 'python',
      version: '3.9',
      requirements: ['attrs>=19', 'pytest==6.2.5'],
      constraints: entry.constraints,
    });
  });
});

describe('codereval project envs: what a project declares, read without running it', () => {
  let dir: string;
  let commit: string;
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'codereval-meta-'));
    const files: Record<string, string> = {
      // setup.py that would fail if run: only parsed.
      'setup.py':
        "import sys\nsys.exit('never run')\nBASE = ['six>=1.5']\nREQS = BASE + ['attrs']\nsetup(name='p', install_requires=REQS, " +
        "python_requires='>=3.6', classifiers=['Programming Language :: Python :: 3.7', 'Programming Language :: Python :: 3.8'])\n",
      'requirements.txt': '# pinned\n-r base.txt\nrequests==2.25.1  # http\n-e .\n',
      'base.txt': 'idna\n',
      'sub/pkg/setup.cfg': '[options]\ninstall_requires =\n    lxml>=4\n    cssselect\n',
      'sub/pkg/mod/a.py': 'x = 1\n',
      'other/b.py': 'y = 2\n',
    };
    for (const [rel, text] of Object.entries(files)) {
      await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
      await fs.writeFile(path.join(dir, rel), text);
    }
    const env = {
      PATH: process.env.PATH,
      HOME: dir,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'F',
      GIT_AUTHOR_EMAIL: 'f@example.org',
      GIT_COMMITTER_NAME: 'F',
      GIT_COMMITTER_EMAIL: 'f@example.org',
    };
    execFileSync('git', ['init', '-q'], { cwd: dir, env });
    execFileSync('git', ['add', '-A'], { cwd: dir, env });
    execFileSync('git', ['commit', '-q', '-m', 'c'], { cwd: dir, env });
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, env, encoding: 'utf8' }).trim();
    await fs.writeFile(path.join(dir, 'requirements.txt'), 'changed-after-commit\n');
  });
  after(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  test('package folders with their own metadata on the way to the task files', async () => {
    assert.deepEqual(await packageDirsOf(dir, commit, ['sub/pkg/mod/a.py', 'other/b.py']), ['sub/pkg']);
  });

  test('setup.py by ast (names and + resolved), requirements.txt with -r, a package setup.cfg; the commit, not the work tree', async () => {
    const meta = await readProjectMeta(dir, commit, ['sub/pkg']);
    assert.deepEqual(meta.requirements, ['six>=1.5', 'attrs', 'idna', 'requests==2.25.1', 'lxml>=4', 'cssselect']);
    assert.equal(meta.python_requires, '>=3.6');
    assert.deepEqual(meta.classifiers, ['3.7', '3.8']);
    assert.deepEqual(meta.sources, ['setup.py', 'requirements.txt', 'sub/pkg/setup.cfg']);
  });
});

test('the shipped project env table parses', { skip: existsSync(PROJECT_ENVS_FILE) ? false : 'no project-envs.json yet' }, () => {
  const table = projectEnvTable();
  assert.ok(table.size > 0);
  for (const e of table.values()) {
    assert.match(e.commit, /^[0-9a-f]{40}$/);
    for (const c of e.constraints) assert.match(c, /^[A-Za-z0-9._-]+(\[[^\]]*\])?==\S+/, `${e.project}: ${c}`);
  }
});
