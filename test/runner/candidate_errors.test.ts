import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import type { AgentContext, AgentResult } from '../../src/agent/types.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { readResults } from '../../src/runner/results.ts';
import { runExperiment } from '../../src/runner/runner.ts';
import { makeGym, tempDir } from '../helpers.ts';

/**
 * End to end: a candidate that leaves a dangling symbolic link out of the workspace at a
 * conftest path gets a scored wrong answer, written once; it is not retried as an
 * infrastructure failure nor dropped from the denominators.
 */

let gym: Gym;
let cleanup: () => Promise<void>;
let dir: string;
before(async () => {
  ({ gym, cleanup } = await makeGym());
  dir = await tempDir('benchgym-run-cand-');
});
after(async () => {
  await cleanup();
  await fs.rm(dir, { recursive: true, force: true });
});

const usage = { promptTokens: 0, completionTokens: 0, costUsd: 0, calls: 0 };

test(
  'a dangling link out of the workspace at a conftest path is a final, scored failure: not an infrastructure error, not retried',
  { timeout: 300_000 },
  async () => {
    let episodes = 0;
    const agent = {
      name: 'link-out',
      create: () => ({
        run: async (ctx: AgentContext): Promise<AgentResult> => {
          episodes++;
          const ln = await ctx.client.callTool({
            name: 'run_command',
            arguments: { command: 'ln -s /nonexistent-benchgym/conftest.py tests/conftest.py' },
          });
          assert.ok(!ln.isError, JSON.stringify(ln.content));
          const r = await ctx.client.callTool({ name: 'submit', arguments: {} });
          return {
            verdict: (r.structuredContent ?? null) as Record<string, unknown> | null,
            submitted: !r.isError,
            stopReason: 'submitted',
            steps: 2,
            usage,
          };
        },
      }),
    };
    const outDir = path.join(dir, 'run');
    await runExperiment({
      gym,
      suite: 'examples',
      tasks: ['inventory-discount-bug'],
      agent,
      model: { model: 'test-model' },
      outDir,
      retries: 2,
      retryDelayMs: () => 0,
    });
    const { records: lines } = await readResults(path.join(outDir, 'results.jsonl'));
    assert.equal(episodes, 1, 'a wrong answer is never retried');
    assert.equal(lines.length, 1, JSON.stringify(lines));
    const [r] = lines;
    assert.equal(r!.status, 'failed', JSON.stringify(r));
    assert.equal(r!.infra, false);
    assert.equal(r!.final, true);
    assert.equal(r!.reward, 0);
    assert.ok(
      r!.verdict?.notes.some((n) => n.startsWith('CANDIDATE_FILE_REFUSED: tests/conftest.py ')),
      JSON.stringify(r!.verdict),
    );
  },
);
