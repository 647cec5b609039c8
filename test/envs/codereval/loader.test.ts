/** Reading CoderEval in place: tasks, levels, what runs here, options, official records. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadCoderEval, type LoadedCoderEval } from '../../../envs/codereval/index.ts';
import { oracleContextOf, pythonList, readOfficialRecords } from '../../../envs/codereval/dataset.ts';
import { buildTask, parseTaskId, taskIdWith } from '../../../envs/codereval/tasks.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { CODEREVAL_DIR, SKIP_WITHOUT_DATA } from './data.ts';
import { execFileSync } from 'node:child_process';
import { findPython } from '../../../src/env/python.ts';
import { targetFunction } from '../../../envs/codereval/pysource.ts';
import { BUILTIN_SUITES } from '../../../bin/builtins.ts';
import { coderevalSuite } from '../../../envs/codereval/index.ts';

describe('official records', () => {
  test("oracle_context by the paper's categories, from JSON or the text of Python lists", () => {
    const raw = '{ "apis" : "[\'divmod\', \'map\', \'localize\']", "classes" : "[\'Time\', \'FixedOffset\']", "vars" : "[]" }';
    assert.deepEqual(oracleContextOf(raw), { APIInvocation: ['divmod', 'map', 'localize'], TypeReference: ['Time', 'FixedOffset'] });
    assert.deepEqual(oracleContextOf({ apis: ['f', 'f'], vars: ['X'] }), { APIInvocation: ['f'], VarReference: ['X'] });
    assert.equal(oracleContextOf('{"apis": "[]"}'), undefined);
    assert.equal(oracleContextOf('not json'), undefined);
    assert.deepEqual(pythonList(`["a", 'b.c', '']`), ['a', 'b.c']);
  });

  test('CoderEval4Python.json, when present, gives levels and oracle_context; a bad record is named', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'codereval-records-'));
    try {
      await fs.writeFile(
        path.join(dir, 'CoderEval4Python.json'),
        JSON.stringify({
          RECORDS: [{ _id: 'a1', level: 'class_runnable', oracle_context: '{ "apis" : "[\'f\']", "classes" : "[]", "vars" : "[\'V\']" }' }],
        }),
      );
      const { records, source } = await readOfficialRecords(dir);
      assert.deepEqual(source, ['CoderEval4Python.json']);
      assert.equal(records.get('a1')!.level, 'class_runnable');
      assert.deepEqual(oracleContextOf(records.get('a1')!.oracle_context), { APIInvocation: ['f'], VarReference: ['V'] });
      await fs.writeFile(path.join(dir, 'CoderEval4Python.json'), JSON.stringify({ RECORDS: [{ _id: 'a1', level: 'galaxy_runnable' }] }));
      await assert.rejects(
        readOfficialRecords(dir),
        (e: Error & { code?: string }) => e.code === 'TASK_INVALID' && /RECORDS\.0\.level/.test(e.message),
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  test('task ids carry the episode options', () => {
    assert.deepEqual(parseTaskId('abc+platform-test+human-label'), {
      base: 'abc',
      options: { docstring: 'human-label', visibleTest: 'platform' },
    });
    assert.equal(parseTaskId('abc+nonsense'), undefined);
    assert.equal(parseTaskId('abc+human-label+human-label'), undefined);
    assert.equal(taskIdWith('abc', { docstring: 'raw', visibleTest: 'platform' }), 'abc+platform-test');
  });
});

describe('the CoderEval dataset', { skip: SKIP_WITHOUT_DATA }, () => {
  let loaded: LoadedCoderEval;
  before(async () => {
    loaded = await loadCoderEval(CODEREVAL_DIR, 'codereval', { projects: { noProjects: true } });
  });

  test("230 tasks with the paper's six levels; the 45 standalone tasks whose tests need only the standard library run here", () => {
    assert.equal(loaded.tasks.length, 230);
    const count = (f: (m: Record<string, unknown>) => boolean) => loaded.tasks.filter((t) => f(t.metadata)).length;
    const levels = Object.fromEntries(
      ['self_contained', 'slib_runnable', 'plib_runnable', 'class_runnable', 'file_runnable', 'project_runnable'].map((l) => [
        l,
        count((m) => m.level === l),
      ]),
    );
    assert.deepEqual(levels, {
      self_contained: 35,
      slib_runnable: 28,
      plib_runnable: 21,
      class_runnable: 55,
      file_runnable: 68,
      project_runnable: 23,
    });
    assert.equal(
      count((m) => m.runnableHere === true),
      45,
    );
    for (const t of loaded.tasks) {
      if (t.metadata.runnableHere) assert.deepEqual(t.env, { kind: 'python', version: '3.11', requirements: ['dill==0.3.8'] });
      else assert.equal(t.env.kind, 'image', t.id);
    }
  });

  test("the plain-interpreter verdict agrees with the dataset's own ground-truth check on all 63 standalone tasks", async () => {
    const check = JSON.parse(await fs.readFile(path.join(CODEREVAL_DIR, 'stdlib_levels_groundtruth_check.json'), 'utf8')) as {
      _id: string;
      groundtruth_py311_stdlib_only: string;
    }[];
    assert.equal(check.length, 63);
    const byId = new Map(loaded.tasks.map((t) => [t.id, t]));
    for (const c of check)
      assert.equal(
        byId.get(c._id)!.metadata.runnableHere,
        c.groundtruth_py311_stdlib_only === 'PASS',
        `${c._id}: ${c.groundtruth_py311_stdlib_only}`,
      );
  });

  test('the workspace is the real file with a stub; the reference and the platform test stay out of it', () => {
    const t = loaded.tasks.find((x) => x.id === '62e60ed4d76274f8a4026da0')!; // neo4j Record.keys, a method
    assert.equal(t.workspace.type, 'files');
    const files = (t.workspace as { files: Record<string, string> }).files;
    assert.deepEqual(Object.keys(files), ['neo4j/_data.py']);
    assert.match(
      files['neo4j/_data.py']!,
      new RegExp(
        String.raw`\n {4}def keys\(self\):\n {8}""" Return the keys of the record\.\n\n {8}:return: list of key names\n ` +
          String.raw`{8}"""\n {8}raise NotImplementedError\n\n {4}def values`,
      ),
    );
    assert.ok(!files['neo4j/_data.py']!.includes('return list(self.__keys)'));
    assert.equal(t.tests.visible, undefined);
    assert.deepEqual(Object.keys(t.tests.hidden.files).sort(), ['.codereval/_data_keys_passk_validte.py', '.codereval/scorer.py']);
    assert.match((t.env as { about: string }).about, /class_runnable/);
  });

  test('options: a human-labelled docstring, and the platform test as a visible test with the original function masked', async () => {
    const v = await loaded.variant('62e60ed4d76274f8a4026da0', { docstring: 'human-label', visibleTest: 'platform' });
    assert.equal(v.id, '62e60ed4d76274f8a4026da0+human-label+platform-test');
    assert.deepEqual([v.metadata.docstring, v.metadata.visibleTest], ['human-label', 'platform']);
    const file = (v.workspace as { files: Record<string, string> }).files['neo4j/_data.py']!;
    assert.match(file, /def keys\(self\):\n {8}"""\n {8}Returns the __keys property of a class as a List\n {8}"""/);
    const masked = v.tests.visible!.files['.codereval/_data_keys_passk_validte.py']!;
    const original = v.tests.hidden.files['.codereval/_data_keys_passk_validte.py']!;
    assert.ok(original.includes('return list(self.__keys)'));
    assert.ok(!masked.includes('return list(self.__keys)'), 'the visible copy of the platform test does not hold the reference');
    assert.match(masked, /if __name__ == "__main__":/);
    assert.match(v.prompt, /run_tests runs that test/);
  });

  test('the registry resolves option ids; unknown suffixes are not tasks', async () => {
    const registry = new SuiteRegistry([coderevalSuite({ projects: { noProjects: true } })]);
    registry.enable(`codereval=${CODEREVAL_DIR}`);
    assert.equal((await registry.task('codereval', '62ece4982e6aefcf4aabbd68+platform-test')).tests.visible?.runner.type, 'script');
    await assert.rejects(
      registry.task('codereval', '62ece4982e6aefcf4aabbd68+verbose'),
      (e: Error & { code?: string }) => e.code === 'TASK_NOT_FOUND',
    );
    assert.equal((await registry.tasks('codereval')).length, 230);
  });

  test('without an image, a project-level task is ENV_UNAVAILABLE naming the option; a named image shows in the spec', async () => {
    const named = await loadCoderEval(CODEREVAL_DIR, 'codereval', { image: 'codereval:local' });
    const t = named.tasks.find((x) => x.metadata.level === 'project_runnable')!;
    assert.deepEqual(
      { kind: t.env.kind, image: (t.env as { image?: string }).image, option: (t.env as { option?: string }).option },
      { kind: 'image', image: 'codereval:local', option: 'BENCHGYM_CODEREVAL_IMAGE' },
    );
  });

  test(
    "every task's workspace, reference and masked platform test " + "parse as Python 3.11; no masked test holds the reference's body",
    async (t) => {
      const python = await findPython('3.11');
      if (!python) return t.skip('no Python 3.11 here');
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'codereval-parse-'));
      try {
        let n = 0;
        const leaks: string[] = [];
        for (const id of loaded.sources.keys()) {
          const base = loaded.tasks.find((x) => x.id === id)!;
          const file = Object.keys((base.workspace as { files: Record<string, string> }).files)[0]!;
          const write = (what: string, text: string) => fs.writeFile(path.join(dir, `${n++}-${id}-${what}.py`), text);
          await write('workspace', (base.workspace as { files: Record<string, string> }).files[file]!);
          await write('reference', base.solution!.files![file]!);
          if (base.metadata.testHasFunction === false) continue;
          const v = await loaded.variant(id, { docstring: 'human-label', visibleTest: 'platform' });
          await write('human-label', (v.workspace as { files: Record<string, string> }).files[file]!);
          const [key, masked] = Object.entries(v.tests.visible!.files).find(([k]) => !k.endsWith('scorer.py'))!;
          await write('masked', masked);
          const original = v.tests.hidden.files[key]!.split('\n');
          const span = targetFunction(v.tests.hidden.files[key]!, base.metadata.target as string)!;
          const outside = new Set([...original.slice(0, span.def), ...original.slice(span.end)].map((x) => x.trim()));
          const body = original
            .slice(span.bodyStart, span.end)
            .map((x) => x.trim())
            .filter((x) => x.length > 20 && !x.startsWith('#') && !outside.has(x));
          const inMasked = new Set(masked.split('\n').map((x) => x.trim()));
          const workspaceLines = new Set((v.workspace as { files: Record<string, string> }).files[file]!.split('\n').map((x) => x.trim()));
          // A line of the reference's body (not also elsewhere in the test file or in the workspace) must not show.
          for (const line of body) if (inMasked.has(line) && !workspaceLines.has(line)) leaks.push(`${id}: ${line}`);
        }
        assert.deepEqual(leaks, []);
        const out = execFileSync(
          python,
          [
            '-c',
            'import ast, os, sys\nbad = []\nfor f in sorted(os.listdir(sys.argv[1])):\n    try: ' +
              'ast.parse(open(os.path.join(sys.argv[1], f), encoding="utf-8").read())\n    except SyntaxError as e: ' +
              'bad.append(f"{f}: {e}")\nprint(len(os.listdir(sys.argv[1])), len(bad)); print("\\n".join(bad[:10]))',
            dir,
          ],
          { encoding: 'utf8' },
        );
        assert.match(out, /^\d+ 0\n/, out);
        assert.ok(Number(out.split(' ')[0]) > 900, out);
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
  );

  test('a task whose platform test does not define the function is ENV_UNAVAILABLE whatever the image', () => {
    const t = loaded.tasks.find((x) => x.id === '62b896de755ee91dce50a183')!; // dateutil parser.parse
    assert.equal(t.metadata.testHasFunction, false);
    assert.deepEqual([t.env.kind, (t.env as { unsupported?: boolean }).unsupported], ['image', true]);
    assert.match((t.env as { about: string }).about, /does not define parse/);
  });

  test('oracle_context goes into metadata for Acc@k, and never into what agents see of a task', () => {
    const source = loaded.sources.get('62ece4982e6aefcf4aabbd68')!;
    const t = buildTask('codereval', { ...source, oracleContext: { APIInvocation: ['divmod', 'len'], VarReference: [] } });
    assert.deepEqual(t.metadata.oracle_context, { APIInvocation: ['divmod', 'len'], VarReference: [] });
    const shown = new SuiteRegistry(BUILTIN_SUITES).publicTaskInfo(t);
    assert.equal((shown.metadata as Record<string, unknown>).oracle_context, undefined);
    assert.equal((shown.metadata as Record<string, unknown>).level, 'self_contained');
    assert.equal(JSON.stringify(shown).includes('divmod'), false);
  });
});
