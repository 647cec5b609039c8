/** benchgym serve's episode log (from the Gym's events) and the isolation its banner names. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import type { GymEvent } from '../../src/episode/gym.ts';
import { episodeLogLine } from '../../src/cli/episode_log.ts';
import { makeGym, startExample, TEST_CACHE_DIR, tempDir, testContext, waitFor } from '../helpers.ts';
import { BIN } from './cli.ts';

const at = '2026-01-02T03:04:05.678Z';
const base = { suite: 'examples', taskId: 'roman-numerals', at };

test(
  'episodeLogLine: one line per start, submission (with its verdict), ' +
    "infrastructure error and end; an agent's own mistakes are left out",
  () => {
    assert.equal(
      episodeLogLine({ ...base, type: 'episode_started', episodeId: 'ep-1' }),
      '2026-01-02T03:04:05Z start   ep-1 examples/roman-numerals',
    );
    assert.equal(
      episodeLogLine({ ...base, type: 'episode_started', episodeId: 'ep-2', forkedFrom: 'ep-1' }),
      '2026-01-02T03:04:05Z start   ep-2 examples/roman-numerals (fork of ep-1)',
    );
    const tests = [
      { name: 'a', status: 'passed' as const },
      { name: 'b', status: 'failed' as const },
    ];
    assert.equal(
      episodeLogLine({
        ...base,
        type: 'episode_submitted',
        episodeId: 'ep-1',
        verdict: { status: 'failed', reward: 0, tests, durationMs: 3140 },
      }),
      '2026-01-02T03:04:05Z submit  ep-1 examples/roman-numerals: failed, reward 0 (1/2 tests) in 3.1 s',
    );
    assert.equal(
      episodeLogLine({
        ...base,
        type: 'episode_submitted',
        episodeId: 'ep-1',
        verdict: { status: 'error', reward: 0, tests: [], durationMs: 1, error: { code: 'ENV_BUILD_FAILED', message: 'pip\nfailed' } },
      }),
      '2026-01-02T03:04:05Z submit  ep-1 examples/roman-numerals: error (not scored): ENV_BUILD_FAILED: pip failed',
    );
    assert.equal(
      episodeLogLine({
        ...base,
        type: 'episode_error',
        episodeId: 'ep-1',
        tool: 'run_command',
        infra: true,
        error: { code: 'SANDBOX_UNAVAILABLE', message: 'the sandbox is gone' },
      }),
      '2026-01-02T03:04:05Z error   ep-1 examples/roman-numerals: run_command: SANDBOX_UNAVAILABLE: the sandbox is gone',
    );
    assert.match(
      episodeLogLine({
        ...base,
        type: 'episode_error',
        episodeId: null,
        tool: 'start_episode',
        infra: true,
        error: { code: 'ENV_UNAVAILABLE', message: 'x'.repeat(1000) },
      })!,
      /^\S+ error {3}- examples\/roman-numerals: start_episode: ENV_UNAVAILABLE: x{290,}\.\.\.$/,
    );
    assert.equal(
      episodeLogLine({
        ...base,
        type: 'episode_error',
        episodeId: 'ep-1',
        tool: 'edit_file',
        infra: false,
        error: { code: 'EDIT_NO_MATCH', message: 'no match' },
      }),
      undefined,
    );
    assert.equal(
      episodeLogLine({ ...base, type: 'episode_ended', episodeId: 'ep-1', state: 'expired' }),
      '2026-01-02T03:04:05Z expired ep-1 examples/roman-numerals (no submission)',
    );
  },
);

test('the Gym reports starts, failed calls, submissions and ends to its listeners; a listener that throws changes nothing', async () => {
  const { gym, cleanup } = await makeGym();
  const events: GymEvent[] = [];
  gym.onEvent(() => {
    throw new Error('a broken listener');
  });
  const stop = gym.onEvent((e) => events.push(e));
  try {
    const id = await startExample(gym, 'roman-numerals');
    const missing = await gym.callTool('view_file', { path: 'no-such-file.py' }, testContext(), id).catch((e: Error) => e);
    assert.ok(missing instanceof Error);
    await gym.callTool('submit', {}, testContext(), id);
    await assert.rejects(gym.callTool('start_episode', { task_id: 'no-such-task' }, testContext()));
    const other = await startExample(gym, 'roman-numerals');
    await gym.endEpisode(gym.episode(other));
    stop();
    await startExample(gym, 'roman-numerals');
    const summary = events.map(
      (e) =>
        `${e.type} ${e.episodeId === id ? 'A' : e.episodeId === other ? 'B' : e.episodeId} ` +
        `${e.taskId}${e.type === 'episode_error' ? ` ${e.tool} ${e.error.code} infra=${e.infra}` : ''}` +
        `${e.type === 'episode_submitted' ? ` ${e.verdict.status}` : ''}`,
    );
    assert.deepEqual(summary, [
      'episode_started A roman-numerals',
      'episode_error A roman-numerals view_file FILE_NOT_FOUND infra=false',
      'episode_submitted A roman-numerals failed',
      'episode_error null no-such-task start_episode TASK_NOT_FOUND infra=false',
      'episode_started B roman-numerals',
      'episode_ended B roman-numerals',
    ]);
    const submitted = events.find((e) => e.type === 'episode_submitted');
    assert.ok(submitted?.type === 'episode_submitted' && submitted.verdict.tests.length > 0 && submitted.verdict.reward === 0);
  } finally {
    await cleanup();
  }
});

test("benchgym serve names the isolation in its banner and logs each episode's start and submission with its verdict", async () => {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const dataDir = await tempDir('benchgym-cli-serve-log-');
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--cache-dir', TEST_CACHE_DIR], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (b) => (stderr += b));
  const client = new Client({ name: 'serve-log-test', version: '0' });
  try {
    const [, url] = await waitFor(() => stderr, /MCP \(Streamable HTTP\): (http:\/\/\S+)\/mcp/, 60_000);
    const banner = /^ {2}isolation: .*$/m.exec(stderr)?.[0] ?? '';
    assert.match(
      banner,
      new RegExp(
        String.raw`^ {2}isolation: local, (bubblewrap \(own mount, pid and network namespaces\)|no bubblewrap \(not ` +
          String.raw`available here\)), executor (on|off), network (none|: the host's \(commands can reach it\)), limits: ` +
          String.raw`memory 2 GiB and 1024 pids`,
      ),
    );
    assert.equal(/bubblewrap \(own/.test(banner), /network none/.test(banner), 'network none exactly when bubblewrap isolates the sandbox');
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    const call = (name: string, args: Record<string, unknown>) =>
      client.callTool({ name, arguments: args }, undefined, { timeout: 300_000 });
    const started = await call('start_episode', { task_id: 'roman-numerals' });
    // The key's case is the MCP surface's business (issue 19, point 4): either will do here.
    const content = started.structuredContent as { episode_id?: string; episodeId?: string };
    const episodeId = content.episode_id ?? content.episodeId ?? '';
    assert.match(episodeId, /^ep-/);
    await waitFor(() => stderr, new RegExp(`^\\S+Z start {3}${episodeId} examples/roman-numerals$`, 'm'));
    await call('submit', { episode_id: episodeId });
    await waitFor(
      () => stderr,
      new RegExp(`^\\S+Z submit {2}${episodeId} examples/roman-numerals: failed, reward 0 \\(\\d+/\\d+ tests\\) in [\\d.]+ s$`, 'm'),
    );
  } finally {
    await client.close().catch(() => {});
    child.kill('SIGKILL');
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});
