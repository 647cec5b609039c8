/**
 * Issue 16, point 3: a CoderEval task inside its real project. The workspace is the project
 * at the platform's commit as a repository of one commit with the target stubbed; the
 * platform's test runs at its own path inside it, in the project's env. Over MCP: view the
 * class, run the platform test, edit the method, submit (reward 1); untouched, reward 0.
 *
 * Needs the shared CoderEval data and a mirror of neo4j/neo4j-python-driver under
 * $BENCHGYM_MIRRORS (as for `--repos-dir`); builds neo4j's env once (about a minute).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { coderevalSuite, loadCoderEval, SCORER_SOURCE, siblingTestsOf } from '../../../envs/codereval/index.ts';
import { execFileSync } from 'node:child_process';
import { findPython } from '../../../src/env/python.ts';
import { ProjectsTable } from '../../../envs/codereval/commits.ts';
import { PROJECTS_FILE } from '../../../envs/codereval/find_commits.ts';
import {
  missingFilesRead,
  planProjectTask,
  PLATFORM_ENVIRONMENT,
  projectFiles,
  runsInProject,
} from '../../../envs/codereval/project_tasks.ts';
import type { Gym } from '../../../src/episode/gym.ts';
import { locateMirror, runGit } from '../../../src/repo/index.ts';
import { startHttpServer, type RunningServer } from '../../../src/server/http.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym, TEST_CACHE_DIR, tempDir } from '../../helpers.ts';
import { call, data, text } from '../../server/scenario.ts';
import { CODEREVAL_DIR, SKIP_WITHOUT_DATA } from './data.ts';

const NEO4J = 'neo4j/neo4j-python-driver';
/** UnpackableBuffer.pop_u16 (class_runnable), in src/neo4j/_codec/packstream/v1/__init__.py at the platform's commit. */
const POP_U16 = '62e6087bd76274f8a4026bfa';
/** Record.values (class_runnable), same project. */
const VALUES = '62e60da4d76274f8a4026cf1';
const FILE = 'src/neo4j/_codec/packstream/v1/__init__.py';

const MIRRORS = process.env.BENCHGYM_MIRRORS;
const SKIP: string | false =
  SKIP_WITHOUT_DATA || (!MIRRORS ? 'BENCHGYM_MIRRORS (a --repos-dir holding neo4j/neo4j-python-driver) is not set' : false);

describe('which tasks run inside their project', () => {
  test('every project level; a standalone level only when its test needs more than the standard library', () => {
    for (const level of ['plib_runnable', 'class_runnable', 'file_runnable', 'project_runnable'])
      assert.equal(runsInProject(level, []), true, level);
    assert.equal(runsInProject('self_contained', []), false);
    assert.equal(runsInProject('slib_runnable', []), false);
    assert.equal(runsInProject('self_contained', ['imports neo4j']), true);
    assert.equal(runsInProject('slib_runnable', ['reads /home/travis/builds/repos/x']), true);
    assert.equal(runsInProject(undefined, ['imports neo4j']), false, 'no level: no record to place it by');
  });
});

describe('a project checkout whose source lacks some files', () => {
  test('a test that reads one (by path, or its folder as a whole) is told apart from one that reads a file beside it', () => {
    const missing = ['tests/fixtures/package.zip', 'tests/fixtures/folder/a.tif', 'tests/fixtures/folder/b.tif'];
    const root = '/home/travis/builds/repos/o---p/';
    assert.deepEqual(missingFilesRead(`x = _explore_zipfile('${root}tests/fixtures/package.zip')\n`, missing), [
      'tests/fixtures/package.zip',
    ]);
    assert.deepEqual(missingFilesRead(`x = _explore_folder(\n    "${root}tests/fixtures/folder")\n`, missing), [
      'tests/fixtures/folder/a.tif',
      'tests/fixtures/folder/b.tif',
    ]);
    // A file beside them, another file whose name starts the same, and a commented-out check read none of them.
    assert.deepEqual(
      missingFilesRead(
        `open('${root}tests/fixtures/document.xml')\nopen('${root}tests/fixtures/package.zip.bak')\n    ` +
          `# old = '${root}tests/fixtures/package.zip'\n`,
        missing,
      ),
      [],
    );
    assert.deepEqual(missingFilesRead('anything', []), []);
  });
});

describe("platform tests that import another task's test module", () => {
  test('the module beside the test joins its hidden tests; one in another folder, a commented-out name and the test itself do not', () => {
    const root = '/home/travis/builds/repos/o---p/pkg/';
    const blocks = new Map([
      [
        `${root}a_passk_validte.py`,
        'with patch("b_passk_validte.X.y"):\n    pass\n# import c_passk_validte\nimport a_passk_validte\nimport d_passk_validte\n',
      ],
      [`${root}b_passk_validte.py`, 'class X: ...\n'],
      [`${root}c_passk_validte.py`, ''],
      ['/home/travis/builds/repos/o---p/other/d_passk_validte.py', ''],
    ]);
    assert.deepEqual(siblingTestsOf(blocks, `${root}a_passk_validte.py`, blocks.get(`${root}a_passk_validte.py`)!), {
      [`${root}b_passk_validte.py`]: 'class X: ...\n',
    });
    assert.equal(siblingTestsOf(blocks, `${root}b_passk_validte.py`, 'import os\n'), undefined);
  });
});

describe('the plan of a project-level task, from the tables (no checkout)', () => {
  const projects = ProjectsTable.parse(JSON.parse(readFileSync(PROJECTS_FILE, 'utf8')));
  const entry = {
    project: NEO4J,
    repo: NEO4J,
    commit: projects.projects[NEO4J]!.platformCommit!,
    date: '2023-08-29',
    python: '3.11',
    pythonFrom: 'date' as const,
    requirements: ['dill'],
    sources: [],
    cutoff: '2023-08-30',
    constraints: ['dill==0.3.7'],
  };
  const key = '/home/travis/builds/repos/neo4j---neo4j-python-driver/src/neo4j/_codec/packstream/v1/__init___pop_u16_passk_validte.py';

  test('at the platform commit, in the platform layout, with the test at its own path and the env of the table', () => {
    const plan = planProjectTask(
      { id: POP_U16, project: NEO4J, lspPath: 'neo4j/_codec/packstream/v1/__init__.py', testKey: key },
      projects,
      new Map([[NEO4J, entry]]),
    );
    assert.ok('placement' in plan, JSON.stringify(plan));
    assert.equal(plan.placement.commit, projects.projects[NEO4J]!.platformCommit);
    assert.equal(plan.placement.file, FILE);
    assert.equal(plan.placement.testPath, 'src/neo4j/_codec/packstream/v1/__init___pop_u16_passk_validte.py');
    assert.equal(plan.placement.rootAlias, '/home/travis/builds/repos/neo4j---neo4j-python-driver');
    assert.deepEqual(plan.placement.env.constraints, ['dill==0.3.7']);
    assert.equal(plan.placement.environment, undefined, 'neo4j reads no variable of the image');
  });

  test(
    "a project whose tests read a variable of CoderEval's image gets " + "it in its placement (infrared's JAVA_HOME), with how it is known",
    () => {
      const INFRARED = 'redhat-openstack/infrared';
      const state = projects.projects[INFRARED]!;
      const id = Object.entries(projects.tasks).find(([, m]) => m.repo === INFRARED)![0];
      const plan = planProjectTask(
        {
          id,
          project: INFRARED,
          lspPath: 'infrared/core/inspector/inspector.py',
          testKey: `/home/travis/builds/repos/redhat-openstack---infrared/infrared/core/inspector/inspector_x_passk_validte.py`,
        },
        projects,
        new Map([[INFRARED, { ...entry, project: INFRARED, repo: INFRARED, commit: state.platformCommit ?? state.commit }]]),
      );
      assert.ok('placement' in plan, JSON.stringify(plan));
      assert.deepEqual(plan.placement.environment, { JAVA_HOME: '/usr/lib/jvm/default-java' });
      assert.match(PLATFORM_ENVIRONMENT[INFRARED]!.why, /JAVA_HOME/);
    },
  );

  test('the exact reasons a task stays unavailable: no env, an env of another commit, no project state', () => {
    const t = { id: POP_U16, project: NEO4J, lspPath: 'x.py', testKey: key };
    const noEnv = planProjectTask(t, projects, new Map());
    assert.match('unavailable' in noEnv ? noEnv.unavailable : '', /^no env derived for neo4j\/neo4j-python-driver at 78b1e86e3717/);
    const other = planProjectTask(t, projects, new Map([[NEO4J, { ...entry, commit: 'a'.repeat(40) }]]));
    assert.match('unavailable' in other ? other.unavailable : '', /derived at aaaaaaaaaaaa, not at the workspace's commit 78b1e86e3717/);
    const gone = planProjectTask({ ...t, id: '62b45e945108cfac7f210a4a', project: 'scrolltech/apphelpers' }, projects, new Map());
    assert.match('unavailable' in gone ? gone.unavailable : '', /project state of scrolltech\/apphelpers is not known/);
  });

  test("the stub keeps the file's own signature and docstring; the reference is the platform test's function in the file", () => {
    const file =
      'class B:\n    @property\n    def f(self, x: int) -> int:\n        ' +
      '"""Twice x."""\n        return 2 * x\n\n    def g(self):\n        pass\n';
    const test =
      'class B:\n    def f(self, x):\n        """Twice x."""\n        ' +
      'return x + x\n\nif __name__ == "__main__":\n    assert B().f(2) == 4\n';
    const made = projectFiles(file, 'f', test);
    assert.ok(typeof made !== 'string');
    assert.equal(
      made.stub,
      'class B:\n    @property\n    def f(self, x: int) -> int:\n        """Twice ' +
        'x."""\n        raise NotImplementedError\n\n    def g(self):\n        pass\n',
    );
    assert.equal(
      made.gold,
      'class B:\n    @property\n    def f(self, x):\n        """Twice x."""\n        return x + x\n\n    def g(self):\n        pass\n',
    );
    assert.equal(projectFiles(file, 'h', test), 'no function h in the file at the commit');
  });

  test(
    'scorer.py inside a project: the image root is rewritten to the working ' +
      "directory, which is importable; siblings import as their package's modules",
    async (t) => {
      const python = await findPython('3.11');
      if (!python) return t.skip('no Python 3.11 here');
      const dir = await tempDir('codereval-scorer-');
      try {
        const write = async (rel: string, text: string) => {
          await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
          await fs.writeFile(path.join(dir, rel), text);
        };
        await write('.codereval/scorer.py', SCORER_SOURCE);
        await write('pkg/__init__.py', '');
        await write('pkg/other.py', 'K = 3\n');
        // A sibling importing relatively, imported top-level by the test (cachetools' fifo, ocfl-py's digest).
        await write('pkg/sibling.py', 'from .other import K as J\n');
        await write('data/x.txt', 'seven');
        // A sibling named as an installed package (federation's utils/django.py beside its tests): the package wins.
        await write('pkg/extpkg.py', 'K = "sibling"\n');
        await write('venv/lib/site-packages/extpkg/__init__.py', 'K = 5\n');
        await write('pkg/mod.py', 'def f(x):\n    raise NotImplementedError\n');
        // The project as its setup.cfg declares it: installed on the platform, so its metadata could be read (pre-commit's constants.py).
        await write('setup.cfg', '[metadata]\nname = o-r_project\nversion = 1.2.3\n');
        // As the platform's tests do: its root on sys.path (rewritten), the project imported as installed (PYTHONPATH),
        // siblings imported top-level, a file named from the platform's working directory (/home/travis/builds),
        // the project imported by its folder's name from the platform's repos folder (borgmatic's `witten---atticmatic.borgmatic...`).
        const test =
          'import sys\nsys.path.append("/home/travis/builds/repos")\nsys.path.append("/home/travis/builds/repos/o---r/")\nimport ' +
          'os\nfrom importlib import import_module\nby_folder = import_module("o---r.pkg.other")\nimport ' +
          'extpkg\nimport importlib.metadata\nfrom pkg.other import K\nfrom sibling import J\nimport pkg.sibling\n\ndef f(x):\n    ' +
          'return x * K\n\nif __name__ == "__main__":\n    assert sys.path[-1].rstrip("/") == os.getcwd(), sys.path\n    ' +
          'assert sys.modules["sibling"] is pkg.sibling\n    assert open("repos/o---r/data/x.txt").read() == ' +
          ('"seven"\n    assert f(2) == 6 and J == 3 and by_folder.K == 3 and ' +
            'extpkg.K == 5\n    assert importlib.metadata.version("o-r-project") ') +
          '== "1.2.3"\n    assert os.path.basename(__file__) == "mod_f_passk_validte.py", __file__\n';
        await write('pkg/mod_f_passk_validte.py', test);
        const run = (source: string) => {
          execFileSync('sh', ['-c', `cat > pkg/mod.py`], { cwd: dir, input: source });
          try {
            execFileSync(
              python,
              [
                '.codereval/scorer.py',
                '--test',
                'pkg/mod_f_passk_validte.py',
                '--name',
                'f',
                '--source',
                'pkg/mod.py',
                '--candidate',
                '.none',
                '--timeout',
                '30',
                '--root-alias',
                '/home/travis/builds/repos/o---r',
              ],
              {
                cwd: dir,
                stdio: 'pipe',
                env: { PATH: process.env.PATH, BENCHGYM_SCORING: 'strict', PYTHONPATH: path.join(dir, 'venv/lib/site-packages') },
              },
            );
            return 0;
          } catch (e) {
            return (e as { status: number }).status;
          }
        };
        assert.equal(run('def f(x):\n    return x * K\n'), 0);
        assert.equal(run('def f(x):\n    raise NotImplementedError\n'), 1);
        // The test ran under its own name (as on the platform) and its text is back as it was.
        assert.equal(await fs.readFile(path.join(dir, 'pkg/mod_f_passk_validte.py'), 'utf8'), test);
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
  );

  test(
    'the loader lays out no project when told not to: project-level tasks stay unavailable, saying so',
    { skip: SKIP_WITHOUT_DATA },
    async () => {
      const l = await loadCoderEval(CODEREVAL_DIR, 'codereval', { projects: { noProjects: true } });
      const t = l.tasks.find((x) => x.id === POP_U16)!;
      assert.equal(t.env.kind, 'image');
      assert.match(
        (t.env as { about: string }).about,
        /class_runnable task runs inside its project, and its project cannot be laid out here: projects are not laid out/,
      );
    },
  );
});

describe('CoderEval inside its project: neo4j over MCP', { skip: SKIP }, () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let tables: string;
  let registry: SuiteRegistry;
  const cacheDir = path.join(TEST_CACHE_DIR, 'codereval-projects');

  before(async () => {
    if (!(await locateMirror(NEO4J, MIRRORS!))) throw new Error(`no mirror of ${NEO4J} in ${MIRRORS}`);
    // Only neo4j's two tasks are laid out: a table of those (the others stay unavailable, with the reason).
    tables = await tempDir('codereval-projects-');
    const full = ProjectsTable.parse(JSON.parse(await fs.readFile(PROJECTS_FILE, 'utf8')));
    const small: ProjectsTable = {
      ...full,
      projects: { [NEO4J]: full.projects[NEO4J]! },
      tasks: { [POP_U16]: full.tasks[POP_U16]!, [VALUES]: full.tasks[VALUES]! },
    };
    await fs.writeFile(path.join(tables, 'projects.json'), JSON.stringify(small));
    registry = new SuiteRegistry([
      coderevalSuite({ projects: { reposDir: MIRRORS, cacheDir, projectsFile: path.join(tables, 'projects.json') } }),
    ]);
    registry.enable(`codereval=${CODEREVAL_DIR}`);
    ({ gym, cleanup } = await makeGym({ registry }));
  });
  after(async () => {
    await cleanup?.();
    if (tables) await fs.rm(tables, { recursive: true, force: true });
  });

  test(
    'the workspace: the project at the platform commit, one commit, ' + 'the method stubbed; the test goes at its path in the project',
    async () => {
      const task = await registry.task('codereval', POP_U16);
      assert.equal(task.workspace.type, 'dir');
      assert.deepEqual([task.env.kind, (task.env as { version?: string }).version], ['python', '3.11']);
      assert.equal(task.metadata.filePath, FILE);
      assert.equal(task.metadata.commit, '78b1e86e3717c7c535dbec04396724f83d557e92');
      const dir = (task.workspace as { path: string }).path;
      const count = await runGit(['rev-list', '--all', '--count'], { cwd: dir });
      assert.equal(count.stdout.trim(), '1', 'no history: the one commit of the workspace');
      assert.equal((await runGit(['remote'], { cwd: dir })).stdout.trim(), '');
      const src = await fs.readFile(path.join(dir, FILE), 'utf8');
      assert.match(
        src,
        new RegExp(
          String.raw`def pop_u16\(self\):\n {8}""" Remove the last two bytes of data, returning them as a big-endian\n ` +
            String.raw`{8}16-bit unsigned integer\.\n {8}"""\n {8}raise NotImplementedError\n`,
        ),
      );
      assert.ok(!src.includes('0x100 * self.data[self.used - 2]'), 'the reference is not in the workspace');
      assert.ok(task.solution!.files![FILE]!.includes('0x100 * self.data[self.used - 2]'));
      assert.deepEqual(Object.keys(task.tests.hidden.files).sort(), [
        '.codereval/scorer.py',
        'src/neo4j/_codec/packstream/v1/__init___pop_u16_passk_validte.py',
      ]);
      assert.match(
        (task.tests.hidden.runner as { command: string }).command,
        /--root-alias \/home\/travis\/builds\/repos\/neo4j---neo4j-python-driver$/,
      );
      // A task of another project (not in this table) keeps its exact reason.
      const other = (await registry.tasks('codereval')).find(
        (t) => t.metadata.project === 'zimeon/ocfl-py' && t.metadata.level === 'class_runnable',
      )!;
      assert.equal(other.env.kind, 'image');
      assert.match(
        (other.env as { about: string }).about,
        /its project cannot be laid out here: the project state of zimeon\/ocfl-py is not known/,
      );
      assert.ok(existsSync(path.join(dir, 'src/neo4j/_data.py')));
    },
  );

  test('an agent views the class, runs the platform test, writes the method, submits: reward 1; untouched: reward 0', async () => {
    const server: RunningServer = await startHttpServer(gym, { port: 0 });
    const client = new Client({ name: 'benchgym-test', version: '0.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
      const started = await call(client, 'start_episode', { suite: 'codereval', task_id: `${POP_U16}+platform-test` });
      const ep = { episode_id: data(started).episodeId as string };
      assert.equal(data(started).hasVisibleTests, true);
      assert.match(text(started), /This workspace is the project neo4j\/neo4j-python-driver at 78b1e86e3717/);
      const found = await call(client, 'search', { ...ep, query: 'class UnpackableBuffer' });
      const line = Number(/packstream\/v1\/__init__\.py:(\d+)/.exec(text(found))?.[1]);
      assert.ok(line > 0, text(found));
      const view = await call(client, 'view_file', { ...ep, path: FILE, start_line: line, end_line: line + 40 });
      assert.match(text(view), /class UnpackableBuffer:/);
      assert.match(text(view), /def read_u8\(self\):/);
      assert.match(text(view), /raise NotImplementedError/);
      const history = await call(client, 'run_command', { ...ep, command: 'git rev-list --all --count' });
      assert.match(text(history), /^\s*1\s*$/m);
      const failing = await call(client, 'run_tests', ep);
      assert.equal(data(failing).counts.failed, 1, text(failing));
      const stub = '        16-bit unsigned integer.\n        """\n        raise NotImplementedError';
      const impl =
        '        16-bit unsigned integer.\n        """\n        if self.used >= 2:\n            ' +
        'value = 0x100 * self.data[self.used - 2] + self.data[self.used - 1]\n            ' +
        'self.used -= 2\n            return value\n        else:\n            return -1';
      assert.equal((await call(client, 'edit_file', { ...ep, path: FILE, old_str: stub, new_str: impl })).isError, undefined);
      const passing = await call(client, 'run_tests', ep);
      assert.equal(data(passing).counts.passed, 1, text(passing));
      const verdict = data(await call(client, 'submit', ep));
      assert.equal(verdict.reward, 1, JSON.stringify(verdict));

      const s2 = await call(client, 'start_episode', { suite: 'codereval', task_id: POP_U16 });
      assert.equal(data(s2).hasVisibleTests, false);
      const untouched = data(await call(client, 'submit', { episode_id: data(s2).episodeId as string }));
      assert.equal(untouched.reward, 0, JSON.stringify(untouched));
    } finally {
      await client.close();
      await server.close();
    }
  });
});
