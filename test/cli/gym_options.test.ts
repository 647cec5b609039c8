/**
 * `--cache-dir` holds every cache it names: besides the built envs, the suites' own caches
 * (HumanEvo's materialised workspaces, CoderEval's project checkouts and layouts, GitChameleon's
 * docs store) go into a folder of it named after the suite, and nothing into the default cache.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { builtinSuites } from '../../bin/builtins.ts';
import { defaultDocsFile } from '../../envs/gitchameleon/docs.ts';
import { BUILT_FORMAT, type BuiltTaskInput } from '../../envs/humanevo/record.ts';
import { tempDir } from '../helpers.ts';
import { buildJavaFixture } from '../envs/humanevo/fixtures.ts';
import { startCli } from './cli.ts';

let dir: string;
before(async () => {
  dir = await tempDir('benchgym-cache-dir-');
});
after(() => fs.rm(dir, { recursive: true, force: true }));

/** The environment of a user who set none of the cache variables, with a home of its own. */
function userEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, BENCHGYM_HOME: path.join(home, 'benchgym-home') };
  for (const k of ['BENCHGYM_CACHE', 'BENCHGYM_HUMANEVO_CACHE', 'BENCHGYM_CODEREVAL_CACHE', 'BENCHGYM_GITCHAMELEON_DOCS']) delete env[k];
  return env;
}

test('benchgym tasks --cache-dir: HumanEvo lays its workspaces out there, and nothing in the default cache', async () => {
  const fx = await buildJavaFixture(path.join(dir, 'repo'));
  const record: BuiltTaskInput = {
    format: BUILT_FORMAT,
    instance_id: 'java-slugify',
    repo: 'fixture/java',
    repo_path: fx.repo,
    language: 'java',
    commit: fx.commits.slugify!,
    base_commit: fx.commits.initial!,
    latest_commit: fx.commits.deleteHelper!,
    date: '2024-01-01T02:00:00Z',
    target: {
      file: 'src/main/java/org/benchgym/fixture/Text.java',
      qualname: 'Text.slugify',
      name: 'slugify',
      cls: 'Text',
      lines: [25, 39],
    },
    signature: 'public static String slugify(String title, String sep)',
    docstring_detailed: 'Turns a title into a URL slug.',
    docstring_brief: 'Turns a title into a URL slug.',
    dependency_level: 'standalone',
    test_files: ['src/test/java/org/benchgym/fixture/TextTest.java'],
    production_files: [{ status: 'M', path: 'src/main/java/org/benchgym/fixture/Text.java' }],
    fail_to_pass: ['org.benchgym.fixture.TextTest#slugify'],
    pass_to_pass: [],
    env: { kind: 'java', jdk: '17', build: 'maven' },
    test_runner: { type: 'maven', tests: [] },
  };
  const file = path.join(dir, 'tasks.jsonl');
  await fs.writeFile(file, JSON.stringify(record) + '\n');
  const home = path.join(dir, 'home');
  const cache = path.join(dir, 'cache');
  await fs.mkdir(home, { recursive: true });
  const r = await startCli(['tasks', '--suite', `humanevo=${file}`, '--cache-dir', cache], 300_000, userEnv(home)).done;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^humanevo\/java-slugify\tjava\t/m);
  const laidOut = await fs.readdir(path.join(cache, 'humanevo'));
  assert.ok(laidOut.length > 0, 'the workspaces are under --cache-dir/humanevo');
  assert.equal(existsSync(path.join(home, 'benchgym-home', 'humanevo')), false, 'nothing went to the default cache');
  assert.equal(existsSync(path.join(home, '.cache', 'benchgym', 'humanevo')), false);
});

test('the suites built with a cache folder name it in their caches and private paths; without one, their defaults', () => {
  const cache = path.join(dir, 'c2');
  const suites = Object.fromEntries(builtinSuites({ cacheDir: cache }).map((s) => [s.id, s]));
  assert.ok(
    suites.codereval!.privatePaths('DATA').includes(path.join(cache, 'codereval')),
    'CoderEval: checkouts and layouts (they hold the answers)',
  );
  const file = path.join(dir, 'tasks.jsonl');
  assert.ok(suites.humanevo!.privatePaths(file).includes(path.join(cache, 'humanevo')));
  const saved = process.env.BENCHGYM_GITCHAMELEON_DOCS;
  delete process.env.BENCHGYM_GITCHAMELEON_DOCS;
  try {
    assert.equal(defaultDocsFile('v2', path.join(cache, 'gitchameleon')), path.join(cache, 'gitchameleon', 'docs-v2.jsonl'));
  } finally {
    if (saved !== undefined) process.env.BENCHGYM_GITCHAMELEON_DOCS = saved;
  }
  const plain = Object.fromEntries(builtinSuites().map((s) => [s.id, s]));
  assert.ok(!plain.codereval!.privatePaths('DATA').includes(path.join(cache, 'codereval')));
});
