/**
 * A HumanEvo task built from the Python fixture, worked over MCP (Streamable HTTP, the SDK's
 * client) the way an agent would: retrieve_context, edit the stub, run_tests, submit. In
 * the evolving-ignored context the same work is carried into the aware start state and
 * scored there.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { humanevoSuite } from '../../../envs/humanevo/index.ts';
import type { Gym } from '../../../src/episode/gym.ts';
import { startHttpServer, type RunningServer } from '../../../src/server/http.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym } from '../../helpers.ts';
import { call, data, text } from '../../server/scenario.ts';
import { buildFixture, type BuiltFixture } from './setup.ts';

const BODY = '    words = re.findall(r"[a-z0-9]+", title.lower())\n    return sep.join(words)';
const STUB = '    raise NotImplementedError';

describe('HumanEvo over MCP', () => {
  let f: BuiltFixture;
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let client: Client;
  let taskId: string;

  before(async () => {
    f = await buildFixture('python', { limit: 1 });
    taskId = f.records[0]!.instance_id;
    const registry = new SuiteRegistry([humanevoSuite()]);
    registry.enable(`humanevo=${f.file}`);
    ({ gym, cleanup } = await makeGym({ registry }));
    server = await startHttpServer(gym, { port: 0 });
    client = new Client({ name: 'benchgym-humanevo-test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  });
  after(async () => {
    await client?.close();
    await server?.close();
    await cleanup?.();
    await f?.cleanup();
  });

  test('the tool list offers retrieve_context and start_episode takes a context', async () => {
    const { tools } = await client.listTools();
    const retrieve = tools.find((t) => t.name === 'retrieve_context');
    assert.ok(retrieve, 'retrieve_context is listed');
    assert.deepEqual(Object.keys((retrieve.inputSchema as { properties: object }).properties).sort(), ['episode_id', 'k', 'query']);
    const start = tools.find((t) => t.name === 'start_episode')!;
    assert.ok('context' in (start.inputSchema as { properties: object }).properties);
  });

  test('aware: retrieve_context, edit, run_tests, submit → reward 1', async () => {
    const started = data(await call(client, 'start_episode', { suite: 'humanevo', task_id: taskId }));
    const episode_id = started.episodeId as string;
    assert.equal(started.context, 'aware');
    assert.match(started.prompt, /Implement the body of `slugify` in `textkit\/strings\.py`/);

    const retrieved = await call(client, 'retrieve_context', { episode_id, k: 2 });
    assert.equal(data(retrieved).hits[0].symbol, 'normalize_title', text(retrieved));
    assert.match(text(retrieved), /re\.findall/);

    const failing = await call(client, 'run_command', {
      episode_id,
      command: 'python -c "from textkit.strings import slugify; slugify(\'a\')"',
    });
    assert.match(text(failing), /NotImplementedError/);
    const edited = await call(client, 'edit_file', { episode_id, path: 'textkit/strings.py', old_str: STUB, new_str: BODY });
    assert.equal(edited.isError, undefined, text(edited));
    const tests = data(await call(client, 'run_tests', { episode_id }));
    assert.equal(tests.counts.failed, 0);
    assert.ok(tests.counts.passed >= 3);

    const verdict = data(await call(client, 'submit', { episode_id }));
    assert.equal(verdict.reward, 1, JSON.stringify(verdict));
    assert.deepEqual(verdict.failToPass, { passed: ['tests/test_strings.py::test_slugify'], failed: [] });
  });

  test('ignored: the function written in the newest version is scored where it was written', async () => {
    const solve = async (body: string) => {
      const started = data(await call(client, 'start_episode', { suite: 'humanevo', task_id: taskId, context: 'ignored' }));
      const episode_id = started.episodeId as string;
      assert.equal(started.context, 'ignored');
      const retrieved = data(await call(client, 'retrieve_context', { episode_id, k: 1 }));
      assert.equal(retrieved.hits[0].symbol, 'slugify_heading');
      await call(client, 'edit_file', { episode_id, path: 'textkit/strings.py', old_str: STUB, new_str: body });
      return data(await call(client, 'submit', { episode_id }));
    };
    const right = await solve(BODY);
    assert.equal(right.reward, 1, JSON.stringify(right));
    assert.ok(
      right.notes.some((n: string) => /carried from the episode's textkit\/strings\.py/.test(n)),
      right.notes.join('; '),
    );
    const wrong = await solve('    return title');
    assert.equal(wrong.reward, 0);
  });
});
