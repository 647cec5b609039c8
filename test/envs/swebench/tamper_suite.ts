import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { builtinSuites } from '../../../bin/builtins.ts';
import { git } from '../../../src/repo/index.ts';
import { baseImageName } from '../../../src/env/images.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import type { SandboxFactory } from '../../../src/sandbox/types.ts';
import { makeGym, tempDir, TEST_CACHE_DIR } from '../../helpers.ts';
import { dockerSkipReason } from '../../sandbox/docker/skip.ts';
import { buildSwebenchFixture, type SurefireGeneration, type SwebenchFixture } from './fixture.ts';
import { batteryPatches, VARIANTS, type BatteryLayout } from './tamper_battery.ts';
import { compilePayloads } from './tamper_payloads.ts';
import { assertHeldFaithful, assertHeldStrict, FAITHFUL_SAMPLE, fullBattery, scoreBattery } from './tamper_run.ts';

/**
 * The Java tamper battery (tamper_battery.ts) on the SWE-bench fixture instance of one
 * Surefire generation (3.2.5 with JUnit 5; 2.12.4 with JUnit 4, as gson's and old jackson's
 * bases) on one backend: the gold patch resolves, the empty one does not, and every attack
 * leaves the unfixed bug unresolved in strict mode, each with its note; faithful mode drops
 * what strict refuses (a sample; BENCHGYM_TAMPER_FULL=1: every variant). A test file per
 * generation and backend (tamper_surefire<gen>_<backend>.test.ts): each runs beside the others
 * and within its own time limit.
 */
export function tamperBattery(gen: SurefireGeneration, backend: 'local' | 'docker'): void {
  describe(`Java tamper battery: SWE-bench-java fixture, Surefire ${gen}.x`, () => {
    let root: string;
    let fx: SwebenchFixture;
    let attacks: Map<string, string>;
    let dataset: string;
    let reposDir: string;

    before(async () => {
      root = await tempDir('benchgym-tamper-');
      reposDir = path.join(root, 'mirrors');
      dataset = path.join(root, 'dataset');
      await fs.mkdir(dataset, { recursive: true });
      fx = await buildSwebenchFixture(path.join(root, `gen${gen}`), { reposDir, surefire: gen });
      await fs.copyFile(fx.dataset, path.join(dataset, path.basename(fx.dataset)));
      // The payloads' JUnit 5 listener and extension compile against the jars the fixture's env build fetched.
      const { gym, cleanup } = await makeGym({ registry: registryFor() });
      try {
        await gym.sandboxes.prepare(await gym.registry.task('swe-bench-java', fx.instanceId));
        const start = path.join(root, `start-${gen}`);
        await git(['clone', '-q', fx.origin, start]);
        await git(['checkout', '-q', fx.base], { cwd: start });
        const junit = gen === '3' ? 5 : 4;
        const layout: BatteryLayout = {
          surefire: gen,
          junit,
          module: 'core',
          loaded: { pkg: 'com.acme.core', file: 'core/src/main/java/com/acme/core/Words.java', cls: 'Words' },
          testClasses: ['com.acme.core.WordsTest', 'com.acme.core.WordsEdgeTest', 'com.acme.core.CalcTest'],
          multiModule: true,
          groupId: 'com.acme',
          rootArtifact: 'calc-parent',
          rootVersion: '1.0.0-SNAPSHOT',
        };
        attacks = await batteryPatches(start, layout, await compilePayloads(junit, path.join(TEST_CACHE_DIR, 'm2')));
      } finally {
        await cleanup();
      }
    });
    after(() => fs.rm(root, { recursive: true, force: true }));

    const registryFor = () => {
      const registry = new SuiteRegistry(builtinSuites({ reposDir }));
      registry.enable(`swe-bench-java=${dataset}`);
      return registry;
    };

    it(
      `${backend}: gold resolves, empty does not, and every variant is held in strict mode ` +
        `(faithful: ${fullBattery ? 'every variant' : 'a sample'})`,
      { timeout: 60 * 60_000 },
      async (t) => {
        let sandboxes: SandboxFactory | undefined;
        if (backend === 'docker') {
          const skip = await dockerSkipReason([baseImageName('java', '17')]);
          if (skip) return t.skip(skip);
          sandboxes = new DockerSandboxFactory({
            serverId: `test-tamper-${randomBytes(4).toString('hex')}`,
            images: { cacheDir: TEST_CACHE_DIR },
          });
        }
        const { gym, cleanup } = await makeGym({ registry: registryFor(), ...(sandboxes ? { sandboxes } : {}) });
        try {
          // Every verdict first, then the checks: a run on another scorer (the old one) records them all.
          const task = await gym.registry.task('swe-bench-java', fx.instanceId);
          const label = { target: `swe-bench-java surefire ${gen}.x`, backend };
          const strict = await scoreBattery(gym, task, new Map([['gold', fx.goldPatch], ['empty', ''], ...attacks]), 'strict', label);
          const sample = new Map([...attacks].filter(([id]) => fullBattery || FAITHFUL_SAMPLE.includes(id)));
          const faithful = await scoreBattery(gym, task, sample, 'faithful', label);
          assert.ok(attacks.size >= (gen === '3' ? VARIANTS.length : VARIANTS.length - 3), `${gen}.x: ${attacks.size} variants`);
          assert.equal(strict.get('gold')!.reward, 1, JSON.stringify(strict.get('gold')!.notes));
          assert.equal(strict.get('empty')!.reward, 0);
          assertHeldStrict(strict);
          assertHeldFaithful(faithful, { exitCodeChecked: true });
        } finally {
          await cleanup();
        }
      },
    );
  });
}
