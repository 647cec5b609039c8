import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toAtif } from '../../src/atif/convert.ts';
import { gymRecords } from '../../src/atif/records.ts';
import type { AtifTrajectory } from '../../src/atif/types.ts';

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
type Rec = Record<string, unknown>;

function gym(records: Rec[], skipped: string[] = []) {
  return gymRecords({ records, skipped });
}

/** Every observation result names a tool call of its own step, and step ids run 1, 2, ...: what harbor's validator checks. */
function assertLinked(tr: AtifTrajectory): void {
  tr.steps.forEach((s, i) => assert.equal(s.step_id, i + 1));
  for (const s of tr.steps) {
    const ids = new Set((s.tool_calls ?? []).map((c) => c.tool_call_id));
    for (const r of s.observation?.results ?? [])
      assert.ok(r.source_call_id && ids.has(r.source_call_id), `step ${s.step_id}: ${r.source_call_id}`);
  }
}

const HEADER = {
  type: 'episode',
  episodeId: 'ep-1',
  suite: 'examples',
  taskId: 'roman-numerals',
  prompt: 'Implement roman.py.',
  context: 'default',
  promptVariant: 'default',
  sandbox: 'local',
  startedAt: t(0),
};

test(
  "a run attempt: the agent's turns with their metrics, each call answered " +
    "by the gym's record of it, calls the gym never saw by the agent's",
  () => {
    const g = gym([
      HEADER,
      {
        type: 'step',
        step: 1,
        tool: 'view_file',
        args: { path: 'roman.py' },
        ok: true,
        observation: 'roman.py (lines 1-3 of 3) FULL TEXT',
        startedAt: t(3),
        durationMs: 12,
      },
      {
        type: 'step',
        step: 2,
        tool: 'edit_file',
        args: { path: 'roman.py', old_str: 'x' },
        ok: false,
        error: { code: 'EDIT_NO_MATCH', message: 'no match' },
        startedAt: t(5),
        durationMs: 3,
      },
      {
        type: 'verdict',
        verdict: {
          reward: 1,
          status: 'passed',
          tests: [
            { name: 'a', status: 'passed' },
            { name: 'b', status: 'passed' },
          ],
          notes: [],
        },
      },
      {
        type: 'step',
        step: 3,
        tool: 'submit',
        args: {},
        ok: true,
        observation: 'Verdict: PASSED (reward 1)',
        startedAt: t(7),
        durationMs: 900,
      },
    ]);
    const agent = [
      { type: 'attempt', attempt: 1, at: t(1) },
      { type: 'prompt', system: 'You are an engineer.', user: 'Fix roman.py.', attempt: 1, at: t(1) },
      { type: 'model_call', model: 'm-1', promptTokens: 100, completionTokens: 20, costUsd: 0.5, durationMs: 40, attempt: 1, at: t(2) },
      {
        type: 'assistant',
        content: 'Looking.',
        toolCalls: [
          { id: 'c1', name: 'view_file', arguments: '{"path":"roman.py"}' },
          { id: 'c2', name: 'nope', arguments: '{}' },
        ],
        finishReason: 'tool_calls',
        attempt: 1,
        at: t(2),
      },
      { type: 'tool', name: 'view_file', ok: true, observation: 'roman.py (cut)', attempt: 1, at: t(3) },
      { type: 'tool', name: 'nope', ok: false, error: 'unknown tool', attempt: 1, at: t(3) },
      { type: 'model_call', model: 'm-1', promptTokens: 150, completionTokens: 10, costUsd: 0.25, attempt: 1, at: t(4) },
      {
        type: 'assistant',
        content: null,
        toolCalls: [
          { id: 'c3', name: 'edit_file', arguments: '{"path":"roman.py","old_str":"x"}' },
          { id: 'c4', name: 'run_tests', arguments: '{oops' },
        ],
        attempt: 1,
        at: t(4),
      },
      {
        type: 'tool',
        name: 'edit_file',
        ok: false,
        code: 'EDIT_NO_MATCH',
        observation: 'Error EDIT_NO_MATCH: no match',
        attempt: 1,
        at: t(5),
      },
      { type: 'tool', name: 'run_tests', ok: false, error: 'the arguments are not valid JSON', attempt: 1, at: t(5) },
      { type: 'nudge', attempt: 1, at: t(6) },
      { type: 'model_call', model: 'm-1', promptTokens: 200, completionTokens: 5, costUsd: 0.125, attempt: 1, at: t(6) },
      { type: 'assistant', content: 'Done.', toolCalls: [{ id: 'c5', name: 'submit', arguments: '{}' }], attempt: 1, at: t(6) },
      { type: 'submitted', reward: 1, status: 'passed', attempt: 1, at: t(8) },
    ];
    const run = {
      runId: 'run-1',
      agent: 'swe-agent',
      model: 'm-1',
      result: {
        suite: 'examples',
        task: 'roman-numerals',
        sample: 0,
        attempt: 1,
        final: true,
        episodeId: 'ep-1',
        status: 'passed',
        reward: 1,
        infra: false,
        stopReason: 'submitted',
        tokens: { prompt: 450, completion: 35 },
        costUsd: 0.875,
      },
    };
    const tr = toAtif({ gym: g, agent, run });
    assertLinked(tr);
    assert.equal(tr.schema_version, 'ATIF-v1.7');
    assert.deepEqual(tr.agent.name, 'swe-agent');
    assert.equal(tr.agent.model_name, 'm-1');
    assert.deepEqual(
      tr.steps.map((s) => s.source),
      ['system', 'user', 'agent', 'agent', 'agent'],
    );
    assert.equal(tr.steps[1]!.message, 'Fix roman.py.', "the agent's user message, not the gym's copy of the prompt");
    const [first, second, third] = tr.steps.slice(2);
    assert.deepEqual(first!.metrics, { prompt_tokens: 100, completion_tokens: 20, cost_usd: 0.5, extra: { duration_ms: 40 } });
    assert.equal(first!.llm_call_count, 1);
    assert.deepEqual(
      first!.tool_calls!.map((c) => [c.tool_call_id, c.function_name, c.arguments]),
      [
        ['c1', 'view_file', { path: 'roman.py' }],
        ['c2', 'nope', {}],
      ],
    );
    assert.deepEqual(
      first!.observation!.results.map((r) => r.content),
      ['roman.py (lines 1-3 of 3) FULL TEXT', 'Error: unknown tool'],
      "the gym's full observation, then the agent's refusal",
    );
    assert.deepEqual(first!.observation!.results[0]!.extra, { ok: true, step: 1, started_at: t(3), duration_ms: 12 });
    assert.equal(second!.message, '');
    assert.deepEqual(second!.tool_calls![1]!.extra, { raw_arguments: '{oops' });
    assert.deepEqual(
      second!.observation!.results.map((r) => r.content),
      ['Error EDIT_NO_MATCH: no match', 'Error: the arguments are not valid JSON'],
    );
    assert.equal(third!.observation!.results[0]!.content, 'Verdict: PASSED (reward 1)');
    assert.deepEqual(tr.final_metrics, {
      total_prompt_tokens: 450,
      total_completion_tokens: 35,
      total_cost_usd: 0.875,
      total_steps: 5,
      extra: {
        reward: 1,
        status: 'passed',
        infra: false,
        stop_reason: 'submitted',
        verdict: { reward: 1, status: 'passed', tests: { passed: 2, failed: 0, error: 0, skipped: 0 }, notes: [] },
      },
    });
    assert.deepEqual(
      (tr.extra!.agent_events as Rec[]).map((e) => e.type),
      ['nudge'],
    );
    assert.equal((tr.extra!.benchgym as Rec).episode_id, 'ep-1');
    assert.equal(tr.trajectory_id, 'run-1/roman-numerals/0/1');
  },
);

test("calls the agent's program made without a model turn are agent steps with llm_call_count 0, in time order", () => {
  const g = gym([
    HEADER,
    {
      type: 'step',
      step: 1,
      tool: 'create_file',
      args: { path: 'roman.py', content: 'x' },
      ok: true,
      observation: 'Created',
      startedAt: t(4),
      durationMs: 2,
    },
    { type: 'step', step: 2, tool: 'run_tests', args: {}, ok: true, observation: '1 passed', startedAt: t(5), durationMs: 300 },
    {
      type: 'step',
      step: 3,
      tool: 'submit',
      args: {},
      ok: true,
      observation: 'Verdict: FAILED (reward 0)',
      startedAt: t(9),
      durationMs: 30,
    },
  ]);
  const agent = [
    { type: 'prompt', system: 'Write code.', user: 'roman', attempt: 1, at: t(1) },
    { type: 'model_call', model: 'm', promptTokens: 10, completionTokens: 10, attempt: 1, at: t(3) },
    { type: 'round', round: 1, answer: '```python\nx\n```', files: ['roman.py'], attempt: 1, at: t(3) },
    { type: 'model_call', model: 'm', promptTokens: 20, completionTokens: 10, attempt: 1, at: t(7) },
    { type: 'round', round: 2, answer: 'same', files: [], attempt: 1, at: t(7) },
  ];
  const tr = toAtif({ gym: g, agent, run: { runId: 'r', agent: 'feedback', model: 'm' } });
  assertLinked(tr);
  assert.deepEqual(
    tr.steps.map((s) => [s.source, s.llm_call_count ?? null, s.tool_calls?.[0]?.function_name ?? s.message.slice(0, 10)]),
    [
      ['system', null, 'Write code'],
      ['user', null, 'roman'],
      ['agent', 1, '```python\n'],
      ['agent', 0, 'create_file'],
      ['agent', 0, 'run_tests'],
      ['agent', 1, 'same'],
      ['agent', 0, 'submit'],
    ],
  );
  assert.deepEqual(tr.steps[2]!.extra, { round: 1 });
  assert.equal(tr.final_metrics!.total_prompt_tokens, 30, 'without a result line, the sum of the model calls');
});

test(
  "an episode of benchgym serve: the gym's record alone; an infrastructure " +
    'verdict has reward null; a fork and a header without the prompt are said',
  () => {
    const tr = toAtif({
      gym: gym(
        [
          { ...HEADER, prompt: undefined, forkedFrom: 'ep-0', atStep: 4 },
          {
            type: 'step',
            step: 5,
            tool: 'run_command',
            args: { command: 'ls' },
            ok: true,
            observation: 'a b',
            startedAt: t(1),
            durationMs: 9,
          },
          {
            type: 'verdict',
            verdict: { reward: 0, status: 'error', tests: [], notes: [], error: { code: 'ENV_BUILD_FAILED', message: 'pip failed' } },
          },
          { type: 'step', step: 6, tool: 'submit', args: {}, ok: true, observation: 'Verdict: ERROR', startedAt: t(2), durationMs: 9 },
          { type: 'terminal', event: 'open' },
        ],
        ['{"torn'],
      ),
    });
    assertLinked(tr);
    assert.deepEqual(tr.agent, { name: 'unknown', version: 'unknown', extra: tr.agent.extra });
    assert.deepEqual(
      tr.steps.map((s) => [s.source, s.llm_call_count, s.tool_calls?.[0]?.function_name]),
      [
        ['user', undefined, undefined],
        ['agent', undefined, 'run_command'],
        ['agent', undefined, 'submit'],
      ],
    );
    assert.equal(tr.final_metrics!.extra!.reward, null, 'the harness failed: no answer was judged');
    assert.equal(tr.final_metrics!.extra!.status, 'error');
    assert.equal(tr.final_metrics!.total_prompt_tokens, undefined, 'no model was seen');
    assert.match(tr.notes!, /prompt was not recorded/);
    assert.match(tr.notes!, /1 line\(s\) of the gym's trajectory were not records/);
    assert.match(tr.notes!, /a fork of ep-0 at its step 4/);
    assert.equal(tr.session_id, 'ep-1');
  },
);

test("without the gym's file (an episode on a server), each call is answered by the agent's record of it", () => {
  const agent = [
    {
      type: 'assistant',
      content: 'go',
      toolCalls: [
        { id: 'a', name: 'view_file', arguments: '{"path":"x"}' },
        { id: 'b', name: 'submit', arguments: '{}' },
      ],
      attempt: 1,
      at: t(1),
    },
    { type: 'tool', name: 'view_file', ok: true, observation: 'x (cut at 2000)', attempt: 1, at: t(2) },
    { type: 'submitted', reward: 0, status: 'failed', attempt: 1, at: t(3) },
  ];
  const tr = toAtif({
    agent,
    run: {
      runId: 'r',
      agent: 'swe-agent',
      model: 'm',
      result: { task: 'x', sample: 0, attempt: 1, final: true, status: 'failed', reward: 0, infra: false },
    },
    notes: ['no gym trajectory'],
  });
  assertLinked(tr);
  assert.deepEqual(
    tr.steps.at(-1)!.observation!.results.map((r) => [r.content, r.extra]),
    [
      ['x (cut at 2000)', { ok: true, recorded_by: 'agent' }],
      ['Verdict: failed (reward 0)', { recorded_by: 'agent' }],
    ],
  );
  assert.match(tr.notes!, /^no gym trajectory\nthe task's prompt was not recorded/);
  assert.equal(tr.final_metrics!.extra!.reward, 0);
});
