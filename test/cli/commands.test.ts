/** The dispatcher in this process: every command's own --help, suites' commands, and score driven by a suite's replay. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { BUILTINS } from '../../bin/builtins.ts';
import { BUILTIN_SANDBOXES } from '../../bin/sandboxes.ts';
import type { CliCommand } from '../../src/cli/command.ts';
import { compositionOf, type Composition } from '../../src/cli/composition.ts';
import { cliCommands, main } from '../../src/cli/main.ts';
import type { ReplayAdapter } from '../../src/replay/adapter.ts';
import type { Verdict } from '../../src/scoring/verdict.ts';
import type { Suite } from '../../src/tasks/suite.ts';
import { pythonTask, tempDir } from '../helpers.ts';

/** Runs main with stdout and stderr captured. */
async function capture(argv: string[], root: Composition): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  let stdout = '';
  let stderr = '';
  // The test runner's own messages (bytes) pass through: the CLI writes strings, and commands load while those flow.
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) =>
    typeof chunk === 'string' ? ((stdout += chunk), true) : out(chunk, ...rest)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) =>
    typeof chunk === 'string' ? ((stderr += chunk), true) : err(chunk, ...rest)) as typeof process.stderr.write;
  try {
    const code = await main(argv, root);
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

const Row = z.object({ id: z.string(), answer: z.string(), passed: z.boolean().optional() });
const fakeReplay: ReplayAdapter<z.infer<typeof Row>> = {
  rowFormat: 'id, answer[, passed]',
  usage: '  benchgym score --suite toy --dataset PATH --predictions FILE   toy answers: agreement with passed',
  row: Row,
  taskOf: (row) => row.id,
  submissions: (row, task, line) => [
    {
      taskId: task.id,
      sample: 0,
      patch: row.answer,
      line,
      ...(row.passed === undefined ? {} : { published: row.passed ? 'passed' : 'failed' }),
    },
  ],
};

const ran: string[][] = [];
const toyCommand: CliCommand = {
  name: 'toy-build',
  summary: 'build toy tasks',
  usage: 'benchgym toy-build: builds toy tasks\n',
  run: async (args) => (ran.push(args), 3),
};

/** A suite with a replay, a command, and a scorer of its own (no sandbox: "right" passes). */
function toySuite(): Suite {
  return {
    id: 'toy',
    description: 'a toy suite',
    metadata: z.looseObject({}),
    load: async () => ['a', 'b'].map((id) => pythonTask({ id, suite: 'toy', files: { 'x.py': '' } })),
    privatePaths: () => [],
    score: async (task, patch): Promise<Verdict> => {
      const passed = patch === 'right';
      return {
        taskId: task.id,
        suite: 'toy',
        reward: passed ? 1 : 0,
        status: passed ? 'passed' : 'failed',
        tests: [{ name: 'test_toy', status: passed ? 'passed' : 'failed' }],
        notes: [],
        durationMs: 1,
      };
    },
    replay: fakeReplay,
    commands: [toyCommand],
  };
}
const plain = (): Suite => ({ ...toySuite(), id: 'plain', replay: undefined, commands: undefined });
const ROOT: Composition = compositionOf(() => [plain(), toySuite()], {}, BUILTIN_SANDBOXES);

describe('benchgym: the dispatcher', () => {
  let dir: string;
  before(async () => {
    dir = await tempDir('benchgym-cli-cmd-');
  });
  after(() => fs.rm(dir, { recursive: true, force: true }));

  test("--help lists every command with its summary, a suite's commands too; no command exits 2", async () => {
    const help = await capture(['--help'], ROOT);
    assert.equal(help.code, 0);
    for (const name of ['serve', 'mcp', 'tasks', 'validate', 'score', 'shell', 'run', 'report', 'images', 'toy-build', '--version'])
      assert.match(help.stdout, new RegExp(`^  ${name} +\\S`, 'm'), name);
    const none = await capture([], ROOT);
    assert.equal(none.code, 2);
    assert.equal(none.stdout, help.stdout);
    const unknown = await capture(['frobnicate'], ROOT);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command 'frobnicate'/);
  });

  test('each built-in command has its own --help: usage, options and an example', async () => {
    for (const command of cliCommands(BUILTINS)) {
      for (const flag of ['--help', '-h']) {
        const r = await capture([command.name, flag], BUILTINS);
        assert.equal(r.code, 0, command.name);
        assert.equal(r.stdout, (await command.load()).usage);
        assert.match(r.stdout, new RegExp(`^benchgym ${command.name}: `), command.name);
        assert.match(r.stdout, /\nUsage:\n {2}benchgym /, command.name);
        assert.match(r.stdout, /\nExample:\n {2}(benchgym|claude) /, command.name);
      }
    }
    const score = await capture(['score', '--help'], ROOT);
    assert.match(score.stdout, /benchgym score --suite toy --dataset PATH --predictions FILE {3}toy answers/, "the suites' replay usage");
    assert.match(score.stdout, /default toy\)/, 'the default suite: the first with a replay');
  });

  test("a suite's command runs with the arguments after its name", async () => {
    const r = await capture(['toy-build', '--x', 'y'], ROOT);
    assert.equal(r.code, 3);
    assert.deepEqual(ran.at(-1), ['--x', 'y']);
    assert.equal((await capture(['toy-build', '--help'], ROOT)).stdout, 'benchgym toy-build: builds toy tasks\n');
    assert.throws(
      () => cliCommands(compositionOf(() => [{ ...plain(), commands: [{ ...toyCommand, name: 'score' }] }])),
      /suite 'plain' adds a command 'score' the CLI already has/,
    );
  });

  test("score replays through the suite's adapter; a suite without one says so", async () => {
    const predictions = path.join(dir, 'p.jsonl');
    await fs.writeFile(
      predictions,
      [
        { id: 'a', answer: 'right', passed: true },
        { id: 'b', answer: 'wrong', passed: true },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );
    const args = ['--dataset', dir, '--predictions', predictions, '--data-dir', dir];
    const r = await capture(['score', ...args], ROOT);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\ntoy: 2 submissions: 1\/2 passed \(50\.0%\); 1 failed, 0 unavailable here; scoring faithful\n/);
    assert.match(r.stdout, /agreement with the published verdicts: 1\/2 \(50\.0%\)/);
    assert.match(r.stderr, /^failed +b #0 \(published: passed, DISAGREE\)/m);
    const json = await capture(['score', '--suite', 'toy', '--json', '--tasks', 'a', ...args], ROOT);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.stderr, '');
    assert.deepEqual(
      (JSON.parse(json.stdout) as { results: { taskId: string; ours: string }[] }).results.map((x) => `${x.taskId} ${x.ours}`),
      ['a passed'],
    );
    const noDataset = await capture(['score', '--suite', 'toy', '--predictions', predictions, '--data-dir', dir, '--json'], ROOT);
    assert.equal(noDataset.code, 0, 'a suite that needs no dataset path is replayed without one');
    assert.equal((JSON.parse(noDataset.stdout) as { dataset?: string }).dataset, undefined);
    const unknownTask = await capture(['score', '--suite', 'toy', '--tasks', 'a,zz', ...args], ROOT);
    assert.equal(unknownTask.code, 2);
    assert.match(unknownTask.stderr, /TASK_NOT_FOUND: no task 'zz' in suite 'toy'/);

    const noReplay = await capture(['score', '--suite', 'plain', ...args], ROOT);
    assert.equal(noReplay.code, 2);
    assert.match(
      noReplay.stderr,
      /benchgym score: INVALID_ARGUMENT: suite 'plain' has no replay: benchgym score replays the outputs of toy/,
    );
    const unknown = await capture(['score', '--suite', 'nope', ...args], ROOT);
    assert.match(unknown.stderr, /SUITE_NOT_FOUND: unknown suite 'nope'/);
    const noPredictions = await capture(['score', '--suite', 'toy', '--dataset', dir], ROOT);
    assert.match(noPredictions.stderr, /missing --predictions \(a JSON Lines file: id, answer\[, passed\]\)/);
  });
});
