import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { RunningServer } from '../../src/server/http.ts';
import { cleanJsonSchema } from '../../src/protocol/mcp.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { PROJECT_ROOT } from '../../src/tasks/registry.ts';
import { mcpOverHttp, TEST_CACHE_DIR } from '../helpers.ts';
import { call, data, text } from '../server/scenario.ts';
import { episodePath } from '../../src/protocol/capability.ts';

const validator = new AjvJsonSchemaValidator();

/** The error shape of every failed call: isError, the code in structuredContent.error, a message naming it in the text. */
function assertError(r: Awaited<ReturnType<typeof call>>, code: string, message?: RegExp): void {
  assert.equal(r.isError, true, text(r));
  const error = (r.structuredContent as { error?: { code?: string; message?: string } } | undefined)?.error;
  assert.equal(error?.code, code, JSON.stringify(r));
  assert.equal(typeof error?.message, 'string');
  if (message) assert.match(error!.message!, message);
  assert.match(text(r), new RegExp(`^Error ${code}: `));
}

/** Schema noise a model should not read: `$schema`, and zod's ±(2^53 - 1) integer bounds. */
function assertNoNoise(tool: Tool): void {
  const json = JSON.stringify(tool.inputSchema);
  assert.doesNotMatch(json, /\$schema/, `${tool.name}: ${json}`);
  assert.doesNotMatch(json, /9007199254740991/, `${tool.name}: ${json}`);
  assert.equal(tool.inputSchema.type, 'object');
}

/**
 * Calls every tool of the gym-wide endpoint once in an examples episode (roman-numerals) and
 * checks each success's structuredContent against the outputSchema tools/list declared (the
 * SDK client checks it as well); returns what start_episode gave.
 */
async function everyToolValidates(client: Client): Promise<Record<string, unknown>> {
  const { tools } = await client.listTools();
  const schemas = new Map(tools.map((t) => [t.name, t.outputSchema]));
  const seen = new Set<string>();
  const ok = async (name: string, args: Record<string, unknown>) => {
    const r = await call(client, name, args);
    assert.notEqual(r.isError, true, `${name}: ${text(r)}`);
    const schema = schemas.get(name);
    assert.ok(schema, `${name} declares an outputSchema`);
    const check = validator.getValidator(schema as never)(r.structuredContent);
    assert.ok(check.valid, `${name}: ${check.errorMessage}\n${JSON.stringify(r.structuredContent).slice(0, 2000)}`);
    seen.add(name);
    return data(r);
  };
  await ok('list_suites', {});
  await ok('list_tasks', { suite: 'examples', limit: 3 });
  const started = await ok('start_episode', { task_id: 'roman-numerals' });
  const episode_id = started.episodeId as string;
  assert.match(episode_id, /^ep-/);
  const e = { episode_id };
  await ok('view_file', { ...e, path: 'roman.py', start_line: 1, end_line: 5 });
  await ok('list_dir', { ...e });
  await ok('find_files', { ...e, pattern: '*.py' });
  await ok('search', { ...e, query: 'def ' });
  await ok('search', { ...e, query: '^def', regex: true, max_results: 1 });
  await ok('create_file', { ...e, path: 'notes.txt', content: 'one\ntwo\n' });
  await ok('edit_file', { ...e, path: 'notes.txt', old_str: 'one', new_str: 'uno' });
  await ok('insert_lines', { ...e, path: 'notes.txt', line: 0, text: 'zero' });
  await ok('undo_edit', { ...e, path: 'notes.txt' });
  await ok('run_command', { ...e, command: 'echo hi; echo err >&2; exit 3' });
  await ok('run_tests', { ...e });
  await ok('view_error_log', { ...e });
  await ok('get_diff', { ...e });
  await ok('view_docs', { ...e, symbol: 'json.dumps', max_chars: 500 });
  const fork = await ok('fork_episode', { ...e });
  await ok('end_episode', { episode_id: fork.episodeId });
  await ok('submit', { ...e });
  for (const t of tools) assert.ok(seen.has(t.name), `${t.name} was called and checked`);
  return started;
}

/** The failures every endpoint must answer in the one error shape. */
async function failuresHaveOneShape(client: Client): Promise<void> {
  const episode_id = data(await call(client, 'start_episode', { task_id: 'roman-numerals' })).episodeId as string;
  // Argument validation: a wrong type, a missing field, a bound, on episode and gym tools.
  assertError(await call(client, 'view_file', { episode_id, path: 42 }), 'INVALID_ARGUMENT', /'path'/);
  assertError(await call(client, 'edit_file', { episode_id, path: 'roman.py' }), 'INVALID_ARGUMENT', /'old_str'/);
  assertError(await call(client, 'list_tasks', { limit: 0 }), 'INVALID_ARGUMENT', /'limit'/);
  assertError(await call(client, 'start_episode', {}), 'INVALID_ARGUMENT', /'task_id'/);
  assertError(await call(client, 'view_file', { path: 'roman.py' }), 'INVALID_ARGUMENT', /'episode_id'/);
  assertError(await call(client, 'view_file', { episode_id: 7, path: 'roman.py' }), 'INVALID_ARGUMENT', /'episode_id'/);
  // Unknown tool, unknown episode, a failure inside the tool.
  assertError(await call(client, 'rm_rf', {}), 'TOOL_NOT_AVAILABLE', /unknown tool 'rm_rf'/);
  assertError(await call(client, 'view_file', { episode_id: 'ep-does-not-exist', path: 'roman.py' }), 'EPISODE_NOT_FOUND');
  assertError(await call(client, 'view_file', { episode_id, path: 'nope.py' }), 'FILE_NOT_FOUND');
  await call(client, 'end_episode', { episode_id });
}

describe('the MCP surface over Streamable HTTP', () => {
  let gym: Gym;
  let server: RunningServer;
  let client: Client;
  let close: () => Promise<void>;

  before(async () => {
    ({ gym, server, client, close } = await mcpOverHttp('benchgym-mcp-test'));
  });
  after(() => close());

  test('tools/list: an outputSchema on every tool, input schemas without $schema or 2^53 bounds', async () => {
    const { tools } = await client.listTools();
    assert.ok(tools.length >= 18);
    for (const t of tools) {
      assertNoNoise(t);
      assert.equal(t.outputSchema?.type, 'object', t.name);
    }
    const list = tools.find((t) => t.name === 'list_tasks')!;
    assert.deepEqual(list.inputSchema.properties?.offset, { default: 0, type: 'integer', minimum: 0 });
  });

  test("every tool's output validates against its declared schema; start_episode names the episode's endpoint", async () => {
    const started = await everyToolValidates(client);
    assert.equal(started.mcpPath, episodePath(gym.episode(String(started.episodeId)), 'mcp'));
  });

  test('every failure has one shape: isError and structuredContent.error.code', async () => {
    await failuresHaveOneShape(client);
  });

  test("an episode's own endpoint: an unknown tool, a gym tool and bad arguments in the same shape", async () => {
    const started = data(await call(client, 'start_episode', { task_id: 'roman-numerals' }));
    const scoped = new Client({ name: 'benchgym-mcp-test', version: '0.0.0' });
    await scoped.connect(new StreamableHTTPClientTransport(new URL(`${server.url}${started.mcpPath}`)));
    try {
      const { tools } = await scoped.listTools();
      for (const t of tools) assertNoNoise(t);
      assert.ok(!tools.some((t) => t.name === 'start_episode'));
      assertError(await call(scoped, 'start_episode', { task_id: 'roman-numerals' }), 'TOOL_NOT_AVAILABLE');
      assertError(await call(scoped, 'view_file', { path: ['a'] }), 'INVALID_ARGUMENT', /'path'/);
      const fork = data(await call(scoped, 'fork_episode', {}));
      assert.equal(fork.mcpPath, episodePath(gym.episode(fork.episodeId), 'mcp'));
    } finally {
      await scoped.close();
    }
  });

  test('a suite tool is offered only in episodes it applies to: view_docs in Python tasks of examples, not its Java task', async () => {
    const { tools } = await client.listTools();
    assert.ok(!tools.some((t) => t.name === 'retrieve_context'), 'no tool of a suite not served');
    const python = await gym.registry.task('examples', 'roman-numerals');
    const java = await gym.registry.task('examples', 'java-bracket-matcher');
    assert.ok(gym.episodeTools({ task: python }).some((t) => t.name === 'view_docs'));
    assert.ok(!gym.episodeTools({ task: java }).some((t) => t.name === 'view_docs'));
  });
});

test('the MCP surface over stdio (benchgym mcp): same error shape, valid outputs, no mcpPath', async () => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-mcp-stdio-'));
  const client = new Client({ name: 'benchgym-mcp-test', version: '0.0.0' });
  try {
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [path.join(PROJECT_ROOT, 'bin', 'benchgym.js'), 'mcp', '--data-dir', dataDir, '--cache-dir', TEST_CACHE_DIR],
        stderr: 'pipe',
      }),
    );
    const { tools } = await client.listTools();
    for (const t of tools) assertNoNoise(t);
    const started = await everyToolValidates(client);
    assert.ok(!('mcpPath' in started), `no HTTP over stdio: ${JSON.stringify(Object.keys(started))}`);
    assert.doesNotMatch(JSON.stringify(tools.find((t) => t.name === 'start_episode')), /mcp_path/);
    await failuresHaveOneShape(client);
  } finally {
    await client.close().catch(() => {});
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

test('cleanJsonSchema drops $schema and the safe-integer bounds, nothing else', () => {
  const schema = {
    $schema: 'x',
    type: 'object',
    properties: {
      n: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
      m: { type: 'integer', minimum: 1, maximum: 10 },
    },
  };
  assert.deepEqual(cleanJsonSchema(schema), {
    type: 'object',
    properties: { n: { type: 'integer' }, m: { type: 'integer', minimum: 1, maximum: 10 } },
  });
});
