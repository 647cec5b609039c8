import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { humanevoSuite } from '../../../envs/humanevo/index.ts';
import { BUILT_FORMAT, type BuiltTaskInput } from '../../../envs/humanevo/record.ts';
import { git } from '../../../src/repo/index.ts';
import type { SandboxFactory } from '../../../src/sandbox/types.ts';
import { goldPatch } from '../../../src/scoring/gold.ts';
import type { Verdict } from '../../../src/scoring/verdict.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym, tempDir, TEST_CACHE_DIR } from '../../helpers.ts';
import { batteryPatches, type BatteryLayout } from '../swebench/tamper_battery.ts';
import { compilePayloads } from '../swebench/tamper_payloads.ts';
import {
  assertHeldFaithful,
  assertHeldStrict,
  batterySandboxes,
  FAITHFUL_SAMPLE,
  fullBattery,
  scoreBattery,
  type BatteryBackend,
} from '../swebench/tamper_run.ts';
import { buildJavaFixture } from './fixtures.ts';
import { SKIP_JAVA_BUILD } from './setup.ts';

/**
 * The Java tamper battery (test/envs/swebench/tamper_battery.ts) on a HumanEvo Java task, which
 * the generic scorer scores: the fixture repository's `Text.slugify` left a stub (it throws), a
 * Maven project of one module with JUnit 5. The reference resolves, the stub does not, and
 * every attack that applies to a single module leaves it unresolved in strict mode, on one
 * backend per test file (tamper.test.ts: local; tamper_docker, tamper_kubernetes).
 */
export function humanevoBattery(backend: BatteryBackend): void {
  describe(`Java tamper battery: a HumanEvo Java task (${backend})`, { skip: SKIP_JAVA_BUILD }, () => {
    let dir: string;
    let file: string;
    let patches: Map<string, string>;
    let backendSandboxes: { sandboxes?: SandboxFactory; skip?: string } = {};

    before(async () => {
      // A backend that cannot run here is skipped before the fixture is built.
      backendSandboxes = await batterySandboxes(backend, 'he-tamper');
      if (backendSandboxes.skip) return;
      dir = await tempDir('benchgym-humanevo-tamper-');
      process.env.BENCHGYM_HUMANEVO_CACHE = path.join(dir, 'workspaces');
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
        pass_to_pass: ['org.benchgym.fixture.TextTest#normalizeTitle', 'org.benchgym.fixture.TextTest#shout'],
        env: { kind: 'java', jdk: '17', build: 'maven' },
        test_runner: { type: 'maven', tests: [] },
      };
      file = path.join(dir, 'tasks.jsonl');
      await fs.writeFile(file, JSON.stringify(record) + '\n');
      const { gym, cleanup } = await gymFor();
      try {
        const task = await gym.registry.task('humanevo', 'java-slugify');
        await gym.sandboxes.prepare(task);
        // The attacks are written against the aware start state (the stub in place), as a repository of its own.
        assert.equal(task.workspace.type, 'dir');
        const start = path.join(dir, 'start');
        await fs.cp(task.workspace.type === 'dir' ? task.workspace.path : '', start, {
          recursive: true,
          filter: (src) => path.basename(src) !== '.git',
        });
        await git(['init', '-q'], { cwd: start });
        await git(['add', '-A'], { cwd: start });
        await git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'start state'], { cwd: start });
        const layout: BatteryLayout = {
          surefire: '3',
          junit: 5,
          module: '',
          loaded: { pkg: 'org.benchgym.fixture', file: 'src/main/java/org/benchgym/fixture/Text.java', cls: 'Text' },
          testClasses: ['org.benchgym.fixture.TextTest', 'org.benchgym.fixture.WordBagTest'],
          multiModule: false,
          groupId: 'org.benchgym.examples',
          rootArtifact: 'bracket-matcher',
          rootVersion: '1.0.0-SNAPSHOT',
        };
        patches = await batteryPatches(start, layout, await compilePayloads(5, path.join(TEST_CACHE_DIR, 'm2')));
        patches.set('gold', await goldPatch(task, gym.sandboxes));
      } finally {
        await cleanup();
      }
    });
    after(() => dir && fs.rm(dir, { recursive: true, force: true }));

    const gymFor = (sandboxes?: SandboxFactory) => {
      const registry = new SuiteRegistry([humanevoSuite()]);
      registry.enable(`humanevo=${file}`);
      return makeGym({ registry, ...(sandboxes ? { sandboxes } : {}) });
    };

    it(
      `${backend}: the reference resolves, the stub does not, every variant is ` +
        `held in strict mode (faithful: ${fullBattery ? 'every variant' : 'a sample'})`,
      { timeout: 60 * 60_000 },
      async (t) => {
        const { sandboxes, skip } = backendSandboxes;
        if (skip) return t.skip(skip);
        const { gym, cleanup } = await gymFor(sandboxes);
        try {
          const task = await gym.registry.task('humanevo', 'java-slugify');
          const label = { target: 'humanevo java-slugify', backend };
          const attacks = new Map([...patches].filter(([id]) => id !== 'gold'));
          const strict = await scoreBattery(
            gym,
            task,
            new Map([['gold', patches.get('gold')!], ['empty', ''], ...attacks]),
            'strict',
            label,
          );
          const faithful: Map<string, Verdict> = await scoreBattery(
            gym,
            task,
            new Map([...attacks].filter(([id]) => fullBattery || FAITHFUL_SAMPLE.includes(id))),
            'faithful',
            label,
          );
          assert.ok(attacks.size >= 25, `${attacks.size} variants`);
          assert.equal(strict.get('gold')!.reward, 1, JSON.stringify(strict.get('gold')!.notes));
          assert.equal(strict.get('empty')!.reward, 0);
          assertHeldStrict(strict);
          assertHeldFaithful(faithful, { exitCodeChecked: false });
        } finally {
          await cleanup();
        }
      },
    );
  });
}
