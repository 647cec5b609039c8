import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { isLoopbackHost } from '../../src/protocol/access.ts';
import { wsGymExtension } from '../../src/server/ws_gym.ts';
import { wsMcpExtension } from '../../src/server/ws_mcp.ts';
import { terminalExtension } from '../../src/server/pty.ts';
import { openEnvExtension } from '../../src/server/openenv/extension.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { makeGym } from '../helpers.ts';

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
});

/** Every HTTP route of a served gym (method, path, body); none needs a real episode to be refused. */
const ROUTES: [string, string, string?][] = [
  ['POST', '/mcp', INIT],
  ['POST', '/episodes/ep-none/key/mcp', INIT],
  ['GET', '/health'],
  ['GET', '/terminal/ep-none'],
  ['GET', '/episodes/ep-none/key/terminal'],
  ['GET', '/terminal/assets/terminal.js'],
  ['GET', '/episodes/ep-none/key/assets/terminal.js'],
  ['GET', '/view/api/live'],
  ['GET', '/openenv/health'],
  ['POST', '/openenv/reset', '{"task_id":"roman-numerals"}'],
  ['POST', '/openenv/mcp', '{}'],
];
const UPGRADES = [
  '/mcp',
  '/episodes/ep-none/key/mcp',
  '/ws',
  '/mcp/ws',
  '/episodes/ep-none/key/mcp/ws',
  '/ws/episodes/ep-none/pty',
  '/episodes/ep-none/key/pty',
  '/openenv/ws',
  '/openenv/mcp',
];

const BAD_ORIGINS = [
  'http://127.evil.example',
  'http://127.0.0.1.evil.example',
  'http://localhost.evil.example',
  'http://[::1].evil',
  'null',
  'https://evil.example',
];
const GOOD_ORIGINS = ['http://127.0.0.2:1234', 'http://localhost:5173', 'http://[::1]:80', 'http://127.0.0.1'];

/** One raw request, so Host and Origin are exactly what the test says. */
function raw(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        res.destroy();
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A WebSocket upgrade request; resolves with the status line's code (101 when upgraded). */
function upgrade(url: string, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, {
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
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

test('isLoopbackHost parses IP literals and never matches by prefix', () => {
  for (const h of ['127.0.0.1', '127.0.0.2', '127.255.255.254', 'localhost', 'LOCALHOST', '::1', '[::1]', '0:0:0:0:0:0:0:1'])
    assert.equal(isLoopbackHost(h), true, h);
  for (const h of [
    '127.evil.example',
    '127.0.0.1.evil.example',
    'localhost.evil.example',
    '[::1].evil',
    '128.0.0.1',
    '10.0.0.1',
    '0.0.0.0',
    '::',
    '::2',
    '1270.0.0.1',
    '127',
    'evil.example',
    '',
  ])
    assert.equal(isLoopbackHost(h), false, h);
});

describe('Origin and Host checks on every route and upgrade', () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let server: RunningServer;

  before(async () => {
    ({ gym, cleanup } = await makeGym());
    server = await startHttpServer(gym, {
      port: 0,
      allowedOrigins: ['app.example', 'https://ide.example:8443'],
      allowedHosts: ['gym.internal'],
      extensions: [wsGymExtension(), wsMcpExtension(), openEnvExtension(), terminalExtension()],
    });
  });

  after(async () => {
    await server.close();
    await cleanup();
  });

  test('look-alike Origins are refused on every HTTP route (403)', async () => {
    for (const origin of [...BAD_ORIGINS, 'http://app.example.evil', 'https://ide.example:9999']) {
      for (const [method, path, body] of ROUTES)
        assert.equal(await raw(server.url, method, path, { origin }, body), 403, `${method} ${path} with Origin ${origin}`);
    }
  });

  test('look-alike Origins are refused on every WebSocket upgrade (403)', async () => {
    for (const origin of BAD_ORIGINS) {
      for (const path of UPGRADES) assert.equal(await upgrade(server.url, path, { origin }), 403, `upgrade ${path} with Origin ${origin}`);
    }
  });

  test('loopback and configured Origins are allowed', async () => {
    for (const origin of [...GOOD_ORIGINS, 'http://app.example', 'https://app.example:3000', 'https://ide.example:8443']) {
      assert.equal(await raw(server.url, 'GET', '/health', { origin }), 200, `/health with Origin ${origin}`);
      assert.notEqual(await raw(server.url, 'POST', '/mcp', { origin }, INIT), 403, `/mcp with Origin ${origin}`);
      for (const path of ['/ws', '/mcp/ws', '/ws/episodes/ep-none/pty', '/openenv/ws'])
        assert.equal(await upgrade(server.url, path, { origin }), 101, `upgrade ${path} with Origin ${origin}`);
    }
  });

  test('DNS-rebinding Host headers are refused on every route and upgrade; loopback and configured ones pass', async () => {
    for (const host of [
      'evil.example',
      '127.0.0.1.evil.example',
      '127.evil.example',
      'localhost.evil.example',
      'localhost@evil.example',
      'gym.internal.evil',
    ]) {
      for (const [method, path, body] of ROUTES)
        assert.equal(await raw(server.url, method, path, { host }, body), 403, `${method} ${path} with Host ${host}`);
      for (const path of UPGRADES) assert.equal(await upgrade(server.url, path, { host }), 403, `upgrade ${path} with Host ${host}`);
    }
    const port = server.port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `LOCALHOST:${port}`, `gym.internal:${port}`]) {
      assert.equal(await raw(server.url, 'GET', '/health', { host }), 200, `/health with Host ${host}`);
      assert.equal(await upgrade(server.url, '/ws', { host }), 101, `upgrade /ws with Host ${host}`);
    }
  });
});

test('a bind address that only looks like loopback needs a token', async () => {
  const { gym, cleanup } = await makeGym();
  try {
    for (const host of ['127.evil.example', 'localhost.evil.example'])
      await assert.rejects(startHttpServer(gym, { host, port: 0 }), /token/, host);
  } finally {
    await cleanup();
  }
});
