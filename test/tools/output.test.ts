import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../src/episode/gym.ts';
import { makeGym, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
before(async () => {
  ({ gym, cleanup } = await makeGym());
});
after(() => cleanup());

const json = (v: unknown) => JSON.parse(JSON.stringify(v));

/** MCP sends only what a tool's output schema declares: a key a tool returns but does not declare would be lost. */
test("every tool's data is exactly what its output schema declares (no undeclared key, no wrong type)", async () => {
  const id = await startExample(gym, 'roman-numerals');
  const calls: [string, Record<string, unknown>, string?][] = [
    ['list_suites', {}],
    ['list_tasks', { limit: 2 }],
    ['start_episode', { task_id: 'roman-numerals' }],
    ['view_file', { path: 'roman.py', end_line: 3 }, id],
    ['list_dir', {}, id],
    ['find_files', { pattern: '*.py' }, id],
    ['search', { query: 'roman' }, id],
    ['create_file', { path: 'a.txt', content: 'x\n' }, id],
    ['edit_file', { path: 'a.txt', old_str: 'x', new_str: 'y' }, id],
    ['insert_lines', { path: 'a.txt', line: 1, text: 'z' }, id],
    ['undo_edit', { path: 'a.txt' }, id],
    ['run_command', { command: 'echo out; false' }, id],
    ['run_tests', {}, id],
    ['view_error_log', {}, id],
    ['get_diff', {}, id],
    ['fork_episode', {}, id],
    ['submit', {}, id],
    ['end_episode', {}, id],
  ];
  const called = new Set<string>();
  for (const [name, args, episode] of calls) {
    const tool = gym.tools.find((t) => t.name === name)!;
    const r = await gym.callTool(name, args, testContext(), episode);
    const parsed = tool.output.safeParse(r.data);
    assert.ok(parsed.success, `${name}: ${parsed.error?.message}`);
    assert.deepEqual(json(parsed.data), json(r.data), `${name} returns keys its output schema does not declare`);
    called.add(name);
  }
  for (const t of gym.tools) if (t.name !== 'view_docs') assert.ok(called.has(t.name), `${t.name} is checked here`);
});
