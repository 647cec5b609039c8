import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AGENTS, builtinSuites } from '../../bin/builtins.ts';
import { BUILTINS } from '../../bin/composition.ts';
import { cliCommands } from '../../src/cli/main.ts';

test("each suite's static declaration (id, summary, commands) is what the suite itself says once loaded", async () => {
  const loaded = await Promise.all(BUILTINS.suites.map((entry) => entry.load()));
  assert.deepEqual(
    BUILTINS.suites.map((e) => ({ id: e.id, summary: e.summary, commands: e.commands })),
    loaded.map((s) => ({
      id: s.id,
      summary: s.description,
      commands: (s.commands ?? []).map((c) => ({ name: c.name, summary: c.summary })),
    })),
  );
  assert.deepEqual(
    loaded.map((s) => s.id),
    builtinSuites().map((s) => s.id),
    "the suites tests use are the CLI's",
  );
});

test('the agents declared by name are the agents loaded', async () => {
  assert.deepEqual([...BUILTINS.agents.names], Object.keys(await BUILTINS.agents.load()));
  assert.deepEqual([...BUILTINS.agents.names], Object.keys(AGENTS));
});

test("each command's --help summary is the command's own, and each loads", async () => {
  for (const entry of cliCommands(BUILTINS)) {
    const command = await entry.load();
    assert.equal(command.name, entry.name);
    assert.equal(entry.summary, command.summary, entry.name);
  }
});
