import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { relativeInside, resolveInWorkspace } from '../../src/sandbox/paths.ts';
import { expectGymError, tempDir } from '../helpers.ts';

describe('resolveInWorkspace', () => {
  let base: string;
  let ws: string;

  before(async () => {
    base = await tempDir('benchgym-paths-');
    ws = path.join(base, 'ws');
    await fs.mkdir(path.join(ws, 'pkg', 'sub'), { recursive: true });
    await fs.writeFile(path.join(ws, 'pkg', 'sub', 'mod.py'), 'x = 1\n');
    await fs.mkdir(path.join(base, 'ws-evil'));
    await fs.writeFile(path.join(base, 'ws-evil', 'file'), 'secret');
    await fs.writeFile(path.join(base, 'outside.txt'), 'secret');
    await fs.symlink('/', path.join(ws, 'root-link'));
    await fs.symlink(path.join(base, 'outside.txt'), path.join(ws, 'file-link'));
    await fs.symlink(path.join(base, 'ws-evil'), path.join(ws, 'dir-link'));
    await fs.symlink(path.join(base, 'not-there-yet.txt'), path.join(ws, 'dangling-out'));
    await fs.symlink('pkg/sub/mod.py', path.join(ws, 'inner-link'));
    await fs.symlink('pkg/sub/new.py', path.join(ws, 'dangling-in'));
    await fs.symlink('loop-b', path.join(ws, 'loop-a'));
    await fs.symlink('loop-a', path.join(ws, 'loop-b'));
  });

  after(async () => {
    await fs.rm(base, { recursive: true, force: true });
  });

  const outside: [string, string][] = [
    ['a relative path climbing out', '../../etc/passwd'],
    ['an absolute path elsewhere', '/etc/passwd'],
    ['a sibling directory sharing the prefix', '../ws-evil/file'],
    ['a path through a symlink to /', 'root-link/etc/passwd'],
    ['a non-existent path through a symlink to /', 'root-link/no/such/file'],
    ['a symlink to a file outside', 'file-link'],
    ['a file below a symlinked outside directory', 'dir-link/file'],
    ['a new file below a symlinked outside directory', 'dir-link/new-file'],
    ['a dangling symlink whose target is outside', 'dangling-out'],
    ['a climb that comes back in only by name', 'pkg/../../ws/../outside.txt'],
  ];
  for (const [what, userPath] of outside) {
    test(`rejects ${what} (${userPath})`, async () => {
      await expectGymError(resolveInWorkspace(ws, userPath), 'PATH_OUTSIDE_WORKSPACE');
    });
  }

  test('rejects the sibling-prefix directory given as an absolute path', async () => {
    await expectGymError(resolveInWorkspace(ws, path.join(base, 'ws-evil', 'file')), 'PATH_OUTSIDE_WORKSPACE');
  });

  test('nothing outside was created by the rejected calls', async () => {
    await assert.rejects(fs.lstat(path.join(base, 'not-there-yet.txt')), { code: 'ENOENT' });
  });

  test('accepts nested existing paths and gives a POSIX relative path', async () => {
    const r = await resolveInWorkspace(ws, 'pkg/sub/mod.py');
    assert.equal(r.rel, 'pkg/sub/mod.py');
    assert.equal(r.abs, path.join(await fs.realpath(ws), 'pkg', 'sub', 'mod.py'));
  });

  test('accepts non-existent files and directories inside', async () => {
    assert.equal((await resolveInWorkspace(ws, 'pkg/new_module.py')).rel, 'pkg/new_module.py');
    assert.equal((await resolveInWorkspace(ws, 'brand/new/dir/file.txt')).rel, 'brand/new/dir/file.txt');
  });

  test('normalizes ./ and inner .. that stay inside', async () => {
    assert.equal((await resolveInWorkspace(ws, './pkg/../pkg/sub/./mod.py')).rel, 'pkg/sub/mod.py');
  });

  test('the empty path and "." are the root', async () => {
    assert.equal((await resolveInWorkspace(ws, '')).rel, '');
    assert.equal((await resolveInWorkspace(ws, '.')).rel, '');
  });

  test('accepts an absolute path inside the workspace root', async () => {
    assert.equal((await resolveInWorkspace(ws, path.join(ws, 'pkg', 'sub', 'mod.py'))).rel, 'pkg/sub/mod.py');
  });

  test('accepts an absolute path under the display root (as commands see the workspace)', async () => {
    assert.equal((await resolveInWorkspace(ws, '/workspace/pkg/sub/mod.py', '/workspace')).rel, 'pkg/sub/mod.py');
    await expectGymError(resolveInWorkspace(ws, '/etc/passwd', '/workspace'), 'PATH_OUTSIDE_WORKSPACE');
  });

  test('accepts symlinks that stay inside, existing or dangling', async () => {
    assert.equal((await resolveInWorkspace(ws, 'inner-link')).rel, 'inner-link');
    assert.equal((await resolveInWorkspace(ws, 'dangling-in')).rel, 'dangling-in');
  });

  test('refuses a loop of symbolic links as an invalid path', async () => {
    await expectGymError(resolveInWorkspace(ws, 'loop-a'), 'INVALID_ARGUMENT', /loop/);
  });

  test('rejects a NUL byte as an invalid argument', async () => {
    await expectGymError(resolveInWorkspace(ws, 'pkg\0/x'), 'INVALID_ARGUMENT');
  });
});

describe('relativeInside', () => {
  test('compares by path components, not by string prefix', () => {
    assert.equal(relativeInside('/tmp/x/ws', '/tmp/x/ws-evil/file'), null);
    assert.equal(relativeInside('/tmp/x/ws', '/tmp/x/ws/a/b'), path.join('a', 'b'));
    assert.equal(relativeInside('/tmp/x/ws', '/tmp/x/ws'), '');
    assert.equal(relativeInside('/tmp/x/ws', '/tmp/x'), null);
  });

  test('a name that merely starts with two dots is inside', () => {
    assert.equal(relativeInside('/tmp/x/ws', '/tmp/x/ws/..hidden'), '..hidden');
  });
});
