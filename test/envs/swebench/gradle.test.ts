import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { swebenchSuite } from '../../../envs/swebench/index.ts';
import { GymError } from '../../../src/errors.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import type { Verdict } from '../../../src/scoring/verdict.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym, tempDir, TEST_CACHE_DIR } from '../../helpers.ts';
import { dockerSkipReason } from '../../sandbox/docker/skip.ts';
import { buildGradleFixture, type GradleFixture } from './gradle_fixture.ts';

/**
 * A Gradle instance through swebenchSuite, with the Debian `gradle` package (4.4.1, on JDK
 * 17): its wrapper's distribution cannot be had (a port nobody listens on), so without a
 * Gradle named it is ENV_UNAVAILABLE with that reason on both backends; with `gradle` named
 * (GymOptions.gradle, what --gradle sets) gold resolves and the empty patch does not.
 */
const gradleMissing = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v gradle'], { stdio: 'ignore' });
    return null;
  } catch {
    return 'no gradle on PATH (apt-get install -y gradle: Debian 4.4.1 builds the fixture on JDK 17)';
  }
})();

/** A URL on a local port that nobody listens on: refused at once. */
async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/distributions/gradle-8.5-bin.zip`;
}

const show = (v: Verdict) =>
  JSON.stringify(
    {
      status: v.status,
      error: v.error,
      f2p: v.failToPass,
      p2p: v.passToPass,
      notes: v.notes,
      tests: v.tests.map((t) => `${t.name} ${t.status}`),
    },
    null,
    1,
  );

describe('swe-bench-java: a Gradle instance', { skip: gradleMissing ?? false }, () => {
  let root: string;
  let fx: GradleFixture;
  let url: string;
  before(async () => {
    root = await tempDir('benchgym-swebench-gradle-');
    url = await deadUrl();
    fx = await buildGradleFixture(root, url);
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  const registryFor = () => {
    const registry = new SuiteRegistry([swebenchSuite({ reposDir: fx.reposDir, allowNetwork: false, specs: fx.specs })]);
    registry.enable(`swe-bench-java=${fx.dataset}`);
    return registry;
  };

  const assertUnavailable = (v: Verdict | Error) => {
    const text = v instanceof Error ? `${(v as GymError).code} ${v.message}` : `${v.error?.code} ${v.error?.message}`;
    assert.match(text, /ENV_UNAVAILABLE/, v instanceof Error ? v.message : show(v));
    assert.ok(text.includes(url), text);
    assert.match(text, /unreachable/);
    assert.match(text, /--gradle PATH/);
    assert.doesNotMatch(text, /ENV_BUILD_FAILED/);
  };

  it(
    'local: the wrapper distribution unreachable and no Gradle named: ENV_UNAVAILABLE naming the URL and --gradle',
    { timeout: 120_000 },
    async () => {
      const saved = process.env.BENCHGYM_GRADLE;
      delete process.env.BENCHGYM_GRADLE;
      const { gym, cleanup } = await makeGym({ registry: registryFor() });
      try {
        const task = await gym.registry.task('swe-bench-java', fx.instanceId);
        const started = Date.now();
        const v = await gym.score(task, fx.goldPatch).catch((err: Error) => err);
        assertUnavailable(v);
        assert.ok(Date.now() - started < 60_000, 'no hang on the distribution host');
      } finally {
        await cleanup();
        if (saved !== undefined) process.env.BENCHGYM_GRADLE = saved;
      }
    },
  );

  it('local: with the installed gradle named, gold resolves and the empty patch does not', { timeout: 15 * 60_000 }, async () => {
    const { gym, cleanup } = await makeGym({ registry: registryFor(), gradle: 'gradle' });
    try {
      const task = await gym.registry.task('swe-bench-java', fx.instanceId);
      const [gold, empty] = await Promise.all([gym.score(task, fx.goldPatch), gym.score(task, '')]);
      assert.equal(gold.reward, 1, show(gold));
      assert.deepEqual(gold.failToPass, { passed: fx.failToPass, failed: [] }, show(gold));
      assert.deepEqual(gold.passToPass, { passed: fx.passToPass, failed: [] }, show(gold));
      assert.ok(
        gold.notes.some((n) => /Gradle: gradle instead of the wrapper \(gradle-8\.5-bin\.zip\)/.test(n)),
        show(gold),
      );
      assert.equal(empty.status, 'failed', show(empty));
      assert.equal(empty.reward, 0);
      assert.deepEqual(empty.failToPass?.passed, [], show(empty));
      assert.deepEqual(empty.passToPass?.passed, fx.passToPass, show(empty));
    } finally {
      await cleanup();
    }
  });

  it(
    'docker: unreachable wrapper distribution, and a packaged (not copyable) gradle: ENV_UNAVAILABLE with the reason',
    { timeout: 10 * 60_000 },
    async (t) => {
      const skip = await dockerSkipReason();
      if (skip) return t.skip(skip);
      for (const gradle of [undefined, 'gradle']) {
        const sandboxes = new DockerSandboxFactory({
          serverId: `test-gradle-${process.pid}`,
          poolSize: 0,
          maxContainers: 4,
          images: { cacheDir: TEST_CACHE_DIR, ...(gradle ? { gradle } : {}) },
        });
        const { gym, cleanup } = await makeGym({ registry: registryFor(), sandboxes });
        try {
          const task = await gym.registry.task('swe-bench-java', fx.instanceId);
          const v = await gym.score(task, fx.goldPatch).catch((err: Error) => err);
          if (!gradle) assertUnavailable(v);
          else {
            const text = v instanceof Error ? `${(v as GymError).code} ${v.message}` : `${v.error?.code} ${v.error?.message}`;
            assert.match(text, /ENV_UNAVAILABLE.*cannot be copied into a Docker image.*not a self-contained distribution/s, text);
          }
        } finally {
          await cleanup();
        }
      }
    },
  );
});
