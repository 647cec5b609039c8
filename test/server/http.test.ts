import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { makeGym } from '../helpers.ts';
import { KEEP_ALIVE_ADVERTISED_S } from '../../src/server/keep_alive.ts';
import { call, data, solveRepoPatch, text } from './scenario.ts';

async function connect(url: string, headers?: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'benchgym-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers } } : undefined));
  return client;
}

describe('MCP over Streamable HTTP', () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let client: Client;

  before(async () => {
    ({ gym, cleanup } = await makeGym());
    server = await startHttpServer(gym, { port: 0 });
    client = await connect(`${server.url}/mcp`);
  });

  after(async () => {
    await client.close();
    await server.close();
    await cleanup();
  });

  test('lists the contract tools with schemas and annotations', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    for (const name of [
      'list_suites',
      'list_tasks',
      'start_episode',
      'view_file',
      'edit_file',
      'insert_lines',
      'create_file',
      'undo_edit',
      'list_dir',
      'find_files',
      'search',
      'run_command',
      'run_tests',
      'view_error_log',
      'get_diff',
      'submit',
      'end_episode',
    ]) {
      assert.ok(names.includes(name), `tool ${name} is served`);
    }
    const viewFile = tools.find((t) => t.name === 'view_file')!;
    assert.deepEqual([...(viewFile.inputSchema.required ?? [])].sort(), ['episode_id', 'path']);
    assert.equal(viewFile.annotations?.readOnlyHint, true);
  });

  test('lists suites and tasks', async () => {
    const suites = data(await call(client, 'list_suites', {}));
    assert.deepEqual(
      suites.suites.map((s: { id: string }) => s.id),
      ['examples'],
    );
    const tasks = data(await call(client, 'list_tasks', { suite: 'examples' }));
    assert.ok(tasks.total >= 6);
    assert.ok(tasks.tasks.some((t: { id: string; kind: string }) => t.id === 'inventory-discount-bug' && t.kind === 'repo-patch'));
    assert.ok(!JSON.stringify(tasks).includes('test_full_discount_means_no_tax'), 'listings never show hidden test names');
  });

  test('solves a repo-patch task end to end: failing tests, edit, passing tests, submit → reward 1', async () => {
    const started = await call(client, 'start_episode', { task_id: 'inventory-discount-bug' });
    const episodeId = data(started).episodeId as string;
    assert.match(text(started), /Sales tax is charged on the full price/);
    const { verdict, progress } = await solveRepoPatch(client, { episode_id: episodeId });
    assert.equal(verdict.reward, 1, JSON.stringify(verdict, null, 1));
    assert.equal(verdict.status, 'passed');
    assert.equal(verdict.failToPass.failed.length, 0);
    assert.ok(verdict.failToPass.passed.length >= 5);
    assert.equal(verdict.passToPass.failed.length, 0);
    assert.ok(
      progress.some((m) => /hidden tests/.test(m)),
      `progress notifications during submit: ${progress.join(' | ')}`,
    );
    // The reproduction test was a test file: scoring reset it, and said so.
    assert.ok(verdict.notes.some((n: string) => n.includes('tests/test_repro.py')));
    const after = await call(client, 'run_command', { episode_id: episodeId, command: 'true' });
    assert.equal(after.isError, true);
    assert.match(text(after), /EPISODE_ENDED/);
  });

  test('submit without changes → reward 0', async () => {
    const episodeId = data(await call(client, 'start_episode', { task_id: 'inventory-discount-bug' })).episodeId;
    const verdict = data(await call(client, 'submit', { episode_id: episodeId }));
    assert.equal(verdict.reward, 0);
    assert.equal(verdict.status, 'failed');
    assert.ok(verdict.failToPass.failed.length >= 5);
  });

  test('a scoped endpoint serves one episode without episode_id', async () => {
    const started = data(await call(client, 'start_episode', { task_id: 'roman-numerals' }));
    const episodeId = started.episodeId as string;
    assert.match(started.mcpPath, new RegExp(`^/episodes/${episodeId}/[A-Za-z0-9_-]{32}/mcp$`));
    const scoped = await connect(`${server.url}${started.mcpPath}`);
    try {
      const { tools } = await scoped.listTools();
      assert.ok(!tools.some((t) => t.name === 'start_episode'));
      assert.ok(!tools.find((t) => t.name === 'view_file')!.inputSchema.properties?.episode_id);
      const viewed = await call(scoped, 'view_file', { path: 'roman.py' });
      assert.match(text(viewed), /def to_roman/);
      assert.equal(data(await call(scoped, 'submit', {})).reward, 0);
    } finally {
      await scoped.close();
    }
    await assert.rejects(connect(`${server.url}/episodes/ep-nope/mcp`), /404|EPISODE_NOT_FOUND/);
    await assert.rejects(
      connect(`${server.url}/episodes/${episodeId}/mcp`),
      /404|EPISODE_NOT_FOUND/,
      'the path without the key is no endpoint',
    );
  });

  test('bad inputs get errors naming what was wrong, and the episode stays usable', async () => {
    const episodeId = data(await call(client, 'start_episode', { task_id: 'roman-numerals' })).episodeId;
    for (const path of ['../../etc/passwd', '/etc/passwd']) {
      const r = await call(client, 'view_file', { episode_id: episodeId, path });
      assert.equal(r.isError, true);
      assert.match(text(r), /PATH_OUTSIDE_WORKSPACE|outside the workspace/);
      assert.doesNotMatch(text(r), /root:x:0:0/);
    }
    // A symlink to / made inside the workspace, and a sibling directory sharing the prefix.
    await call(client, 'run_command', { episode_id: episodeId, command: 'ln -s / rootlink && ln -s /etc/passwd pw' });
    for (const path of ['rootlink/etc/passwd', 'pw', '../workspace-evil/secret', '../home']) {
      const r = await call(client, 'view_file', { episode_id: episodeId, path });
      assert.equal(r.isError, true, path);
      assert.match(text(r), /PATH_OUTSIDE_WORKSPACE/, path);
      assert.doesNotMatch(text(r), /root:x:0:0/);
    }
    const badType = await call(client, 'view_file', { episode_id: episodeId, path: 42 });
    assert.equal(badType.isError, true);
    assert.match(text(badType), /path/);
    const missing = await call(client, 'edit_file', { episode_id: episodeId, path: 'roman.py' });
    assert.equal(missing.isError, true);
    assert.match(text(missing), /old_str/);
    const unknownEpisode = await call(client, 'view_file', { episode_id: 'ep-does-not-exist', path: 'roman.py' });
    assert.match(text(unknownEpisode), /EPISODE_NOT_FOUND/);
    const unknownTask = await call(client, 'start_episode', { task_id: 'no-such-task' });
    assert.match(text(unknownTask), /TASK_NOT_FOUND/);
    assert.deepEqual(data(unknownTask).error.code, 'TASK_NOT_FOUND');
    const unknownSuite = await call(client, 'list_tasks', { suite: 'nope' });
    assert.match(text(unknownSuite), /SUITE_NOT_FOUND/);
    const ok = await call(client, 'view_file', { episode_id: episodeId, path: 'roman.py', start_line: 1, end_line: 3 });
    assert.equal(ok.isError, undefined);
    assert.match(text(ok), /lines 1-3/);
  });

  test('a command printing 1 GB returns capped output and server memory stays bounded', async () => {
    const episodeId = data(await call(client, 'start_episode', { task_id: 'roman-numerals' })).episodeId;
    const before = process.memoryUsage().rss;
    const r = await call(client, 'run_command', {
      episode_id: episodeId,
      command: "head -c 1000000000 /dev/zero | tr '\\0' a",
      timeout_s: 120,
    });
    const grown = process.memoryUsage().rss - before;
    const d = data(r);
    assert.equal(d.totalBytes.stdout, 1_000_000_000);
    assert.ok(d.stdout.length < 1_000_000, `kept ${d.stdout.length} characters`);
    assert.match(text(r), /output capped/);
    assert.ok(grown < 300 * 1024 * 1024, `server RSS grew by ${Math.round(grown / 1e6)} MB`);
  });

  test('sleep 1000 with a 2 s timeout returns in about 2 s with timedOut', async () => {
    const episodeId = data(await call(client, 'start_episode', { task_id: 'roman-numerals' })).episodeId;
    const t0 = Date.now();
    const r = await call(client, 'run_command', { episode_id: episodeId, command: 'echo before; sleep 1000', timeout_s: 2 });
    const elapsed = Date.now() - t0;
    assert.equal(data(r).timedOut, true);
    assert.match(text(r), /timed out/);
    assert.match(text(r), /before/, 'partial output is returned');
    assert.ok(elapsed < 6000, `returned after ${elapsed} ms`);
  });

  test('a cancelled call stops its command and the episode goes on', async () => {
    const episodeId = data(await call(client, 'start_episode', { task_id: 'roman-numerals' })).episodeId;
    const controller = new AbortController();
    const pending = client.callTool(
      { name: 'run_command', arguments: { episode_id: episodeId, command: 'sleep 60', timeout_s: 120 } },
      undefined,
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort('test cancels'), 500);
    await assert.rejects(pending);
    const t0 = Date.now();
    const next = await call(client, 'run_command', { episode_id: episodeId, command: 'echo still-here' });
    assert.match(text(next), /still-here/);
    assert.ok(Date.now() - t0 < 10_000, 'the cancelled command did not hold the episode');
  });

  test('Host and Origin are validated', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const evilOrigin = await fetch(`${server.url}/mcp`, { method: 'POST', body, headers: { ...headers, origin: 'https://evil.example' } });
    assert.equal(evilOrigin.status, 403);
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}/mcp`, { method: 'POST', headers: { ...headers, host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(body);
    });
    assert.equal(status, 403);
    const health = await fetch(`${server.url}/health`);
    assert.equal(health.status, 200);
  });
});

describe('bearer token', () => {
  test('required when set; refused binding beyond loopback without one', async () => {
    const { gym, cleanup } = await makeGym();
    const server = await startHttpServer(gym, { port: 0, token: 'sekret' });
    try {
      await assert.rejects(connect(`${server.url}/mcp`), /401|token/);
      await assert.rejects(connect(`${server.url}/mcp`, { authorization: 'Bearer wrong' }), /401|token/);
      const client = await connect(`${server.url}/mcp`, { authorization: 'Bearer sekret' });
      assert.ok((await client.listTools()).tools.length > 10);
      await client.close();
      await assert.rejects(startHttpServer(gym, { host: '0.0.0.0', port: 0 }), /token/);
    } finally {
      await server.close();
      await cleanup();
    }
  });
});

describe('abandoned MCP sessions', () => {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  /** An initialize and nothing more: a client that never closes its session. */
  const open = async (url: string) => {
    const res = await fetch(`${url}/mcp`, { method: 'POST', body, headers });
    const text = await res.text();
    return { status: res.status, session: res.headers.get('mcp-session-id'), text };
  };

  test('expire when idle and are capped with a clear error', async () => {
    const { gym, cleanup } = await makeGym();
    const server = await startHttpServer(gym, { port: 0, sessionIdleMs: 1500, maxSessions: 5 });
    try {
      const sessions = [];
      for (let i = 0; i < 5; i++) sessions.push(await open(server.url));
      assert.ok(
        sessions.every((s) => s.status === 200 && s.session),
        JSON.stringify(sessions),
      );
      const refused = await open(server.url);
      assert.equal(refused.status, 503);
      assert.match(refused.text, /CAPACITY: 5 MCP sessions are open, the most this server allows \(5\)/);
      assert.equal(server.mcpSessions(), 5);
      // A session in use stays: a request on it resets its idle clock.
      await new Promise((r) => setTimeout(r, 1000));
      const ping = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
        headers: { ...headers, 'mcp-session-id': sessions[0]!.session!, 'mcp-protocol-version': '2025-06-18' },
      });
      assert.equal(ping.status, 200, await ping.text());
      const deadline = Date.now() + 10_000;
      while (server.mcpSessions() > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.equal(server.mcpSessions(), 1, 'the idle sessions were closed, the used one kept');
      while (server.mcpSessions() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.equal(server.mcpSessions(), 0, 'every abandoned session is freed');
      const gone = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }),
        headers: { ...headers, 'mcp-session-id': sessions[1]!.session! },
      });
      assert.equal(gone.status, 404);
      assert.match(await gone.text(), /idle/);
      const again = await open(server.url);
      assert.equal(again.status, 200, 'room again once idle sessions are gone');
    } finally {
      await server.close();
      await cleanup();
    }
  });
});

describe('idle connections', () => {
  // An SDK client in a thread of its own: its event loop can be held busy while the server's runs on.
  const busyClient = `
    const { workerData, parentPort } = require('node:worker_threads');
    (async () => {
      const { Client } = await import(workerData.client);
      const { StreamableHTTPClientTransport } = await import(workerData.transport);
      const client = new Client({ name: 'busy', version: '0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(workerData.url)));
      await client.ping();
      // Busy past the server's keep-alive: no timer and no socket event runs here meanwhile.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.busyMs);
      const said = await client.ping().then(
        () => 'answered',
        (e) => 'failed: ' + e.message + (e.cause ? ' (' + e.cause.code + ' ' + e.cause.message + ')' : ''),
      );
      await client.close().catch(() => {});
      parentPort.postMessage(said);
    })().catch((e) => parentPort.postMessage('client error: ' + e.message));`;

  test('a client busy past the advertised keep-alive reuses its idle connection and gets its answer', async () => {
    const { gym, cleanup } = await makeGym();
    const server = await startHttpServer(gym, { port: 0 });
    const sdk = (p: string) => pathToFileURL(createRequire(import.meta.url).resolve(`@modelcontextprotocol/sdk/${p}`)).href;
    try {
      // Clients still hear the usual 5 s, and drop idle connections about then when not busy.
      assert.equal((await fetch(`${server.url}/health`)).headers.get('keep-alive'), `timeout=${KEEP_ALIVE_ADVERTISED_S}`);
      // Node closes an idle connection 1 s past what it advertises: busy 2 s past that.
      const worker = new Worker(busyClient, {
        eval: true,
        workerData: {
          url: `${server.url}/mcp`,
          busyMs: (KEEP_ALIVE_ADVERTISED_S + 3) * 1000,
          client: sdk('client/index.js'),
          transport: sdk('client/streamableHttp.js'),
        },
      });
      const said = await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      await worker.terminate();
      assert.equal(said, 'answered');
    } finally {
      await server.close();
      await cleanup();
    }
  });
});

describe('listening', () => {
  test('a port in use is said as such, naming the port, and the server that holds it goes on', async () => {
    const { gym, cleanup } = await makeGym();
    const first = await startHttpServer(gym, { port: 0 });
    try {
      await assert.rejects(
        startHttpServer(gym, { port: first.port }),
        (err: unknown) =>
          err instanceof Error &&
          (err as { code?: string }).code === 'INVALID_ARGUMENT' &&
          err.message.includes(`port ${first.port} on 127.0.0.1 is already in use`),
      );
      assert.equal((await fetch(`${first.url}/health`)).status, 200);
    } finally {
      await first.close();
      await cleanup();
    }
  });
});
