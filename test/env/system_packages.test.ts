import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { PythonEnvBuilder } from '../../src/env/python.ts';
import { aptInstallLine, missingOnHost, requireOnHost, unknownAptPackages } from '../../src/env/system_packages.ts';
import { PythonEnvSpec } from '../../src/tasks/schema.ts';
import { expectGymError, tempDir } from '../helpers.ts';

const DPKG = existsSync('/usr/bin/dpkg-query')
  ? null
  : 'this host has no dpkg-query (not Debian-based): the host check is only a note here';

test('env specs name system packages by their Debian names; anything else is refused naming the field', () => {
  assert.deepEqual(PythonEnvSpec.parse({ kind: 'python', systemPackages: ['libmagic1', 'libstdc++6'] }).systemPackages, [
    'libmagic1',
    'libstdc++6',
  ]);
  const bad = PythonEnvSpec.safeParse({ kind: 'python', systemPackages: ['libmagic1; rm -rf /'] });
  assert.equal(bad.success, false);
  assert.deepEqual(bad.error!.issues[0]!.path, ['systemPackages', 0]);
  assert.match(bad.error!.issues[0]!.message, /Debian package name/);
});

test('the apt line installs exactly the named packages, and apt-get saying it does not know one is read back', () => {
  assert.match(aptInstallLine(['libmagic1', 'libxml2']), /apt-get install -y -qq --no-install-recommends libmagic1 libxml2 /);
  const log =
    "E: Unable to locate package benchgym-nope\nE: Package 'libfoo0' has " +
    'no installation candidate\nE: Unable to locate package benchgym-nope';
  assert.deepEqual(unknownAptPackages(log), ['benchgym-nope', 'libfoo0']);
  assert.deepEqual(unknownAptPackages('Reading package lists...'), []);
  // A coloured error (apt's colours reach a build log) gives the bare name.
  assert.deepEqual(unknownAptPackages('\x1b[1;31mE: \x1b[0mUnable to locate package benchgym-nope\x1b[0m\n'), ['benchgym-nope']);
});

test('on the local backend a system package the host lacks makes the env unavailable, naming it; installed ones pass', async (t) => {
  if (DPKG) return t.skip(DPKG);
  assert.deepEqual(await missingOnHost(['libc6', 'benchgym-no-such-package']), ['benchgym-no-such-package']);
  assert.deepEqual(await missingOnHost([]), []);
  const notes: string[] = [];
  await requireOnHost(['libc6'], notes);
  assert.deepEqual(notes, []);
  await expectGymError(
    requireOnHost(['benchgym-no-such-package'], notes),
    'ENV_UNAVAILABLE',
    /system package benchgym-no-such-package, not installed on this host .*apt-get install benchgym-no-such-package/,
  );
  // Through the env builder: refused before anything is built.
  const cache = await tempDir('benchgym-syspkg-');
  const builder = new PythonEnvBuilder(cache);
  await expectGymError(
    builder.prepare(PythonEnvSpec.parse({ kind: 'python', systemPackages: ['benchgym-no-such-package'] })),
    'ENV_UNAVAILABLE',
    /benchgym-no-such-package/,
  );
  assert.equal(existsSync(`${cache}/envs`), false);
});
