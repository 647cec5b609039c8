/**
 * CoderEval end to end on a handful of runnable tasks (a Python 3.11 venv with dill, built once
 * and cached): the reference passes and the stub fails; project-level tasks are
 * ENV_UNAVAILABLE naming the image option; published ChatGPT verdicts are reproduced; an
 * agent over MCP, without and with the platform's test visible.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readOutputs, replayOutputs, summarize } from '../../../envs/codereval/replay.ts';
import type { Gym } from '../../../src/episode/gym.ts';
import { validateTasks } from '../../../src/scoring/validate.ts';
import { startHttpServer, type RunningServer } from '../../../src/server/http.ts';
import { PROJECT_ROOT, SuiteRegistry } from '../../../src/tasks/registry.ts';
import type { Task } from '../../../src/tasks/schema.ts';
import { makeGym, TEST_CACHE_DIR, tempDir } from '../../helpers.ts';
import { runExperiment } from '../../../src/runner/runner.ts';
import { runnableLevelSplits } from '../../../envs/codereval/metrics.ts';
import type { AgentContext, AgentResult } from '../../../src/agent/types.ts';
import { promises as fs } from 'node:fs';
import { call, data, text } from '../../server/scenario.ts';
import { CHATGPT_DIR, CODEREVAL_DIR, SKIP_WITHOUT_DATA, SMALL } from './data.ts';
import { coderevalSuite } from '../../../envs/codereval/index.ts';

/** setdefault (mixed published verdicts) and int_to_string (mixed). */
const REPLAYED = ['62b8d22a48ba5a41d1c3f47e', '62ece4982e6aefcf4aabbd68'];

describe('CoderEval end to end (a handful of runnable tasks)', { skip: SKIP_WITHOUT_DATA }, () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let tasks: Map<string, Task>;

  before(async () => {
    // Projects are not laid out here (project.test.ts does that): project-level tasks stay ENV_UNAVAILABLE.
    const registry = new SuiteRegistry([coderevalSuite({ projects: { noProjects: true } })]);
    registry.enable(`codereval=${CODEREVAL_DIR}`);
    ({ gym, cleanup } = await makeGym({ registry }));
    tasks = new Map((await registry.tasks('codereval')).map((t) => [t.id, t]));
  });
  after(() => cleanup());

  test('the platform-verified function passes and the stub fails; a project-level task is ENV_UNAVAILABLE naming the option', async () => {
    const project = [...tasks.values()].find((t) => t.metadata.level === 'project_runnable')!;
    const results = await validateTasks(gym, [...SMALL.map((id) => tasks.get(id)!), project], 2);
    for (const r of results.slice(0, SMALL.length)) assert.equal(r.status, 'valid', `${r.taskId}: ${r.status}: ${r.reasons.join('; ')}`);
    const last = results.at(-1)!;
    assert.equal(last.status, 'unavailable');
    assert.match(last.reasons.join(' '), /ENV_UNAVAILABLE: .*project_runnable.*BENCHGYM_CODEREVAL_IMAGE/);
  });

  test('replaying the published ChatGPT samples reproduces every published is_pass on two tasks', async () => {
    for (const file of ['Raw_Input.jsonl_out.jsonl', 'HumanLabel_Input.jsonl_out.jsonl']) {
      const rows = (await readOutputs(path.join(CHATGPT_DIR, file))).filter((r) => REPLAYED.includes(r._id));
      const results = await replayOutputs(tasks, rows, (task, patch) => gym.score(task, patch), { concurrency: 2 });
      const s = summarize(results);
      assert.equal(s.compared, 20, file);
      const disagreements = results
        .filter((r) => r.agree === false)
        .map((r) => `${r.taskId} #${r.sample}: ours ${r.ours}, theirs ${r.theirs}: ${r.reason}`);
      assert.deepEqual(disagreements, [], file);
      assert.ok(s.ourPassed > 0 && s.ourPassed < 20, `mixed verdicts (${s.ourPassed} passed)`);
      const all = s.passAtK.find((f) => f.level === 'all')!;
      assert.deepEqual(all.ours, all.theirs);
      // A failing sample says why.
      assert.ok(
        results.some((r) => r.ours === 'failed' && /Error|Exception/.test(r.reason)),
        JSON.stringify(results.map((r) => r.reason)),
      );
    }
  });

  test('benchgym score --suite codereval: agreement, Pass@k per level ours beside theirs', async () => {
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          path.join(PROJECT_ROOT, 'bin', 'benchgym.js'),
          'score',
          '--suite',
          'codereval',
          '--dataset',
          CODEREVAL_DIR,
          '--predictions',
          path.join(CHATGPT_DIR, 'Raw_Input.jsonl_out.jsonl'),
          '--tasks',
          '62ece4982e6aefcf4aabbd68',
          '--cache-dir',
          TEST_CACHE_DIR,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b) => (stdout += b));
      child.stderr.on('data', (b) => (stderr += b));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /agreement with the published is_pass: 10\/10 \(100\.0%\)/);
    assert.match(out.stdout, /\nself_contained +1 +40\.0% .* 40\.0% /);
    assert.match(out.stderr, /failed +62ece4982e6aefcf4aabbd68 #2 \(published: failed\): /);
  });

  test(
    'an agent over MCP: view the file, no visible tests by default, its own check, ' +
      'implement, submit; with the platform test visible, its error guides a fix',
    async () => {
      const server: RunningServer = await startHttpServer(gym, { port: 0 });
      const client = new Client({ name: 'benchgym-test', version: '0.0.0' });
      try {
        await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));

        // Default: the method setdefault of cachetools' Cache, in the real file.
        const started = await call(client, 'start_episode', { suite: 'codereval', task_id: '62b8d22a48ba5a41d1c3f47e' });
        const ep = { episode_id: data(started).episodeId as string };
        assert.equal(data(started).hasVisibleTests, false);
        assert.match(text(started), /There are no visible tests: write and run your own checks with run_command/);
        const found = await call(client, 'search', { ...ep, query: 'def setdefault' });
        const line = Number(/cachetools\/cache\.py:(\d+)/.exec(text(found))?.[1]);
        assert.ok(line > 0, text(found));
        const view = await call(client, 'view_file', { ...ep, path: 'cachetools/cache.py', start_line: line, end_line: line + 5 });
        assert.match(text(view), /def setdefault\(self, key, default=None\):/);
        assert.match(text(view), /raise NotImplementedError/);
        const noTests = await call(client, 'run_tests', ep);
        assert.equal(noTests.isError, true);
        assert.match(text(noTests), /no visible tests/);
        const stub =
          '        D.setdefault(k[,d]) -> D.get(k,d), also set D[k]=d if k not in D\n        """\n        raise NotImplementedError';
        const impl =
          '        D.setdefault(k[,d]) -> D.get(k,d), also set D[k]=d if k not in D\n        """\n        ' +
          'if key in self:\n            return self[key]\n        self[key] = default\n        return default';
        assert.equal(
          (await call(client, 'edit_file', { ...ep, path: 'cachetools/cache.py', old_str: stub, new_str: impl })).isError,
          undefined,
        );
        const own = await call(client, 'run_command', {
          ...ep,
          command: `python -c "import ast; ast.parse(open('cachetools/cache.py').read()); print('parses')"`,
        });
        assert.match(text(own), /parses/);
        const verdict = data(await call(client, 'submit', ep));
        assert.equal(verdict.reward, 1, JSON.stringify(verdict));

        // The platform's test as the visible test: int_to_string's standalone test file lacks the
        // real file's `from typing import List`, which the real signature uses.
        const s2 = await call(client, 'start_episode', { suite: 'codereval', task_id: '62ece4982e6aefcf4aabbd68+platform-test' });
        const ep2 = { episode_id: data(s2).episodeId as string };
        assert.equal(data(s2).taskId, '62ece4982e6aefcf4aabbd68+platform-test');
        assert.equal(data(s2).hasVisibleTests, true);
        const body =
          '    output = ""\n    while number:\n        number, digit = divmod(number, len(alphabet))\n        output += ' +
          'alphabet[digit]\n    if padding:\n        output += alphabet[0] * max(padding - len(output), 0)\n    return output[::-1]';
        assert.equal(
          (
            await call(client, 'edit_file', {
              ...ep2,
              path: 'shortuuid/main.py',
              old_str: '    raise NotImplementedError\n\n\ndef string_to_int',
              new_str: `${body}\n\n\ndef string_to_int`,
            })
          ).isError,
          undefined,
        );
        const failing = await call(client, 'run_tests', ep2);
        assert.equal(data(failing).counts.failed, 1, text(failing));
        const log = await call(client, 'view_error_log', ep2);
        assert.match(text(log), /NameError: name 'List' is not defined/);
        const sig = 'def int_to_string(number: int, alphabet: List[str], padding: Optional[int] = None) -> str:';
        assert.equal(
          (
            await call(client, 'edit_file', {
              ...ep2,
              path: 'shortuuid/main.py',
              old_str: sig,
              new_str: 'def int_to_string(number: int, alphabet: "List[str]", padding: "Optional[int]" = None) -> str:',
            })
          ).isError,
          undefined,
        );
        const passing = await call(client, 'run_tests', ep2);
        assert.equal(data(passing).counts.passed, 1, text(passing));
        const v2 = data(await call(client, 'submit', ep2));
        assert.equal(v2.reward, 1, JSON.stringify(v2));
      } finally {
        await client.close();
        await server.close();
      }
    },
  );

  test('benchgym run over a task and its +platform-test variant: results record the mode; splits by level', async () => {
    const dir = await tempDir('codereval-run-');
    try {
      const ids = ['62ece4982e6aefcf4aabbd68', '62ece4982e6aefcf4aabbd68+platform-test'];
      const seen: Record<string, unknown>[] = [];
      const agent = {
        name: 'gold-writer',
        create: (task: Task) => ({
          run: async (ctx: AgentContext): Promise<AgentResult> => {
            seen.push(ctx.task.metadata);
            for (const [file, content] of Object.entries(task.solution!.files!))
              await ctx.client.callTool({ name: 'create_file', arguments: { path: file, content, overwrite: true } });
            const r = await ctx.client.callTool({ name: 'submit', arguments: {} });
            return {
              verdict: (r.structuredContent ?? null) as Record<string, unknown> | null,
              submitted: !r.isError,
              stopReason: 'submitted',
              steps: 2,
              usage: { promptTokens: 0, completionTokens: 0, costUsd: 0, calls: 0 },
            };
          },
        }),
      };
      const outcome = await runExperiment({
        gym,
        outDir: dir,
        suite: 'codereval',
        agent,
        model: { model: 'none' },
        tasks: ids,
        retryDelayMs: () => 0,
      });
      const byTask = new Map(outcome.results.map((r) => [r.task, r]));
      assert.deepEqual([...byTask.keys()].sort(), [...ids].sort());
      for (const r of outcome.results) assert.equal(r.status, 'passed', JSON.stringify(r));
      assert.equal(byTask.get(ids[0]!)!.metadata.visibleTest, 'none');
      assert.equal(byTask.get(ids[1]!)!.metadata.visibleTest, 'platform');
      assert.ok(seen.every((m) => m.level === 'self_contained' && !('oracle_context' in m)));
      const { byLevel, byStandalone } = runnableLevelSplits(outcome.results);
      assert.deepEqual(
        byLevel.map((g) => [g.value, g.summary.tasks, g.summary.passAtK[1]?.estimate]),
        [['self_contained', 2, 1]],
      );
      assert.deepEqual(
        byStandalone.map((g) => g.value),
        ['standalone'],
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
