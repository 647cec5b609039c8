import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket, type ClientOptions, type RawData } from 'ws';
import type { Gym } from '../../../src/episode/gym.ts';
import { startHttpServer, type RunningServer } from '../../../src/server/http.ts';
import { openEnvExtension } from '../../../src/server/openenv/extension.ts';
import { makeGym, trajectoryRecords } from '../../helpers.ts';

type Json = Record<string, any>;

/** A client of OpenEnv's WebSocket as openenv-core's EnvClient is: one message, then its reply. */
class OpenEnvSocket {
  private readonly replies: Json[] = [];
  private waiting?: (m: Json) => void;
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: RawData) => {
      const message = JSON.parse(String(data)) as Json;
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = undefined;
        w(message);
      } else this.replies.push(message);
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  }

  static open(url: string, opts?: ClientOptions): Promise<OpenEnvSocket> {
    const ws = new WebSocket(url, opts);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new OpenEnvSocket(ws)));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with ${res.statusCode}`)));
    });
  }

  next(): Promise<Json> {
    const queued = this.replies.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  async send(message: unknown): Promise<Json> {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
    return this.next();
  }
}

async function waitUntil(check: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("OpenEnv's WebSocket at /openenv/ws", () => {
  let gym: Gym;
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let url: string;
  before(async () => {
    ({ gym, dataDir, cleanup } = await makeGym());
    server = await startHttpServer(gym, { port: 0, extensions: [openEnvExtension()] });
    url = `${server.url.replace(/^http/, 'ws')}/openenv/ws`;
  });
  after(async () => {
    await server.close();
    await cleanup();
  });

  test('reset, state, step, an mcp message and close, each answered in the shape OpenEnv defines; close ends the episode', async () => {
    const c = await OpenEnvSocket.open(url);
    const reset = await c.send({ type: 'reset', data: { task_id: 'roman-numerals' } });
    assert.equal(reset.type, 'observation');
    assert.deepEqual(Object.keys(reset.data).sort(), ['done', 'observation', 'reward']);
    assert.equal(reset.data.reward, null);
    const id = reset.data.observation.data.episodeId as string;
    assert.match(
      reset.data.observation.data.mcpPath,
      new RegExp(`^/episodes/${id}/[A-Za-z0-9_-]{32}/mcp$`),
      'the session owns the episode: it gets its URL',
    );

    const state = await c.send({ type: 'state' });
    assert.equal(state.type, 'state');
    assert.equal(state.data.episode_id, id);
    assert.equal(state.data.step_count, 0);

    const step = await c.send({ type: 'step', data: { type: 'call_tool', tool_name: 'run_command', arguments: { command: 'echo hi' } } });
    assert.equal(step.type, 'observation');
    assert.equal(step.data.observation.tool_name, 'run_command');
    assert.match(step.data.observation.result.content[0].text, /hi/);
    assert.equal(step.data.observation.result.data.exitCode, 0);
    assert.equal(step.data.reward, 0);
    assert.equal(step.data.done, false);

    const listed = await c.send({ type: 'mcp', data: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } });
    assert.equal(listed.type, 'mcp');
    assert.equal(listed.data.id, 1);
    assert.ok(listed.data.result.tools.some((t: Json) => t.name === 'submit' && t.input_schema.type === 'object'));
    const called = await c.send({
      type: 'mcp',
      data: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'view_file', arguments: { path: 'roman.py' } } },
    });
    assert.equal(called.data.result.is_error, false);
    assert.equal(called.data.result.data.path, 'roman.py');
    const failed = await c.send({
      type: 'mcp',
      data: { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'view_file', arguments: { path: 'nope.py' } } },
    });
    assert.deepEqual([failed.data.error.code, failed.data.error.data.code], [-32603, 'FILE_NOT_FOUND']);
    const unknown = await c.send({ type: 'mcp', data: { jsonrpc: '2.0', id: 4, method: 'resources/list', params: {} } });
    assert.equal(unknown.data.error.code, -32601);
    const created = await c.send({ type: 'mcp', data: { jsonrpc: '2.0', id: 5, method: 'openenv/session/create', params: {} } });
    const closeOwn = await c.send({
      type: 'mcp',
      data: { jsonrpc: '2.0', id: 6, method: 'openenv/session/close', params: { session_id: created.data.result.session_id } },
    });
    assert.equal(closeOwn.data.error.message, 'Cannot close active WebSocket-managed session via MCP method');

    c.ws.send(JSON.stringify({ type: 'close' }));
    assert.equal((await c.closed).code, 1000);
    await waitUntil(() => gym.episode(id).state === 'ended');
    const steps = await trajectoryRecords(dataDir, id, 'step');
    assert.deepEqual(
      steps.map((s) => s.tool),
      ['run_command', 'view_file', 'view_file'],
      'steps over OpenEnv, and over its mcp messages, are recorded as on every protocol',
    );
  });

  test("bad messages are answered with OpenEnv's error codes and the connection stays", async () => {
    const c = await OpenEnvSocket.open(url);
    const expectError = async (message: unknown, code: string, text: RegExp) => {
      const reply = await c.send(message);
      assert.equal(reply.type, 'error', JSON.stringify(reply));
      assert.equal(reply.data.code, code, JSON.stringify(reply));
      assert.match(reply.data.message, text);
      return reply.data;
    };
    await expectError('not json', 'INVALID_JSON', /^Invalid JSON: /);
    await expectError('[1, 2]', 'VALIDATION_ERROR', /expected a JSON object with a type/);
    await expectError({ type: 'dance' }, 'UNKNOWN_TYPE', /^Unknown message type: dance/);
    await expectError({ type: 'constructor' }, 'UNKNOWN_TYPE', /^Unknown message type: constructor/);
    const missing = await expectError({ type: 'step' }, 'VALIDATION_ERROR', /^Invalid message: data: /);
    assert.deepEqual(
      missing.errors.map((e: Json) => e.loc),
      [['data']],
    );
    await expectError({ type: 'state', extra: 1 }, 'VALIDATION_ERROR', /extra: Extra inputs are not permitted/);
    const badAction = await expectError(
      { type: 'step', data: { type: 'bogus' } },
      'VALIDATION_ERROR',
      /^Invalid action: data\.type: .*; data\.tool_name: /,
    );
    assert.equal(badAction.errors.length, 2);
    const noTask = await expectError({ type: 'reset', data: { task_id: 'no-such-task' } }, 'VALIDATION_ERROR', /^TASK_NOT_FOUND: /);
    assert.equal(noTask.error.code, 'TASK_NOT_FOUND');
    await expectError({ type: 'reset', data: { bogus: 1 } }, 'VALIDATION_ERROR', /data\.bogus: Extra inputs are not permitted/);
    c.ws.send(Buffer.from('{"type":"state"}'), { binary: true });
    assert.equal((await c.next()).data.code, 'INVALID_JSON');
    const state = await c.send({ type: 'state' });
    assert.deepEqual(
      state,
      { type: 'state', data: { episode_id: null, step_count: 0 } },
      'the connection is still usable and nothing was started',
    );
    c.ws.close();
  });

  test('a dropped connection ends its episode, as OpenEnv destroys the session', async () => {
    const c = await OpenEnvSocket.open(url);
    const id = (await c.send({ type: 'reset', data: { task_id: 'roman-numerals' } })).data.observation.data.episodeId as string;
    assert.equal(gym.episode(id).state, 'running');
    c.ws.terminate();
    await waitUntil(() => gym.episode(id).state === 'ended');
  });

  test('a new reset on the same connection ends the episode it held', async () => {
    const c = await OpenEnvSocket.open(url);
    const first = (await c.send({ type: 'reset', data: { task_id: 'roman-numerals' } })).data.observation.data.episodeId as string;
    const second = (await c.send({ type: 'reset', data: { task_id: 'parse-duration' } })).data.observation.data.episodeId as string;
    assert.notEqual(first, second);
    assert.equal(gym.episode(first).state, 'ended');
    assert.equal(gym.episode(second).state, 'running');
    c.ws.close();
    await waitUntil(() => gym.episode(second).state === 'ended');
  });

  test("OpenEnv's /mcp WebSocket: JSON-RPC per frame on the connection's own session; a dropped connection ends its episode", async () => {
    const c = await OpenEnvSocket.open(`${server.url.replace(/^http/, 'ws')}/openenv/mcp`);
    const listed = await c.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    assert.deepEqual(
      listed.result.tools.map((t: Json) => t.name),
      ['list_suites', 'list_tasks', 'start_episode'],
    );
    const started = await c.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'start_episode', arguments: { task_id: 'roman-numerals' } },
    });
    const id = started.result.data.episodeId as string;
    const viewed = await c.send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'view_file', arguments: { path: 'roman.py' } },
    });
    assert.equal(viewed.result.data.path, 'roman.py');
    assert.equal((await c.send('{oops')).error.code, -32700);
    c.ws.terminate();
    await waitUntil(() => gym.episode(id).state === 'ended');
  });
});

describe("/openenv behind a token: the operator's, as the gym protocol", () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  const token = 'test-token-0123456789';
  before(async () => {
    ({ gym, cleanup } = await makeGym());
    server = await startHttpServer(gym, { port: 0, token, extensions: [openEnvExtension({ maxSessions: 2 })] });
  });
  after(async () => {
    await server.close();
    await cleanup();
  });

  test(
    'without the token the upgrade and the routes get 401; with it as Bearer ' +
      "or as the password of Basic credentials (a URL's user info) they open",
    async () => {
      const ws = `${server.url.replace(/^http/, 'ws')}/openenv/ws`;
      await assert.rejects(OpenEnvSocket.open(ws), /refused with 401/);
      assert.equal((await fetch(`${server.url}/openenv/health`)).status, 401);
      const basic = `Basic ${Buffer.from(`anyone:${token}`).toString('base64')}`;
      assert.equal((await fetch(`${server.url}/openenv/health`, { headers: { authorization: basic } })).status, 200);
      assert.equal(
        (
          await fetch(`${server.url}/openenv/health`, {
            headers: { authorization: `Basic ${Buffer.from('anyone:wrong').toString('base64')}` },
          })
        ).status,
        401,
      );
      assert.equal(
        (await fetch(`${server.url}/openenv/health`, { headers: { authorization: `Digest ${token}` } })).status,
        401,
        'another scheme carries no token',
      );
      // The ws package sends a URL's user info as Basic credentials, as Python's websockets does.
      const withUserInfo = ws.replace('ws://', `ws://benchgym:${token}@`);
      const c = await OpenEnvSocket.open(withUserInfo);
      const reset = await c.send({ type: 'reset', data: { task_id: 'roman-numerals' } });
      const { episodeId, mcpPath } = reset.data.observation.data as { episodeId: string; mcpPath: string };
      const key = mcpPath.split('/')[3]!;
      await assert.rejects(
        OpenEnvSocket.open(ws, { headers: { authorization: `Bearer ${key}` } }),
        /refused with 401/,
        "an episode's key is not the token",
      );
      assert.equal(
        (
          await fetch(`${server.url}${mcpPath}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'initialize',
              params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
            }),
          })
        ).status,
        200,
        "the episode's own URL opens without the token",
      );
      c.ws.close();
      await waitUntil(() => gym.episode(episodeId).state === 'ended');
    },
  );

  test('sessions past the cap are refused with 503 CAPACITY at the upgrade', async () => {
    const ws = `${server.url.replace(/^http/, 'ws')}/openenv/ws`;
    const headers = { authorization: `Bearer ${token}` };
    const a = await OpenEnvSocket.open(ws, { headers });
    const b = await OpenEnvSocket.open(ws, { headers });
    await assert.rejects(OpenEnvSocket.open(ws, { headers }), /refused with 503/);
    a.ws.close();
    await a.closed;
    // The server counts the session out on its own close event.
    await new Promise((r) => setTimeout(r, 100));
    const c = await OpenEnvSocket.open(ws, { headers });
    b.ws.close();
    c.ws.close();
  });
});
