import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { builtinSuites } from '../../../bin/builtins.ts';
import { git } from '../../../src/repo/index.ts';
import { locateMirror } from '../../../src/repo/source.ts';
import type { Verdict } from '../../../src/scoring/verdict.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym, tempDir, TEST_CACHE_DIR } from '../../helpers.ts';
import { batteryPatches, VARIANTS, type BatteryLayout } from './tamper_battery.ts';
import { compilePayloads } from './tamper_payloads.ts';
import { assertHeldStrict, scoreBattery } from './tamper_run.ts';
import { SWEBENCH_JAVA_DIR } from './data.ts';

/**
 * The tamper battery's attacks on real instances (a subset: those that fit gson's build as it
 * is), local backend: gson-1093 (Surefire 2.12.4 by Maven's default binding, source level 1.7)
 * and gson-1787 (Surefire 3.0.0-M7, release 7), both JUnit 4 with JUnit 3-style tests. Needs the
 * gson dataset in ../shared and a mirror of google/gson in BENCHGYM_MIRRORS (a --repos-dir);
 * BENCHGYM_CACHE reuses a warm env (else the test cache builds them).
 */
const DATASET = path.join(SWEBENCH_JAVA_DIR, 'google__gson_swe-bench-java_reconstructed.jsonl');
const MIRRORS = process.env.BENCHGYM_MIRRORS;

async function skipReason(): Promise<string | false> {
  if (!existsSync(DATASET)) return `the gson instances are not at ${DATASET}`;
  if (!MIRRORS) return 'BENCHGYM_MIRRORS (a --repos-dir holding google/gson) is not set';
  if (!(await locateMirror('google/gson', MIRRORS))) return `no mirror of google/gson in ${MIRRORS}`;
  return false;
}
const SKIP = await skipReason();

/** The variants that apply to gson's build as it is (its root pom declares no Surefire and already has a parent). */
const GSON_VARIANTS = [
  'shadow-source',
  'shadow-class-resource',
  'processor-class-resource',
  'processor-ignored-output',
  'agent-mvn-symlink',
  'fork-property',
  'fork-pom-symlink',
  'fork-maven-config',
  'reports-fork-hook',
  'exit-fork-zero',
];

const INSTANCES: { id: string; surefire: '2' | '3'; version: string; loaded: BatteryLayout['loaded']; testClasses: string[] }[] = [
  {
    id: 'google__gson-1093',
    surefire: '2',
    version: '2.8.2-SNAPSHOT',
    loaded: { pkg: 'com.google.gson.stream', file: 'gson/src/main/java/com/google/gson/stream/JsonWriter.java', cls: 'JsonWriter' },
    testClasses: ['com.google.gson.stream.JsonWriterTest'],
  },
  {
    id: 'google__gson-1787',
    surefire: '3',
    version: '2.9.2-SNAPSHOT',
    loaded: { pkg: 'com.google.gson', file: 'gson/src/main/java/com/google/gson/Gson.java', cls: 'Gson' },
    testClasses: ['com.google.gson.functional.TypeAdapterRuntimeTypeWrapperTest'],
  },
];

describe('Java tamper battery on gson (real instances from the mirrors)', { skip: SKIP }, () => {
  let root: string;
  const registryFor = () => {
    const registry = new SuiteRegistry(builtinSuites({ reposDir: MIRRORS! }));
    registry.enable(`swe-bench-java=${DATASET}`);
    return registry;
  };
  before(async () => {
    root = await tempDir('benchgym-tamper-gson-');
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  for (const inst of INSTANCES) {
    it(
      `${inst.id} (Surefire ${inst.surefire}.x): gold resolves, empty does not, ${GSON_VARIANTS.length} variants held in strict mode`,
      { timeout: 90 * 60_000 },
      async () => {
        const { gym, cleanup } = await makeGym({ registry: registryFor(), cacheDir: process.env.BENCHGYM_CACHE ?? TEST_CACHE_DIR });
        try {
          const task = await gym.registry.task('swe-bench-java', inst.id);
          await gym.sandboxes.prepare(task);
          const start = path.join(root, inst.id);
          await git(['clone', '-q', (await locateMirror('google/gson', MIRRORS!))!, start]);
          await git(['checkout', '-q', task.workspace.type === 'git' ? task.workspace.commit : 'HEAD'], { cwd: start });
          const layout: BatteryLayout = {
            surefire: inst.surefire,
            junit: 4,
            module: 'gson',
            loaded: inst.loaded,
            testClasses: inst.testClasses,
            multiModule: true,
            groupId: 'com.google.code.gson',
            rootArtifact: 'gson-parent',
            rootVersion: inst.version,
          };
          const payloads = await compilePayloads(4, path.join(TEST_CACHE_DIR, 'm2'));
          const attacks = await batteryPatches(
            start,
            layout,
            payloads,
            VARIANTS.filter((v) => GSON_VARIANTS.includes(v.id)),
          );
          assert.equal(attacks.size, GSON_VARIANTS.length);
          const verdicts: Map<string, Verdict> = await scoreBattery(
            gym,
            task,
            new Map([['gold', task.solution!.patch!], ['empty', ''], ...attacks]),
            'strict',
            { target: inst.id, backend: 'local' },
          );
          assert.equal(verdicts.get('gold')!.reward, 1, JSON.stringify(verdicts.get('gold')!.notes));
          assert.equal(verdicts.get('empty')!.reward, 0);
          assertHeldStrict(verdicts);
        } finally {
          await cleanup();
        }
      },
    );
  }
});
