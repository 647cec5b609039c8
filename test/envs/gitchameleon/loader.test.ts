/** The GitChameleon adapter's loader: both dataset forms read in place, as the authors' harnesses lay problems out. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { gitchameleonSuite, loadGitChameleon } from '../../../envs/gitchameleon/index.ts';
import { envSpecOf, parseAdditionalDependencies, remappedVersion, VERSION_REMAPS } from '../../../envs/gitchameleon/env.ts';
import { definesTests, V2_TIMEOUT_MS } from '../../../envs/gitchameleon/tasks.ts';
import { ERA_CONSTRAINED, eraTable } from '../../../envs/gitchameleon/era.ts';
import { NLTK_DATA_ENV, NLTK_DATA_PACKAGES } from '../../../envs/gitchameleon/nltk.ts';
import { releaseYear } from '../../../envs/gitchameleon/dataset.ts';
import { writeDocsStore } from '../../../envs/gitchameleon/docs.ts';
import { publicTaskInfo, type Task } from '../../../src/tasks/schema.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { expectGymError, tempDir } from '../../helpers.ts';
import { GITCHAMELEON_DIR, LIGHT_V2, REFERENCE_DIR, REFERENCE_FILES, SKIP_WITHOUT_DATA, V1_DIR, V2_DIR } from './data.ts';
import { BUILTIN_SUITES } from '../../../bin/builtins.ts';

/** Every text an agent can see in an episode of the task: the workspace, the prompts, the listing. */
function visibleText(task: Task): string {
  assert.equal(task.workspace.type, 'files');
  const files = task.workspace.type === 'files' ? task.workspace.files : {};
  return [
    ...Object.keys(files),
    ...Object.values(files),
    task.prompt,
    ...Object.values(task.promptVariants),
    JSON.stringify(publicTaskInfo(task)),
  ].join('\n');
}

describe('GitChameleon v2', { skip: SKIP_WITHOUT_DATA }, () => {
  test("328 problems, each a task with the authors' layout, env and metadata", async () => {
    const { form, tasks } = await loadGitChameleon(V2_DIR);
    assert.equal(form, 'v2');
    assert.equal(tasks.length, 328);
    assert.equal(new Set(tasks.map((t) => t.id)).size, 328);
    for (const t of tasks) {
      const file = `sample_${t.id}.py`;
      assert.equal(t.workspace.type, 'files');
      const ws = t.workspace.type === 'files' ? t.workspace.files : {};
      assert.deepEqual(Object.keys(ws).sort(), [file, `visible_tests/test_sample_${t.id}.py`].sort(), t.id);
      assert.deepEqual(Object.keys(t.tests.hidden.files), [`hidden_tests/test_sample_${t.id}.py`]);
      assert.deepEqual(t.tests.hidden.runner, { type: 'pytest', args: [`hidden_tests/test_sample_${t.id}.py`] });
      assert.equal(t.tests.hidden.timeoutMs, 120_000);
      assert.ok(t.tests.visible, `${t.id} has a visible test`);
      assert.deepEqual(Object.keys(t.solution?.files ?? {}), [file]);
      assert.equal(t.env.kind, 'python');
      if (t.env.kind === 'python') {
        assert.match(t.env.version, /^3\.(7|9|10)$/);
        assert.equal(t.env.requirements[0], `${t.metadata.library}==${t.metadata.version}`);
      }
      for (const key of [
        'library',
        'version',
        'typeOfChange',
        'pythonVersion',
        'nameOfClassOrFunc',
        'functional',
        'webdev',
        'heavy',
        'importName',
      ])
        assert.ok(key in t.metadata, `${t.id}: metadata.${key}`);
      assert.equal(typeof t.metadata.functional, 'boolean');
      assert.equal(typeof t.metadata.webdev, 'boolean');
      assert.ok(['instruct', 'completion'].every((v) => v in t.promptVariants));
    }
    const years = tasks.map((t) => t.metadata.releaseYear as number | undefined);
    assert.ok(years.filter((y) => y !== undefined).length >= 320, 'release years are read from release_date');
    assert.ok(years.every((y) => y === undefined || (y >= 2010 && y <= 2025)));
  });

  test('a hidden test is never in the workspace, a prompt or the public listing; the visible test is', async () => {
    const { tasks } = await loadGitChameleon(V2_DIR);
    for (const t of tasks) {
      const seen = visibleText(t);
      const hidden = Object.values(t.tests.hidden.files)[0]!;
      assert.ok(!seen.includes(hidden), `${t.id}: the hidden test file is visible`);
      const gold = t.solution!.files![`sample_${t.id}.py`]!;
      const start = t.workspace.type === 'files' ? t.workspace.files[`sample_${t.id}.py`]! : '';
      if (gold.trim() !== start.trim())
        assert.ok(
          !Object.values(t.workspace.type === 'files' ? t.workspace.files : {}).includes(gold),
          `${t.id}: the gold file is in the workspace`,
        );
      assert.ok(!JSON.stringify(publicTaskInfo(t)).includes('api_calls'), "the reference solution's API calls stay out of the listing");
    }
  });

  test("the instruct prompt is the paper's, with the library and version; the completion form is the starter code", async () => {
    const task = (await loadGitChameleon(V2_DIR)).tasks.find((t) => t.id === '187')!;
    const instruct = task.promptVariants.instruct!;
    assert.match(
      instruct,
      new RegExp(
        String.raw`^You are to solve this in python using sympy-1\.13\. Provide a self-contained Python script that solves ` +
          String.raw`the following problem in a markdown code block\.\n`,
      ),
    );
    assert.match(instruct, /Please start with the following markdown code block:\n```\nfrom sympy import \*\n/);
    assert.ok(task.prompt.startsWith(instruct), "the episode prompt is the paper's prompt plus a note");
    assert.match(task.prompt, /sample_187\.py/);
    assert.match(task.prompt, /visible_tests\/test_sample_187\.py/);
    assert.equal(task.promptVariants.completion, (task.workspace.type === 'files' && task.workspace.files['sample_187.py']) || '');
    assert.ok(!('with-docs' in task.promptVariants), 'no with-docs variant before docs are rendered');
    const gradio = (await loadGitChameleon(V2_DIR)).tasks.find((t) => t.metadata.library === 'gradio')!;
    assert.match(gradio.promptVariants.instruct!, /\nDo not launch a gradio interface\.\n/);
  });

  test(
    "envs: the problem's Python, library==version and every additional and extra " +
      'dependency; pytest, numpy and scipy after-installs as the v2 harness adds them',
    async () => {
      const { tasks } = await loadGitChameleon(V2_DIR);
      const env = (id: string) => tasks.find((t) => t.id === id)!.env;
      assert.deepEqual(env('0'), {
        kind: 'python',
        version: '3.7',
        requirements: ['torch==1.9.0', 'scipy==1.7.3', 'numpy==1.21.6'],
        afterInstall: [['pytest==6.2.5']],
      });
      assert.deepEqual(env('187'), {
        kind: 'python',
        version: '3.9',
        requirements: ['sympy==1.13'],
        afterInstall: [['pytest==7.1.2'], ['numpy==1.21.6'], ['scipy==1.9.1']],
      });
      assert.deepEqual(env('156'), {
        kind: 'python',
        version: '3.10',
        requirements: ['jinja2==3.1'],
        afterInstall: [['pytest==7.2.0'], ['numpy==1.23'], ['scipy==1.10.1']],
      });
      assert.deepEqual(env('323'), {
        kind: 'python',
        version: '3.7',
        requirements: ['tqdm==4.28'],
        afterInstall: [['pytest==6.2.5'], ['numpy==1.21.6'], ['scipy==1.7.1']],
      });
      // numpy itself gets only scipy; a dependency mentioning scipy suppresses the scipy pin.
      const numpyTask = tasks.find((t) => t.metadata.library === 'numpy' && t.metadata.version === '1.25.0')!;
      assert.deepEqual(numpyTask.env.kind === 'python' && numpyTask.env.afterInstall, [['pytest==7.2.0'], ['scipy==1.10.1']]);
      const pytestTask = tasks.find((t) => t.metadata.library === 'pytest')!;
      assert.ok(
        pytestTask.env.kind === 'python' && pytestTask.env.afterInstall!.every((stage) => !stage[0]!.startsWith('pytest')),
        'a problem about pytest keeps its own pytest',
      );
      assert.deepEqual(env('175'), {
        kind: 'python',
        version: '3.9',
        requirements: ['sympy==1.9', 'scipy==1.8.0'],
        afterInstall: [['pytest==7.1.2'], ['numpy==1.21.6']],
      });
      // extra_dependencies (librosa rows) are installed too, without duplicates.
      const librosa = tasks.find((t) => t.metadata.library === 'librosa')!;
      assert.ok(
        librosa.env.kind === 'python' &&
          librosa.env.requirements.includes('numba==0.46') &&
          librosa.env.requirements.filter((r) => r === 'numpy==1.16.0').length === 1,
      );
      // Problems the harness keys alike share the first one's env: 306 says joblib==0.12, but 304 came first with 0.14.
      assert.deepEqual(env('306'), env('304'));
      const shared = env('306');
      assert.ok(shared.kind === 'python' && shared.requirements.includes('joblib==0.14'));
      // No remaps in v2: torch 1.9.0 is installed as written.
      assert.deepEqual(VERSION_REMAPS.v2, []);
    },
  );

  test(
    'dependency drift: gradio and flask envs carry the era constraints of ' +
      'the stored table; other libraries none; nltk envs a data setup step',
    async () => {
      const { tasks } = await loadGitChameleon(V2_DIR);
      const table = eraTable();
      for (const t of tasks) {
        const env = t.env;
        assert.ok(env.kind === 'python');
        const library = String(t.metadata.library);
        if (ERA_CONSTRAINED.v2.has(library)) {
          const entry = [...table.values()].find(
            (e) => e.python === env.version && JSON.stringify(e.requirements) === JSON.stringify([...env.requirements].sort()),
          );
          assert.ok(entry, `no era entry for problem ${t.id} (${library}): regenerate with envs/gitchameleon/era.ts`);
          assert.deepEqual(env.constraints, entry.constraints, t.id);
          // A constraint never overrides the problem's own pins.
          for (const c of env.constraints!)
            assert.ok(
              !env.requirements.some((r) => r.includes('==') && r.split('==')[0]!.toLowerCase() === c.split('==')[0]!.toLowerCase()),
              `${t.id}: ${c}`,
            );
        } else assert.equal(env.constraints, undefined, t.id);
        if (library === 'nltk') {
          assert.equal(env.setup?.inputEnv, NLTK_DATA_ENV);
          for (const pkg of NLTK_DATA_PACKAGES) assert.match(env.setup!.script, new RegExp(pkg));
        } else assert.equal(env.setup, undefined, t.id);
      }
      const gradio = tasks.find((t) => t.id === '36')!.env;
      assert.ok(
        gradio.kind === 'python' && gradio.constraints!.includes('gradio-client==0.0.5'),
        'gradio 3.24.0 gets the gradio_client of its day (with gradio_client.serializing)',
      );
      const flask = tasks.find((t) => t.id === '173')!.env;
      assert.ok(flask.kind === 'python' && flask.constraints!.includes('werkzeug==3.0.0'));
      for (const e of table.values()) assert.ok(new Date(e.cutoff).getTime() > Date.parse('2018-01-01'), e.cutoff);
    },
  );

  test("hidden tests: 120 s, and pytest's exit code decides, as the v2 harness (a file whose tests all skip passes there)", async () => {
    const { tasks } = await loadGitChameleon(V2_DIR);
    for (const t of tasks) {
      assert.equal(t.tests.hidden.timeoutMs, 120_000, t.id);
      assert.equal(t.tests.hidden.passWhen, 'exit-code', t.id);
    }
    assert.equal(V2_TIMEOUT_MS, 120_000);
  });

  test(
    "the v2 authors' chat prompt: their system message and tagged user message, as in every published row",
    { skip: existsSync(path.join(REFERENCE_DIR, REFERENCE_FILES[0]!)) ? false : `no ${REFERENCE_FILES[0]} in ${REFERENCE_DIR}` },
    async () => {
      const { tasks } = await loadGitChameleon(V2_DIR);
      const byId = new Map(tasks.map((t) => [t.id, t]));
      const published = (await fs.readFile(path.join(REFERENCE_DIR, REFERENCE_FILES[0]!), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map(
          (l) =>
            JSON.parse(l) as { example_id: string; messages: { role: string; content: string }[]; starting_code: string; problem: string },
        );
      let same = 0;
      for (const row of published) {
        const task = byId.get(String(row.example_id))!;
        assert.equal(task.promptVariants['chat-system'], row.messages[0]!.content);
        assert.equal(row.messages[0]!.role, 'system');
        // A row whose problem or starter code the dataset has changed since cannot match.
        const ws = task.workspace.type === 'files' ? task.workspace.files[`sample_${task.id}.py`] : undefined;
        if (ws === undefined || !row.messages[1]!.content.includes(`<starter_code>\n${ws}\n</starter_code>`)) continue;
        assert.equal(task.promptVariants.chat, row.messages[1]!.content, `problem ${task.id}`);
        same++;
      }
      assert.ok(same >= 320, `${same} of ${published.length} rows compared`);
    },
  );

  test('heavy libraries are marked; the default test subset has none', async () => {
    const { tasks } = await loadGitChameleon(V2_DIR);
    for (const t of tasks.filter((x) => ['torch', 'spacy', 'gradio', 'kymatio'].includes(String(x.metadata.library))))
      assert.equal(t.metadata.heavy, true, t.id);
    assert.equal(tasks.find((t) => t.id === '0')!.metadata.heavy, true);
    for (const id of LIGHT_V2) assert.equal(tasks.find((t) => t.id === id)!.metadata.heavy, false, id);
  });

  test('visible tests that only assert at import run as scripts; those with test functions run under pytest', async () => {
    const { tasks } = await loadGitChameleon(V2_DIR);
    const runners = tasks.map((t) => t.tests.visible!.runner.type);
    assert.ok(runners.filter((r) => r === 'script').length > 200);
    assert.ok(runners.filter((r) => r === 'pytest').length > 40);
    assert.deepEqual(tasks.find((t) => t.id === '187')!.tests.visible!.runner, {
      type: 'script',
      command: 'python visible_tests/test_sample_187.py',
    });
    assert.equal(definesTests('class T(unittest.TestCase):\n    def check(self): pass\n'), true);
    assert.equal(definesTests('x = f()\nassert x == 1\n'), false);
  });

  test('with a docs store, the with-docs variants carry the documentation (doc-prompting, Listing 1)', async () => {
    const dir = await tempDir('benchgym-gc-docs-');
    try {
      const file = path.join(dir, 'docs.jsonl');
      await writeDocsStore(file, [
        {
          form: 'v2',
          task_id: '187',
          library: 'sympy',
          version: '1.13',
          python: '3.9',
          symbol: 'sympy.Eq',
          docs: 'Eq(lhs, rhs)\n    An equal relation.',
        },
        {
          form: 'v2',
          task_id: '156',
          library: 'jinja2',
          version: '2.11',
          python: '3.10',
          symbol: 'jinja2.x',
          docs: 'rendered for other pins',
        },
      ]);
      const { tasks } = await loadGitChameleon(V2_DIR, 'gitchameleon', { docsFile: file });
      const task = tasks.find((t) => t.id === '187')!;
      assert.match(
        task.promptVariants['instruct-with-docs']!,
        new RegExp(
          String.raw`\nHere is the documentation for the function to be used:\n` +
            '```' +
            String.raw`\nEq\(lhs, rhs\)\n    An equal relation\.\n` +
            '```' +
            String.raw`\n\nPlease start with the following markdown code block:\n` +
            '```' +
            String.raw`\nfrom sympy`,
        ),
      );
      assert.ok(task.promptVariants['with-docs']!.startsWith(task.promptVariants['instruct-with-docs']!));
      assert.equal(task.metadata.hasDocs, true);
      assert.ok(!('with-docs' in tasks.find((t) => t.id === '156')!.promptVariants), 'docs rendered for other pins are not used');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('GitChameleon v1', { skip: SKIP_WITHOUT_DATA }, () => {
  test("116 problems in the script form: starter code in the workspace, the assertion test only in the scorer's files", async () => {
    const { form, tasks } = await loadGitChameleon(V1_DIR);
    assert.equal(form, 'v1');
    assert.equal(tasks.length, 116);
    for (const t of tasks) {
      const file = `sample_${t.id}.py`;
      assert.deepEqual(Object.keys(t.workspace.type === 'files' ? t.workspace.files : {}), [file]);
      assert.equal(t.tests.visible, undefined);
      assert.equal(t.tests.hidden.runner.type, 'script');
      assert.equal(t.tests.hidden.timeoutMs, 30_000);
      const [hiddenPath, hidden] = Object.entries(t.tests.hidden.files)[0]!;
      assert.equal(hiddenPath, `.gitchameleon/test_${t.id}.py`);
      assert.ok(!hidden.includes('\\n'), `${t.id}: the test is unescaped`);
      assert.ok(!visibleText(t).includes(hidden.trim()), `${t.id}: the assertion test is visible`);
      if (t.tests.hidden.runner.type === 'script')
        assert.match(
          t.tests.hidden.runner.command,
          new RegExp(
            `cat ${file} && printf '\\\\n' && cat \\.gitchameleon/test_${t.id}\\.py; \\} ` +
              `> \\.gitchameleon/run_${t.id}\\.py && python \\.gitchameleon/run_${t.id}\\.py$`,
          ),
        );
      assert.ok(t.env.kind === 'python' && t.env.version === '3.10' && !t.env.afterInstall);
    }
  });

  test('the authors\' torch remap, the gold as starter + solution, and the "\\n" unescaping', async () => {
    const { tasks } = await loadGitChameleon(V1_DIR);
    const t0 = tasks.find((t) => t.id === '0')!;
    assert.equal(t0.metadata.version, '1.9.0');
    assert.equal(t0.metadata.installedVersion, '1.11.0');
    assert.deepEqual(t0.env.kind === 'python' && t0.env.requirements, ['torch==1.11.0', 'scipy==1.7.3', 'numpy==1.21.6']);
    assert.match(t0.prompt, /using torch-1\.11\.0\./, 'the prompt names the installed version, as Listing 1 does');
    const start = t0.workspace.type === 'files' ? t0.workspace.files['sample_0.py']! : '';
    assert.equal(start, 'import torch\ninput_tensor = torch.linspace(-10, 10, steps=20)\n# put answer in variable called output\n');
    assert.ok(t0.solution!.files!['sample_0.py']!.startsWith(start));
    assert.equal(remappedVersion('v1', 'torch', '1.10.0'), '1.11.0');
    assert.equal(remappedVersion('v1', 'torch', '1.12.0'), '1.12.0');
    assert.equal(remappedVersion('v1', 'numpy', '1.10.0'), '1.10.0');
    assert.equal(tasks.filter((t) => t.metadata.library === 'torch' && t.metadata.installedVersion === '1.11.0').length, 12);
  });
});

describe('dataset cells', () => {
  test('additional dependencies as the harnesses read them', () => {
    assert.deepEqual(parseAdditionalDependencies('scipy==1.7.3 numpy==1.21.6'), ['scipy==1.7.3', 'numpy==1.21.6']);
    for (const none of ['', '-', 'None', 'nan', 'io', undefined, null])
      assert.deepEqual(parseAdditionalDependencies(none), [], String(none));
    assert.deepEqual(parseAdditionalDependencies('pandas matplotlib'), ['pandas', 'matplotlib']);
    assert.deepEqual(parseAdditionalDependencies('pip=21.0 numpy==1.16'), ['numpy==1.16']);
    assert.deepEqual(parseAdditionalDependencies(['a==1', 'b==2 c']), ['a==1', 'b==2', 'c']);
    assert.deepEqual(
      envSpecOf('v2', { library: 'numpy', version: '1.21.0', python_version: '3.10', additional_dependencies: '' }).afterInstall,
      [['pytest==7.2.0'], ['scipy==1.10.1']],
    );
    assert.deepEqual(
      envSpecOf('v2', { library: 'x', version: '1', python_version: '3.10', additional_dependencies: 'scipy==1.8.1 Werkzeug==2.0.0' })
        .afterInstall,
      [['pytest==7.2.0'], ['numpy==1.23']],
    );
  });

  test('release years in every format the data uses', () => {
    assert.equal(releaseYear('2021-06'), 2021);
    assert.equal(releaseYear('22/06/2021'), 2021);
    assert.equal(releaseYear('03-18-2023'), 2023);
    assert.equal(releaseYear(''), undefined);
  });
});

describe('the suite', { skip: SKIP_WITHOUT_DATA }, () => {
  test('built in as gitchameleon=PATH; the form is detected by the files; private paths cover the shared folder', async () => {
    const registry = new SuiteRegistry(BUILTIN_SUITES);
    registry.enable(`gitchameleon=${V2_DIR}`);
    assert.equal((await registry.tasks('gitchameleon')).length, 328);
    assert.ok(registry.privatePaths().includes(path.resolve(V2_DIR)));
    assert.ok(registry.privatePaths().includes(path.resolve(GITCHAMELEON_DIR)), 'reference answers and the other form are hidden too');
    await expectGymError(gitchameleonSuite().load(GITCHAMELEON_DIR), 'SUITE_NOT_FOUND', /try .*v2 or .*v1/);
    await expectGymError(gitchameleonSuite().load(undefined), 'INVALID_ARGUMENT', /--suite gitchameleon=PATH/);
  });
});
