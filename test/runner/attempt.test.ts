/**
 * An episode whose sandbox fails under the agent: a failure after the agent's code ran there is
 * retried, and when it recurs strict scoring counts it against the agent (a wrong answer cannot
 * become an uncounted sample by killing its sandbox); faithful scoring keeps it an
 * infrastructure failure; a failure before any of its code ran stays the infrastructure's.
 * The sandboxes end for real (ending_sandboxes.ts: destroyed from the host as the call starts).
 */
import { test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import assert from 'node:assert/strict';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import type { AgentContext, AgentResult } from '../../src/agent/types.ts';
import { SANDBOX_FAILED_AFTER_AGENT_NOTE } from '../../src/runner/record.ts';
import { readResults, type ResultRecord } from '../../src/runner/results.ts';
import { runExperiment } from '../../src/runner/runner.ts';
import { resultErrorCode, resultText } from '../../src/agent/session.ts';
import type { ScoringMode } from '../../src/scoring/mode.ts';
import { tempDir } from '../helpers.ts';
import { gymWithEndingSandboxes } from './ending_sandboxes.ts';

const usage = { promptTokens: 0, completionTokens: 0, costUsd: 0, calls: 0 };

/** An agent that makes `calls` and then submits, reporting a failed submit as agents/common does (an infrastructure error). */
function scriptedAgent(calls: { name: string; arguments: Record<string, unknown> }[], episodes: { n: number }) {
  return {
    name: 'sandbox-ender',
    create: () => ({
      run: async (ctx: AgentContext): Promise<AgentResult> => {
        episodes.n++;
        for (const call of calls) await ctx.client.callTool(call);
        const r = (await ctx.client.callTool({ name: 'submit', arguments: {} })) as CallToolResult;
        const steps = calls.length + 1;
        if (!r.isError)
          return {
            verdict: (r.structuredContent ?? null) as Record<string, unknown> | null,
            submitted: true,
            stopReason: 'submitted',
            steps,
            usage,
          };
        return {
          verdict: null,
          submitted: false,
          stopReason: 'error',
          steps,
          usage,
          infraError: { code: resultErrorCode(r) ?? 'INTERNAL', message: resultText(r) },
        };
      },
    }),
  };
}

const KILL = { name: 'run_command', arguments: { command: 'kill -9 -1' } };

/** A run of one pair whose episodes' sandboxes end as `ends` says; its result lines. */
async function runPair(
  scoring: ScoringMode,
  retries: number,
  calls: { name: string; arguments: Record<string, unknown> }[],
  ends: (op: string, arg: string) => boolean,
  more: { outDir?: string; resume?: boolean; rerunErrors?: boolean } = {},
): Promise<{ lines: ResultRecord[]; episodes: number; ended: string[] }> {
  const bed = await gymWithEndingSandboxes((role, op, arg) => role === 'episode' && ends(op, arg), { scoring });
  const dir = more.outDir ?? path.join(await tempDir('benchgym-attempt-'), 'run');
  const episodes = { n: 0 };
  try {
    const agent = scriptedAgent(calls, episodes);
    await runExperiment({
      gym: bed.gym,
      suite: 'examples',
      tasks: ['roman-numerals'],
      agent,
      model: { model: 'none' },
      outDir: dir,
      retries,
      retryDelayMs: () => 0,
      resume: more.resume,
      rerunErrors: more.rerunErrors,
    });
    const { records } = await readResults(path.join(dir, 'results.jsonl'));
    return { lines: records, episodes: episodes.n, ended: bed.ended };
  } finally {
    await bed.cleanup();
    if (!more.outDir) await fs.rm(path.dirname(dir), { recursive: true, force: true });
  }
}

test(
  "strict: a sandbox that fails after the agent's command ran is retried, and failing again is a final, counted failure with a note",
  { timeout: 300_000 },
  async () => {
    const { lines, episodes, ended } = await runPair('strict', 2, [KILL], (op, arg) => op === 'exec' && arg.includes('kill -9 -1'));
    assert.equal(episodes, 2, 'one retry, then decided');
    assert.deepEqual(ended, ['episode exec: kill -9 -1', 'episode exec: kill -9 -1']);
    assert.equal(lines.length, 2, JSON.stringify(lines));
    const [first, second] = lines;
    const { infraError } = first!;
    assert.deepEqual([first!.status, first!.infra, first!.final], ['error', true, false]);
    assert.deepEqual([infraError?.code, infraError?.afterAgentCode, infraError?.source], ['SANDBOX_UNAVAILABLE', true, 'gym']);
    assert.deepEqual(
      [second!.status, second!.infra, second!.final, second!.reward, second!.attempt, second!.infraError],
      ['failed', false, true, 0, 2, undefined],
    );
    const note = second!.notes?.find((n) => n.startsWith(`${SANDBOX_FAILED_AFTER_AGENT_NOTE}:`));
    const told = new RegExp(
      String.raw`the episode's sandbox failed after the agent's code ran there on 2 attempts \(this one: ` +
        String.raw`SANDBOX_UNAVAILABLE: .*\): counted as failed \(strict scoring\)`,
    );
    assert.match(note ?? '', told, JSON.stringify(second));
  },
);

test('faithful: the same stays an infrastructure failure after its retries', { timeout: 300_000 }, async () => {
  const { lines, episodes } = await runPair('faithful', 1, [KILL], (op, arg) => op === 'exec' && arg.includes('kill -9 -1'));
  assert.equal(episodes, 2);
  assert.deepEqual(
    lines.map((r) => [r.status, r.infra, r.final, r.infraError?.afterAgentCode]),
    [
      ['error', true, false, true],
      ['error', true, true, true],
    ],
  );
});

test(
  "a sandbox that fails before any of the agent's code ran is the infrastructure's: retried, never counted against it (strict)",
  { timeout: 300_000 },
  async () => {
    const view = { name: 'view_file', arguments: { path: 'roman.py' } };
    const { lines, episodes } = await runPair('strict', 1, [view], (op, arg) => op === 'readFile' && arg === 'roman.py');
    assert.equal(episodes, 2);
    assert.deepEqual(
      lines.map((r) => [r.status, r.infra, r.final, r.infraError?.code, r.infraError?.afterAgentCode]),
      [
        ['error', true, false, 'SANDBOX_UNAVAILABLE', undefined],
        ['error', true, true, 'SANDBOX_UNAVAILABLE', undefined],
      ],
    );
  },
);

test(
  'the count survives a resume: --retries 0 leaves one failure an error; --rerun-errors meeting it again counts it (strict)',
  { timeout: 300_000 },
  async () => {
    const root = await tempDir('benchgym-attempt-');
    const outDir = path.join(root, 'run');
    try {
      const ends = (op: string, arg: string) => op === 'exec' && arg.includes('kill -9 -1');
      const once = await runPair('strict', 0, [KILL], ends, { outDir });
      assert.deepEqual(
        once.lines.map((r) => [r.status, r.final, r.infraError?.afterAgentCode]),
        [['error', true, true]],
      );
      const again = await runPair('strict', 0, [KILL], ends, { outDir, resume: true, rerunErrors: true });
      assert.equal(again.episodes, 1);
      const last = again.lines.at(-1)!;
      assert.deepEqual([last.attempt, last.status, last.final, last.infra], [2, 'failed', true, false]);
      assert.ok(
        last.notes?.some((n) => n.startsWith(`${SANDBOX_FAILED_AFTER_AGENT_NOTE}:`)),
        JSON.stringify(last),
      );
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  },
);
