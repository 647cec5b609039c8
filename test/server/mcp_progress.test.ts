import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Gym } from '../../src/episode/gym.ts';
import { withHeartbeat } from '../../src/episode/heartbeat.ts';
import { mcpOverHttp, testContext } from '../helpers.ts';

type Note = { progress: number; total?: number; message?: string };

/** What a progress bar needs: values that only grow, a total never below the value, a message on each. */
function assertBarShaped(notes: Note[]): void {
  assert.ok(notes.length > 0, 'progress was reported');
  for (let i = 0; i < notes.length; i++) {
    const n = notes[i]!;
    if (i > 0) assert.ok(n.progress > notes[i - 1]!.progress, `progress grows: ${JSON.stringify(notes)}`);
    if (n.total !== undefined) assert.ok(n.progress <= n.total, `progress within total: ${JSON.stringify(n)}`);
    assert.ok(n.message, `a message on each: ${JSON.stringify(n)}`);
  }
}

let gym: Gym;
let client: Client;
let close: () => Promise<void>;
before(async () => {
  ({ gym, client, close } = await mcpOverHttp('benchgym-progress-test'));
});
after(() => close());

test('start_episode over MCP: progress of a known total (3 steps), growing, with messages, ending at the total', async () => {
  const notes: Note[] = [];
  const r = await client.callTool({ name: 'start_episode', arguments: { task_id: 'roman-numerals' } }, undefined, {
    onprogress: (p) => notes.push(p),
  });
  assert.notEqual(r.isError, true);
  assertBarShaped(notes);
  assert.ok(
    notes.every((n) => n.total === 3),
    JSON.stringify(notes),
  );
  assert.deepEqual(notes.at(-1), { progress: 3, total: 3, message: 'ready' });
});

test('heartbeats creep within a step without reaching the next, keep the total, and say the seconds', async () => {
  const notes: Note[] = [];
  const ctx = {
    ...testContext(),
    progress: (progress: number, total?: number, message?: string) => notes.push({ progress, total, message }),
  };
  await withHeartbeat(
    ctx,
    'slow_tool',
    async (c) => {
      c.progress(0, 2, 'first half');
      await sleep(150);
      c.progress(1, undefined, 'second half');
      await sleep(150);
    },
    20,
  );
  assertBarShaped(notes);
  const firstStep = notes.slice(
    0,
    notes.findIndex((n) => n.message === 'second half'),
  );
  assert.ok(firstStep.length >= 3, `heartbeats in the first step: ${JSON.stringify(notes)}`);
  assert.ok(
    firstStep.every((n) => n.progress < 1 && n.total === 2),
    JSON.stringify(firstStep),
  );
  assert.ok(
    notes.every((n) => n.total === 2),
    'the total, once known, stays',
  );
  assert.ok(
    notes.some((n) => /^second half \(\d+ s\)$/.test(n.message!)),
    JSON.stringify(notes),
  );
});

test('a tool reporting no steps still gets growing heartbeats with its name and the seconds, and no total', async () => {
  const notes: Note[] = [];
  const ctx = {
    ...testContext(),
    progress: (progress: number, total?: number, message?: string) => notes.push({ progress, total, message }),
  };
  await withHeartbeat(ctx, 'run_command', () => sleep(120), 20);
  assertBarShaped(notes);
  assert.ok(notes.length >= 3);
  assert.ok(
    notes.every((n) => n.total === undefined && /^run_command running \(\d+ s\)$/.test(n.message!)),
    JSON.stringify(notes),
  );
});
