/**
 * A fifth suite plugs in through the public contract alone (test/fixtures/kata_suite.ts: its
 * own metadata schema, one suite tool, a replay adapter, a report section): served next to
 * the examples, it runs an episode, a replay and a report, and no core file names it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { examplesSuite } from '../../envs/examples/index.ts';
import { AGENTS } from '../../agents/index.ts';
import { builtinSuites } from '../../bin/builtins.ts';
import { BUILTIN_SANDBOXES } from '../../bin/sandboxes.ts';
import { compositionOf } from '../../src/cli/composition.ts';
import { main } from '../../src/cli/main.ts';
import { agentUnderTest } from '../../src/runner/agents.ts';
import { writeReport } from '../../src/runner/report.ts';
import { runExperiment } from '../../src/runner/runner.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { createGymMcpServer } from '../../src/protocol/mcp.ts';
import { SuiteRegistry } from '../../src/tasks/registry.ts';
import { expectGymError, makeGym, tempDir, TEST_CACHE_DIR, testContext } from '../helpers.ts';
import { KATA_SUITE, kataReportSection, kataSuite } from '../fixtures/kata_suite.ts';

/** Runs the CLI in this process (the fixture suite lives only here), capturing what it prints. */
async function cli(argv: string[], root: Parameters<typeof main>[1]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const write = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  // The test runner's own messages (bytes) pass through: the CLI writes strings, and commands load while those flow.
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) =>
    typeof chunk === 'string' ? (out.push(chunk), true) : write.out(chunk, ...rest)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) =>
    typeof chunk === 'string' ? (err.push(chunk), true) : write.err(chunk, ...rest)) as typeof process.stderr.write;
  try {
    const code = await main(argv, root);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    process.stdout.write = write.out;
    process.stderr.write = write.err;
  }
}

function registry(suites = [examplesSuite(), kataSuite()]): SuiteRegistry {
  const r = new SuiteRegistry(suites);
  for (const s of suites) r.enable(s.id);
  return r;
}

async function gymClient(gym: Gym): Promise<Client> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await createGymMcpServer(gym).connect(a);
  const client = new Client({ name: 'fifth-suite', version: '0' });
  await client.connect(b);
  return client;
}

describe('a fifth suite through the public contract', () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ gym, cleanup } = await makeGym({ registry: registry() }));
  });
  after(() => cleanup());

  test('listed and loaded; its private metadata is not shown', async () => {
    const suites = await gym.callTool('list_suites', {}, testContext());
    assert.ok((suites.data.suites as { id: string }[]).some((s) => s.id === KATA_SUITE));
    const tasks = (await gym.callTool('list_tasks', { suite: KATA_SUITE }, testContext())).data.tasks as {
      id: string;
      metadata: Record<string, unknown>;
    }[];
    assert.deepEqual(
      tasks.map((t) => t.id),
      ['double', 'square'],
    );
    assert.deepEqual(tasks[0]!.metadata, { belt: 'white' }, 'hint is private');
  });

  test('a task whose metadata the suite does not declare fails at load, naming the key', async () => {
    const strict = {
      ...kataSuite(),
      load: async () => (await kataSuite().load()).map((t) => ({ ...t, metadata: { belt: 'purple', hint: 'x' } })),
    };
    await expectGymError(registry([strict]).tasks(KATA_SUITE), 'TASK_INVALID', /task 'double' of suite 'katas'.*metadata\.belt/);
  });

  test('its tool is offered in its episodes only; the gym-wide endpoint lists the union and refuses it elsewhere', async () => {
    const kata = (await gym.startEpisode({ suite: KATA_SUITE, taskId: 'double' })).id;
    const example = (await gym.startEpisode({ suite: 'examples', taskId: 'roman-numerals' })).id;
    const hint = await gym.callTool('kata_hint', {}, testContext(), kata);
    assert.equal(hint.text, 'Hint (white belt): multiply by two');
    await expectGymError(
      gym.callTool('kata_hint', {}, testContext(), example),
      'TOOL_NOT_AVAILABLE',
      /'kata_hint' is not a tool of suite 'examples' episodes \(its own tools: view_docs\)/,
    );
    await expectGymError(
      gym.callTool('view_docs', { symbol: 'os' }, testContext(), kata),
      'TOOL_NOT_AVAILABLE',
      /its own tools: kata_hint/,
    );
    assert.deepEqual(
      gym
        .episodeTools(gym.episode(kata))
        .map((t) => t.name)
        .filter((n) => ['kata_hint', 'view_docs'].includes(n)),
      ['kata_hint'],
    );
    assert.deepEqual(
      gym
        .episodeTools(gym.episode(example))
        .map((t) => t.name)
        .filter((n) => ['kata_hint', 'view_docs'].includes(n)),
      ['view_docs'],
    );

    const client = await gymClient(gym);
    const listed = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(listed.includes('kata_hint') && listed.includes('view_docs'), "the gym-wide endpoint lists every served suite's tools");
    const refused = await client.callTool({ name: 'kata_hint', arguments: { episode_id: example } });
    assert.equal(refused.isError, true);
    assert.equal((refused.structuredContent as { error: { code: string } }).error.code, 'TOOL_NOT_AVAILABLE');
    await client.close();
    await gym.endEpisode(gym.episode(example));
  });

  test("an episode is solved and scored by the suite's hidden tests", async () => {
    const id = (await gym.startEpisode({ suite: KATA_SUITE, taskId: 'square' })).id;
    await gym.callTool(
      'create_file',
      { path: 'kata.py', content: 'def square(x):\n    return x * x\n', overwrite: true },
      testContext(),
      id,
    );
    const verdict = await gym.callTool('submit', {}, testContext(), id);
    assert.equal(verdict.data.reward, 1, verdict.text);
    const id2 = (await gym.startEpisode({ suite: KATA_SUITE, taskId: 'square' })).id;
    await gym.callTool(
      'create_file',
      { path: 'kata.py', content: 'def square(x):\n    return x + x\n', overwrite: true },
      testContext(),
      id2,
    );
    assert.equal((await gym.callTool('submit', {}, testContext(), id2)).data.reward, 0);
  });

  test('a run of the suite and its report section: the agent never sees its private metadata', async () => {
    const dir = await tempDir();
    try {
      const outDir = path.join(dir, 'run');
      const seen: Record<string, unknown>[] = [];
      const gold = agentUnderTest(AGENTS, 'replay', {}, true);
      const agent = {
        name: gold.name,
        create: (task: Parameters<typeof gold.create>[0]) => {
          const inner = gold.create(task);
          return { run: (ctx: Parameters<typeof inner.run>[0]) => (seen.push(ctx.task.metadata), inner.run(ctx)) };
        },
      };
      const outcome = await runExperiment({ gym, outDir, suite: KATA_SUITE, agent, model: { model: 'gold' } });
      assert.deepEqual(
        outcome.results.map((r) => [r.task, r.status]),
        [
          ['double', 'passed'],
          ['square', 'passed'],
        ],
      );
      assert.deepEqual(seen, [{ belt: 'white' }, { belt: 'yellow' }], 'the hint is private');
      const report = await writeReport([outDir], path.join(dir, 'report'), { sections: kataSuite().reportSections });
      const md = await fs.readFile(report.md, 'utf8');
      assert.match(
        md,
        /## Katas by belt\n\n\| belt \| passed \| scored \|\n\|---\|---\|---\|\n\| white \| 1 \| 1 \|\n\| yellow \| 1 \| 1 \|/,
      );
      assert.match(await fs.readFile(report.html, 'utf8'), /Katas by belt[\s\S]*<td>white<\/td><td class="num">1<\/td>/);
      const without = await writeReport([outDir], path.join(dir, 'plain'), { sections: [] });
      assert.doesNotMatch(await fs.readFile(without.md, 'utf8'), /Katas by belt/);
      assert.equal(kataReportSection.title, 'Katas by belt');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  test("benchgym score replays the suite's published outputs through its adapter, with no core change", async () => {
    const dir = await tempDir();
    try {
      const predictions = path.join(dir, 'preds.jsonl');
      const rows = [
        { kata: 'double', code: 'def double(x):\n    return 2 * x\n', passed: true },
        { kata: 'square', code: 'def square(x):\n    return x + x\n', passed: true },
      ];
      await fs.writeFile(predictions, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const root = compositionOf((opts) => [...builtinSuites(opts), kataSuite()], AGENTS, BUILTIN_SANDBOXES);
      const run = await cli(
        ['score', '--suite', KATA_SUITE, '--predictions', predictions, '--json', '--data-dir', dir, '--cache-dir', TEST_CACHE_DIR],
        root,
      );
      assert.equal(run.code, 0, run.stderr);
      const report = JSON.parse(run.stdout) as { results: { taskId: string; ours: string; theirs?: string; agree?: boolean }[] };
      const byTask = Object.fromEntries(report.results.map((r) => [r.taskId, r]));
      assert.equal(byTask.double!.ours, 'passed');
      assert.equal(byTask.double!.agree, true);
      assert.equal(byTask.square!.ours, 'failed', 'x + x is not x * x');
      assert.equal(byTask.square!.agree, false, 'the published verdict said passed');
      // A suite without a replay is refused by name.
      const refused = await cli(['score', '--suite', 'examples', '--predictions', predictions], root);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /suite 'examples' has no replay/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
