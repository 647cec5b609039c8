import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MavenEnvBuilder, WARM_TIMED_OUT } from '../../src/env/maven.ts';
import { INFRA_CODES, type GymError } from '../../src/errors.ts';
import { JavaEnvSpec } from '../../src/tasks/schema.ts';
import { haveMaven, makeWarmSeed, warmHelpers } from './maven_fixture.ts';

/**
 * The Maven env warm-up's time limit, apart from maven.test.ts because each case waits out a limit of
 * minutes (a test that never ends): in a file of its own it runs beside the others.
 */
describe('MavenEnvBuilder: a warm-up that does not end', { skip: haveMaven ? false : 'mvn and javac are not installed' }, () => {
  let root: string;
  let seed: string;
  let builder: MavenEnvBuilder;
  before(async () => ({ root, seed, builder } = await makeWarmSeed()));
  after(() => fs.rm(root, { recursive: true, force: true }));
  const { seedWithHangTest, assertOfflineRun, marker } = warmHelpers(() => ({ root, seed }));

  test(
    'a warm-up stopped at its limit is an infrastructure error, not a ready env; ' +
      'the next prepare goes on from what it kept and the env is usable offline',
    async () => {
      // A test that hangs on its first run only (a race, as dubbo's file-watch test): the next attempt passes it.
      const hang = await seedWithHangTest('hang', path.join(root, 'hung-once'));
      const limited = new MavenEnvBuilder(path.join(root, 'cache'), 300_000);
      const spec = JavaEnvSpec.parse({ kind: 'java', warmTests: ['org.acme.HangTest'] });
      const started = Date.now();
      await assert.rejects(limited.prepare(spec, { dir: hang }), (err: GymError) => {
        assert.equal(err.code, 'ENV_BUILD_FAILED');
        assert.ok(INFRA_CODES.has(err.code), 'an infrastructure failure');
        assert.match(
          err.message,
          new RegExp(
            `^${WARM_TIMED_OUT}: .* did not end within 300 s; what it fetched stays in ` +
              `the Maven repository and its build in .*: the next run goes on from there`,
          ),
        );
        return true;
      });
      assert.ok(Date.now() - started < 420_000, `the warm-up ended at its limit (${Date.now() - started} ms)`);
      const envs = path.join(root, 'cache', 'envs');
      // The folder holds the envs of the earlier tests too: this one is the env whose build was stopped.
      const names = await fs.readdir(envs);
      const kept = names.find((n) => n.endsWith('.ready.work'));
      assert.ok(kept, `the stopped build is kept: ${names.join(', ')}`);
      const stopped = kept.slice(0, -'.work'.length);
      assert.ok(!names.includes(stopped), `the stopped env is not marked ready: ${names.join(', ')}`);
      // The next prepare (a fresh builder, as the next run is) goes on from the kept build.
      const again = await new MavenEnvBuilder(path.join(root, 'cache'), 300_000).prepare(spec, { dir: hang });
      assert.equal((await marker(again.key)).ran, 'the warm-up tests, resumed after a warm-up stopped at its limit');
      assert.ok(!(await fs.readdir(envs)).some((n) => n.endsWith('.work')), 'the kept build is gone once the env is ready');
      await assertOfflineRun(limited, hang, 'work-hang');
    },
  );

  test(
    "warmArgs (a spec's warm-up only): one test instead of a " + 'whole suite that would not end; another env, usable offline',
    async () => {
      const hang = await seedWithHangTest('hang-args');
      // The limit is reached only if HangTest runs (the failure this checks); a loaded machine's Maven needs minutes for ATest alone.
      const limited = new MavenEnvBuilder(path.join(root, 'cache'), 300_000);
      // The warm-up tests are all new (the whole suite, HangTest with it, would run): warmArgs name one test instead.
      const warmArgs = ['-Dtest=org.acme.ATest', '-Dsurefire.failIfNoSpecifiedTests=false', '-DfailIfNoTests=false'];
      const env = await limited.prepare(JavaEnvSpec.parse({ kind: 'java', warmTests: ['org.acme.NewTest'], warmArgs }), { dir: hang });
      assert.equal((await marker(env.key)).ran, `the whole suite (none of the warm-up tests exists yet), with ${warmArgs.join(' ')}`);
      const plain = await builder.prepare(JavaEnvSpec.parse({ kind: 'java', warmTests: ['org.acme.NewTest'] }), { dir: seed });
      assert.notEqual(env.key, plain.key, 'warmArgs are part of the key');
      await assertOfflineRun(limited, hang, 'work-args');
    },
  );
});
