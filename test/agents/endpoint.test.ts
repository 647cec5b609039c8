/** The model endpoint check `benchgym run` makes before any episode, against real local HTTP servers. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { checkModelEndpoint, configuredBaseURL } from '../../src/agent/endpoint.ts';
import { startScriptedOpenAI } from './scripted_openai.ts';

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** A server answering every request with `status` (and counting them). */
async function statusServer(status: number): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url} ${req.headers.authorization ?? '-'}`);
    req.resume();
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `scripted ${status}` } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/v1`,
    hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

test('no base URL: refused, naming --base-url; never a public default', async () => {
  await assert.rejects(checkModelEndpoint({ model: 'm' }), {
    code: 'MODEL_UNAVAILABLE',
    message: /no model endpoint is configured: pass --base-url URL .*never falls back to a public endpoint/,
  });
  await assert.rejects(checkModelEndpoint({ baseURL: 'ftp://x', model: 'm' }), /not an http\(s\) URL/);
  assert.equal(configuredBaseURL(null, {}), undefined);
  assert.equal(configuredBaseURL(null, { OPENAI_BASE_URL: 'http://h/v1' }), 'http://h/v1');
  assert.equal(configuredBaseURL('http://given/v1', { OPENAI_BASE_URL: 'http://h/v1' }), 'http://given/v1');
});

test('an endpoint that is down fails at once, naming the URL', async () => {
  const url = `http://127.0.0.1:${await closedPort()}/v1`;
  const t0 = Date.now();
  await assert.rejects(checkModelEndpoint({ baseURL: url, model: 'm' }), (e: Error & { code?: string }) => {
    assert.equal(e.code, 'MODEL_UNAVAILABLE');
    assert.match(
      e.message,
      new RegExp(
        `the model endpoint ${url.replace(/[.]/g, '\\.')} is not reachable \\(GET ${url.replace(/[.]/g, '\\.')}/models: ECONNREFUSED\\)`,
      ),
    );
    return true;
  });
  assert.ok(Date.now() - t0 < 5000, 'no retries');
});

test('an OpenAI-compatible endpoint that is up passes, with its key; a model it does not list is a warning', async () => {
  const server = await startScriptedOpenAI([], { models: ['qwen', 'llama'] });
  try {
    const ok = await checkModelEndpoint({ baseURL: `${server.baseURL}/`, apiKey: 'sk-test', model: 'qwen' });
    assert.deepEqual(ok, { baseURL: server.baseURL, via: 'models', models: ['qwen', 'llama'] });
    assert.deepEqual(server.authorizations, ['Bearer sk-test']);
    const other = await checkModelEndpoint({ baseURL: server.baseURL, model: 'gpt-x' });
    assert.match(other.warning ?? '', /does not list the model 'gpt-x' \(it lists qwen, llama\)/);
    assert.equal(server.requests.length, 0, 'no completion was asked for');
  } finally {
    await server.close();
  }
});

test('an endpoint without GET /models is checked with one one-token completion', async () => {
  const server = await startScriptedOpenAI([{ content: 'OK' }]);
  try {
    const ok = await checkModelEndpoint({ baseURL: server.baseURL, model: 'm' });
    assert.equal(ok.via, 'chat');
    assert.equal(server.requests.length, 1);
    assert.equal(server.requests[0]!.max_tokens, 1);
  } finally {
    await server.close();
  }
});

test('a key refused or missing, an endpoint that fails, a URL with no API behind it: each says so', async () => {
  const unauthorized = await statusServer(401);
  const failing = await statusServer(503);
  const nothing = await statusServer(404);
  try {
    await assert.rejects(
      checkModelEndpoint({ baseURL: unauthorized.url, model: 'm' }),
      /asks for an API key \(GET \/models: HTTP 401\) and none is configured: set \$OPENAI_API_KEY/,
    );
    await assert.rejects(
      checkModelEndpoint({ baseURL: unauthorized.url, apiKey: 'bad', model: 'm' }),
      /refused the API key \(GET \/models: HTTP 401\)/,
    );
    await assert.rejects(
      checkModelEndpoint({ baseURL: failing.url, model: 'm' }),
      new RegExp(`the model endpoint ${failing.url.replace(/[.]/g, '\\.')} is failing \\(GET .*/models: HTTP 503`),
    );
    await assert.rejects(
      checkModelEndpoint({ baseURL: nothing.url, model: 'm' }),
      new RegExp(
        String.raw`no OpenAI-compatible API at http:\/\/127\.0\.0\.1:\d+\/v1: GET \/models answered HTTP 404 and POST ` +
          String.raw`\/chat\/completions HTTP 404 .*ending in \/v1`,
      ),
    );
    assert.deepEqual(
      nothing.hits.map((h) => h.split(' ').slice(0, 2).join(' ')),
      ['GET /v1/models', 'POST /v1/chat/completions'],
    );
  } finally {
    await Promise.all([unauthorized.close(), failing.close(), nothing.close()]);
  }
});

test('a ChatModel with no endpoint configured refuses to call anything (no fallback to api.openai.com)', async (t) => {
  const { ChatModel, ModelUnavailableError } = await import('../../agents/common/openai.ts');
  const saved = process.env.OPENAI_BASE_URL;
  delete process.env.OPENAI_BASE_URL;
  t.after(() => {
    if (saved !== undefined) process.env.OPENAI_BASE_URL = saved;
  });
  await assert.rejects(
    new ChatModel({ model: 'm', maxRetries: 0 }).complete([{ role: 'user', content: 'hi' }]),
    (e: unknown) => e instanceof ModelUnavailableError && /no model endpoint is configured/.test(e.message),
  );
});
