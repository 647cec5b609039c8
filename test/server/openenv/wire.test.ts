import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenEnvValidationError, parseAction, parseWire, ResetData, WsMessages } from '../../../src/server/openenv/wire.ts';

test("actions are read as OpenEnv's deserialize_action reads them for an MCP environment", () => {
  assert.deepEqual(parseAction({ type: 'list_tools' }), { type: 'list_tools', metadata: {} });
  assert.deepEqual(parseAction({ tool_name: 'view_file', arguments: { path: 'a.py' } }), {
    type: 'call_tool',
    tool_name: 'view_file',
    arguments: { path: 'a.py' },
    metadata: {},
  });
  assert.deepEqual(parseAction({ type: 'call_tool', tool_name: 'submit', metadata: { k: 1 } }), {
    type: 'call_tool',
    tool_name: 'submit',
    arguments: {},
    metadata: { k: 1 },
  });
});

test('a refused action or message names every problem, by location, as pydantic lists them', () => {
  const issuesOf = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      assert.ok(err instanceof OpenEnvValidationError);
      return err.issues;
    }
    assert.fail('expected a refusal');
  };
  assert.deepEqual(
    issuesOf(() => parseAction({ type: 'bogus' })).map((i) => [i.type, i.loc]),
    [
      ['invalid_value', ['type']],
      ['invalid_type', ['tool_name']],
    ],
  );
  assert.deepEqual(
    issuesOf(() => parseAction({ type: 'list_tools', tool_name: 'x' })).map((i) => [i.type, i.loc]),
    [['extra_forbidden', ['tool_name']]],
  );
  assert.deepEqual(
    issuesOf(() => parseAction('view_file', ['data'])).map((i) => i.loc),
    [['data']],
  );
  assert.deepEqual(
    issuesOf(() => parseWire(WsMessages.step, { type: 'step' }, 'message')).map((i) => [i.type, i.loc]),
    [['invalid_type', ['data']]],
  );
  assert.deepEqual(
    issuesOf(() => parseWire(WsMessages.state, { type: 'state', x: 1 }, 'message')).map((i) => [i.type, i.loc]),
    [['extra_forbidden', ['x']]],
  );
  assert.match(
    issuesOf(() => parseWire(ResetData, { seed: 1.5, task: 'x' }, 'reset data'))
      .map((i) => `${i.loc.join('.')}: ${i.msg}`)
      .join('; '),
    /^seed: Invalid input: expected int, received number; task: Extra inputs are not permitted: .task.$/,
  );
});

test("reset data: OpenEnv's seed and episode_id, benchgym's task and budgets", () => {
  assert.deepEqual(parseWire(ResetData, { seed: 0, episode_id: 'run-1', task_id: 't', max_steps: 5 }, 'reset data'), {
    seed: 0,
    episode_id: 'run-1',
    task_id: 't',
    max_steps: 5,
  });
  assert.throws(() => parseWire(ResetData, { episode_id: 'x'.repeat(256) }, 'reset data'), /episode_id: Too big/);
});
