import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { inspect } from 'node:util';
import { promises as fs } from 'node:fs';
import { WebSocket } from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { capabilityOfPath, episodePath, withoutEpisodeKeys } from '../../src/protocol/capability.ts';
import { terminalExtension } from '../../src/server/pty.ts';
import { wsGymExtension } from '../../src/server/ws_gym.ts';
import { wsMcpExtension } from '../../src/server/ws_mcp.ts';
import type { Episode } from '../../src/episode/episode.ts';
import type { Gym, GymEvent } from '../../src/episode/gym.ts';
import { makeGym, waitFor } from '../helpers.ts';
import { call, data, text } from '../server/scenario.ts';

// The SDK's WebSocket client transport uses the global WebSocket, which Node 20 does not have.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

const TOKEN = 'operator-token';
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
});
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function mcpClient(url: string, headers?: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'capability-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers } } : undefined));
  return client;
}

/** One raw request (the path exactly as given, never normalised); status and body. */
function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A WebSocket upgrade request: 101 when upgraded, else the refusal's status and body. */
function upgrade(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const req = request({
      host: url.hostname,
      port: url.port,
      path,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'sec-websocket-protocol': 'mcp',
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A JSON-RPC exchange over one gym-protocol connection. */
async function gymProtocol(
  url: string,
): Promise<{ call: (method: string, params: Record<string, unknown>) => Promise<Record<string, any>>; close: () => void }> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let next = 1;
  const pending = new Map<number, (m: Record<string, any>) => void>();
  ws.on('message', (raw) => {
    const m = JSON.parse(String(raw));
    if (typeof m.id === 'number') pending.get(m.id)?.(m);
  });
  return {
    call: (method, params) =>
      new Promise((resolve) => {
        const id = next++;
        pending.set(id, resolve);
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      }),
    close: () => ws.terminate(),
  };
}

const keyOf = (mcpPath: string) => mcpPath.split('/')[3]!;

describe('one episode, one capability (a server with a token)', () => {
  let gym: Gym;
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let operator: Client;
  let a: { id: string; mcpPath: string; key: string };
  let b: { id: string; mcpPath: string; key: string };
  const events: GymEvent[] = [];
  const AUTH = { authorization: `Bearer ${TOKEN}` };

  before(async () => {
    ({ gym, dataDir, cleanup } = await makeGym());
    gym.onEvent((e) => events.push(e));
    server = await startHttpServer(gym, { port: 0, token: TOKEN, extensions: [wsGymExtension(), wsMcpExtension(), terminalExtension()] });
    operator = await mcpClient(`${server.url}/mcp`, AUTH);
    const start = async () => {
      const d = data(await call(operator, 'start_episode', { task_id: 'roman-numerals' }));
      return { id: d.episodeId as string, mcpPath: d.mcpPath as string, key: keyOf(d.mcpPath) };
    };
    a = await start();
    b = await start();
  });

  after(async () => {
    await operator?.close();
    await server?.close();
    await cleanup?.();
  });

  test('start_episode gives each episode its own unguessable key in mcpPath', () => {
    for (const e of [a, b]) {
      assert.match(e.mcpPath, new RegExp(`^/episodes/${e.id}/[A-Za-z0-9_-]{32}/mcp$`));
      assert.deepEqual(capabilityOfPath(e.mcpPath), { id: e.id, key: e.key, endpoint: 'mcp' });
    }
    assert.notEqual(a.key, b.key);
  });

  test("episode A's URL works without the operator's token: MCP over HTTP and WebSocket, the terminal page and its WebSocket", async () => {
    const scoped = await mcpClient(`${server.url}${a.mcpPath}`);
    try {
      const { tools } = await scoped.listTools();
      assert.ok(tools.some((t) => t.name === 'submit') && !tools.some((t) => t.name === 'start_episode' || t.name === 'list_tasks'));
      assert.match(text(await call(scoped, 'view_file', { path: 'roman.py' })), /def to_roman/);
    } finally {
      await scoped.close();
    }

    const overWs = new Client({ name: 'capability-test-ws', version: '0.0.0' });
    await overWs.connect(new WebSocketClientTransport(new URL(`${server.url.replace(/^http/, 'ws')}${a.mcpPath}/ws`)));
    try {
      assert.match(text(await call(overWs, 'list_dir', {})), /roman\.py/);
    } finally {
      await overWs.close();
    }

    const page = await fetch(`${server.url}${a.mcpPath.replace(/mcp$/, 'terminal')}`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, new RegExp(`data-pty="pty"`));
    assert.ok(!html.includes(a.key), 'the page names its assets and WebSocket relative to itself, not by the key');
    assert.equal((await fetch(`${server.url}${a.mcpPath.replace(/mcp$/, 'assets/xterm.js')}`)).status, 200);

    const term = new WebSocket(`${server.url.replace(/^http/, 'ws')}${a.mcpPath.replace(/mcp$/, 'pty')}`);
    let out = '';
    term.on('message', (d, isBinary) => {
      if (isBinary) out += d.toString();
    });
    await new Promise<void>((resolve, reject) => {
      term.once('open', () => resolve());
      term.once('error', reject);
    });
    term.send(Buffer.from('echo by-key-$((6*7))\r'), { binary: true });
    await waitFor(() => out, /by-key-42\r\n/);
    term.close();
  });

  test("episode A's key opens no operator endpoint: the episode list, /health, /mcp, /ws, /mcp/ws, the operator's terminals", async () => {
    const asHeader: Record<string, string> = { authorization: `Bearer ${a.key}` };
    for (const given of [asHeader, {} as Record<string, string>]) {
      const q = 'authorization' in given ? '' : `?token=${a.key}`;
      for (const path of [
        '/view/api/live',
        `/view/api/live/${b.id}`,
        `/view/api/live/${b.id}/items`,
        '/view/',
        '/health',
        `/terminal/${b.id}`,
      ]) {
        const res = await raw(server.url, 'GET', `${path}${q}`, given);
        assert.equal(res.status, 401, `GET ${path}${q}: ${res.body}`);
        assert.match(res.body, /missing or wrong bearer token/);
      }
      assert.equal((await raw(server.url, 'POST', `/mcp${q}`, { ...MCP_HEADERS, ...given }, INIT)).status, 401);
      for (const path of ['/ws', '/mcp/ws', `/ws/episodes/${b.id}/pty`, `/ws/episodes/${a.id}/pty`]) {
        assert.equal((await upgrade(server.url, `${path}${q}`, given)).status, 401, `upgrade ${path}${q}`);
      }
    }
    // A path that starts at A's endpoint and walks out of it reaches no operator route.
    for (const path of [
      `${a.mcpPath}/../../../../view/api/live`,
      `/episodes/${a.id}/${a.key}/../../../health`,
      `/episodes/${a.id}/${a.key}/%2e%2e/%2e%2e/%2e%2e/view/api/live`,
    ]) {
      const res = await raw(server.url, 'GET', path);
      assert.notEqual(res.status, 200, `${path}: ${res.body}`);
      assert.ok(!res.body.includes(b.id), `${path} lists no episode: ${res.body}`);
    }
  });

  test("episode A's key does not open episode B: the same 404 as an unknown episode or a missing key, on every endpoint", async () => {
    const refusals = new Set<string>();
    const bodies = async (id: string, key: string | null) => {
      const base = key === null ? `/episodes/${id}` : `/episodes/${id}/${key}`;
      const mcp = await raw(server.url, 'POST', `${base}/mcp`, MCP_HEADERS, INIT);
      const page = await raw(server.url, 'GET', `${base}/terminal`);
      const asset = await raw(server.url, 'GET', `${base}/assets/xterm.js`);
      const mcpWs = await upgrade(server.url, `${base}/mcp/ws`);
      const pty = await upgrade(server.url, `${base}/pty`);
      for (const r of [mcp, page, asset, mcpWs, pty]) {
        assert.equal(r.status, 404, `${base}: ${r.status} ${r.body}`);
        assert.match(r.body, /EPISODE_NOT_FOUND: no episode endpoint at this address/);
        assert.ok(!r.body.includes(id) && !r.body.includes(a.key) && !r.body.includes(b.key), r.body);
      }
      for (const r of [mcp, page, asset]) refusals.add(r.body);
    };
    await bodies(b.id, a.key); // B with A's key
    await bodies(b.id, `${b.key.slice(0, -1)}${b.key.endsWith('A') ? 'B' : 'A'}`); // one character off
    await bodies(b.id, null); // no key
    await bodies('ep-0000000000000000', a.key); // no such episode
    await bodies(a.id, b.key); // A with B's key
    // The operator's token does not stand in for a key.
    const withToken = await raw(server.url, 'POST', `/episodes/${b.id}/${a.key}/mcp`, { ...MCP_HEADERS, ...AUTH }, INIT);
    assert.equal(withToken.status, 404);
    refusals.add(withToken.body);
    assert.equal(refusals.size, 1, `one answer whatever was wrong: ${[...refusals].join(' | ')}`);
  });

  test("a session opened on A's URL cannot be used on B's", async () => {
    const init = await fetch(`${server.url}${a.mcpPath}`, { method: 'POST', headers: MCP_HEADERS, body: INIT });
    const session = init.headers.get('mcp-session-id');
    assert.ok(session, await init.text());
    const onB = await fetch(`${server.url}${b.mcpPath}`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': session!, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    assert.equal(onB.status, 404);
    assert.match(await onB.text(), /unknown MCP session/);
  });

  test("the gym protocol: a step on an episode this connection did not reset needs that episode's key", async () => {
    const ws = await gymProtocol(`${server.url.replace(/^http/, 'ws')}/ws?token=${TOKEN}`);
    try {
      for (const params of [
        { episode_id: b.id },
        { episode_id: b.id, episode_key: a.key },
        { episode_id: 'ep-0000000000000000', episode_key: a.key },
      ]) {
        const r = await ws.call('step', { ...params, tool: 'view_file', args: { path: 'roman.py' } });
        assert.equal(r.error?.code, -32602, JSON.stringify(r));
        assert.equal(r.error?.data?.code, 'EPISODE_NOT_FOUND');
        assert.ok(!JSON.stringify(r).includes(b.key));
        const closed = await ws.call('close', params);
        assert.equal(closed.error?.data?.code, 'EPISODE_NOT_FOUND', 'close is refused the same way');
      }
      assert.equal(gym.episode(b.id).state, 'running', 'the refused close ended nothing');
      const ok = await ws.call('step', { episode_id: b.id, episode_key: b.key, tool: 'view_file', args: { path: 'roman.py' } });
      assert.match(ok.result?.observation?.text ?? JSON.stringify(ok), /def to_roman/);
      // An episode reset on this connection needs no key here, and its key is returned for others.
      const reset = await ws.call('reset', { task_id: 'roman-numerals' });
      const { episode_id, episode_key, observation } = reset.result;
      assert.equal(typeof episode_key, 'string');
      assert.equal(observation.data.mcpPath, episodePath(gym.episode(episode_id), 'mcp'));
      assert.equal((await ws.call('step', { episode_id, tool: 'list_dir' })).result.info.tool, 'list_dir');
      // A fork made here is this connection's too.
      const fork = await ws.call('step', { episode_id, tool: 'fork_episode' });
      const forkId = fork.result.observation.data.episodeId as string;
      assert.equal((await ws.call('step', { episode_id: forkId, tool: 'list_dir' })).result.info.tool, 'list_dir');
      for (const id of [episode_id, forkId]) await ws.call('close', { episode_id: id });
    } finally {
      ws.close();
    }
  });

  test("fork_episode from A's endpoint: the fork has a key of its own, which A's does not replace", async () => {
    const scoped = await mcpClient(`${server.url}${a.mcpPath}`);
    try {
      const fork = data(await call(scoped, 'fork_episode', {}));
      const forkKey = keyOf(fork.mcpPath);
      assert.notEqual(forkKey, a.key);
      assert.equal((await raw(server.url, 'POST', `/episodes/${fork.episodeId}/${a.key}/mcp`, MCP_HEADERS, INIT)).status, 404);
      const forked = await mcpClient(`${server.url}${fork.mcpPath}`);
      try {
        assert.match(text(await call(forked, 'view_file', { path: 'roman.py' })), /def to_roman/);
        await call(forked, 'end_episode', {});
      } finally {
        await forked.close();
      }
    } finally {
      await scoped.close();
    }
  });

  test('no key reaches the trajectories, the viewer, the events or a printed episode', async () => {
    const episodes = gym.listEpisodes();
    const keys = episodes.map((e) => e.key);
    assert.ok(keys.length >= 3);
    for (const e of episodes) await e.trajectory.flush();
    const files = await fs.readdir(`${dataDir}/trajectories`);
    assert.ok(files.length >= 3);
    for (const f of files) {
      const content = await fs.readFile(`${dataDir}/trajectories/${f}`, 'utf8');
      for (const key of keys) assert.ok(!content.includes(key), `${f} holds a key`);
    }
    const live = await (await fetch(`${server.url}/view/api/live`, { headers: AUTH })).text();
    const items = await (await fetch(`${server.url}/view/api/live/${a.id}/items`, { headers: AUTH })).text();
    const health = await (await fetch(`${server.url}/health`, { headers: AUTH })).text();
    const shown = [
      live,
      items,
      health,
      JSON.stringify(events),
      ...episodes.map((e: Episode) => `${JSON.stringify(Object.keys(e))} ${inspect(e, { depth: 1 })}`),
    ];
    for (const s of shown) for (const key of keys) assert.ok(!s.includes(key), `a key is shown: ${s.slice(0, 300)}`);
    assert.equal(
      withoutEpisodeKeys(`http://h:1${a.mcpPath} and ${b.mcpPath.replace(/mcp$/, 'terminal')}`),
      `http://h:1/episodes/${a.id}/<key>/mcp and /episodes/${b.id}/<key>/terminal`,
    );
  });
});

describe('one episode, one capability (a loopback server without a token)', () => {
  test("the operator's endpoints stay open to local clients; an episode's still need its key", async () => {
    const { gym, cleanup } = await makeGym();
    const server = await startHttpServer(gym, { port: 0, extensions: [wsMcpExtension(), terminalExtension()] });
    const operator = await mcpClient(`${server.url}/mcp`);
    try {
      const started = data(await call(operator, 'start_episode', { task_id: 'roman-numerals' }));
      assert.equal((await fetch(`${server.url}/view/api/live`)).status, 200, 'the live list is open without a token (README, Security)');
      assert.equal((await raw(server.url, 'POST', `/episodes/${started.episodeId}/mcp`, MCP_HEADERS, INIT)).status, 404);
      assert.equal((await upgrade(server.url, `/episodes/${started.episodeId}/${'k'.repeat(32)}/mcp/ws`)).status, 404);
      const scoped = await mcpClient(`${server.url}${started.mcpPath}`);
      assert.match(text(await call(scoped, 'view_file', { path: 'roman.py' })), /def to_roman/);
      await scoped.close();
      // A's URL with B's id in place of A's reaches nothing, over HTTP or WebSocket.
      const other = data(await call(operator, 'start_episode', { task_id: 'roman-numerals' }));
      const swapped = String(started.mcpPath).replace(String(started.episodeId), String(other.episodeId));
      await assert.rejects(mcpClient(`${server.url}${swapped}`), /404|EPISODE_NOT_FOUND/);
      assert.equal((await upgrade(server.url, `${swapped}/ws`)).status, 404);
    } finally {
      await operator.close();
      await server.close();
      await cleanup();
    }
  });
});
