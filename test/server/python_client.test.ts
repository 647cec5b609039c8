import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { PROJECT_ROOT } from '../../src/tasks/registry.ts';
import { makeGym } from '../helpers.ts';

/** A Python with the official MCP SDK (`pip install mcp`): $BENCHGYM_PYTHON_MCP, else python3. */
const PYTHON = process.env.BENCHGYM_PYTHON_MCP ?? 'python3';
const hasMcp = spawnSync(PYTHON, ['-c', 'import mcp'], { stdio: 'ignore' }).status === 0;
const SCRIPT = path.join(PROJECT_ROOT, 'test', 'server', 'python', 'long_calls.py');

let gym: Gym;
let cleanup: () => Promise<void>;
let server: RunningServer;
before(async () => {
  if (!hasMcp) return;
  ({ gym, cleanup } = await makeGym());
  server = await startHttpServer(gym, { port: 0 });
});
after(async () => {
  await server?.close();
  await cleanup?.();
});

test(
  'the Python MCP SDK: long calls with their own read_timeout_seconds and a progress callback; errors in the one shape',
  { skip: hasMcp ? false : `${PYTHON} has no 'mcp' package (pip install mcp in a venv, and set BENCHGYM_PYTHON_MCP to its python)` },
  async () => {
    const { stdout } = await promisify(execFile)(PYTHON, [SCRIPT, `${server.url}/mcp`], { timeout: 300_000 });
    const out = JSON.parse(stdout.trim().split('\n').pop()!);
    // start_episode: a bar of 3 steps, the value reaching the total.
    assert.deepEqual(out.start_progress.at(-1), { progress: 3, total: 3, message: 'ready' }, JSON.stringify(out.start_progress));
    // A 6 s command under a 60 s limit: it returns, after a heartbeat.
    assert.equal(out.slow_ok, true);
    assert.ok(
      out.slow_beats.length >= 1 && /^run_command running \(\d+ s\)$/.test(out.slow_beats[0].message),
      JSON.stringify(out.slow_beats),
    );
    // Past its own limit a call raises in the client (the SDK's timeout is hard, not reset by progress).
    assert.match(String(out.timeout), /time|Timed out/i);
    assert.equal(out.bad_argument.isError, true);
    assert.equal(out.bad_argument.structuredContent.error.code, 'INVALID_ARGUMENT');
    assert.equal(out.unknown_tool.isError, true);
    assert.equal(out.unknown_tool.structuredContent.error.code, 'TOOL_NOT_AVAILABLE');
  },
);
