import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { wsMcpExtension } from '../../src/server/ws_mcp.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { makeGym } from '../helpers.ts';
import { call, data, text } from './scenario.ts';

// The SDK's client transport uses the global WebSocket, which Node 20 does not have.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'benchgym-ws-test', version: '0.0.0' });
  await client.connect(new WebSocketClientTransport(new URL(url)));
  return client;
}

describe('MCP over WebSocket (/mcp/ws)', () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let base: string;
  let client: Client;

  before(async () => {
    ({ gym, cleanup } = await makeGym());
    server = await startHttpServer(gym, { port: 0, extensions: [wsMcpExtension()] });
    base = server.url.replace(/^http/, 'ws');
    client = await connect(`${base}/mcp/ws`);
  });

  after(async () => {
    await client.close();
    await server.close();
    await cleanup();
  });

  test('the SDK client lists the tools, starts an episode, views a file and submits', async () => {
    assert.equal(client.getServerVersion()?.name, 'benchgym');
    const { tools } = await client.listTools();
    for (const name of ['list_suites', 'list_tasks', 'start_episode', 'view_file', 'run_tests', 'submit'])
      assert.ok(
        tools.some((t) => t.name === name),
        name,
      );
    assert.deepEqual([...(tools.find((t) => t.name === 'view_file')!.inputSchema.required ?? [])].sort(), ['episode_id', 'path']);

    const progress: string[] = [];
    const started = await call(client, 'start_episode', { task_id: 'roman-numerals' }, (p) => p.message && progress.push(p.message));
    const episodeId = data(started).episodeId as string;
    assert.match(episodeId, /^ep-/);
    assert.ok(progress.includes('ready'), `progress over the WebSocket: ${progress.join(' | ')}`);

    const viewed = await call(client, 'view_file', { episode_id: episodeId, path: 'roman.py', start_line: 1, end_line: 3 });
    assert.match(text(viewed), /roman\.py \(lines 1-3/);
    const failed = await call(client, 'view_file', { episode_id: episodeId, path: 'nope.py' });
    assert.equal(failed.isError, true);
    assert.equal(data(failed).error.code, 'FILE_NOT_FOUND');

    const verdict = data(await call(client, 'submit', { episode_id: episodeId }));
    assert.equal(verdict.reward, 0);
    assert.equal(verdict.status, 'failed');
    assert.equal(gym.episode(episodeId).state, 'submitted');
  });

  test('the server answers with the mcp subprotocol; bad JSON gets a parse error and the connection stays', async () => {
    const ws = new WebSocket(`${base}/mcp/ws`, 'mcp');
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    assert.equal(ws.protocol, 'mcp');
    const replies: Record<string, any>[] = [];
    ws.on('message', (d) => replies.push(JSON.parse(String(d))));
    ws.send('{not json');
    ws.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    );
    for (let i = 0; i < 50 && replies.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(replies[0]!.error.code, -32700);
    assert.equal(replies[1]!.id, 1);
    assert.equal(replies[1]!.result.serverInfo.name, 'benchgym');
    ws.terminate();
  });

  test('/episodes/<id>/<key>/mcp/ws serves one episode without episode_id; an unknown episode or a missing key is refused', async () => {
    const started = data(await call(client, 'start_episode', { task_id: 'roman-numerals' }));
    const episodeId = started.episodeId as string;
    const scoped = await connect(`${base}${started.mcpPath}/ws`);
    try {
      const { tools } = await scoped.listTools();
      assert.ok(!tools.some((t) => t.name === 'start_episode'));
      assert.ok(!tools.find((t) => t.name === 'view_file')!.inputSchema.properties?.episode_id);
      assert.match(text(await call(scoped, 'view_file', { path: 'roman.py' })), /def to_roman/);
      assert.equal(data(await call(scoped, 'end_episode', {})).state, 'ended');
    } finally {
      await scoped.close();
    }
    await assert.rejects(connect(`${base}/episodes/ep-nope/mcp/ws`));
    await assert.rejects(connect(`${base}/episodes/${episodeId}/mcp/ws`));
  });

  test('Origin evil.example is refused at the upgrade', async () => {
    const ws = new WebSocket(`${base}/mcp/ws`, 'mcp', { origin: 'https://evil.example' });
    const status = await new Promise<number>((resolve) => {
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => resolve(101));
      ws.once('error', () => {});
    });
    assert.equal(status, 403);
  });
});

describe('MCP over WebSocket: idle connections and the cap', () => {
  test('idle connections are closed, a call in progress is not idleness, past the cap a new one gets 503 CAPACITY', async () => {
    const { gym, cleanup } = await makeGym();
    const server = await startHttpServer(gym, { port: 0, extensions: [wsMcpExtension({ sessionIdleMs: 1500, maxSessions: 3 })] });
    const base = server.url.replace(/^http/, 'ws');
    const open: WebSocket[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const ws = new WebSocket(`${base}/mcp/ws`, 'mcp');
        await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
        open.push(ws);
      }
      const refused = new WebSocket(`${base}/mcp/ws`, 'mcp');
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve) => {
        refused.once('unexpected-response', (_req, res) => {
          let b = '';
          res.on('data', (c: Buffer) => (b += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
        });
        refused.once('open', () => resolve({ status: 101, body: '' }));
        refused.once('error', () => {});
      });
      assert.equal(status, 503);
      assert.match(body, /CAPACITY: 3 MCP sessions are open/);
      const closed = await Promise.all(open.map((ws) => new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)))));
      assert.deepEqual(closed, [1000, 1000, 1000], 'idle connections are closed');
      // Room again, and an SDK client whose connection was idle in between still works when it is in use.
      const client = await connect(`${base}/mcp/ws`);
      const started = data(await call(client, 'start_episode', { task_id: 'roman-numerals' })).episodeId as string;
      const slow = await call(client, 'run_command', { episode_id: started, command: 'sleep 3; echo slept' });
      assert.match(text(slow), /slept/, 'a call longer than the idle timeout finishes');
      await client.close();
    } finally {
      for (const ws of open) ws.terminate();
      await server.close();
      await cleanup();
    }
  });
});
