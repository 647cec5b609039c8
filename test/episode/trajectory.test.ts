import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { MAX_LINE_CHARS, Trajectory } from '../../src/episode/trajectory.ts';
import { tempDir } from '../helpers.ts';

async function lines(t: Trajectory): Promise<string[]> {
  await t.flush();
  return (await fs.readFile(t.file, 'utf8')).split('\n').filter(Boolean);
}

test('every trajectory line is capped: a 50 MB observation, 50 MB arguments, a 30 MB diff are stored cut with a note', async () => {
  const dir = await tempDir();
  try {
    const t = await Trajectory.open(dir, 'ep-cap', { suite: 'examples' });
    const big = 'x'.repeat(50 * 1024 * 1024);
    t.append({ type: 'step', step: 1, tool: 'run_command', args: { command: 'cat big' }, ok: true, observation: big });
    t.append({
      type: 'step',
      step: 2,
      tool: 'create_file',
      args: { path: 'big.txt', content: big },
      ok: true,
      observation: 'Created big.txt',
    });
    t.append({ type: 'verdict', verdict: { reward: 0, notes: ['n'] }, diff: 'd'.repeat(30 * 1024 * 1024) });
    t.append({ type: 'step', step: 3, tool: 'odd', args: { many: Array.from({ length: 3_000_000 }, (_, i) => i) }, ok: true });
    t.append({ type: 'step', step: 4, tool: 'view_file', args: { path: 'a.py' }, ok: true, observation: 'small' });
    const [header, observed, created, verdict, odd, small] = await lines(t);
    for (const line of [header, observed, created, verdict, odd, small])
      assert.ok(line!.length <= MAX_LINE_CHARS, `a line of ${line!.length} characters`);
    assert.match(JSON.parse(observed!).observation, /\[\.\.\. cut at 65536 characters in the trajectory\]$/);
    const c = JSON.parse(created!);
    assert.equal(c.args.path, 'big.txt');
    assert.match(c.args.content, new RegExp(`\\[\\.\\.\\. cut at \\d+ of ${big.length} characters in the trajectory\\]$`));
    const v = JSON.parse(verdict!);
    assert.equal(v.verdict.reward, 0);
    assert.match(v.diff, /cut at \d+ of 31457280 characters/);
    const o = JSON.parse(odd!);
    assert.equal(o.tool, 'odd');
    assert.match(o.truncated, /only its scalar fields are kept/);
    assert.deepEqual(JSON.parse(small!), {
      type: 'step',
      step: 4,
      tool: 'view_file',
      args: { path: 'a.py' },
      ok: true,
      observation: 'small',
    });
    assert.equal(path.basename(t.file), 'ep-cap.jsonl');
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
