import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Gym } from '../../src/episode/gym.ts';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { replayAgent } from '../../agents/replay/index.ts';
import {
  callTool,
  connectHttp,
  connectInProcess,
  resultText,
  spawnStdioEpisode,
  startHttpEpisode,
  type EpisodeSession,
} from '../../src/agent/session.ts';
import type { AgentContext, AgentResult } from '../../src/agent/types.ts';
import { TEST_CACHE_DIR, makeGym, startExample } from '../helpers.ts';
import { readExample } from './harness.ts';

const TASK = { suite: 'examples', id: 'roman-numerals', prompt: 'implement roman.py', language: 'python', kind: 'function', metadata: {} };

/** Runs the replay agent with the gold roman.py through a session of any kind. */
async function replayGold(session: EpisodeSession): Promise<AgentResult> {
  const gold = await readExample('roman-numerals/solution/roman.py');
  const ctx: AgentContext = {
    client: session.client,
    episodeId: session.episodeId,
    task: TASK,
    model: { model: 'none' },
    sample: 0,
    signal: new AbortController().signal,
    record: () => {},
  };
  return replayAgent.create(replayAgent.options.parse({ goldFiles: { 'roman.py': gold } })).run(ctx);
}

async function toolNames(session: EpisodeSession): Promise<{ names: string[]; viewFileProps: string[] }> {
  const { tools } = await session.client.listTools();
  const viewFile = tools.find((t) => t.name === 'view_file')!;
  return { names: tools.map((t) => t.name).sort(), viewFileProps: Object.keys(viewFile.inputSchema.properties ?? {}).sort() };
}

describe('episode sessions', () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let server: RunningServer;

  before(async () => {
    ({ gym, cleanup } = await makeGym());
    server = await startHttpServer(gym, { port: 0, token: 's3cret' });
  });
  after(async () => {
    await server.close();
    await cleanup();
  });

  test('in-process: the episode tools without episode_id', async () => {
    const episodeId = await startExample(gym, 'roman-numerals');
    const session = await connectInProcess(gym, episodeId);
    try {
      const { names, viewFileProps } = await toolNames(session);
      assert.ok(!names.includes('start_episode') && names.includes('submit'));
      assert.deepEqual(viewFileProps, ['end_line', 'path', 'start_line']);
      const listing = await callTool(session.client, 'list_dir', {});
      assert.match(resultText(listing), /roman\.py/);
    } finally {
      await session.close();
    }
  });

  test(
    'Streamable HTTP with a bearer token: start through /mcp, work ' + "through the episode's own endpoint (its key, no token) → reward 1",
    async () => {
      const session = await startHttpEpisode({ url: server.url, token: 's3cret', taskId: 'roman-numerals' });
      try {
        assert.equal(session.started?.taskId, 'roman-numerals');
        assert.equal(session.episodeId, session.started?.episodeId);
        const { names, viewFileProps } = await toolNames(session);
        assert.ok(!names.includes('start_episode'));
        assert.ok(!viewFileProps.includes('episode_id'));
        const result = await replayGold(session);
        assert.equal(result.verdict?.reward, 1, JSON.stringify(result));
      } finally {
        await session.close();
      }
      const mcpPath = String(session.started?.mcpPath);
      // The episode's own URL alone connects (the server's token is not sent); a wrong key or a gym URL does not.
      const again = await connectHttp({ url: server.url, mcpPath });
      try {
        assert.equal(again.episodeId, session.episodeId);
        assert.match(resultText(await callTool(again.client, 'get_diff', {})), /roman\.py/);
      } finally {
        await again.close();
      }
      await assert.rejects(
        connectHttp({ url: server.url, mcpPath: mcpPath.replace(/\/[^/]+\/mcp$/, '/wrong-key/mcp') }),
        /404|EPISODE_NOT_FOUND/,
      );
      await assert.rejects(connectHttp({ mcpUrl: `${server.url}/mcp` }), /not an episode endpoint/);
    },
  );

  test('stdio (benchgym mcp): the scoped client hides and injects episode_id → reward 1', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-agent-stdio-'));
    const session = await spawnStdioEpisode({
      taskId: 'roman-numerals',
      serverArgs: ['--data-dir', dataDir, '--cache-dir', TEST_CACHE_DIR],
    });
    try {
      assert.match(session.episodeId, /^ep-/);
      const { names, viewFileProps } = await toolNames(session);
      assert.ok(!names.includes('start_episode') && !names.includes('list_tasks'));
      assert.deepEqual(viewFileProps, ['end_line', 'path', 'start_line']);
      const viewed = await callTool(session.client, 'view_file', { path: 'roman.py' });
      assert.equal(viewed.isError, undefined, resultText(viewed));
      assert.match(resultText(viewed), /def to_roman/);
      const result = await replayGold(session);
      assert.equal(result.verdict?.reward, 1, JSON.stringify(result));
    } finally {
      await session.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
