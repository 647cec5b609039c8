import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { feedbackAgent } from '../../agents/feedback/index.ts';
import { singleShotAgent } from '../../agents/single-shot/index.ts';
import { sweAgent } from '../../agents/swe-agent/index.ts';
import type { AgentDefinition } from '../../src/agent/types.ts';
import { agentTestBed, readExample, runAgent, scriptedModel } from './harness.ts';

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('model endpoint failures', () => {
  const bed = agentTestBed();
  const endpoint = bed.endpoint;

  const agents: [string, AgentDefinition, string][] = [
    ['swe-agent', sweAgent, 'inventory-discount-bug'],
    ['feedback', feedbackAgent, 'roman-numerals'],
    ['single-shot', singleShotAgent, 'roman-numerals'],
  ];
  for (const [name, def, taskId] of agents) {
    test(`${name}: an endpoint answering 500 every time → infraError MODEL_UNAVAILABLE after bounded retries, nothing scored`, async () => {
      const server = await endpoint(() => ({ status: 500, errorMessage: 'the GPU caught fire' }));
      const { result, events, episodeId } = await runAgent(bed.gym, taskId, def, {}, scriptedModel(server.baseURL, { maxRetries: 2 }));
      assert.equal(result.infraError?.code, 'MODEL_UNAVAILABLE', JSON.stringify(result));
      assert.match(result.infraError!.message, /failed 3 times.*500/);
      assert.equal(result.verdict, null);
      assert.equal(result.submitted, false);
      assert.equal(result.stopReason, 'error');
      assert.equal(server.requests.length, 3);
      assert.equal(result.usage.calls, 0);
      // The episode was not scored: no wrong answer was recorded for it.
      const episode = bed.gym.episode(episodeId);
      assert.equal(episode.state, 'running');
      assert.equal(episode.verdict, undefined);
      assert.equal(events.filter((e) => e.type === 'model_error' && e.retry === true).length, 2);
    });
  }

  test('429 (Retry-After) and 503 are retried; the answer that follows is used and only it is counted', async () => {
    const gold = await readExample('roman-numerals/solution/roman.py');
    const server = await endpoint([
      { status: 429, headers: { 'retry-after-ms': '20' }, errorMessage: 'slow down' },
      { status: 503 },
      { content: `\`\`\`python path=roman.py\n${gold}\`\`\``, usage: { prompt_tokens: 321, completion_tokens: 123 } },
    ]);
    const model = scriptedModel(server.baseURL, { pricing: { prompt: 1, completion: 4 } });
    const { result } = await runAgent(bed.gym, 'roman-numerals', singleShotAgent, {}, model);
    assert.equal(result.infraError, undefined);
    assert.equal(result.verdict?.reward, 1);
    assert.equal(server.requests.length, 3);
    assert.equal(result.usage.calls, 1);
    assert.equal(result.usage.promptTokens, 321);
    assert.equal(result.usage.completionTokens, 123);
    assert.ok(Math.abs(result.usage.costUsd - (321 * 1 + 123 * 4) / 1e6) < 1e-12);
  });

  test('an endpoint that is not there (connection refused) → MODEL_UNAVAILABLE', async () => {
    const port = await deadPort();
    const { result } = await runAgent(
      bed.gym,
      'roman-numerals',
      singleShotAgent,
      {},
      scriptedModel(`http://127.0.0.1:${port}/v1`, { maxRetries: 1 }),
    );
    assert.equal(result.infraError?.code, 'MODEL_UNAVAILABLE');
    assert.equal(result.submitted, false);
  });

  test('401 is not retried: MODEL_UNAVAILABLE at once', async () => {
    const server = await endpoint(() => ({ status: 401, errorMessage: 'bad key' }));
    const { result } = await runAgent(bed.gym, 'roman-numerals', feedbackAgent, {}, scriptedModel(server.baseURL));
    assert.equal(result.infraError?.code, 'MODEL_UNAVAILABLE');
    assert.equal(server.requests.length, 1);
  });

  test('swe-agent: a context-length 400 submits the diff so far (context_limit)', async () => {
    const server = await endpoint([
      { tool_calls: [{ name: 'list_dir', arguments: {} }] },
      { status: 400, errorMessage: "This model's maximum context length is 8192 tokens" },
    ]);
    const { result } = await runAgent(bed.gym, 'inventory-discount-bug', sweAgent, {}, scriptedModel(server.baseURL));
    assert.equal(result.stopReason, 'context_limit');
    assert.equal(result.submitted, true);
    assert.equal(result.verdict?.reward, 0);
    assert.equal(result.infraError, undefined);
  });

  test('an aborted run stops with infraError CANCELLED and submits nothing', async () => {
    const controller = new AbortController();
    const server = await endpoint(async () => {
      controller.abort();
      await new Promise((r) => setTimeout(r, 50));
      return { content: 'late' };
    });
    const { result, episodeId } = await runAgent(bed.gym, 'roman-numerals', singleShotAgent, {}, scriptedModel(server.baseURL), {
      signal: controller.signal,
    });
    assert.equal(result.infraError?.code, 'CANCELLED');
    assert.equal(result.submitted, false);
    assert.equal(bed.gym.episode(episodeId).state, 'running');
  });
});
