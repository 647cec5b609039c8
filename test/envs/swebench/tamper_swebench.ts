import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { builtinSuites } from '../../../bin/builtins.ts';
import { git } from '../../../src/repo/index.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import type { SandboxFactory } from '../../../src/sandbox/types.ts';
import type { Verdict } from '../../../src/scoring/verdict.ts';
import { makeGym, tempDir, TEST_CACHE_DIR } from '../../helpers.ts';
import { buildSwebenchFixture, type SurefireGeneration, type SwebenchFixture } from './fixture.ts';
import { batteryPatches, VARIANTS, type BatteryLayout } from './tamper_battery.ts';
import { compilePayloads, type Payloads } from './tamper_payloads.ts';
import {
  assertHeldFaithful,
  assertHeldStrict,
  batterySandboxes,
  FAITHFUL_SAMPLE,
  fullBattery,
  scoreBattery,
  type BatteryBackend,
} from './tamper_run.ts';

/**
 * The Java tamper battery (tamper_battery.ts) on the SWE-bench fixture instance of each
 * Surefire generation (3.2.5 with JUnit 5; 2.12.4 with JUnit 4, as gson's and old jackson's
 * bases), on one backend per test file (this one and tamper_docker / tamper_kubernetes): the gold patch resolves, the empty one does
 * not, and every attack leaves the unfixed bug unresolved in strict mode, each with its note;
 * faithful mode drops what strict refuses (a sample; BENCHGYM_TAMPER_FULL=1: every variant).
 */
/** The battery on `backend`, over the Surefire generations named (one file each where a backend is slow: Kubernetes). */
export function swebenchBattery(backend: BatteryBackend, gens: readonly SurefireGeneration[] = ['3', '2']): void {
  const titled = gens.map((g) => `${g}.x`).join(' and ');
  describe(`Java tamper battery: SWE-bench-java fixture, Surefire ${titled} (${backend})`, () => {
    let root: string;
    const fixtures = new Map<SurefireGeneration, SwebenchFixture>();
    const patches = new Map<SurefireGeneration, Map<string, string>>();
    let dataset: string;
    let reposDir: string;
    let backendSandboxes: { sandboxes?: SandboxFactory; skip?: string } = {};

    before(async () => {
      // A backend that cannot run here is skipped before the fixtures are built.
      backendSandboxes = await batterySandboxes(backend, 'tamper');
      if (backendSandboxes.skip) return;
      root = await tempDir('benchgym-tamper-');
      reposDir = path.join(root, 'mirrors');
      dataset = path.join(root, 'dataset');
      await fs.mkdir(dataset, { recursive: true });
      for (const gen of gens) {
        const fx = await buildSwebenchFixture(path.join(root, `gen${gen}`), { reposDir, surefire: gen });
        await fs.copyFile(fx.dataset, path.join(dataset, path.basename(fx.dataset)));
        fixtures.set(gen, fx);
      }
      // The payloads' JUnit 5 listener and extension compile against the jars the fixture's env build fetched.
      const { gym, cleanup } = await makeGym({ registry: registryFor() });
      try {
        const payloads = new Map<4 | 5, Payloads>();
        for (const [gen, fx] of fixtures) {
          const task = await gym.registry.task('swe-bench-java', fx.instanceId);
          await gym.sandboxes.prepare(task);
          const junit = gen === '3' ? 5 : 4;
          if (!payloads.has(junit)) payloads.set(junit, await compilePayloads(junit, path.join(TEST_CACHE_DIR, 'm2')));
          patches.set(gen, await patchesFor(fx, payloads.get(junit)!));
        }
      } finally {
        await cleanup();
      }
    });
    after(() => root && fs.rm(root, { recursive: true, force: true }));

    const registryFor = () => {
      const registry = new SuiteRegistry(builtinSuites({ reposDir }));
      registry.enable(`swe-bench-java=${dataset}`);
      return registry;
    };

    async function patchesFor(fx: SwebenchFixture, payloads: Payloads): Promise<Map<string, string>> {
      const start = path.join(root, `start-${fx.surefire}`);
      await git(['clone', '-q', fx.origin, start]);
      await git(['checkout', '-q', fx.base], { cwd: start });
      const layout: BatteryLayout = {
        surefire: fx.surefire,
        junit: fx.surefire === '3' ? 5 : 4,
        module: 'core',
        loaded: { pkg: 'com.acme.core', file: 'core/src/main/java/com/acme/core/Words.java', cls: 'Words' },
        testClasses: ['com.acme.core.WordsTest', 'com.acme.core.WordsEdgeTest', 'com.acme.core.CalcTest'],
        multiModule: true,
        groupId: 'com.acme',
        rootArtifact: 'calc-parent',
        rootVersion: '1.0.0-SNAPSHOT',
      };
      return batteryPatches(start, layout, payloads);
    }

    it(
      `${backend}: gold resolves, empty does not, and every variant is held ` +
        `in strict mode (faithful: ${fullBattery ? 'every variant' : 'a sample'})`,
      { timeout: 60 * 60_000 },
      async (t) => {
        const { sandboxes, skip } = backendSandboxes;
        if (skip) return t.skip(skip);
        const { gym, cleanup } = await makeGym({ registry: registryFor(), ...(sandboxes ? { sandboxes } : {}) });
        try {
          // Every verdict first, then the checks: a run on another scorer (the old one) records them all.
          const results: { gen: SurefireGeneration; strict: Map<string, Verdict>; faithful: Map<string, Verdict> }[] = [];
          for (const [gen, fx] of fixtures) {
            const task = await gym.registry.task('swe-bench-java', fx.instanceId);
            const label = { target: `swe-bench-java surefire ${gen}.x`, backend };
            const attacks = patches.get(gen)!;
            const strict = await scoreBattery(gym, task, new Map([['gold', fx.goldPatch], ['empty', ''], ...attacks]), 'strict', label);
            const sample = new Map([...attacks].filter(([id]) => fullBattery || FAITHFUL_SAMPLE.includes(id)));
            results.push({ gen, strict, faithful: await scoreBattery(gym, task, sample, 'faithful', label) });
          }
          for (const { gen, strict, faithful } of results) {
            assert.ok(
              patches.get(gen)!.size >= (gen === '3' ? VARIANTS.length : VARIANTS.length - 3),
              `${gen}.x: ${patches.get(gen)!.size} variants`,
            );
            assert.equal(strict.get('gold')!.reward, 1, JSON.stringify(strict.get('gold')!.notes));
            assert.equal(strict.get('empty')!.reward, 0);
            assertHeldStrict(strict);
            assertHeldFaithful(faithful, { exitCodeChecked: true });
          }
        } finally {
          await cleanup();
        }
      },
    );
  });
}
