import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { withDirLock } from '../../src/env/lock.ts';
import { tempDir } from '../helpers.ts';

test('a lock left without an owner (its maker died before writing its pid) is taken over after a minute', async () => {
  const dir = await tempDir();
  const lock = path.join(dir, 'x.lock');
  await fs.mkdir(lock);
  const old = new Date(Date.now() - 120_000);
  await fs.utimes(lock, old, old);
  const started = Date.now();
  assert.equal(await withDirLock(lock, async () => 'ran', { timeoutMs: 5_000 }), 'ran');
  assert.ok(Date.now() - started < 5_000);
  // A fresh ownerless lock is still waited for (its maker may be writing its pid right now).
  await fs.mkdir(lock);
  await assert.rejects(withDirLock(lock, async () => 'ran', { timeoutMs: 600 }), /timed out waiting for lock/);
  await fs.rm(dir, { recursive: true, force: true });
});
