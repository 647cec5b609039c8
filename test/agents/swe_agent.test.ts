import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sweAgent, NUDGE } from '../../agents/swe-agent/index.ts';
import { BUGGY, FIXED, REPRO_TEST } from '../server/scenario.ts';
import { agentTestBed, runAgent, scriptedModel } from './harness.ts';
import type { ChatRequest } from './scripted_openai.ts';

/** The tool messages of a request, in order, with the name of the call they answer. */
function toolMessages(req: ChatRequest): { name: string; content: string }[] {
  const names = new Map<string, string>();
  for (const m of req.messages) for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
  return req.messages
    .filter((m) => m.role === 'tool')
    .map((m) => ({ name: names.get(m.tool_call_id!) ?? '?', content: String(m.content) }));
}

describe('swe-agent', () => {
  const bed = agentTestBed();
  const endpoint = bed.endpoint;

  test('solves inventory-discount-bug by scripted tool calls → reward 1; tool results went back to the model', async () => {
    const server = await endpoint([
      {
        content: 'The tax is computed in shop/cart.py; let me look.',
        tool_calls: [{ name: 'view_file', arguments: { path: 'shop/cart.py', start_line: 70, end_line: 90 } }],
        usage: { prompt_tokens: 1000, completion_tokens: 50 },
      },
      {
        content: 'Reproduce first: a test, then run it (two calls at once).',
        tool_calls: [
          { name: 'create_file', arguments: { path: 'tests/test_repro.py', content: REPRO_TEST } },
          { name: 'run_tests', arguments: { tests: ['tests/test_repro.py'] } },
        ],
        usage: { prompt_tokens: 1500, completion_tokens: 300 },
      },
      {
        content: 'The coupon is not applied before tax. Fix it.',
        tool_calls: [{ name: 'edit_file', arguments: { path: 'shop/cart.py', old_str: BUGGY, new_str: FIXED } }],
        usage: { prompt_tokens: 2000, completion_tokens: 120 },
      },
      { tool_calls: [{ name: 'run_tests', arguments: {} }], usage: { prompt_tokens: 2500, completion_tokens: 10 } },
      {
        content: 'All visible tests pass. Submitting.',
        tool_calls: [{ name: 'submit', arguments: {} }],
        usage: { prompt_tokens: 3000, completion_tokens: 10 },
      },
    ]);
    const model = scriptedModel(server.baseURL, { pricing: { prompt: 2, completion: 10 }, temperature: 0 });
    const { result, events } = await runAgent(bed.gym, 'inventory-discount-bug', sweAgent, {}, model);

    assert.equal(result.infraError, undefined, JSON.stringify(result.infraError));
    assert.equal(result.stopReason, 'submitted');
    assert.equal(result.submitted, true);
    assert.equal(result.verdict?.reward, 1, JSON.stringify(result.verdict));
    assert.equal(result.steps, 6);
    assert.equal(server.requests.length, 5);

    // The first request: system prompt describing the tools, the task, the tool schemas.
    const first = server.requests[0]!;
    assert.equal(first.model, 'scripted-model');
    assert.equal(first.temperature, 0);
    assert.equal(first.messages[0]!.role, 'system');
    assert.match(String(first.messages[0]!.content), /view_file/);
    assert.match(String(first.messages[1]!.content), /Sales tax is charged on the full price/);
    const offered = first.tools!.map((t) => t.function.name);
    for (const name of ['view_file', 'edit_file', 'create_file', 'run_tests', 'view_error_log', 'submit'])
      assert.ok(offered.includes(name), name);
    assert.ok(!offered.includes('end_episode') && !offered.includes('fork_episode'));
    const viewSchema = first.tools!.find((t) => t.function.name === 'view_file')!.function.parameters!;
    assert.deepEqual((viewSchema.required as string[]).sort(), ['path']);
    assert.equal(viewSchema.$schema, undefined);

    // Every observation went back as a tool message, answering its call in order.
    assert.match(toolMessages(server.requests[1]!)[0]!.content, /def taxable_amount/);
    const afterRepro = toolMessages(server.requests[2]!);
    assert.deepEqual(
      afterRepro.map((m) => m.name),
      ['view_file', 'create_file', 'run_tests'],
    );
    assert.match(afterRepro[1]!.content, /Created tests\/test_repro\.py/);
    assert.match(afterRepro[2]!.content, /0 passed, 1 failed/);
    assert.match(afterRepro[2]!.content, /test_coupon_lowers_the_tax/);
    assert.match(toolMessages(server.requests[3]!)[3]!.content, /percent_of\(taxable, self\.coupon_percent\)|Edited|shop\/cart\.py/);
    assert.match(toolMessages(server.requests[4]!)[4]!.content, /0 failed/);
    assert.equal(server.authorizations[0], 'Bearer test');

    // Token and cost accounting sums every call's usage.
    assert.deepEqual(
      { ...result.usage, costUsd: Number(result.usage.costUsd.toFixed(6)) },
      {
        promptTokens: 10_000,
        completionTokens: 490,
        calls: 5,
        costUsd: Number(((10_000 * 2 + 490 * 10) / 1e6).toFixed(6)),
      },
    );
    assert.ok(events.some((e) => e.type === 'assistant'));
    assert.ok(events.some((e) => e.type === 'tool' && e.name === 'edit_file' && e.ok === true));
    assert.ok(events.some((e) => e.type === 'submitted' && e.reward === 1));
  });

  test('the step limit submits the current diff: unsolved → reward 0, stopReason step_limit', async () => {
    const server = await endpoint([{ content: 'Looking around.', tool_calls: [{ name: 'list_dir', arguments: { path: '.' } }] }], {
      repeatLast: true,
    });
    const { result, episodeId } = await runAgent(
      bed.gym,
      'inventory-discount-bug',
      sweAgent,
      { max_steps: 3 },
      scriptedModel(server.baseURL),
    );
    assert.equal(result.stopReason, 'step_limit');
    assert.equal(result.submitted, true);
    assert.equal(result.steps, 3);
    assert.equal(result.verdict?.reward, 0);
    assert.equal(result.verdict?.status, 'failed');
    assert.equal(result.infraError, undefined);
    assert.equal(server.requests.length, 3);
    assert.equal(bed.gym.episode(episodeId).state, 'submitted');
    assert.match(String(server.requests[0]!.messages[0]!.content), /at most 3 actions/);
  });

  test('parallel calls past the step limit are answered but not run', async () => {
    const server = await endpoint([
      {
        tool_calls: [
          { name: 'list_dir', arguments: {} },
          { name: 'create_file', arguments: { path: 'never.txt', content: 'x' } },
        ],
      },
    ]);
    const { result, episodeId } = await runAgent(
      bed.gym,
      'inventory-discount-bug',
      sweAgent,
      { max_steps: 1 },
      scriptedModel(server.baseURL),
    );
    assert.equal(result.stopReason, 'step_limit');
    assert.equal(result.steps, 1);
    assert.equal(result.verdict?.reward, 0);
    assert.doesNotMatch(bed.gym.episode(episodeId).finalDiff ?? '', /never\.txt/);
  });

  test('a model that stops calling tools is nudged once, then its diff is submitted (model_stopped)', async () => {
    const server = await endpoint([{ content: 'I think the bug is in cart.py.' }, { content: 'I am done.' }]);
    const { result } = await runAgent(bed.gym, 'inventory-discount-bug', sweAgent, {}, scriptedModel(server.baseURL));
    assert.equal(result.stopReason, 'model_stopped');
    assert.equal(result.submitted, true);
    assert.equal(result.verdict?.reward, 0);
    assert.equal(result.steps, 0);
    assert.equal(server.requests.length, 2);
    const second = server.requests[1]!.messages;
    assert.equal(second.at(-1)!.role, 'user');
    assert.equal(second.at(-1)!.content, NUDGE);
    assert.equal(second.at(-2)!.role, 'assistant');
  });

  test('invalid JSON arguments and unknown tools are reported to the model, which carries on', async () => {
    const server = await endpoint([
      { tool_calls: [{ name: 'view_file', arguments: '{"path": "shop/cart.py"' }] },
      { tool_calls: [{ name: 'end_episode', arguments: {} }] },
      { tool_calls: [{ name: 'view_file', arguments: { path: 'nope.py' } }] },
      { tool_calls: [{ name: 'submit', arguments: {} }] },
    ]);
    const { result, episodeId } = await runAgent(bed.gym, 'inventory-discount-bug', sweAgent, {}, scriptedModel(server.baseURL));
    assert.equal(result.stopReason, 'submitted');
    assert.equal(result.verdict?.reward, 0);
    assert.equal(bed.gym.episode(episodeId).state, 'submitted');
    assert.match(toolMessages(server.requests[1]!)[0]!.content, /not valid JSON/);
    assert.match(toolMessages(server.requests[2]!)[1]!.content, /there is no tool 'end_episode'/);
    assert.match(toolMessages(server.requests[3]!)[2]!.content, /Error FILE_NOT_FOUND/);
  });

  test('the cost limit submits once the spend reaches it', async () => {
    const server = await endpoint(
      [{ tool_calls: [{ name: 'list_dir', arguments: {} }], usage: { prompt_tokens: 100_000, completion_tokens: 0 } }],
      { repeatLast: true },
    );
    const model = scriptedModel(server.baseURL, { pricing: { prompt: 10, completion: 0 } });
    const { result } = await runAgent(bed.gym, 'inventory-discount-bug', sweAgent, { cost_limit_usd: 1.5 }, model);
    assert.equal(result.stopReason, 'cost_limit');
    assert.equal(result.submitted, true);
    assert.equal(result.usage.calls, 2);
    assert.equal(result.usage.costUsd, 2);
    assert.equal(result.steps, 1);
  });

  test('long observations keep their head and tail', async () => {
    const server = await endpoint([
      { tool_calls: [{ name: 'run_command', arguments: { command: 'seq 1 5000' } }] },
      { tool_calls: [{ name: 'submit', arguments: {} }] },
    ]);
    const { result } = await runAgent(
      bed.gym,
      'inventory-discount-bug',
      sweAgent,
      { max_observation_chars: 1000 },
      scriptedModel(server.baseURL),
    );
    assert.equal(result.stopReason, 'submitted');
    const observation = toolMessages(server.requests[1]!)[0]!.content;
    assert.ok(observation.length < 1300, `${observation.length} characters`);
    assert.match(observation, /characters \(\d+ lines\) omitted/);
    assert.match(observation, /\n5000$/);
  });
});
