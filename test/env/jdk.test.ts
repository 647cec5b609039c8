import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { chooseJdk, installedJdks } from '../../src/env/jdk.ts';
import { tempDir } from '../helpers.ts';

test(
  'JDKs are found by their release file (links counted once) and ' + 'chosen: exact, else the nearest newer, else the nearest older',
  async () => {
    const root = await tempDir('benchgym-jdks-');
    try {
      const jdk = async (name: string, version: string | null) => {
        await fs.mkdir(path.join(root, name, 'bin'), { recursive: true });
        await fs.writeFile(path.join(root, name, 'bin', 'javac'), '');
        if (version) await fs.writeFile(path.join(root, name, 'release'), `IMPLEMENTOR="x"\nJAVA_VERSION="${version}"\n`);
      };
      await jdk('java-17-openjdk', '17.0.15');
      await fs.symlink(path.join(root, 'java-17-openjdk'), path.join(root, 'java-1.17.0-openjdk'));
      await jdk('temurin-25', '25.0.3');
      await jdk('jdk8', '1.8.0_392');
      await jdk('broken', null);
      await fs.mkdir(path.join(root, 'jre-only'));
      const found = await installedJdks([root]);
      assert.deepEqual(
        found.map((j) => j.major),
        ['8', '17', '25'],
      );
      assert.equal(chooseJdk('17', found)!.home, path.join(root, 'java-17-openjdk'));
      assert.equal(chooseJdk('11', found)!.major, '17', 'the nearest newer JDK');
      assert.equal(chooseJdk('21', found)!.major, '25');
      assert.equal(chooseJdk('8', found)!.major, '8');
      assert.equal(chooseJdk('26', found)!.major, '25', 'none newer: the nearest older');
      assert.equal(chooseJdk('17', []), null);
      assert.deepEqual(await installedJdks([path.join(root, 'missing')]), []);
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  },
);
