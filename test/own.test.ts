import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { request } from 'node:http';
import { promises as fs } from 'node:fs';
import { WebSocket } from 'ws';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startHttpServer, type RunningServer } from '../src/server/http.ts';
import { terminalExtension } from '../src/server/pty.ts';
import { wsGymExtension } from '../src/server/ws_gym.ts';
import { wsMcpExtension } from '../src/server/ws_mcp.ts';
import { startViewerServer } from '../src/viewer/server.ts';
import { RunStore, discoverRuns } from '../src/viewer/runs.ts';
import type { Gym } from '../src/episode/gym.ts';
import { ownValue } from '../src/own.ts';
import { PROJECT_ROOT } from '../src/project.ts';
import { main } from '../src/cli/main.ts';
import { parseFlags } from '../src/cli/options.ts';
import { BUILTIN_SANDBOXES } from '../bin/sandboxes.ts';
import { backendNamed } from '../src/sandbox/backend.ts';
import { validateCommand } from '../src/cli/commands/validate.ts';
import { agentUnderTest, goldOptions } from '../src/runner/agents.ts';
import { offering } from '../src/runner/selection.ts';
import { breakdown } from '../src/runner/metrics.ts';
import { parseJUnitXml } from '../src/scoring/junit.ts';
import { validateTask } from '../src/scoring/validate.ts';
import { debootstrapRecipe } from '../src/env/base_images.ts';
import { commitCutoff, eraCutoff, pythonCurrentAt } from '../src/env/era.ts';
import { pytestPinFor } from '../src/env/python.ts';
import { specFor } from '../envs/swebench/specs.ts';
import { importNameOf } from '../envs/gitchameleon/env.ts';
import { AGENTS, getAgent } from '../agents/index.ts';
import { choosePrediction } from '../agents/replay/index.ts';
import { BUILTINS } from '../bin/builtins.ts';
import { builtinRegistry, expectGymError, makeGym, TEST_CACHE_DIR, tempDir } from './helpers.ts';
import { writeFixtureRun } from './viewer/fixture.ts';

/**
 * Every name that comes from outside, given the names every plain object inherits: each is
 * a clear not-found or invalid error naming it, never INTERNAL, never a started episode, and no
 * HTTP answer carries a stack.
 */
const PROTO = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'prototype'];
const BAD_URL = '%E0%A4%A';

/** A failed MCP call's error, asserting it is one. */
async function failure(client: Client, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string }> {
  const r = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: { error?: { code: string; message: string } };
    content: { text?: string }[];
  };
  assert.equal(
    r.isError,
    true,
    `${name}(${JSON.stringify(args)}) succeeded: ${r.content
      .map((c) => c.text)
      .join(' ')
      .slice(0, 300)}`,
  );
  const error = r.structuredContent?.error;
  assert.ok(error, `${name}: no error object`);
  assert.notEqual(error.code, 'INTERNAL', `${name}(${JSON.stringify(args)}): ${error.message}`);
  return error;
}

function raw(
  base: string,
  method: string,
  pathName: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const req = request({ host: url.hostname, port: url.port, method, path: pathName, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${pathName}: no answer within 10 s`)));
    req.end(body);
  });
}

/** A short answer: a 4xx status, no stack, no path of this machine. */
function assertShortRefusal(what: string, r: { status: number; body: string }, statuses: number[] = [400, 401, 404]): void {
  assert.ok(statuses.includes(r.status), `${what}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
  assert.doesNotMatch(r.body, /\n\s+at |<pre>|TypeError|ReferenceError/, `${what}: a stack in the answer: ${r.body.slice(0, 500)}`);
  assert.ok(!r.body.includes(PROJECT_ROOT), `${what}: a server path in the answer: ${r.body.slice(0, 500)}`);
}

test('ownValue: own keys only, whatever the name', () => {
  const table: Record<string, number> = { a: 1, constructor: 2 };
  assert.equal(ownValue(table, 'a'), 1);
  assert.equal(ownValue(table, 'constructor'), 2, 'an own key of any name is found');
  for (const name of PROTO.filter((n) => n !== 'constructor')) assert.equal(ownValue(table, name), undefined, name);
  assert.equal(ownValue({}, 'constructor'), undefined);
  assert.equal(ownValue(undefined, 'a'), undefined);
  assert.equal(ownValue(Object.fromEntries([['__proto__', 3]]), '__proto__'), 3);
});

describe('names from outside are looked up as own properties only', () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let client: Client;

  before(async () => {
    ({ gym, cleanup } = await makeGym());
    server = await startHttpServer(gym, { port: 0, extensions: [wsGymExtension(), wsMcpExtension(), terminalExtension()] });
    const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ]);
    client = new Client({ name: 'own-test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  });

  after(async () => {
    await client?.close();
    await server?.close();
    await cleanup?.();
  });

  test('MCP: suites, tasks, contexts, prompt variants, tools and episode ids (a real client on /mcp)', async () => {
    const before = gym.listEpisodes().length;
    for (const name of PROTO) {
      const quoted = new RegExp(`'${name.replace(/[$]/g, '\\$&')}'`);
      const suite = await failure(client, 'list_tasks', { suite: name });
      assert.equal(suite.code, 'SUITE_NOT_FOUND');
      assert.match(suite.message, quoted);
      assert.equal((await failure(client, 'start_episode', { suite: name, task_id: 'roman-numerals' })).code, 'SUITE_NOT_FOUND');
      const task = await failure(client, 'start_episode', { task_id: name });
      assert.equal(task.code, 'TASK_NOT_FOUND');
      assert.match(task.message, quoted);
      const context = await failure(client, 'start_episode', { task_id: 'roman-numerals', context: name });
      assert.equal(context.code, 'INVALID_ARGUMENT');
      assert.match(context.message, new RegExp(`invalid 'context': ${quoted.source}`));
      const variant = await failure(client, 'start_episode', { task_id: 'roman-numerals', prompt_variant: name });
      assert.equal(variant.code, 'INVALID_ARGUMENT');
      assert.match(variant.message, new RegExp(`invalid 'prompt_variant': ${quoted.source}`));
      const tool = await failure(client, name, {});
      assert.equal(tool.code, 'TOOL_NOT_AVAILABLE');
      assert.match(tool.message, quoted);
      const episode = await failure(client, 'view_file', { episode_id: name, path: 'roman.py' });
      assert.equal(episode.code, 'EPISODE_NOT_FOUND');
    }
    assert.equal(gym.listEpisodes().length, before, 'no episode was started');
  });

  test("an episode's own endpoint: tool names, paths and prompt variants", async () => {
    const started = (await client.callTool({ name: 'start_episode', arguments: { task_id: 'roman-numerals' } })).structuredContent as {
      episodeId: string;
      mcpPath: string;
    };
    const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ]);
    const scoped = new Client({ name: 'own-test-episode', version: '0.0.0' });
    await scoped.connect(new StreamableHTTPClientTransport(new URL(`${server.url}${started.mcpPath}`)));
    try {
      for (const name of PROTO) {
        assert.equal((await failure(scoped, name, {})).code, 'TOOL_NOT_AVAILABLE');
        assert.equal((await failure(scoped, 'view_file', { path: name })).code, 'FILE_NOT_FOUND');
        assert.equal((await failure(scoped, 'undo_edit', { path: name })).code, 'NOTHING_TO_UNDO');
      }
      assert.equal(gym.episode(started.episodeId).state, 'running');
    } finally {
      await scoped.close();
      await gym.endEpisode(gym.episode(started.episodeId));
    }
  });

  test('the gym protocol: methods, tools, tasks and reset options', async () => {
    const ws = new WebSocket(`${server.url.replace(/^http/, 'ws')}/ws`);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const answers = new Map<number, Record<string, any>>();
    ws.on('message', (m) => {
      const msg = JSON.parse(String(m));
      if (typeof msg.id === 'number') answers.set(msg.id, msg);
    });
    let id = 0;
    const rpc = async (method: string, params?: unknown) => {
      const mine = ++id;
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: mine, method, ...(params === undefined ? {} : { params }) }));
      for (let i = 0; i < 400 && !answers.has(mine); i++) await new Promise((r) => setTimeout(r, 25));
      const answer = answers.get(mine);
      assert.ok(answer, `no answer to ${method}`);
      return answer;
    };
    try {
      const before = gym.listEpisodes().length;
      const { result } = await rpc('reset', { task_id: 'roman-numerals' });
      for (const name of PROTO) {
        assert.equal((await rpc(name, {})).error?.code, -32601, `method ${name}`);
        const step = await rpc('step', { episode_id: result.episode_id, tool: name });
        assert.equal(step.error?.data?.code, 'INVALID_ARGUMENT', `tool ${name}: ${JSON.stringify(step)}`);
        assert.match(step.error.message, new RegExp(`unknown episode tool '${name.replace(/[$]/g, '\\$&')}'`));
        assert.equal((await rpc('reset', { task_id: name })).error?.data?.code, 'TASK_NOT_FOUND');
        assert.equal(
          (await rpc('reset', { task_id: 'roman-numerals', options: { prompt_variant: name } })).error?.data?.code,
          'INVALID_ARGUMENT',
        );
        assert.equal((await rpc('step', { episode_id: name, tool: 'list_dir' })).error?.data?.code, 'EPISODE_NOT_FOUND');
      }
      assert.equal(gym.listEpisodes().length, before + 1, 'only the one reset started an episode');
      await rpc('close', { episode_id: result.episode_id });
    } finally {
      ws.terminate();
    }
  });

  test('HTTP: assets, pages and API routes named like inherited members, malformed bodies and bad URLs get short answers, never a stack', async () => {
    const paths = PROTO.flatMap((name) => [
      `/view/assets/${name}`,
      `/terminal/assets/${name}`,
      `/terminal/${name}`,
      `/view/api/live/${name}`,
      `/view/api/live/${name}/items`,
      `/view/api/runs/${name}`,
      `/view/api/${name}`,
      `/${name}`,
      `/episodes/${name}/${name}/mcp`,
      `/episodes/${name}/${name}/terminal`,
    ]);
    for (const p of paths) assertShortRefusal(`GET ${p}`, await raw(server.url, 'GET', p));
    for (const p of [
      `/view/api/live/${BAD_URL}`,
      `/view/api/live/${BAD_URL}/items`,
      `/terminal/${BAD_URL}`,
      `/view/assets/${BAD_URL}`,
      `/terminal/assets/${BAD_URL}`,
      `/episodes/${BAD_URL}/${BAD_URL}/mcp`,
      `/${BAD_URL}`,
      `/view/api/runs/${BAD_URL}`,
    ]) {
      assertShortRefusal(`GET ${p}`, await raw(server.url, 'GET', p));
    }
    const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    for (const p of ['/mcp', '/health', '/view/api/live', '/nothing-here']) {
      for (const body of ['{bad', '{"a":', '\u0000', '[1,2'])
        assertShortRefusal(`POST ${p} ${JSON.stringify(body)}`, await raw(server.url, 'POST', p, json, body));
    }
    const parse = await raw(server.url, 'POST', '/mcp', json, '{bad');
    assert.equal(parse.status, 400);
    assert.equal(JSON.parse(parse.body).error.code, -32700, 'a body that is not JSON is a JSON-RPC parse error');
    assert.equal((await fetch(`${server.url}/health`)).status, 200, 'the server goes on');
  });

  test('a WebSocket upgrade on a path that does not decode is refused, and the server goes on', async () => {
    for (const p of [`/ws/episodes/${BAD_URL}/pty`, `/episodes/${BAD_URL}/${BAD_URL}/mcp/ws`, `/episodes/${BAD_URL}/${BAD_URL}/pty`]) {
      const status = await new Promise<number>((resolve, reject) => {
        const url = new URL(server.url);
        const req = request({
          host: url.hostname,
          port: url.port,
          path: p,
          headers: {
            connection: 'Upgrade',
            upgrade: 'websocket',
            'sec-websocket-version': '13',
            'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
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
        // A server whose upgrade handler threw never answers.
        req.setTimeout(5000, () => {
          req.destroy();
          resolve(0);
        });
        req.end();
      });
      assert.equal(status, 404, `${p}: ${status === 0 ? 'no answer within 5 s' : status}`);
    }
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  });

  test('benchgym view: assets, runs and table filters named like inherited members', async () => {
    const root = await tempDir('benchgym-own-view-');
    await writeFixtureRun(path.join(root, 'run'), { tasks: 4, samples: 1 });
    const viewer = await startViewerServer({ runs: new RunStore(await discoverRuns([root])) }, { port: 0 });
    try {
      for (const name of PROTO) {
        for (const p of [`/assets/${name}`, `/api/runs/${name}`, `/api/runs/run/tasks/${name}/0`, `/api/${name}`, `/${name}`])
          assertShortRefusal(`view GET ${p}`, await raw(viewer.url, 'GET', p));
        // A metadata filter on an inherited name matches no row, whatever value it asks for.
        const q = new URLSearchParams({ [`m.${name}`]: name === 'constructor' ? String(Object) : 'x' });
        const page = (await (await fetch(`${viewer.url}api/runs/run/results?${q}`)).json()) as { matched: number; total: number };
        assert.equal(page.matched, 0, `m.${name}: ${JSON.stringify(page)}`);
      }
      for (const p of [`/api/runs/${BAD_URL}`, `/assets/${BAD_URL}`, `/${BAD_URL}`])
        assertShortRefusal(`view GET ${p}`, await raw(viewer.url, 'GET', p));
    } finally {
      await viewer.close();
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  test('the CLI, the runner and the registries: commands, flags, agents, suites, backends, base images, versions, contexts', async () => {
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      for (const name of PROTO) assert.equal(await main([name], BUILTINS), 2, `benchgym ${name}`);
    } finally {
      process.stderr.write = write;
    }
    for (const name of PROTO)
      assert.ok(
        written.some((w) => w.includes(`unknown command '${name}'`)),
        written.join(''),
      );

    const registry = builtinRegistry('examples');
    const tasks = await registry.tasks('examples');
    const task = tasks.find((t) => t.id === 'roman-numerals')!;
    for (const name of PROTO) {
      await expectGymError(
        Promise.resolve().then(() => parseFlags([`--${name}`], { port: { type: 'string' } })),
        'INVALID_ARGUMENT',
        new RegExp(`unknown option --${name.replace(/[$]/g, '\\$&')}`),
      );
      await expectGymError(
        Promise.resolve().then(() => agentUnderTest(AGENTS, name, {}, false)),
        'INVALID_ARGUMENT',
        new RegExp(`unknown agent '${name}'`),
      );
      assert.throws(() => getAgent(name), new RegExp(`unknown agent '${name}'`));
      await expectGymError(
        Promise.resolve().then(() => backendNamed(BUILTIN_SANDBOXES, name)),
        'INVALID_ARGUMENT',
        new RegExp(`invalid --sandbox: '${name}'`),
      );
      await expectGymError(registry.tasks(name), 'SUITE_NOT_FOUND');
      await expectGymError(registry.task('examples', name), 'TASK_NOT_FOUND', new RegExp(`no task '${name}'`));
      await expectGymError(
        Promise.resolve().then(() => registry.enable(name)),
        'SUITE_NOT_FOUND',
        new RegExp(`unknown suite '${name}'`),
      );
      await expectGymError(
        Promise.resolve().then(() => offering(tasks, name, true)),
        'INVALID_ARGUMENT',
        new RegExp(`invalid --context '${name}'`),
      );
      await expectGymError(
        Promise.resolve().then(() => offering(tasks, name, false)),
        'INVALID_ARGUMENT',
        /no task of the suite offers it/,
      );
      assert.deepEqual(goldOptions(task, name), goldOptions(task), `--gold with context ${name} is the task's own solution`);
      await expectGymError(
        Promise.resolve().then(() => debootstrapRecipe({ kind: 'python', version: name })),
        'INVALID_ARGUMENT',
        /no base image recipe for python/,
      );
      await expectGymError(
        Promise.resolve().then(() => debootstrapRecipe({ kind: 'java', version: name })),
        'INVALID_ARGUMENT',
        /no base image recipe for java/,
      );
      assert.match(String(pytestPinFor(name, [])), /^pytest==/);
      assert.equal(eraCutoff(new Date('2020-01-01T00:00:00Z'), name), '2020-01-02T00:00:00Z');
      assert.equal(commitCutoff('2020-01-01T00:00:00Z', name), '2020-01-01T00:00:00Z');
      assert.equal(pythonCurrentAt('2020-01-01', [name]), null);
      assert.deepEqual(specFor(name, name, name), specFor('nobody/nothing', '0', 'x'), `specFor(${name}) is the default spec`);
      assert.equal(importNameOf(name), name.toLowerCase());
      assert.equal(choosePrediction({ predictions: {} } as never, { ...task, id: name } as never), undefined);
    }
  });

  test('reports and validation: report attributes, breakdown keys and validate contexts named like inherited members', async () => {
    for (const name of PROTO) {
      // An attribute named like an inherited member is read as an attribute, and never changes what the report's object is.
      const [tc] = parseJUnitXml(`<testsuite><testcase ${name}="x" classname="a.B" name="t &${name};"/></testsuite>`);
      assert.ok(tc, name);
      assert.equal(ownValue(tc.attrs, name), 'x', `${name}: ${JSON.stringify(tc.attrs)}`);
      assert.equal(tc.attrs.name, `t &${name};`, 'an entity named like an inherited member stays as written');
      assert.equal(Object.getPrototypeOf(tc.attrs), null);
      const groups = breakdown([{ task: 't', sample: 0, status: 'passed', infra: false, metadata: { level: 'x' } }], name);
      assert.deepEqual(
        groups.map((g) => g.value),
        ['(none)'],
        `report --by ${name}`,
      );
    }
    const { gym, cleanup } = await makeGym({ registry: builtinRegistry('examples') });
    try {
      const task = await gym.registry.task('examples', 'roman-numerals');
      for (const name of PROTO) {
        const v = await validateTask(gym, task, { context: name });
        assert.equal(v.status, 'error', JSON.stringify(v));
        assert.deepEqual(v.reasons, [
          `INVALID_ARGUMENT: task 'roman-numerals' has no '${name}' start state (it has ${task.defaultContext})`,
        ]);
        assert.equal(v.startState, undefined, 'nothing was scored');
      }
    } finally {
      await cleanup();
    }
  });

  test('benchgym validate --context: an inherited name is a start state no task offers', async () => {
    const dataDir = await tempDir('benchgym-own-validate-');
    try {
      for (const name of PROTO) {
        await expectGymError(
          validateCommand(BUILTINS).run([
            '--suite',
            'examples',
            '--tasks',
            'roman-numerals',
            '--context',
            name,
            '--data-dir',
            dataDir,
            '--cache-dir',
            TEST_CACHE_DIR,
          ]),
          'INVALID_ARGUMENT',
          new RegExp(`--context: no task asked for offers a '${name}' start state`),
        );
      }
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
