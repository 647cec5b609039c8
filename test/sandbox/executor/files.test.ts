import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExecutorClient } from '../../../src/sandbox/executor/client.ts';
import { expectGymError } from '../../helpers.ts';
import { localExecutor } from './fixture.ts';

describe('executor: file operations', () => {
  let ex: ExecutorClient;
  let root: string;
  let outside: string;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ ex, root, cleanup } = await localExecutor());
    outside = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-executor-outside-'));
    await fs.writeFile(path.join(outside, 'secret.txt'), 'secret\n');
  });
  after(async () => {
    await cleanup();
    await fs.rm(outside, { recursive: true, force: true });
  });

  test('write makes the parents, read gives the bytes back', async () => {
    const data = Buffer.from([0, 1, 2, 255, 10, 0xe2, 0x82, 0xac]);
    await ex.write('a/b/c.bin', data);
    const r = await ex.read('a/b/c.bin');
    assert.deepEqual(r.data, data);
    assert.equal(r.size, data.length);
    assert.equal(r.truncated, false);
    assert.deepEqual(await fs.readFile(path.join(root, 'a/b/c.bin')), data);
    // An absolute path naming the root is accepted.
    assert.deepEqual((await ex.read(path.join(root, 'a/b/c.bin'))).data, data);
    await ex.write('empty.txt', '');
    assert.equal((await ex.read('empty.txt')).data.length, 0);
  });

  test('read stops at maxBytes and says so', async () => {
    await ex.write('big.txt', 'x'.repeat(10_000));
    const r = await ex.read('big.txt', { maxBytes: 100 });
    assert.equal(r.data.length, 100);
    assert.equal(r.size, 10_000);
    assert.equal(r.truncated, true);
  });

  test('write is atomic (a temporary file renamed), keeps or sets the mode, and can refuse to overwrite', async () => {
    await ex.write('run.sh', '#!/bin/sh\necho hi\n', { mode: 0o755 });
    assert.equal((await fs.stat(path.join(root, 'run.sh'))).mode & 0o777, 0o755);
    const inode = (await fs.stat(path.join(root, 'run.sh'))).ino;
    await ex.write('run.sh', '#!/bin/sh\necho again\n');
    const st = await fs.stat(path.join(root, 'run.sh'));
    assert.equal(st.mode & 0o777, 0o755, 'an overwrite keeps the mode');
    assert.notEqual(st.ino, inode, 'a new inode renamed over the old one');
    assert.equal((await ex.exec('./run.sh')).stdout, 'again\n');
    assert.deepEqual(
      (await fs.readdir(root)).filter((n) => n.includes('benchgym')),
      [],
      'no temporary file left',
    );
    await expectGymError(ex.write('run.sh', 'x', { exclusive: true }), 'FILE_EXISTS');
    await ex.write('fresh.txt', 'new', { exclusive: true });
    assert.equal(await fs.readFile(path.join(root, 'fresh.txt'), 'utf8'), 'new');
    await expectGymError(ex.write('a', 'x'), 'NOT_A_FILE');
    await expectGymError(ex.write('.', 'x'), 'NOT_A_FILE');
    await expectGymError(ex.write('fresh.txt/below', 'x'), 'NOT_A_DIRECTORY');
  });

  test('a write over the frame limit is refused before it is sent', async () => {
    await expectGymError(ex.write('huge.bin', Buffer.alloc(80 * 1024 * 1024)), 'FILE_TOO_LARGE');
    assert.equal((await ex.exec('echo ok')).stdout, 'ok\n', 'the channel still works');
  });

  test('stat: files, directories, links; null when missing', async () => {
    await ex.write('s/file.txt', 'hello');
    await fs.symlink('file.txt', path.join(root, 's/link'));
    const f = await ex.stat('s/file.txt');
    assert.equal(f?.type, 'file');
    assert.equal(f?.size, 5);
    assert.ok(f!.mtimeMs > Date.now() - 60_000);
    assert.equal((await ex.stat('s'))?.type, 'dir');
    assert.equal((await ex.stat('s/link'))?.type, 'symlink');
    assert.equal((await ex.stat('s/link', { follow: true }))?.type, 'file');
    assert.equal(await ex.stat('s/missing'), null);
    assert.equal(await ex.stat('s/file.txt/below'), null);
  });

  test('list: breadth-first, depth, limit, .git skipped, links listed not followed', async () => {
    await ex.write('l/x.txt', '1');
    await ex.write('l/sub/y.txt', '22');
    await ex.write('l/sub/deep/z.txt', '333');
    await ex.write('l/.git/HEAD', 'ref');
    await fs.symlink(outside, path.join(root, 'l/out'));
    const one = await ex.list('l');
    assert.deepEqual(one.entries, [
      { path: 'l/out', type: 'symlink', size: 0 },
      { path: 'l/sub', type: 'dir', size: 0 },
      { path: 'l/x.txt', type: 'file', size: 1 },
    ]);
    assert.equal(one.truncated, false);
    const all = await ex.list('l', { depth: 5 });
    assert.deepEqual(
      all.entries.map((e) => e.path),
      ['l/out', 'l/sub', 'l/x.txt', 'l/sub/deep', 'l/sub/y.txt', 'l/sub/deep/z.txt'],
    );
    const limited = await ex.list('l', { depth: 5, limit: 2 });
    assert.equal(limited.entries.length, 2);
    assert.equal(limited.truncated, true);
    assert.ok((await ex.list('l', { skip: [] })).entries.some((e) => e.path === 'l/.git'));
    assert.ok((await ex.list('.')).entries.some((e) => e.path === 'l'));
    await expectGymError(ex.list('l/x.txt'), 'NOT_A_DIRECTORY');
    await expectGymError(ex.list('nowhere'), 'FILE_NOT_FOUND');
  });

  test('remove: a file, a link (never its target), a tree; never the root', async () => {
    await ex.write('r/t/a.txt', 'a');
    await ex.write('r/t/u/b.txt', 'b');
    await fs.symlink(outside, path.join(root, 'r/t/u/out'));
    await fs.symlink(outside, path.join(root, 'r/link'));
    assert.equal(await ex.remove('r/link'), true);
    assert.ok(existsSync(path.join(outside, 'secret.txt')));
    assert.equal(await ex.remove('r/t'), true);
    assert.ok(!existsSync(path.join(root, 'r/t')));
    assert.ok(existsSync(path.join(outside, 'secret.txt')), 'a link inside the tree went, not what it points to');
    assert.equal(await ex.remove('r/t'), false);
    await expectGymError(ex.remove('.'), 'INVALID_ARGUMENT');
    await expectGymError(ex.remove(''), 'INVALID_ARGUMENT');
  });

  test('paths outside the workspace are refused', async () => {
    for (const p of ['../x', 'a/../../x', '/etc/passwd', `${root}/../x`]) {
      await expectGymError(ex.read(p), 'PATH_OUTSIDE_WORKSPACE');
      await expectGymError(ex.write(p, 'x'), 'PATH_OUTSIDE_WORKSPACE');
      await expectGymError(ex.stat(p), 'PATH_OUTSIDE_WORKSPACE');
      await expectGymError(ex.list(p), 'PATH_OUTSIDE_WORKSPACE');
      await expectGymError(ex.remove(p), 'PATH_OUTSIDE_WORKSPACE');
    }
    await expectGymError(ex.read('a\0b'), 'INVALID_ARGUMENT');
  });

  test('symbolic links out are not followed, links inside are', async () => {
    await fs.symlink(outside, path.join(root, 'dirout'));
    await fs.symlink(path.join(outside, 'secret.txt'), path.join(root, 'fileout'));
    await fs.symlink('../../..' + outside, path.join(root, 'relout'));
    await ex.write('in/real.txt', 'inside');
    await fs.symlink('in/real.txt', path.join(root, 'inlink'));
    await fs.symlink(path.join(root, 'in'), path.join(root, 'abslink'));
    for (const p of ['dirout/secret.txt', 'fileout', 'relout/secret.txt']) {
      await expectGymError(ex.read(p), 'PATH_OUTSIDE_WORKSPACE');
      await expectGymError(ex.write(p, 'pwned'), 'PATH_OUTSIDE_WORKSPACE');
    }
    await expectGymError(ex.write('dirout/new.txt', 'pwned'), 'PATH_OUTSIDE_WORKSPACE');
    await expectGymError(ex.list('dirout'), 'PATH_OUTSIDE_WORKSPACE');
    await expectGymError(ex.stat('fileout'), 'PATH_OUTSIDE_WORKSPACE');
    assert.equal(await fs.readFile(path.join(outside, 'secret.txt'), 'utf8'), 'secret\n');
    assert.ok(!existsSync(path.join(outside, 'new.txt')));
    assert.equal((await ex.read('inlink')).data.toString(), 'inside');
    assert.equal((await ex.read('abslink/real.txt')).data.toString(), 'inside');
    await ex.write('inlink', 'through the link');
    assert.equal(await fs.readFile(path.join(root, 'in/real.txt'), 'utf8'), 'through the link');
    assert.equal((await fs.lstat(path.join(root, 'inlink'))).isSymbolicLink(), true, 'the link stays a link');
    await expectGymError(ex.exec('pwd', { cwd: 'dirout' }), 'PATH_OUTSIDE_WORKSPACE');
  });

  test('FIFOs, devices and hard links are refused without blocking', async () => {
    execFileSync('mkfifo', [path.join(root, 'fifo')]);
    const started = Date.now();
    await expectGymError(ex.read('fifo'), 'NOT_A_FILE', /FIFO/);
    await expectGymError(ex.write('fifo', 'x'), 'NOT_A_FILE');
    assert.ok(Date.now() - started < 2000);
    await fs.symlink('/dev/zero', path.join(root, 'dev'));
    await expectGymError(ex.read('dev'), 'PATH_OUTSIDE_WORKSPACE');
    await fs.writeFile(path.join(root, 'one.txt'), 'one');
    await fs.link(path.join(root, 'one.txt'), path.join(root, 'two.txt'));
    await expectGymError(ex.read('two.txt'), 'PATH_OUTSIDE_WORKSPACE', /hard link/);
  });
});
