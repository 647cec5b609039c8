import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { test } from 'node:test';
import { fileTimesReporter, type FileTime } from './file_times.mjs';
import { tempDir } from '../helpers.ts';

type Event = { type: string; data?: unknown };

async function run(events: [number, Event][], out?: string): Promise<string> {
  let clock = 0;
  const reporter = fileTimesReporter({ now: () => clock, cwd: '/repo', ...(out ? { out } : {}), top: 2, onExit: false });
  let text = '';
  reporter.on('data', (chunk) => (text += chunk));
  for (const [t, e] of events) {
    clock = t;
    reporter.write(e);
  }
  reporter.end();
  await finished(reporter);
  return text;
}

const own = (file: string, type: string, details?: object): Event => ({ type, data: { file, name: file, nesting: 0, details } });
const inner = (file: string, type: string, name: string): Event => ({ type, data: { file, name, nesting: 0 } });

test('a file is timed from its dequeue to its own completion, not by its held-back test events', async () => {
  const dir = await tempDir('benchgym-file-times-');
  try {
    const out = path.join(dir, 'times.json');
    const text = await run(
      [
        [0, own('/repo/test/a.test.ts', 'test:enqueue')],
        [0, own('/repo/test/b.test.ts', 'test:enqueue')],
        [0, own('/repo/test/c.test.ts', 'test:enqueue')],
        [10, own('/repo/test/a.test.ts', 'test:dequeue')],
        [10, own('/repo/test/b.test.ts', 'test:dequeue')],
        // b ends first, but its tests are reported only after a's.
        [2_010, own('/repo/test/b.test.ts', 'test:complete', { duration_ms: 1_990, passed: true })],
        [2_020, own('/repo/test/c.test.ts', 'test:dequeue')],
        [5_010, inner('/repo/test/a.test.ts', 'test:pass', 'a1')],
        [5_010, own('/repo/test/a.test.ts', 'test:complete', { duration_ms: 4_995, passed: true })],
        [5_020, inner('/repo/test/b.test.ts', 'test:pass', 'b1')],
        [5_020, inner('/repo/test/b.test.ts', 'test:pass', 'b2')],
        [6_020, inner('/repo/test/c.test.ts', 'test:fail', 'c1')],
        [6_020, own('/repo/test/c.test.ts', 'test:complete', { duration_ms: 3_990, passed: false })],
        [6_030, { type: 'test:diagnostic', data: { message: 'tests 4', nesting: 0 } }],
      ],
      out,
    );
    const { files } = JSON.parse(await fs.readFile(out, 'utf8')) as { files: FileTime[] };
    assert.deepEqual(files, [
      { file: 'test/a.test.ts', wallMs: 5_000, runnerMs: 4_995, tests: 1, failed: 0, passed: true },
      { file: 'test/c.test.ts', wallMs: 4_000, runnerMs: 3_990, tests: 1, failed: 1, passed: false },
      { file: 'test/b.test.ts', wallMs: 2_000, runnerMs: 1_990, tests: 2, failed: 0, passed: true },
    ]);
    // The slowest two, in order, and where the rest are.
    assert.equal(text, `\nslowest test files (all 3 in ${out}):\n   5.0 s  test/a.test.ts\n   4.0 s  test/c.test.ts  (failed)\n`);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('a file that never completed is timed to its last event; no events, no summary', async () => {
  const text = await run([
    [100, inner('/repo/test/d.test.ts', 'test:start', 'd1')],
    [900, inner('/repo/test/d.test.ts', 'test:fail', 'd1')],
  ]);
  assert.equal(text, '\nslowest test files:\n   0.8 s  test/d.test.ts  (failed)\n');
  assert.equal(await run([[0, { type: 'test:plan', data: { count: 0, nesting: 0 } }]]), '');
});

test(
  'node --test --test-force-exit with the reporter beside spec: spec ' + 'on stdout, then the slowest files; every file timed in the JSON',
  async () => {
    const dir = await tempDir('benchgym-file-times-');
    try {
      await fs.writeFile(
        path.join(dir, 'slow.test.mjs'),
        "import { test } from 'node:test';\ntest('slow', () => new Promise((r) => setTimeout(r, 1500)));\n",
      );
      await fs.writeFile(path.join(dir, 'quick.test.mjs'), "import { test } from 'node:test';\ntest('quick', () => {});\n");
      const out = path.join(dir, 'times.json');
      const reporter = path.join(import.meta.dirname, 'file_times.mjs');
      const args = ['--test', '--test-concurrency=2', '--test-force-exit', '--test-reporter=spec', '--test-reporter-destination=stdout'];
      args.push(`--test-reporter=${reporter}`, '--test-reporter-destination=stdout', 'slow.test.mjs', 'quick.test.mjs');
      // Without NODE_TEST_CONTEXT: that would make the inner run report to this one instead of printing.
      const { NODE_TEST_CONTEXT: _, ...env } = process.env;
      const child = spawn(process.execPath, args, { cwd: dir, env: { ...env, BENCHGYM_TEST_TIMES: out } });
      let stdout = '';
      child.stdout.on('data', (b) => (stdout += b));
      const code = await new Promise((r) => child.on('close', r));
      assert.equal(code, 0, stdout);
      assert.match(stdout, /✔ slow \(/);
      assert.match(
        stdout,
        /slowest test files \(all 2 in .*times\.json\):\n +\d+\.\d s {2}slow\.test\.mjs\n +\d+\.\d s {2}quick\.test\.mjs\n/,
      );
      const { files } = JSON.parse(await fs.readFile(out, 'utf8')) as { files: FileTime[] };
      assert.deepEqual(
        files.map((f) => f.file),
        ['slow.test.mjs', 'quick.test.mjs'],
      );
      assert.ok(files[0]!.wallMs >= 1500, `slow took ${files[0]!.wallMs} ms`);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
);
