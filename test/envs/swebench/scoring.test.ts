import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Gym } from '../../../src/episode/gym.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import type { Verdict } from '../../../src/scoring/verdict.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import type { Task } from '../../../src/tasks/schema.ts';
import { makeGym, tempDir, TEST_CACHE_DIR, testContext } from '../../helpers.ts';
import { dockerSkipReason } from '../../sandbox/docker/skip.ts';
import { assertNoFutureVisible, badPatches, buildSwebenchFixture, historyInEpisode, type SwebenchFixture } from './fixture.ts';
import { git } from '../../../src/repo/index.ts';
import { builtinSuites } from '../../../bin/builtins.ts';
import { validateTask } from '../../../src/scoring/validate.ts';
import { buildConfigSections } from '../../../src/scoring/java_build.ts';

/**
 * The fixture instance scored on both backends with real Maven and JUnit: the gold patch
 * resolves; the empty patch, a patch that edits or deletes the failing test, one that puts
 * its own file where the test patch adds one, and one that skips tests in the pom do not.
 * Every scoring is one `mvn -o` run; the Docker backend builds one env image and one
 * instance image for all of them.
 */
const CASES = ['edits the failing test', 'deletes the failing test', 'adds a file where the test patch adds one', 'skips tests in the pom'];

async function scoreAll(gym: Gym, task: Task, patches: Record<string, string>): Promise<Map<string, Verdict>> {
  const out = new Map<string, Verdict>();
  const names = Object.keys(patches);
  // Two at a time: the machine has two cores.
  for (let i = 0; i < names.length; i += 2) {
    await Promise.all(names.slice(i, i + 2).map(async (n) => out.set(n, await gym.score(task, patches[n]!))));
  }
  return out;
}

/**
 * The Docker backend scores gold, empty and the pom case by default (one env image, three
 * container runs); BENCHGYM_SWEBENCH_FULL=1 scores every case there too.
 */
const full = process.env.BENCHGYM_SWEBENCH_FULL === '1';

function pick(patches: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(names.map((n) => [n, patches[n]!]));
}

function check(verdicts: Map<string, Verdict>, fx: SwebenchFixture, all = true): void {
  const show = (v: Verdict) =>
    JSON.stringify(
      {
        status: v.status,
        f2p: v.failToPass,
        p2p: v.passToPass,
        notes: v.notes,
        error: v.error,
        tests: v.tests.map((t) => `${t.name} ${t.status}`),
      },
      null,
      1,
    );
  const gold = verdicts.get('gold')!;
  assert.equal(gold.reward, 1, show(gold));
  assert.deepEqual(gold.failToPass, { passed: fx.failToPass, failed: [] });
  assert.deepEqual(gold.passToPass, { passed: fx.passToPass, failed: [] });
  // Results come from this run's reports: every F2P class ran in module core.
  assert.ok(
    gold.tests.some((t) => t.name === 'core:com.acme.core.WordsEdgeTest#emptyTextHasNoWords' && t.status === 'passed'),
    show(gold),
  );
  assert.ok(!gold.notes.some((n) => /REPORT_TAMPERING|run id/.test(n)), show(gold));

  const empty = verdicts.get('empty')!;
  assert.equal(empty.status, 'failed', show(empty));
  assert.deepEqual(empty.failToPass?.passed, []);
  // core's pass-to-pass tests pass at the base; app (which depends on core) is not built once core's tests fail.
  assert.deepEqual(empty.passToPass?.passed, ['core:com.acme.core.WordsTest#countsASimpleSentence', 'core:com.acme.core.CalcTest']);
  assert.ok(
    empty.notes.some((n) => /did not run \(no report\): .*app:com\.acme\.app\.ReportTest/.test(n)),
    show(empty),
  );
  assert.notEqual(empty.exitCode, 0, 'a failing test fails the scoring build');

  for (const name of CASES) {
    const v = verdicts.get(name);
    if (!v && !all) continue;
    assert.ok(v, `no verdict for '${name}'`);
    assert.equal(v.status, 'failed', `${name}: ${show(v)}`);
    assert.equal(v.reward, 0);
    assert.ok(v.failToPass!.failed.length > 0, `${name}: ${show(v)}`);
  }
  if (all) {
    assert.ok(
      verdicts
        .get('edits the failing test')!
        .notes.some((n) => /test file reset to its base version: core\/src\/test\/java\/com\/acme\/core\/WordsTest\.java/.test(n)),
    );
    assert.ok(verdicts.get('adds a file where the test patch adds one')!.notes.some((n) => /WordsEdgeTest\.java/.test(n)));
  }
  const pom = verdicts.get('skips tests in the pom')!;
  assert.ok(
    pom.notes.some((n) => /^BUILD_CONFIG_RESTORED: the start state's build configuration scores, .*: core\/pom\.xml \(changed\)/.test(n)),
    show(pom),
  );
  // Neutralised, the tests ran: the failure is the bug's, not a missing report.
  assert.ok(
    pom.tests.some((t) => t.name.startsWith('core:com.acme.core.WordsEdgeTest#') && t.status === 'failed'),
    show(pom),
  );
}

describe('swe-bench-java: scoring the fixture instance', () => {
  let root: string;
  let fx: SwebenchFixture;
  let patches: Record<string, string>;
  before(async () => {
    root = await tempDir('benchgym-swebench-');
    fx = await buildSwebenchFixture(root);
    patches = { gold: fx.goldPatch, empty: '', ...(await badPatches(fx)) };
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  const registryFor = () => {
    const registry = new SuiteRegistry(builtinSuites({ reposDir: fx.reposDir }));
    registry.enable(`swe-bench-java=${fx.dataset}`);
    return registry;
  };

  it(
    'local backend: gold resolves; empty, test edits, a planted test file and skipped tests do not',
    { timeout: 15 * 60_000 },
    async () => {
      const { gym, cleanup } = await makeGym({ registry: registryFor() });
      try {
        const task = await gym.registry.task('swe-bench-java', fx.instanceId);
        check(await scoreAll(gym, task, patches), fx);
      } finally {
        await cleanup();
      }
    },
  );

  it(
    'tests named by their class alone (as Multi-SWE-bench names them) are ' +
      'located in their modules: -pl app,core -am, and gold still resolves',
    { timeout: 10 * 60_000 },
    async () => {
      const { gym, cleanup } = await makeGym({ registry: registryFor() });
      try {
        const task = await gym.registry.task('swe-bench-java', fx.instanceId);
        const bare = (ids: string[]) => ids.map((id) => id.slice(id.indexOf(':') + 1));
        const runner = task.tests.hidden.runner;
        assert.equal(runner.type, 'maven');
        const classOnly: Task = {
          ...task,
          id: `${task.id}-class-only`,
          tests: {
            ...task.tests,
            failToPass: bare(task.tests.failToPass ?? []),
            passToPass: bare(task.tests.passToPass ?? []),
            hidden: { ...task.tests.hidden, runner: { ...runner, tests: bare(runner.type === 'maven' ? runner.tests : []) } },
          },
        };
        const gold = await gym.score(classOnly, fx.goldPatch);
        assert.equal(gold.reward, 1, JSON.stringify({ notes: gold.notes, tests: gold.tests.map((t) => `${t.name} ${t.status}`) }));
        const log = await fs.readFile(gold.logRef!, 'utf8');
        assert.match(log, /tests located in module\(s\) (core, app|app, core)\n/);
        assert.match(log, /\$ (MAVEN_OPTS=.* )?mvn -o .* -pl (core,app|app,core) -am /);
        const empty = await gym.score(classOnly, '');
        assert.equal(empty.reward, 0);
      } finally {
        await cleanup();
      }
    },
  );

  // A candidate's own pom change is not scored (the start state's build is); declared as the task's build change, the dependency
  // the offline run cannot resolve leaves a candidate unresolved with an ENV_INCOMPLETE note, and as the gold validate says error.
  it(
    'an artifact the offline run cannot resolve: not from a candidate pom; declared: ENV_INCOMPLETE, validate error',
    { timeout: 15 * 60_000 },
    async () => {
      const scratch = `${fx.origin}-nowhere`;
      await git(['clone', '-q', fx.origin, scratch]);
      let patch: string;
      try {
        await git(['checkout', '-q', fx.base], { cwd: scratch });
        await git(['apply'], { cwd: scratch, input: fx.goldPatch });
        const pom = path.join(scratch, 'core/pom.xml');
        const dep =
          '  <dependencies>\n    ' +
          ('<dependency><groupId>org.acme.nowhere</groupId><artifactId>nothing</artifactId><version>1.0</version></dependency>\n  ' +
            '</dependencies>\n');
        await fs.writeFile(pom, (await fs.readFile(pom, 'utf8')).replace('</project>', `${dep}</project>`));
        await git(['add', '-A'], { cwd: scratch });
        patch = await git(['diff', '--cached', 'HEAD'], { cwd: scratch });
      } finally {
        await fs.rm(scratch, { recursive: true, force: true });
      }
      const { gym, cleanup } = await makeGym({ registry: registryFor() });
      try {
        const task = await gym.registry.task('swe-bench-java', fx.instanceId);
        // The build guard: the candidate's pom change is put back, so the fix resolves on the start state's build.
        const own = await gym.score(task, patch);
        const ownSeen = JSON.stringify({ status: own.status, error: own.error, notes: own.notes });
        assert.equal(own.status, 'passed', ownSeen);
        assert.ok(
          own.notes.some((n) => n.startsWith('BUILD_CONFIG_RESTORED: ') && n.includes('core/pom.xml (changed)')),
          ownSeen,
        );
        // The dependency as the task's own declared build change (as a gold patch's pom change is kept).
        const declared = { ...task, tests: { ...task.tests, hidden: { ...task.tests.hidden, buildPatch: buildConfigSections(patch) } } };
        const v = await gym.score(declared, patch);
        const seen = JSON.stringify({ status: v.status, error: v.error, notes: v.notes });
        assert.equal(v.status, 'failed', seen);
        assert.ok(
          v.notes.some((n) =>
            new RegExp(
              String.raw`^ENV_INCOMPLETE: the offline test run could not resolve what it needs from the env: ` +
                String.raw`\[ERROR\].*org\.acme\.nowhere:nothing`,
            ).test(n),
          ),
          seen,
        );
        // The same patch as the instance's gold: the env's failure, never an invalid task.
        const gold = await validateTask(gym, { ...declared, solution: { patch } });
        assert.equal(gold.status, 'error', JSON.stringify(gold));
        assert.match(
          gold.reasons.join('\n'),
          /^gold: ENV_INCOMPLETE: .*org\.acme\.nowhere:nothing.*an infrastructure reason/,
          JSON.stringify(gold),
        );
      } finally {
        await cleanup();
      }
    },
  );

  it(
    `docker backend: ${full ? 'the same verdicts' : 'gold, empty and skipped tests (BENCHGYM_SWEBENCH_FULL=1: every case)'} ` +
      `from one env image; no future in the episode`,
    { timeout: 20 * 60_000 },
    async (t) => {
      const skip = await dockerSkipReason();
      if (skip) return t.skip(skip);
      const sandboxes = new DockerSandboxFactory({
        serverId: `test-swebench-${randomBytes(4).toString('hex')}`,
        images: { cacheDir: TEST_CACHE_DIR },
      });
      const { gym, cleanup } = await makeGym({ registry: registryFor(), sandboxes });
      try {
        const task = await gym.registry.task('swe-bench-java', fx.instanceId);
        const env = await sandboxes.prepare(task);
        assert.match(env.image!, /^benchgym\/instance:/);
        assert.equal(env.memoryBytes, undefined, 'the default memory');
        // A task that asks for more memory (jackson's, fastjson2's 6 GiB) gets it in its container.
        const big = await sandboxes.prepare({ ...task, resources: { ...task.resources, memoryMb: 3072 } });
        assert.equal(big.memoryBytes, 3072 * 1024 ** 2);
        check(await scoreAll(gym, task, full ? patches : pick(patches, ['gold', 'empty', 'skips tests in the pom'])), fx, full);
        // The episode container's repository has no future either.
        const started = await gym.callTool('start_episode', { suite: 'swe-bench-java', task_id: fx.instanceId }, testContext());
        const id = (started.data as { episodeId: string }).episodeId;
        // The start state is git's: the executable runs, the symlink is one, nothing differs from HEAD.
        const state = await gym.callTool(
          'run_command',
          { command: 'bin/check && test -L bin/check && git status --porcelain && echo clean' },
          testContext(),
          id,
        );
        assert.equal(String((state.data as { stdout: string }).stdout).trim(), 'checked\nclean', JSON.stringify(state.data));
        // One CPU would make the JVM pick SerialGC: G1, as locally.
        const gc = await gym.callTool(
          'run_command',
          { command: "java -XX:+PrintFlagsFinal -version 2>/dev/null | grep -E ' Use(G1|Serial)GC '" },
          testContext(),
          id,
        );
        assert.match(String((gc.data as { stdout: string }).stdout), /UseG1GC += true/, JSON.stringify(gc.data));
        const baseHistory = (await git(['log', '--format=%H', fx.base], { cwd: fx.origin })).trim().split('\n');
        assertNoFutureVisible(await historyInEpisode(gym, id), fx, baseHistory);
        await gym.callTool('end_episode', {}, testContext(), id);
      } finally {
        await cleanup();
      }
    },
  );
});
