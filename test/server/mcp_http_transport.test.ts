import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { makeGym } from '../helpers.ts';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const VERSION = '2025-06-18';
const INIT = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** The events of an SSE body, as parsed JSON. */
function events(body: string): Record<string, any>[] {
  return body
    .split('\n\n')
    .map((block) => block.split('\n').find((l) => l.startsWith('data: ')))
    .filter((l): l is string => !!l)
    .map((l) => JSON.parse(l.slice(6)));
}

/** The answer of a POST, whether it came as JSON or as the last event of a stream. */
async function readAnswer(res: Response): Promise<Record<string, any>> {
  if (/^application\/json/.test(res.headers.get('content-type') ?? '')) return res.json();
  return events(await res.text()).at(-1)!;
}

describe('MCP over Streamable HTTP on node:http (NodeStreamableHttpTransport behind /mcp)', () => {
  let server: RunningServer;
  let cleanup: () => Promise<void>;
  let session: string;
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { ...HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': VERSION, ...headers },
    });

  before(async () => {
    let gym;
    ({ gym, cleanup } = await makeGym());
    server = await startHttpServer(gym, { port: 0 });
    const init = await fetch(`${server.url}/mcp`, { method: 'POST', body: JSON.stringify(INIT), headers: HEADERS });
    assert.equal(init.status, 200);
    session = init.headers.get('mcp-session-id')!;
    assert.ok(session);
    assert.equal((await init.json()).result.serverInfo.name, 'benchgym');
    assert.equal(
      (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status,
      202,
      'a notification alone is accepted with 202',
    );
  });

  after(async () => {
    await server.close();
    await cleanup();
  });

  test('a request without a progress token is answered with one JSON body, not an event stream', async () => {
    const ping = await post({ jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(ping.status, 200);
    assert.match(ping.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(ping.headers.get('mcp-session-id'), session);
    assert.deepEqual(await ping.json(), { jsonrpc: '2.0', id: 1, result: {} });
    const listed = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    assert.match(listed.headers.get('content-type') ?? '', /^application\/json/);
    assert.ok((await listed.json()).result.tools.some((t: { name: string }) => t.name === 'run_command'));
  });

  test('a batch gets an array of its answers', async () => {
    const res = await post([
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
      { jsonrpc: '2.0', id: 'b', method: 'ping' },
    ]);
    const body = (await res.json()) as { id: string }[];
    assert.deepEqual(body.map((r) => r.id).sort(), ['a', 'b']);
  });

  test('a request with a progress token gets an event stream: its progress first, then its answer', async () => {
    const res = await post({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'start_episode', arguments: { task_id: 'roman-numerals' }, _meta: { progressToken: 'p1' } },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const got = events(await res.text());
    const progress = got.filter((m) => m.method === 'notifications/progress');
    assert.ok(progress.length >= 2, JSON.stringify(got).slice(0, 500));
    assert.ok(progress.every((m) => m.params.progressToken === 'p1'));
    assert.equal(got.at(-1)!.id, 3, 'the answer comes last');
    assert.match(got.at(-1)!.result.structuredContent.episodeId, /^ep-/);
  });

  test('an answer not ready within JSON_ANSWER_WITHIN_MS turns into an event stream: headers at once, the answer later', async () => {
    const started = await post({
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: { name: 'start_episode', arguments: { task_id: 'roman-numerals' } },
    });
    const episodeId = (await readAnswer(started)).result.structuredContent.episodeId as string;
    const t0 = Date.now();
    const slow = await post({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'run_command', arguments: { episode_id: episodeId, command: 'sleep 3; echo slept' } },
    });
    const headersAfter = Date.now() - t0;
    assert.match(slow.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.ok(headersAfter < 2900, `the headers came after ${headersAfter} ms, before the command's end`);
    const answer = await readAnswer(slow);
    assert.equal(answer.id, 9);
    assert.match(answer.result.content[0].text, /slept/);
  });

  test('refusals keep the SDK transport codes: 406, 415, 400 (version), 405, 404 (session)', async () => {
    const notAcceptable = await post({ jsonrpc: '2.0', id: 4, method: 'ping' }, { accept: 'application/json' });
    assert.equal(notAcceptable.status, 406);
    assert.match((await notAcceptable.json()).error.message, /Not Acceptable/);
    const mediaType = await post({ jsonrpc: '2.0', id: 5, method: 'ping' }, { 'content-type': 'text/plain' });
    assert.equal(mediaType.status, 415);
    const version = await post({ jsonrpc: '2.0', id: 6, method: 'ping' }, { 'mcp-protocol-version': '1999-01-01' });
    assert.equal(version.status, 400);
    assert.match((await version.json()).error.message, /Unsupported protocol version: 1999-01-01/);
    const notRpc = await post({ hello: 'world' });
    assert.equal(notRpc.status, 400);
    assert.match((await notRpc.json()).error.message, /Invalid JSON-RPC message/);
    const put = await fetch(`${server.url}/mcp`, { method: 'PUT', body: '{}', headers: { ...HEADERS, 'mcp-session-id': session } });
    assert.equal(put.status, 405);
    assert.equal(put.headers.get('allow'), 'GET, POST, DELETE');
    const reinit = await post(INIT);
    assert.equal(reinit.status, 400);
    assert.match((await reinit.json()).error.message, /already initialized/);
  });

  test('GET opens the one standalone event stream of a session; DELETE ends the session', async () => {
    const own = await fetch(`${server.url}/mcp`, { method: 'POST', body: JSON.stringify(INIT), headers: HEADERS });
    const id = own.headers.get('mcp-session-id')!;
    await own.text();
    const headers = { accept: 'text/event-stream', 'mcp-session-id': id };
    const status = await new Promise<{ status: number; type?: string; close: () => void }>((resolve, reject) => {
      const req = request(`${server.url}/mcp`, { method: 'GET', headers }, (res) =>
        resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], close: () => req.destroy() }),
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(status.status, 200);
    assert.match(status.type ?? '', /^text\/event-stream/);
    const second = await fetch(`${server.url}/mcp`, { method: 'GET', headers });
    assert.equal(second.status, 409);
    status.close();
    const del = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': id } });
    assert.equal(del.status, 200);
    const after = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }),
      headers: { ...HEADERS, 'mcp-session-id': id },
    });
    assert.equal(after.status, 404, 'the deleted session is gone');
  });
});
