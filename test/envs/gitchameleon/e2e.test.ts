/**
 * GitChameleon end to end on a light subset (pure-Python pins, envs built once and cached):
 * gold passes and the starter code fails; the published verdicts are reproduced; view_docs
 * reads the pinned version; an agent's feedback loop over MCP.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { gitchameleonSuite } from '../../../envs/gitchameleon/index.ts';
import { readPredictions, replayPredictions, summarize } from '../../../envs/gitchameleon/replay.ts';
import type { Gym } from '../../../src/episode/gym.ts';
import { validateTasks } from '../../../src/scoring/validate.ts';
import { startHttpServer, type RunningServer } from '../../../src/server/http.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import type { Task } from '../../../src/tasks/schema.ts';
import { makeGym, testContext } from '../../helpers.ts';
import { call, data, text } from '../../server/scenario.ts';
import { LIGHT_V2, REFERENCE_DIR, REFERENCE_FILES, SKIP_WITHOUT_DATA, V1_DIR, V2_DIR } from './data.ts';

/** v1 problems with pure-Python pins (networkx 2.8 and 2.5 on Python 3.10). */
const LIGHT_V1 = ['28', '36'];

/** Heavy problems (torch wheels of about 1 GB) run only when asked for. */
const SKIP_HEAVY =
  SKIP_WITHOUT_DATA ||
  (process.env.BENCHGYM_TEST_HEAVY === '1' ? false : 'heavy GitChameleon problems (torch) run with BENCHGYM_TEST_HEAVY=1');

describe('GitChameleon end to end (light subset)', { skip: SKIP_WITHOUT_DATA }, () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let v2: Map<string, Task>;

  before(async () => {
    const registry = new SuiteRegistry([gitchameleonSuite(), gitchameleonSuite({ id: 'gitchameleon-v1' })]);
    registry.enable(`gitchameleon=${V2_DIR}`);
    registry.enable(`gitchameleon-v1=${V1_DIR}`);
    ({ gym, cleanup } = await makeGym({ registry }));
    v2 = new Map((await registry.tasks('gitchameleon')).map((t) => [t.id, t]));
  });
  after(() => cleanup());

  test('v2 and v1: the reference solution passes the hidden tests and the starter code fails them', async () => {
    const tasks = [
      ...LIGHT_V2.map((id) => v2.get(id)!),
      ...(await gym.registry.tasks('gitchameleon-v1')).filter((t) => LIGHT_V1.includes(t.id)),
    ];
    const results = await validateTasks(gym, tasks, 2);
    for (const r of results) assert.equal(r.status, 'valid', `${r.taskId}: ${r.status}: ${r.reasons.join('; ')}`);
  });

  test('a heavy problem (torch 1.10 on Python 3.7): gold passes, starter fails', { skip: SKIP_HEAVY }, async () => {
    const task = v2.get('9')!;
    assert.equal(task.metadata.heavy, true);
    const [r] = await validateTasks(gym, [task], 1);
    assert.equal(r!.status, 'valid', r!.reasons.join('; '));
  });

  test('replaying the published outputs of three models reproduces every published verdict on the subset', async () => {
    const disagreements: string[] = [];
    let compared = 0;
    for (const name of REFERENCE_FILES) {
      const predictions = (await readPredictions(path.join(REFERENCE_DIR, name))).filter((p) => LIGHT_V2.includes(p.taskId));
      assert.equal(predictions.length, LIGHT_V2.length);
      const results = await replayPredictions(v2, predictions, (task, patch) => gym.score(task, patch), {
        mode: 'extract',
        concurrency: 2,
      });
      const summary = summarize(results);
      assert.equal(
        summary.unavailable + summary.errors,
        0,
        JSON.stringify(results.filter((r) => r.ours === 'unavailable' || r.ours === 'error')),
      );
      compared += summary.compared;
      for (const r of results.filter((x) => x.agree === false))
        disagreements.push(`${name} ${r.taskId}: ours ${r.ours}, theirs ${r.theirs}: ${r.reason}`);
    }
    assert.equal(compared, LIGHT_V2.length * REFERENCE_FILES.length);
    assert.deepEqual(disagreements, []);
  });

  test("view_docs renders the installed version's documentation: jinja2 3.1 has pass_eval_context, 2.11 evalcontextfilter", async () => {
    const start = async (id: string) =>
      (await gym.callTool('start_episode', { suite: 'gitchameleon', task_id: id }, testContext())).data as { episodeId: string };
    const docs = (id: string, symbol: string) => gym.callTool('view_docs', { symbol }, testContext(), id);
    const new31 = (await start('156')).episodeId;
    const old211 = (await start('155')).episodeId;

    const r31 = await docs(new31, 'jinja2.pass_eval_context');
    assert.equal(r31.data.found, true, r31.text);
    assert.match(r31.text, /^Documentation of jinja2\.pass_eval_context \(jinja2 3\.1\.0, \/.*\/site-packages\/jinja2\/__init__\.py\)/);
    assert.match(r31.text, /pass_eval_context\(f/);
    const r211 = await docs(old211, 'jinja2.pass_eval_context');
    assert.equal(r211.data.found, false, 'jinja2 2.11 has no pass_eval_context');
    const old = await docs(old211, 'jinja2.evalcontextfilter');
    assert.match(old.text, /\(jinja2 2\.11\.\d/);

    // A bare name is looked up in the task's library; a workspace module cannot stand in for it.
    await gym.callTool('create_file', { path: 'jinja2.py', content: 'raise SystemExit("shadowed")\n' }, testContext(), new31);
    const bare = await docs(new31, 'pass_eval_context');
    assert.equal(bare.data.resolved, 'jinja2.pass_eval_context');
    const capped = await docs(new31, 'jinja2.Environment');
    const short = await gym.callTool('view_docs', { symbol: 'jinja2.Environment', max_chars: 500 }, testContext(), new31);
    assert.equal(short.data.truncated, true);
    assert.ok(short.text.length < capped.text.length, 'max_chars cuts the page');
  });

  test('an agent over MCP: a wrong edit, failing visible test, the traceback, a fix, passing test, reward 1', async () => {
    const server: RunningServer = await startHttpServer(gym, { port: 0 });
    const client = new Client({ name: 'benchgym-test', version: '0.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
      const started = await call(client, 'start_episode', { suite: 'gitchameleon', task_id: '187' });
      const args = { episode_id: data(started).episodeId as string };
      assert.match(text(started), /You are to solve this in python using sympy-1\.13\./);
      assert.deepEqual(data(started).files.sort(), ['sample_187.py', 'visible_tests/', 'visible_tests/test_sample_187.py']);

      const stub = 'def custom_function(eq: sympy.Equality) -> sympy.Expr:\n    return \n';
      const wrong = await call(client, 'edit_file', {
        ...args,
        path: 'sample_187.py',
        old_str: stub,
        new_str: 'def custom_function(eq: sympy.Equality) -> sympy.Expr:\n    return eq.lhs + eq.rhs\n',
      });
      assert.equal(wrong.isError, undefined, text(wrong));
      const failing = await call(client, 'run_tests', args);
      assert.equal(data(failing).counts.failed, 1, text(failing));
      const log = await call(client, 'view_error_log', args);
      assert.match(text(log), /Traceback \(most recent call last\):/);
      assert.match(text(log), /visible_tests\/test_sample_187\.py", line \d+/);
      assert.match(text(log), /AssertionError/);

      const docs = await call(client, 'view_docs', { ...args, symbol: 'sympy.Eq' });
      assert.match(text(docs), /\(sympy 1\.13\.0, /);

      const fixed = await call(client, 'edit_file', {
        ...args,
        path: 'sample_187.py',
        old_str: 'return eq.lhs + eq.rhs',
        new_str: 'return eq.lhs - eq.rhs',
      });
      assert.equal(fixed.isError, undefined, text(fixed));
      const passing = await call(client, 'run_tests', args);
      assert.deepEqual(data(passing).counts, { passed: 1, failed: 0, error: 0, skipped: 0 }, text(passing));

      const verdict = data(await call(client, 'submit', args));
      assert.equal(verdict.reward, 1, JSON.stringify(verdict));
      assert.equal(verdict.status, 'passed');
      assert.ok(verdict.tests.every((t: { name: string }) => t.name.startsWith('hidden_tests/test_sample_187.py::')));
    } finally {
      await client.close();
      await server.close();
    }
  });
});
