/**
 * build-tasks on the fixture repositories: exactly the planted tasks come out, with their
 * dependency levels, and the planted non-tasks are rejected for the right reasons.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { addedFunctions, buildTasks, changeFailure, defaultRunner, etaNote, noseRunner } from '../../../envs/humanevo/builder.ts';
import { changedFiles, fileAt, isUnexportable, listChanges, UnexportableError } from '../../../envs/humanevo/history.ts';
import { GymError } from '../../../src/errors.ts';
import { isSourcePath, isTestPath } from '../../../envs/humanevo/functions.ts';
import { main } from '../../../src/cli/main.ts';
import { buildTasksCmd } from '../../../envs/humanevo/build_tasks.ts';
import { runBuild } from '../../../envs/humanevo/build_run.ts';
import { LocalSandboxFactory } from '../../../src/sandbox/local/index.ts';
import { BUILTINS } from '../../../bin/builtins.ts';
import { expectGymError, makeGym, TEST_CACHE_DIR, tempDir } from '../../helpers.ts';
import { humanevoSuite } from '../../../envs/humanevo/index.ts';
import { validateTask } from '../../../src/scoring/validate.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { buildJavaFixture, FixtureRepo } from './fixtures.ts';
import { buildFixture, SKIP_JAVA_BUILD, type BuiltFixture } from './setup.ts';

function levels(f: BuiltFixture): Record<string, string> {
  return Object.fromEntries(f.records.map((r) => [r.target.qualname, r.dependency_level]));
}

describe('build-tasks on the Python fixture', () => {
  let f: BuiltFixture;
  before(async () => {
    f = await buildFixture('python');
  });
  after(() => f.cleanup());

  test('yields exactly the planted tasks, with their dependency levels', () => {
    assert.deepEqual(levels(f), f.expect.tasks);
    assert.equal(f.report.validated, 3);
  });

  test('rejects the planted non-tasks, each for its reason', () => {
    assert.deepEqual({ ...f.report.rejected }, f.expect.rejected);
    const why = Object.fromEntries(f.report.rejections.filter((r) => r.function).map((r) => [r.function, r.reason]));
    assert.deepEqual(why, {
      'Tokenizer.__init__': 'constructor',
      version: 'trivial-body',
      title_case: 'no-docstring',
      count_vowels: 'no-fail-to-pass',
      reverse_words: 'breaks-passing-tests',
    });
    const byCommit = Object.fromEntries(f.report.rejections.filter((r) => !r.function).map((r) => [r.commit, r.reason]));
    assert.equal(byCommit[f.commits.futureCopy!], 'no-test-change');
    assert.equal(byCommit[f.commits.deleteHelper!], 'no-added-function');
  });

  test('records carry the change, its parent, fail-to-pass from the change tests and pass-to-pass from before it', () => {
    const slugify = f.records.find((r) => r.target.qualname === 'slugify')!;
    assert.equal(slugify.commit, f.commits.slugify);
    assert.equal(slugify.base_commit, f.commits.initial);
    assert.equal(slugify.latest_commit, f.commits.deleteHelper);
    assert.deepEqual(slugify.fail_to_pass, ['tests/test_strings.py::test_slugify']);
    assert.ok(slugify.pass_to_pass.includes('tests/test_bag.py::test_total'));
    assert.ok(!slugify.pass_to_pass.includes('tests/test_strings.py::test_slugify'));
    assert.deepEqual(slugify.test_files, ['tests/test_strings.py']);
    assert.equal(slugify.docstring_brief, 'Turn a title into a URL slug.');
    assert.match(slugify.docstring_detailed, /separators at either end are dropped/);
    assert.equal(slugify.signature, 'def slugify(title, sep="-"):');
    // The inter-class task came through a pull request's merge commit, compared with its first parent.
    const headline = f.records.find((r) => r.target.qualname === 'headline_slug')!;
    assert.equal(headline.merge, true);
    assert.equal(headline.base_commit, f.commits.mostCommon);
    assert.deepEqual(headline.references.project.sort(), ['WordBag', 'slugify']);
  });

  test('--limit stops after that many validated tasks; the CLI writes a file the suite loads', async () => {
    const out = path.join(await tempDir(), 'tasks.jsonl');
    const code = await main(
      ['build-tasks', '--repo', f.repo, '--language', 'python', '--limit', '1', '--out', out, '--cache-dir', TEST_CACHE_DIR],
      BUILTINS,
    );
    assert.equal(code, 0);
    const lines = (await fs.readFile(out, 'utf8')).trim().split('\n');
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]!).target.qualname, 'slugify');
  });

  test(
    'SIGTERM stops a build as Ctrl-C does: the change being walked ' + 'is dropped, the journal stays whole, --resume finishes it',
    async () => {
      const out = path.join(await tempDir(), 'tasks.jsonl');
      const journal = `${out}.progress.jsonl`;
      const build = (...extra: string[]) =>
        main(['build-tasks', '--repo', f.repo, '--language', 'python', '--out', out, '--cache-dir', TEST_CACHE_DIR, ...extra], BUILTINS);
      const running = build();
      const walked = async () =>
        (await fs.readFile(journal, 'utf8').catch(() => ''))
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { commit: string });
      while (!(await walked()).length) await new Promise((r) => setTimeout(r, 50));
      process.emit('SIGTERM');
      assert.notEqual(await running, 0, 'a stopped build does not report success');
      const before = await walked();
      assert.ok(before.length < (await listChanges(f.repo)).length, `stopped before the end (${before.length} changes walked)`);
      assert.equal(await build('--resume'), 0);
      const after = await walked();
      assert.deepEqual(after.slice(0, before.length), before, 'the journal went on from where it stopped');
      const names = (await fs.readFile(out, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).target.qualname as string);
      assert.deepEqual(names.sort(), Object.keys(f.expect.tasks).sort());
    },
  );

  test(
    '--resume goes on where a stopped build ended: walked changes are ' +
      'not walked again, a torn journal line and its orphan task are dropped',
    async () => {
      const out = path.join(await tempDir(), 'tasks.jsonl');
      const journal = `${out}.progress.jsonl`;
      const build = (...extra: string[]) =>
        main(['build-tasks', '--repo', f.repo, '--language', 'python', '--out', out, '--cache-dir', TEST_CACHE_DIR, ...extra], BUILTINS);
      assert.equal(await build('--limit', '1'), 0);
      const first = (await fs.readFile(journal, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.deepEqual(
        first.map((o) => [o.commit, o.tasks.length]),
        [[f.commits.slugify, 1]],
      );
      // As if killed while walking the next change: its task written, its journal line torn.
      await fs.appendFile(out, JSON.stringify({ ...JSON.parse((await fs.readFile(out, 'utf8')).trim()), instance_id: 'orphan' }) + '\n');
      await fs.appendFile(journal, '{"commit": "' + f.commits.mostCommon);
      assert.equal(await build('--limit', '2', '--resume'), 0);
      const names = (await fs.readFile(out, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).target.qualname as string);
      assert.deepEqual(names, ['slugify', 'WordBag.most_common'], 'slugify once (not walked again), the orphan gone');
      const lines = (await fs.readFile(journal, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.deepEqual(
        lines.map((o) => o.commit),
        [f.commits.slugify, f.commits.mostCommon],
      );
      assert.ok(lines[1].testRuns > 0 && lines[1].tasks.length === 1);
      // Each change's walking time is journaled: a build resumed to the end still reports what it cost.
      assert.ok(
        lines.every((o) => typeof o.durationMs === 'number' && o.durationMs > 0),
        JSON.stringify(lines.map((o) => o.durationMs)),
      );
      const sandboxes = new LocalSandboxFactory({ baseDir: await tempDir('benchgym-resume-'), cacheDir: TEST_CACHE_DIR });
      try {
        const resumed = await runBuild({ repo: f.repo, language: 'python', limit: 2 }, { out, resume: true, sandboxes });
        assert.equal(resumed.resumed, 2);
        assert.equal(resumed.testRuns, 0, 'nothing run again');
        assert.equal(resumed.walkMs, lines[0].durationMs + lines[1].durationMs);
      } finally {
        await sandboxes.close();
      }
      // Without --resume the build starts over.
      assert.equal(await build('--limit', '1'), 0);
      assert.equal((await fs.readFile(journal, 'utf8')).trim().split('\n').length, 1);
    },
  );

  test('bad arguments are errors that name the flag', async () => {
    await expectGymError(
      buildTasksCmd(['--repo', f.repo, '--language', 'rust', '--out', 'x.jsonl']),
      'INVALID_ARGUMENT',
      /--language: 'rust'/,
    );
    await expectGymError(buildTasksCmd(['--language', 'python', '--out', 'x.jsonl']), 'INVALID_ARGUMENT', /--repo/);
    await expectGymError(buildTasksCmd(['--repo', f.repo, '--language', 'python']), 'INVALID_ARGUMENT', /--out/);
    await expectGymError(
      buildTasksCmd(['--repo', f.repo, '--language', 'python', '--out', 'x.jsonl', '--limit', '0']),
      'INVALID_ARGUMENT',
      /--limit/,
    );
    await expectGymError(
      buildTasksCmd(['--repo', path.join(f.dir, 'nope'), '--language', 'python', '--out', 'x.jsonl']),
      'INVALID_ARGUMENT',
      /does not exist/,
    );
  });
});

describe('the Java fixture', () => {
  test('the history walk finds the added methods with their levels; constructors and trivial bodies are flagged', async () => {
    const dir = await tempDir();
    const fx = await buildJavaFixture(path.join(dir, 'repo'));
    const found: Record<string, { level: string; ctor: boolean; trivial: boolean }> = {};
    let constructors = 0;
    for (const change of await listChanges(fx.repo)) {
      const files = await changedFiles(fx.repo, change.parent, change.commit);
      if (!files.some((x) => isTestPath('java', x.path) && isSourcePath('java', x.path))) continue;
      const sources = files
        .filter((x) => x.status !== 'D' && isSourcePath('java', x.path) && !isTestPath('java', x.path))
        .map((x) => x.path);
      for (const c of await addedFunctions(fx.repo, 'java', change, sources, () => {})) {
        found[c.fn.qualname] = { level: c.fn.dependency, ctor: c.fn.isConstructor, trivial: c.fn.trivial };
        if (c.fn.isConstructor) constructors++;
      }
    }
    for (const [name, level] of Object.entries(fx.expect.tasks))
      assert.deepEqual(found[name], { level, ctor: false, trivial: false }, name);
    // Headline's private constructor and WordBag's two.
    assert.equal(constructors, fx.expect.rejected.constructor);
    assert.deepEqual(found['Text.version'], { level: 'standalone', ctor: false, trivial: true });
    // The later commits are there: the near-copy added, the look-alike deleted.
    assert.match(
      execFileSync('git', ['-C', fx.repo, 'show', 'HEAD:src/main/java/org/benchgym/fixture/Text.java'], { encoding: 'utf8' }),
      /slugifyHeading/,
    );
  });

  test('build-tasks validates by Maven runs: exactly the planted tasks and rejections', { skip: SKIP_JAVA_BUILD }, async () => {
    const f = await buildFixture('java');
    try {
      assert.deepEqual(levels(f), f.expect.tasks);
      assert.deepEqual({ ...f.report.rejected }, f.expect.rejected);
      const slugify = f.records.find((r) => r.target.qualname === 'Text.slugify')!;
      assert.deepEqual(slugify.fail_to_pass, ['org.benchgym.fixture.TextTest#slugify']);
    } finally {
      await f.cleanup();
    }
  });

  test(
    "--test-scope change on an old era's pom: each change validated with its own test " +
      "classes and the era's -D raises, the same tasks, and a task scored with them is valid",
    { skip: SKIP_JAVA_BUILD },
    async () => {
      // Java 1.6, which JDK 17's javac refuses: every run (the env's build, the builder's test runs, scoring) needs the raise.
      const f = await buildFixture('java', { testScope: 'change', compileLevel: '1.6' });
      try {
        const raise = ['-Dmaven.compiler.source=1.8', '-Dmaven.compiler.target=1.8'];
        for (const r of f.records) {
          assert.deepEqual(r.env.kind === 'java' ? r.env.args : [], raise, `${r.instance_id}: the env is built with the raise`);
          assert.deepEqual(
            r.test_runner.type === 'maven' ? r.test_runner.args : [],
            raise,
            `${r.instance_id}: its tests run with the raise`,
          );
        }
        assert.deepEqual(levels(f), f.expect.tasks);
        assert.deepEqual({ ...f.report.rejected }, f.expect.rejected);
        for (const r of f.records) {
          assert.equal(r.test_runner.type, 'maven');
          const classes = r.test_files
            .filter((t) => t.endsWith('.java'))
            .map((t) =>
              t
                .replace(/^src\/test\/java\//, '')
                .replace(/\.java$/, '')
                .replace(/\//g, '.'),
            );
          assert.deepEqual(
            r.test_runner.type === 'maven' ? r.test_runner.tests : [],
            classes,
            `${r.instance_id} runs the change's test classes only`,
          );
          for (const t of [...r.fail_to_pass, ...r.pass_to_pass])
            assert.ok(
              classes.some((c) => t.startsWith(`${c}#`)),
              `${t} is a test of the change`,
            );
          assert.ok(r.env.kind === 'java' && r.env.warmTests?.length, "the env is warmed by a change's test classes, not the whole suite");
        }
        const registry = new SuiteRegistry([humanevoSuite()]);
        registry.enable(`humanevo=${f.file}`);
        const { gym, cleanup } = await makeGym({ registry });
        try {
          const slugify = f.records.find((r) => r.target.qualname === 'Text.slugify')!;
          const v = await validateTask(
            gym,
            (await gym.registry.tasks('humanevo')).find((t) => t.id === slugify.instance_id)!,
          );
          assert.equal(v.status, 'valid', JSON.stringify(v));
        } finally {
          await cleanup();
        }
      } finally {
        await f.cleanup();
      }
    },
  );
});

test("the builder's progress line: the pace of this run's changes and the time left for the rest", () => {
  assert.equal(etaNote(0, 0, 10), '', 'nothing walked yet: no estimate');
  assert.equal(etaNote(4, 40_000, 3), ' (10 s/change, ETA 30 s)');
  assert.equal(etaNote(2, 240_000, 100), ' (2 min/change, ETA 3 h 20 min)');
  assert.equal(etaNote(5, 1_000, 0), '', 'nothing left');
});

const HOST_PYTEST = (() => {
  try {
    execFileSync('python3', ['-m', 'pytest', '--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

test("a nose-era change's tests collected as nose did: modules named *_tests.py run too", async (t) => {
  const runner = noseRunner(defaultRunner('python'));
  assert.deepEqual(runner, {
    type: 'pytest',
    args: ['--continue-on-collection-errors', '-o', 'python_files=test*.py *_test*.py *-test*.py'],
  });
  assert.deepEqual(noseRunner(runner), runner, 'applied once');
  assert.deepEqual(noseRunner(defaultRunner('java')), defaultRunner('java'));
  // pytest itself, on a layout of 2013 (arrow's tests/arrow_tests.py): collected with the option, not without.
  if (!HOST_PYTEST) return t.skip("the collection check needs pytest in the host's python3 (python3 -m pip install pytest)");
  const dir = await tempDir('benchgym-nose-');
  try {
    await fs.mkdir(path.join(dir, 'tests'));
    await fs.writeFile(path.join(dir, 'tests', '__init__.py'), '');
    await fs.writeFile(
      path.join(dir, 'tests', 'arrow_tests.py'),
      'import unittest\nclass ArrowTests(unittest.TestCase):\n    def test_now(self):\n        pass\n',
    );
    const collect = (args: string[]) =>
      execFileSync('python3', ['-m', 'pytest', '--collect-only', '-q', '-p', 'no:cacheprovider', ...args], {
        cwd: dir,
        encoding: 'utf8',
      }).trim();
    assert.match(collect(runner.type === 'pytest' ? runner.args : []), /tests\/arrow_tests\.py::ArrowTests::test_now/);
    assert.throws(() => collect([]), 'plain pytest collects nothing there');
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('Java overloads added together are rejected as overloaded: the target would not be one method', async () => {
  const dir = await tempDir('benchgym-overload-');
  try {
    const r = new FixtureRepo(dir);
    await r.init();
    const file = 'src/main/java/a/Text.java';
    await r.commit('init', { [file]: 'package a;\n\npublic class Text {\n}\n' });
    await r.commit('add', {
      [file]:
        'package a;\n\npublic class Text {\n    /** Pads s. */\n    public static String pad(String s) {\n        return pad(s, ' +
        '1);\n    }\n\n    /** Pads s by n. */\n    public static String pad(String s, int n) {\n        return " ".repeat(n) ' +
        '+ s;\n    }\n\n    /** Trims s. */\n    public static String trim(String s) {\n        return s.strip();\n    }\n}\n',
    });
    const [change] = await listChanges(dir);
    const found = await addedFunctions(dir, 'java', change!, [file], () => {});
    assert.deepEqual(
      found.map((c) => [c.fn.qualname, Boolean(c.overloaded)]),
      [
        ['Text.pad', true],
        ['Text.pad', true],
        ['Text.trim', false],
      ],
    );
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test(
  'one change whose tree the local copy cannot export is rejected ' + 'with its reason; the walk goes on and yields the other tasks',
  async () => {
    const dir = await tempDir('benchgym-unexportable-');
    try {
      const r = new FixtureRepo(path.join(dir, 'repo'));
      await r.init();
      const fn = (name: string, doc: string, body: string) => `\n\ndef ${name}(text):\n    """${doc}"""\n    ${body}\n`;
      const test = (name: string, call: string, want: string) =>
        `\n\ndef test_${name}():\n    from tk.words import ${name}\n    assert ${call} == ${want}\n`;
      let src = '"""Words."""\n';
      let tests = '"""Tests."""\n';
      await r.commit('init', {
        'tk/__init__.py': '',
        'tk/words.py': src,
        'tests/test_words.py': tests + '\n\ndef test_nothing():\n    assert True\n',
      });
      tests += '\n\ndef test_nothing():\n    assert True\n';
      // The first task change carries a file whose blob the copy will lack: its tree (and the fixed env's seed) cannot be exported.
      src += fn('shout', 'Upper-case a text and add an exclamation mark.', 'return text.upper() + "!"');
      tests += test('shout', 'shout("hey")', '"HEY!"');
      const lost = await r.commit('Add shout, with a large fixture', {
        'tk/words.py': src,
        'tests/test_words.py': tests,
        'tests/data/large.bin': 'a large fixture\n'.repeat(100),
      });
      // The file goes again (no test change: walked without exporting anything).
      await r.commit('Drop the large fixture', { 'tests/data/large.bin': null });
      src += fn('first_word', 'Return the first word of a text, or an empty string.', 'return text.split()[0] if text.split() else ""');
      tests += test('first_word', 'first_word("a b")', '"a"');
      const first = await r.commit('Add first_word', { 'tk/words.py': src, 'tests/test_words.py': tests });
      src += fn('word_count', 'Count the words of a text, separated by whitespace.', 'return len(text.split())');
      tests += test('word_count', 'word_count("a  b c")', '3');
      const count = await r.commit('Add word_count', { 'tk/words.py': src, 'tests/test_words.py': tests });
      // A copy of the repository without that one blob, as a copy made without its largest files is.
      const copy = path.join(dir, 'copy');
      await fs.cp(path.join(dir, 'repo'), copy, { recursive: true });
      const blob = r.git('rev-parse', `${lost}:tests/data/large.bin`).trim();
      await fs.rm(path.join(copy, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
      await assert.rejects(
        fileAt(copy, lost, 'tests/data/large.bin'),
        (e: unknown) => isUnexportable(e) && /lacks its blob/.test((e as Error).message),
        'a missing blob is no absent file',
      );
      assert.equal(await fileAt(copy, lost, 'tests/data/none.bin'), undefined);

      const sandboxes = new LocalSandboxFactory({ baseDir: path.join(dir, 'sandboxes'), cacheDir: TEST_CACHE_DIR });
      const names: string[] = [];
      const journal: string[] = [];
      let report;
      try {
        report = await buildTasks({
          repo: copy,
          language: 'python',
          env: { kind: 'python', version: '3.11', requirements: [] },
          sandboxes,
          testTimeoutMs: 300_000,
          onTask: (rec) => void names.push(rec.target.qualname),
          onChange: (o) => void journal.push(o.commit),
        });
      } finally {
        await sandboxes.close();
      }
      assert.deepEqual(names, ['first_word', 'word_count']);
      assert.equal(report.validated, 2);
      const unexportable = report.rejections.filter((x) => x.reason === 'unexportable');
      assert.deepEqual(
        unexportable.map((x) => x.commit),
        [lost],
      );
      assert.match(unexportable[0]!.detail!, new RegExp(`exporting ${lost.slice(0, 10)} .*failed`));
      assert.equal(report.rejected['no-test-change'], 1);
      // An unexportable change is walked for good (the copy will not change): the journal has it, and the tasks' changes.
      assert.ok(journal.includes(lost) && journal.includes(first) && journal.includes(count));
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
);

test(
  "a change's walk that fails: the change's rejection when it cannot " +
    'be exported or run; a cancel or a fault of the builder ends the build',
  () => {
    const change = { commit: 'c'.repeat(40) };
    assert.deepEqual(changeFailure(new UnexportableError('exporting c of r failed: bad object'), change), {
      commit: change.commit,
      reason: 'unexportable',
      detail: 'exporting c of r failed: bad object',
    });
    assert.deepEqual(changeFailure(new GymError('SANDBOX_UNAVAILABLE', 'bwrap: mount failed\nmore'), change), {
      commit: change.commit,
      reason: 'run-failed',
      detail: 'SANDBOX_UNAVAILABLE: bwrap: mount failed',
    });
    assert.throws(() => changeFailure(new GymError('CANCELLED', 'stopped'), change), /stopped/);
    assert.throws(() => changeFailure(new GymError('ENV_BUILD_FAILED', 'could not reach the package index'), change), /package index/);
    assert.throws(() => changeFailure(new TypeError('x is undefined'), change), TypeError);
  },
);
