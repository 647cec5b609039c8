import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  comparableLines,
  expectedFile,
  fileVersions,
  laterNames,
  lineDiffCount,
  matchTask,
  platformComparableLines,
  platformSource,
  projectCommit,
  ProjectsTable,
} from '../../../envs/codereval/commits.ts';
import { findCommits, findCommitsCmd, platformLayoutPath, PROJECTS_FILE } from '../../../envs/codereval/find_commits.ts';

/** A git repository with fixed dates: commits return their ids. */
class Fixture {
  private tick = 0;
  constructor(readonly dir: string) {}
  git(...args: string[]): string {
    const date = `2021-03-${String(1 + this.tick).padStart(2, '0')}T10:00:00Z`;
    return execFileSync('git', args, {
      cwd: this.dir,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        HOME: this.dir,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_AUTHOR_NAME: 'F',
        GIT_AUTHOR_EMAIL: 'f@example.org',
        GIT_COMMITTER_NAME: 'F',
        GIT_COMMITTER_EMAIL: 'f@example.org',
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_DATE: date,
      },
    });
  }
  async commit(message: string, files: Record<string, string | null>, renames: [string, string][] = []): Promise<string> {
    for (const [from, to] of renames) {
      await fs.mkdir(path.dirname(path.join(this.dir, to)), { recursive: true });
      this.git('mv', from, to);
    }
    for (const [rel, content] of Object.entries(files)) {
      const abs = path.join(this.dir, rel);
      if (content === null) await fs.rm(abs);
      else {
        await fs.mkdir(path.dirname(abs), { recursive: true });
        await fs.writeFile(abs, content);
      }
    }
    this.tick++;
    this.git('add', '-A');
    this.git('commit', '-q', '-m', message);
    return this.git('rev-parse', 'HEAD').trim();
  }
}

const body = (n: number) => Array.from({ length: 30 }, (_, i) => `    x${i} = ${i}  # line ${i}`).join('\n') + `\n    return ${n}\n`;
const V1 = `import os\n\n\ndef target(a):\n    """Doc."""\n${body(1)}\n\ndef other():\n    return 0\n`;
const V2 = V1.replace('return 1', 'return a + 1');
const V3 = V2.replace('def other():\n    return 0', 'def other():\n    return 3');
const HELPER1 = 'def helper():\n    return 1\n';
const HELPER2 = 'def helper():\n    return 2\n';

describe('codereval commits: comparing a file with the dataset text', () => {
  test('the ground truth goes where the placeholder is, indentation kept', () => {
    assert.equal(
      expectedFile('class A:\n    <PLACEHOLDER>\n\nx = 1\n', 'def f(self):\n        return 1'),
      'class A:\n    def f(self):\n        return 1\n\nx = 1\n',
    );
    assert.throws(() => expectedFile('no marker', 'x'), /PLACEHOLDER/);
  });
  test('line endings, trailing whitespace and trailing blank lines do not count; anything else does', () => {
    assert.deepEqual(comparableLines('a  \r\nb\t\r\n\r\n\n'), ['a', 'b']);
    assert.deepEqual(comparableLines('  a\nb'), ['  a', 'b']);
  });
  test('line diff counts added plus removed lines', () => {
    assert.equal(lineDiffCount(['a', 'b', 'c'], ['a', 'b', 'c']), 0);
    assert.equal(lineDiffCount(['a', 'b', 'c'], ['a', 'x', 'c']), 2);
    assert.equal(lineDiffCount(['a', 'c'], ['a', 'b', 'c']), 1);
    assert.equal(lineDiffCount([], ['a', 'b']), 2);
    assert.equal(lineDiffCount(['a', 'b', 'c', 'd'], ['d', 'c', 'b', 'a']), 6);
    assert.equal(lineDiffCount(['a', 'b', 'c', 'd'], ['w', 'x', 'y', 'z'], 3), 3, 'capped');
  });
});

describe('codereval commits: a task placed in a fixture history', () => {
  let dir: string;
  let repo: Fixture;
  const c: Record<string, string> = {};
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'codereval-commits-'));
    repo = new Fixture(path.join(dir, 'o+p'));
    await fs.mkdir(repo.dir);
    repo.git('init', '-q', '-b', 'main');
    c.v1 = await repo.commit('v1', { 'mod.py': V1, 'util.py': HELPER1 });
    c.v2 = await repo.commit('v2', { 'mod.py': V2 });
    c.helper2 = await repo.commit('helper 2', { 'util.py': HELPER2 });
    c.v3 = await repo.commit('v3', { 'mod.py': V3 });
    // A rename with a small change: the dataset knows the file by its new path.
    c.moved = await repo.commit('move', { 'pkg/mod.py': V3.replace('import os', 'import os, sys') }, [['mod.py', 'pkg/mod.py']]);
    // A version only on a review ref (as Gerrit's refs/changes): found, but a published one is preferred.
    repo.git('checkout', '-q', '-b', 'review', c.v1);
    c.review = await repo.commit('review copy of v2', { 'mod.py': V2 });
    repo.git('update-ref', 'refs/changes/01/1/1', 'HEAD');
    repo.git('checkout', '-q', 'main');
    repo.git('branch', '-D', 'review');
  });
  after(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  test('every version of the path, renames followed, review-only ones marked', async () => {
    const versions = await fileVersions(repo.dir, 'pkg/mod.py');
    assert.deepEqual(new Set(versions.map((v) => v.commit)), new Set([c.v1, c.v2, c.v3, c.moved, c.review]));
    assert.equal(versions.find((v) => v.commit === c.v1)!.path, 'mod.py');
    assert.equal(versions.find((v) => v.commit === c.review)!.published, false);
    assert.equal(versions.find((v) => v.commit === c.v2)!.published, true);
  });

  test(
    'exact: the version equal modulo line endings and trailing ' + 'spaces, at its old path; the published commit over the review one',
    async () => {
      const expected = V2.replace(/\n/g, '  \r\n') + '\n\n';
      const r = await matchTask(repo.dir, 'o/p', { id: 't1', project: 'o/p', path: 'pkg/mod.py', expected });
      assert.ok(!('reason' in r));
      assert.equal(r.match.match, 'exact');
      assert.equal(r.match.diffLines, 0);
      assert.equal(r.match.commit, c.v2);
      assert.equal(r.match.path, 'mod.py');
      assert.equal(r.match.versions, 4);
    },
  );

  test('nearest: no version equal, the closest by line diff, with its size', async () => {
    const r = await matchTask(repo.dir, 'o/p', { id: 't2', project: 'o/p', path: 'pkg/mod.py', expected: V3 + '\n\nEXTRA = 1\n' });
    assert.ok(!('reason' in r));
    assert.equal(r.match.match, 'nearest');
    assert.equal(r.match.diffLines, 3, 'the two blank lines and the line added');
    assert.equal(r.match.commit, c.v3);
    assert.equal(r.match.path, 'mod.py');
  });

  test("the platform's copy: its own version (later than the dataset's text) and its layout path, recorded beside the match", async () => {
    const test = `${V3}\nif __name__ == "__main__":\n    assert target(1) == 2\n`;
    assert.equal(platformSource(test), `${V3}\n`);
    const r = await matchTask(repo.dir, 'o/p', {
      id: 't4',
      project: 'o/p',
      path: 'mod.py',
      layoutPath: 'pkg/mod.py',
      expected: V2,
      platformText: platformSource(test),
    });
    assert.ok(!('reason' in r));
    assert.equal(r.match.commit, c.v2, 'the match is the dataset text');
    assert.equal(r.match.match, 'exact');
    assert.deepEqual(r.match.platform && { commit: r.match.platform.commit, diffLines: r.match.platform.diffLines }, {
      commit: c.v3,
      diffLines: 0,
    });
    assert.equal(r.match.layout?.path, 'pkg/mod.py');
    assert.equal(r.match.layout?.commit, c.moved);
  });

  test("the names a file was renamed to later are found, and their versions listed with the old name's", async () => {
    assert.deepEqual(await laterNames(repo.dir, 'mod.py'), ['pkg/mod.py']);
    assert.deepEqual(await laterNames(repo.dir, 'pkg/mod.py'), []);
    const versions = await fileVersions(repo.dir, 'util.py');
    assert.deepEqual(new Set(versions.map((v) => v.path)), new Set(['util.py']));
  });

  test(
    "the platform's copy is found under the file's later name, and modulo tabs " +
      "for spaces (mozilla's auto_nag/ became bugbot/; cpburnz indents with tabs)",
    async () => {
      const f = new Fixture(path.join(dir, 'o+tabs'));
      await fs.mkdir(f.dir);
      f.git('init', '-q', '-b', 'main');
      const tabbed = (body: string) => `def target(x):\n\tif x:\n\t\treturn ${body}\n\treturn 0\n`;
      const v1 = await f.commit('v1', { 'old/mod.py': tabbed('1') });
      await f.commit('rename', {}, [['old/mod.py', 'new/mod.py']]);
      const v3 = await f.commit('v3', { 'new/mod.py': tabbed('2') + 'EXTRA = 1\n' });
      assert.deepEqual(platformComparableLines('\t\treturn 1\n  \n'), ['        return 1']);
      // The platform's copy: v3's text, indented with spaces, at the dataset's (old) path.
      const platformText = tabbed('2').replace(/\t/g, '    ') + 'EXTRA = 1\n';
      const r = await matchTask(f.dir, 'o/tabs', { id: 't9', project: 'o/tabs', path: 'old/mod.py', expected: tabbed('1'), platformText });
      assert.ok(!('reason' in r));
      assert.equal(r.match.commit, v1);
      assert.deepEqual(
        r.match.platform && { commit: r.match.platform.commit, path: r.match.platform.path, diffLines: r.match.platform.diffLines },
        { commit: v3, path: 'new/mod.py', diffLines: 0 },
      );
    },
  );

  test("the layout path comes from the platform test file's name", () => {
    const blocks = new Map([
      ['/home/travis/builds/repos/o---p/src/pkg/mod_target_passk_validte.py', ''],
      ['/home/travis/builds/repos/standalone/pkg-util-helper.py', ''],
    ]);
    assert.equal(platformLayoutPath(blocks, 'o/p', 'pkg/mod.py', 'target'), 'src/pkg/mod.py');
    assert.equal(platformLayoutPath(blocks, 'o/p', 'pkg/util.py', 'helper'), undefined);
  });

  test('a path no commit has is not found, with the reason', async () => {
    const r = await matchTask(repo.dir, 'o/p', { id: 't3', project: 'o/p', path: 'nope.py', expected: 'x\n' });
    assert.ok('reason' in r);
    assert.match(r.reason, /nope\.py is in no commit of o\/p/);
  });

  test("the project's commit is the one where most tasks' files are in their matched state", async () => {
    const blob = (rev: string, p: string) => repo.git('rev-parse', `${rev}:${p}`).trim();
    // mod.py as at v2 and util.py as at helper2: both hold at helper2 (v2 is older, v3 changed mod.py again).
    const state = await projectCommit(repo.dir, [
      { id: 'a', commit: c.v2, date: '2021-03-02T10:00:00Z', path: 'mod.py', blob: blob(c.v2, 'mod.py') },
      { id: 'b', commit: c.helper2, date: '2021-03-03T10:00:00Z', path: 'util.py', blob: blob(c.helper2, 'util.py') },
    ]);
    assert.equal(state.commit, c.helper2);
    assert.deepEqual([...state.at].sort(), ['a', 'b']);
  });

  test('findCommits and the command: a dataset in, the table of ids and hashes out', async () => {
    const data = path.join(dir, 'dataset');
    await fs.mkdir(data);
    const row = (id: string, p: string, file: string, name: string) => {
      const start = file.indexOf(`def ${name}`);
      const end = file.indexOf('\n\n\n', start) < 0 ? file.length : file.indexOf('\n\n\n', start);
      const gt = file.slice(start, end);
      return JSON.stringify({
        prompt: 'p',
        metadata: {
          task_id: `o---p/${id}`,
          ground_truth: gt,
          function_name: name,
          docstring: '',
          signature: `${name}()`,
          'lsp-context': file.slice(0, start) + '<PLACEHOLDER>' + file.slice(end),
          'lsp-path': p,
          'lsp-repo': 'o/p',
        },
      });
    };
    const ids = { mod: '0'.repeat(23) + '1', util: '0'.repeat(23) + '2', gone: '0'.repeat(23) + '3' };
    await fs.writeFile(
      path.join(data, 'CoderEval-ALL.jsonl'),
      [
        row(ids.mod, 'pkg/mod.py', V2, 'target'),
        row(ids.util, 'util.py', HELPER2, 'helper'),
        JSON.stringify({
          prompt: 'p',
          metadata: {
            task_id: `q---gone/${ids.gone}`,
            ground_truth: 'def f(): pass',
            function_name: 'f',
            docstring: '',
            signature: 'f()',
            'lsp-context': '<PLACEHOLDER>\n',
            'lsp-path': 'f.py',
            'lsp-repo': 'q/gone',
          },
        }),
      ].join('\n') + '\n',
    );
    const report = await findCommits({ dataset: data, mirrors: dir });
    assert.equal(report.table.projects['o/p']!.commit, c.helper2);
    assert.equal(report.table.projects['o/p']!.atCommit, 2);
    assert.equal(report.table.tasks[ids.mod]!.commit, c.v2);
    assert.equal(report.table.tasks[ids.mod]!.atProjectCommit, true);
    assert.equal(report.table.tasks[ids.util]!.match, 'exact');
    assert.match(report.table.notFound[ids.gone]!.reason, /no clone of q\/gone/);
    assert.deepEqual(report.summary['o/p'], {
      tasks: 2,
      exact: 2,
      nearest: 0,
      notFound: 0,
      nonStandalone: { tasks: 2, exact: 2, nearest: 0, notFound: 0 },
    });

    const out = path.join(dir, 'projects.json');
    const stderr = process.stderr.write;
    process.stderr.write = () => true;
    let code: number;
    try {
      code = await findCommitsCmd(['--dataset', data, '--repo', `o/p=${repo.dir}`, '--out', out]);
    } finally {
      process.stderr.write = stderr;
    }
    assert.equal(code, 0);
    const written = ProjectsTable.parse(JSON.parse(readFileSync(out, 'utf8')));
    assert.equal(written.tasks[ids.util]!.commit, c.helper2);
    assert.doesNotMatch(readFileSync(out, 'utf8'), /def target|x0 = 0/, 'no benchmark text in the table');
  });
});

test('the shipped table parses and holds ids and hashes only', () => {
  const text = readFileSync(PROJECTS_FILE, 'utf8');
  const table = ProjectsTable.parse(JSON.parse(text));
  assert.ok(Object.keys(table.tasks).length > 150);
  for (const id of [...Object.keys(table.tasks), ...Object.keys(table.notFound)]) assert.match(id, /^[0-9a-f]{24}$/);
  assert.doesNotMatch(text, /def |return |import /);
});
