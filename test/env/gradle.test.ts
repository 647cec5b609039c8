import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  classifyGradleLog,
  planGradle,
  probeDistribution,
  readsReadOnlyCache,
  resolveGivenGradle,
  wrapperDistributionCached,
  wrapperDistributionUrl,
  wrapperDistHash,
} from '../../src/env/gradle.ts';
import { GymError } from '../../src/errors.ts';
import { tempDir } from '../helpers.ts';

/** Choosing a Gradle: the user's, the wrapper when its distribution can be had, else ENV_UNAVAILABLE. No Gradle runs here. */
describe('env: Gradle selection', () => {
  let root: string;
  let cache: string;
  let home: string;
  const saved = process.env.BENCHGYM_GRADLE;
  before(async () => {
    delete process.env.BENCHGYM_GRADLE;
    root = await tempDir('benchgym-gradle-unit-');
    cache = path.join(root, 'cache');
    home = path.join(cache, 'gradle');
  });
  after(async () => {
    if (saved !== undefined) process.env.BENCHGYM_GRADLE = saved;
    await fs.rm(root, { recursive: true, force: true });
  });

  const project = async (name: string, url?: string) => {
    const dir = path.join(root, name);
    await fs.mkdir(path.join(dir, 'gradle', 'wrapper'), { recursive: true });
    if (url !== undefined) {
      await fs.writeFile(path.join(dir, 'gradlew'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
      await fs.writeFile(path.join(dir, 'gradle', 'wrapper', 'gradle-wrapper.properties'), `distributionUrl=${url.replace(/:/g, '\\:')}\n`);
    }
    return dir;
  };
  const distribution = async (name: string) => {
    const dir = path.join(root, name);
    await fs.mkdir(path.join(dir, 'bin'), { recursive: true });
    await fs.mkdir(path.join(dir, 'lib'), { recursive: true });
    await fs.writeFile(path.join(dir, 'bin', 'gradle'), '#!/bin/sh\n', { mode: 0o755 });
    await fs.writeFile(path.join(dir, 'lib', 'gradle-launcher-8.5.jar'), 'jar');
    return dir;
  };

  it('reads the wrapper URL, undoing properties escapes; finds a distribution the wrapper unpacked', async () => {
    const url = 'https://services.gradle.org/distributions/gradle-8.5-bin.zip';
    const dir = await project('p1', url);
    assert.equal(await wrapperDistributionUrl(dir), url);
    assert.equal(await wrapperDistributionCached(home, url), false);
    const at = path.join(home, 'wrapper', 'dists', 'gradle-8.5-bin', wrapperDistHash(url));
    await fs.mkdir(at, { recursive: true });
    await fs.writeFile(path.join(at, 'gradle-8.5-bin.zip.ok'), '');
    assert.equal(await wrapperDistributionCached(home, url), true);
    assert.deepEqual(await planGradle(dir, { userHome: home, cacheDir: cache }), {
      kind: 'wrapper',
      command: './gradlew',
      distributionUrl: url,
      notes: [],
    });
    assert.match(wrapperDistHash(url), /^[0-9a-z]+$/);
  });

  it(
    'an unreachable wrapper distribution and no Gradle named: ' + 'ENV_UNAVAILABLE naming the URL, the reason and the option, quickly',
    async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as { port: number }).port;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const url = `http://127.0.0.1:${port}/distributions/gradle-7.6-bin.zip`;
      const dir = await project('p2', url);
      const started = Date.now();
      const err = await planGradle(dir, { userHome: home, cacheDir: cache }).catch((e: unknown) => e);
      assert.ok(err instanceof GymError);
      assert.equal(err.code, 'ENV_UNAVAILABLE');
      assert.ok(err.message.includes(url), err.message);
      assert.match(err.message, /unreachable from this machine \(ECONNREFUSED\)/);
      assert.match(err.message, /--gradle PATH .* or BENCHGYM_GRADLE/);
      assert.ok(Date.now() - started < 10_000);
    },
  );

  it('a reachable wrapper distribution: the wrapper', async () => {
    const server = createServer((_req, res) => res.writeHead(200).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/gradle-8.1-bin.zip`;
      assert.equal(await probeDistribution(url), null);
      const plan = await planGradle(await project('p3', url), { userHome: home, cacheDir: cache });
      assert.equal(plan.kind, 'wrapper');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('a named distribution directory, or a zip of one, replaces the wrapper; bad names are refused', async () => {
    const dist = await distribution('dist/gradle-8.5');
    const dir = await project('p4', 'http://127.0.0.1:9/gradle-8.5-bin.zip');
    for (const given of [dist, path.dirname(dist)]) {
      const plan = await planGradle(dir, { userHome: home, cacheDir: cache, gradle: given });
      assert.equal(plan.kind, 'given');
      assert.equal(plan.command, path.join(dist, 'bin', 'gradle'));
      assert.equal(plan.given?.home, dist);
      assert.match(plan.notes[0]!, /instead of the wrapper \(gradle-8\.5-bin\.zip\)/);
    }
    const zip = path.join(root, 'gradle-8.5-bin.zip');
    const { execFileSync } = await import('node:child_process');
    execFileSync('zip', ['-qr', zip, 'gradle-8.5'], { cwd: path.dirname(dist) });
    const fromZip = await resolveGivenGradle(zip, cache);
    assert.ok(fromZip.home?.startsWith(path.join(cache, 'gradle-dists')), JSON.stringify(fromZip));
    assert.equal(fromZip.command, path.join(fromZip.home!, 'bin', 'gradle'));
    process.env.BENCHGYM_GRADLE = dist;
    try {
      assert.equal((await planGradle(dir, { userHome: home, cacheDir: cache })).kind, 'given');
    } finally {
      delete process.env.BENCHGYM_GRADLE;
    }
    await assert.rejects(resolveGivenGradle(path.join(root, 'nope'), cache), /INVALID_ARGUMENT|does not exist/);
    await assert.rejects(resolveGivenGradle(root, cache), /not a Gradle distribution/);
    await assert.rejects(resolveGivenGradle('no-such-gradle-command', cache), /no such command on PATH/);
  });

  it('a packaged Gradle whose jars link outside it runs here but cannot be copied into an image', async () => {
    const shared = path.join(root, 'share-java');
    await fs.mkdir(shared, { recursive: true });
    await fs.writeFile(path.join(shared, 'gradle-launcher-4.4.1.jar'), 'jar');
    const pkg = path.join(root, 'pkg', 'gradle');
    await fs.mkdir(path.join(pkg, 'bin'), { recursive: true });
    await fs.mkdir(path.join(pkg, 'lib'), { recursive: true });
    await fs.writeFile(path.join(pkg, 'bin', 'gradle'), '#!/bin/sh\n', { mode: 0o755 });
    await fs.symlink(path.join(shared, 'gradle-launcher-4.4.1.jar'), path.join(pkg, 'lib', 'gradle-launcher-4.4.1.jar'));
    const link = path.join(root, 'usr-bin-gradle');
    await fs.symlink(path.join(pkg, 'bin', 'gradle'), link);
    const given = await resolveGivenGradle(link, cache);
    assert.equal(given.command, link);
    assert.equal(given.home, undefined);
    assert.match(given.notPortable ?? '', /not a self-contained distribution/);
  });

  it('classifies env build logs: distribution fetch and version mismatch are unavailable, compile errors are build failures', () => {
    const given = {
      kind: 'given' as const,
      command: '/usr/bin/gradle',
      distributionUrl: 'https://services.gradle.org/distributions/gradle-7.6-bin.zip',
      given: { given: 'gradle', command: '/usr/bin/gradle' },
    };
    const mismatch = classifyGradleLog(
      "FAILURE: Build failed with an exception.\n\n* What went wrong:\nPlugin [id: 'com.github.ben-manes.versions', " +
        "version: '0.42.0'] was not found in any of the following sources:\n\n* Try:\n",
      given,
    );
    assert.equal(mismatch?.code, 'ENV_UNAVAILABLE');
    assert.match(mismatch!.message, /cannot configure this project \(its wrapper asks for Gradle 7\.6\)/);
    const fetch = classifyGradleLog(
      'Downloading https://services.gradle.org/distributions/gradle-7.6-bin.zip\nException in thread ' +
        '"main" java.net.UnknownHostException: services.gradle.org\n\tat org.gradle.wrapper.Download.download',
      { kind: 'wrapper', command: './gradlew', distributionUrl: given.distributionUrl },
    );
    assert.equal(fetch?.code, 'ENV_UNAVAILABLE');
    const compile = classifyGradleLog(
      "> Task :compileJava FAILED\nFoo.java:3: error: ';' expected\n* What went wrong:\nExecution failed " +
        "for task ':compileJava'.\n> Compilation failed; see the compiler error output for details.\n",
      given,
    );
    assert.equal(compile?.code, 'ENV_BUILD_FAILED');
    assert.equal(
      classifyGradleLog(
        "3 tests completed, 1 failed\n:test FAILED\n* What went wrong:\nExecution failed for task ':test'.\n> There were failing tests.",
        given,
      ),
      null,
    );
  });

  it('Gradle 6.2 on reads a read-only dependency cache; older ones get a copy', () => {
    assert.equal(readsReadOnlyCache('4.4.1'), false);
    assert.equal(readsReadOnlyCache('6.1.1'), false);
    assert.equal(readsReadOnlyCache('6.2'), true);
    assert.equal(readsReadOnlyCache('8.5'), true);
    assert.equal(readsReadOnlyCache(undefined), false);
  });
});
