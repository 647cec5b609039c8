import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { packTar, unpackTar } from '../../src/env/tar.ts';
import { GymError } from '../../src/errors.ts';

test('packTar writes archives GNU tar reads, long names included; unpackTar reads them back', async () => {
  const long = `${'deep/'.repeat(30)}file.txt`;
  const files = { 'a.txt': 'alpha\n', 'dir/b.bin': Buffer.from([0, 1, 2, 255]), [long]: 'long name\n' };
  const archive = packTar(files);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-tar-'));
  try {
    await fs.writeFile(path.join(dir, 'x.tar'), archive);
    const listed = execFileSync('tar', ['-tf', path.join(dir, 'x.tar')], { encoding: 'utf8' })
      .trim()
      .split('\n');
    assert.deepEqual(listed.sort(), Object.keys(files).sort());
    execFileSync('tar', ['-xf', 'x.tar'], { cwd: dir });
    assert.equal(await fs.readFile(path.join(dir, long), 'utf8'), 'long name\n');
    // And archives GNU tar writes (with directories) read back entry by entry.
    const gnu = execFileSync('tar', ['-cf', '-', 'a.txt', 'dir', 'deep'], { cwd: dir });
    const entries = unpackTar(gnu);
    assert.deepEqual(entries.find((e) => e.path === 'dir/b.bin')?.data, Buffer.from([0, 1, 2, 255]));
    assert.ok(entries.some((e) => e.path === long && e.data.toString() === 'long name\n'));
    assert.ok(entries.some((e) => e.path === 'dir' && e.type === 'dir'));
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('unpackTar refuses entries that would leave the destination: .., absolute paths, links', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-tar-'));
  try {
    await fs.writeFile(path.join(dir, 'f'), 'x');
    await fs.symlink('/etc/passwd', path.join(dir, 'link'));
    const withLink = execFileSync('tar', ['-cf', '-', 'f', 'link'], { cwd: dir });
    assert.throws(
      () => unpackTar(withLink),
      (e: unknown) => e instanceof GymError && /link entry 'link'/.test(e.message),
    );
    const dotdot = execFileSync('tar', ['-cf', '-', '-P', '--transform', 's,^f$,../escape,', 'f'], { cwd: dir });
    assert.throws(() => unpackTar(dotdot), /unsafe path '\.\.\/escape'/);
    const absolute = execFileSync('tar', ['-cf', '-', '-P', '--transform', 's,^f$,/etc/evil,', 'f'], { cwd: dir });
    assert.throws(() => unpackTar(absolute), /unsafe path '\/etc\/evil'/);
    assert.throws(() => packTar({ '../x': 'y' }), /unsafe path/);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
