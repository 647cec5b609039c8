import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../../src/episode/gym.ts';
import { startHttpServer, type RunningServer } from '../../../src/server/http.ts';
import { openEnvExtension } from '../../../src/server/openenv/extension.ts';
import { makeGym, trajectoryRecords } from '../../helpers.ts';

type Json = Record<string, any>;

describe("OpenEnv's HTTP routes below /openenv", () => {
  let gym: Gym;
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let base: string;
  before(async () => {
    ({ gym, dataDir, cleanup } = await makeGym());
    server = await startHttpServer(gym, { port: 0, extensions: [openEnvExtension()] });
    base = `${server.url}/openenv`;
  });
  after(async () => {
    await server.close();
    await cleanup();
  });

  const post = async (route: string, body: unknown, raw = false): Promise<{ status: number; json: Json }> => {
    const res = await fetch(`${base}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: raw ? (body as string) : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Json };
  };
  const get = async (route: string) => {
    const res = await fetch(`${base}${route}`);
    return { status: res.status, json: (await res.json()) as Json };
  };

  test('health, metadata, schema, state and openapi.json answer as openenv validate expects', async () => {
    assert.deepEqual(await get('/health'), { status: 200, json: { status: 'healthy' } });
    const metadata = await get('/metadata');
    assert.equal(metadata.json.name, 'benchgym');
    assert.match(metadata.json.description, /examples \(6 tasks\)/);
    const schema = (await get('/schema')).json;
    assert.deepEqual(Object.keys(schema).sort(), ['action', 'observation', 'state']);
    assert.deepEqual(
      schema.action.anyOf.map((s: Json) => s.properties.type.const),
      ['call_tool', 'list_tools'],
    );
    assert.ok(schema.observation.anyOf.some((s: Json) => s.properties.tool_name && s.properties.result && s.properties.error));
    assert.deepEqual(schema.state.required, ['episode_id', 'step_count']);
    assert.deepEqual(
      await get('/state'),
      { status: 200, json: { episode_id: null, step_count: 0 } },
      'a fresh session: no episode, as OpenEnv reads state off a fresh environment',
    );
    const openapi = (await get('/openapi.json')).json;
    assert.equal(typeof openapi.info.version, 'string');
    for (const p of ['/reset', '/step', '/state', '/health', '/schema', '/metadata', '/mcp'])
      assert.ok(openapi.paths[p], `openapi.json lists ${p}`);
  });

  test('POST /reset is stateless, as in OpenEnv: it starts the episode, answers its first observation and ends it', async () => {
    const { status, json } = await post('/reset', { task_id: 'roman-numerals', seed: 3 });
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(json).sort(), ['done', 'observation', 'reward']);
    assert.equal(json.observation.metadata.task_id, 'roman-numerals');
    const id = json.observation.data.episodeId as string;
    assert.equal(gym.episode(id).state, 'ended');
    assert.deepEqual(
      (await trajectoryRecords(dataDir, id, 'end')).map((r) => r.state),
      ['ended'],
    );
    const empty = await fetch(`${base}/reset`, { method: 'POST' });
    assert.equal(empty.status, 200, 'no body: the next task of the default suite');
    const emptyId = ((await empty.json()) as Json).observation.data.episodeId as string;
    assert.equal(gym.episode(emptyId).state, 'ended');
  });

  test('POST /reset refuses what is not a reset with 422 and a detail list naming each problem; an unknown task is 422 too', async () => {
    assert.deepEqual(
      (await post('/reset', { seed: -1 })).json.detail.map((d: Json) => d.loc),
      [['body', 'seed']],
    );
    assert.deepEqual(
      (await post('/reset', { taskid: 'x' })).json.detail.map((d: Json) => [d.type, d.loc]),
      [['extra_forbidden', ['body', 'taskid']]],
    );
    const malformed = await post('/reset', '{nope', true);
    assert.equal(malformed.status, 422);
    assert.equal(malformed.json.detail[0].type, 'json_invalid');
    assert.equal((await post('/reset', [1])).status, 422);
    const unknown = await post('/reset', { task_id: 'no-such-task' });
    assert.equal(unknown.status, 422);
    assert.match(unknown.json.detail, /^TASK_NOT_FOUND: /);
    assert.equal(unknown.json.error.code, 'TASK_NOT_FOUND');
  });

  test(
    'POST /step runs one action on a fresh session: list_tools and the ' +
      'gym tools work, an episode tool asks for a reset, a bad action is 422',
    async () => {
      const listed = await post('/step', { action: { type: 'list_tools' } });
      assert.equal(listed.status, 200);
      assert.deepEqual(
        listed.json.observation.tools.map((t: Json) => t.name),
        ['list_suites', 'list_tasks', 'start_episode'],
      );
      const tasks = await post('/step', { action: { tool_name: 'list_tasks', arguments: { limit: 2 } }, timeout_s: 30, request_id: 'r1' });
      assert.equal(tasks.json.observation.result.data.tasks.length, 2);
      const noEpisode = await post('/step', { action: { tool_name: 'view_file', arguments: { path: 'x' } } });
      assert.equal(noEpisode.json.observation.error.error_type, 'tool_not_found');
      const bad = await post('/step', { action: { type: 'bogus' } });
      assert.equal(bad.status, 422);
      assert.deepEqual(
        bad.json.detail.map((d: Json) => d.loc),
        [['type'], ['tool_name']],
        'named from the action, as OpenEnv does',
      );
      const noAction = await post('/step', {});
      assert.deepEqual(
        noAction.json.detail.map((d: Json) => d.loc),
        [['body', 'action']],
      );
    },
  );

  test(
    "POST /mcp: OpenEnv's JSON-RPC; a session made by " + 'openenv/session/create holds its episode until openenv/session/close',
    async () => {
      assert.deepEqual((await post('/mcp', {})).json.error.code, -32600, 'openenv validate posts {}: a JSON-RPC answer with 200');
      const parse = await post('/mcp', 'not json', true);
      assert.deepEqual([parse.status, parse.json.error.code], [200, -32700]);
      const rpc = async (method: string, params: Json = {}) => (await post('/mcp', { jsonrpc: '2.0', id: 1, method, params })).json;
      const session = (await rpc('openenv/session/create')).result.session_id as string;
      assert.match(session, /^[0-9a-f-]{36}$/);
      const started = await rpc('tools/call', { name: 'start_episode', arguments: { task_id: 'roman-numerals' }, session_id: session });
      const id = started.result.data.episodeId as string;
      assert.ok(
        (await rpc('tools/list', { session_id: session })).result.tools.some((t: Json) => t.name === 'submit'),
        "the session now offers the episode's tools",
      );
      const viewed = await rpc('tools/call', { name: 'view_file', arguments: { path: 'roman.py' }, session_id: session });
      assert.equal(viewed.result.data.path, 'roman.py');
      const failed = await rpc('tools/call', {
        name: 'edit_file',
        arguments: { path: 'roman.py', old_str: 'no such text', new_str: 'x' },
        session_id: session,
      });
      assert.deepEqual([failed.error.code, failed.error.data.code], [-32603, 'EDIT_NO_MATCH']);
      const badArgs = await rpc('tools/call', { name: 'view_file', arguments: {}, session_id: session });
      assert.deepEqual([badArgs.error.code, badArgs.error.data.code], [-32602, 'INVALID_ARGUMENT']);
      assert.equal((await rpc('tools/call', { arguments: {}, session_id: session })).error.message, "Missing 'name' in params");
      assert.equal(gym.episode(id).state, 'running');
      assert.deepEqual((await rpc('openenv/session/close', { session_id: session })).result, { session_id: session, closed: true });
      assert.equal(gym.episode(id).state, 'ended');
      assert.match((await rpc('tools/list', { session_id: session })).error.message, /^Unknown session_id: /);
      assert.equal((await rpc('openenv/session/close', {})).error.code, -32602);
      assert.equal((await rpc('prompts/list')).error.code, -32601);
      // Without a session: a fresh one, closed after the call; an episode it started ends with it.
      const stateless = await rpc('tools/call', { name: 'start_episode', arguments: { task_id: 'roman-numerals' } });
      assert.equal(gym.episode(stateless.result.data.episodeId).state, 'ended');
    },
  );
});
