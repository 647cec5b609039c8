import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionTable } from '../../src/server/sessions.ts';
import { GymError } from '../../src/errors.ts';

test('new sessions past the burst are refused at the rate, with CAPACITY naming it, and allowed again as time passes', async () => {
  const table = new SessionTable<string>({ idleMs: 60_000, max: 1000, newPerSecond: 10, burst: 5 }, () => {});
  try {
    const now = Date.now() + 1;
    for (let i = 0; i < 5; i++) table.reserve(now)();
    assert.throws(
      () => table.reserve(now),
      (err: unknown) => err instanceof GymError && err.code === 'CAPACITY' && /at most 10 a second after a burst of 5/.test(err.message),
    );
    // A tenth of a second later one token is back, and only one.
    table.reserve(now + 100)();
    assert.throws(
      () => table.reserve(now + 100),
      (err: unknown) => err instanceof GymError && err.code === 'CAPACITY',
    );
    // A refused request costs no token: after a second the full burst is back, never more.
    for (let i = 0; i < 5; i++) table.reserve(now + 2000)();
    assert.throws(
      () => table.reserve(now + 2000),
      (err: unknown) => err instanceof GymError && err.code === 'CAPACITY',
    );
  } finally {
    await table.close();
  }
});

test('the open-session cap refuses without using up the rate', async () => {
  const table = new SessionTable<string>({ idleMs: 60_000, max: 2, newPerSecond: 1, burst: 3 }, () => {});
  try {
    const now = Date.now() + 1;
    table.add('a', 'a');
    table.add('b', 'b');
    assert.throws(
      () => table.reserve(now),
      (err: unknown) => err instanceof GymError && /are open, the most this server allows \(2\)/.test(err.message),
    );
    table.delete('a');
    table.delete('b');
    for (let i = 0; i < 3; i++) table.reserve(now)();
  } finally {
    await table.close();
  }
});
