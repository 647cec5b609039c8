import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { feedbackAgent } from '../../agents/feedback/index.ts';
import { singleShotAgent } from '../../agents/single-shot/index.ts';
import { agentTestBed, readExample, runAgent, scriptedModel } from './harness.ts';

/** Passes nothing: to_roman counts in I's, from_roman counts letters. */
const WRONG_ROMAN = `def to_roman(n: int) -> str:
    return "I" * n


def from_roman(s: str) -> int:
    return len(s)
`;

function answer(code: string, label = 'python path=roman.py'): string {
  return `Here is the implementation.\n\n\`\`\`${label}\n${code}\`\`\`\n\nIt follows the docstrings.`;
}

describe('feedback and single-shot agents', () => {
  const bed = agentTestBed();
  const endpoint = bed.endpoint;
  let gold: string;

  before(async () => {
    gold = await readExample('roman-numerals/solution/roman.py');
  });

  test('feedback on roman-numerals: wrong in round 1, the error log goes back, gold in round 2 → passedRound 2, reward 1', async () => {
    const server = await endpoint([
      { content: answer(WRONG_ROMAN), usage: { prompt_tokens: 800, completion_tokens: 60 } },
      { content: answer(gold), usage: { prompt_tokens: 2400, completion_tokens: 700 } },
    ]);
    const { result, events } = await runAgent(bed.gym, 'roman-numerals', feedbackAgent, {}, scriptedModel(server.baseURL));
    assert.equal(result.infraError, undefined, JSON.stringify(result.infraError));
    assert.equal(result.stopReason, 'submitted');
    assert.equal(result.passedRound, 2);
    assert.equal(result.rounds, 2);
    assert.equal(result.verdict?.reward, 1, JSON.stringify(result.verdict));
    assert.equal(server.requests.length, 2);
    assert.deepEqual(
      { prompt: result.usage.promptTokens, completion: result.usage.completionTokens, calls: result.usage.calls },
      { prompt: 3200, completion: 760, calls: 2 },
    );

    // Round 1: no tools; the task and the source file (not the tests) in a labelled fence.
    const first = server.requests[0]!;
    assert.equal(first.tools, undefined);
    const prompt = String(first.messages[1]!.content);
    assert.match(prompt, /Implement the two functions in `roman.py`/);
    assert.match(prompt, /```python path=roman\.py\n"""Conversion between integers and Roman numerals\./);
    assert.match(prompt, /raise NotImplementedError/);
    assert.doesNotMatch(prompt, /def test_to_roman/);

    // Round 2: the conversation so far plus the failing tests and their error log.
    const second = server.requests[1]!.messages;
    assert.equal(second.length, 4);
    assert.equal(second[2]!.role, 'assistant');
    const feedback = String(second[3]!.content);
    assert.match(feedback, /attempt 1 of 3/);
    assert.match(feedback, /test_to_roman/);
    assert.match(feedback, /AssertionError|assert 'IIII' == 'IV'/);
    assert.match(feedback, /FAILED|failed/);

    const rounds = events.filter((e) => e.type === 'round_result');
    assert.deepEqual(
      rounds.map((r) => r.passed),
      [false, true],
    );
  });

  test('feedback: every round wrong → rounds_exhausted, the last attempt is scored (reward 0)', async () => {
    const server = await endpoint([{ content: answer(WRONG_ROMAN) }, { content: 'I cannot see the problem; no code this time.' }]);
    const { result } = await runAgent(bed.gym, 'roman-numerals', feedbackAgent, { rounds: 2 }, scriptedModel(server.baseURL));
    assert.equal(result.stopReason, 'rounds_exhausted');
    assert.equal(result.rounds, 2);
    assert.equal(result.passedRound, undefined);
    assert.equal(result.submitted, true);
    assert.equal(result.verdict?.reward, 0);
    assert.equal(server.requests.length, 2);
  });

  test('single-shot: the code of a markdown answer is written and scored (gold → 1)', async () => {
    const server = await endpoint([{ content: answer(gold) }]);
    const model = scriptedModel(server.baseURL, { temperature: 0.8, maxTokens: 2048 });
    const { result } = await runAgent(bed.gym, 'roman-numerals', singleShotAgent, {}, model, { sample: 3 });
    assert.equal(result.stopReason, 'submitted');
    assert.equal(result.verdict?.reward, 1, JSON.stringify(result.verdict));
    assert.equal(server.requests.length, 1);
    assert.equal(server.requests[0]!.temperature, 0.8);
    assert.equal(server.requests[0]!.max_tokens, 2048);
    assert.equal(server.requests[0]!.tools, undefined);
  });

  test('single-shot: a wrong answer scores 0; an unlabelled single block is taken for the one file', async () => {
    const server = await endpoint([{ content: answer(WRONG_ROMAN, 'python') }]);
    const { result, episodeId } = await runAgent(bed.gym, 'roman-numerals', singleShotAgent, {}, scriptedModel(server.baseURL));
    assert.equal(result.stopReason, 'submitted');
    assert.equal(result.verdict?.reward, 0);
    assert.match(bed.gym.episode(episodeId).finalDiff ?? '', /return len\(s\)/);
  });

  test('single-shot: an answer without code is submitted unchanged (reward 0)', async () => {
    const server = await endpoint([{ content: 'Sorry, I cannot help with that.' }]);
    const { result, events } = await runAgent(bed.gym, 'roman-numerals', singleShotAgent, {}, scriptedModel(server.baseURL));
    assert.equal(result.submitted, true);
    assert.equal(result.verdict?.reward, 0);
    assert.ok(events.some((e) => e.type === 'answer' && /no fenced code block/.test(String(e.problem))));
  });
});
