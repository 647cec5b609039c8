import { z } from 'zod';
import { GymError } from '../errors.ts';
import type { Verdict } from '../scoring/verdict.ts';
import { TestStatusOutput } from './output.ts';
import { episodeTool } from './types.ts';

const OutcomeOutput = z.object({ passed: z.array(z.string()), failed: z.array(z.string()) });

/** publicVerdict's shape. */
export const PublicVerdictOutput = z.object({
  taskId: z.string(),
  suite: z.string(),
  reward: z.union([z.literal(0), z.literal(1)]),
  status: z.enum(['passed', 'failed', 'error']).describe("'error' is an infrastructure failure, never a wrong answer"),
  tests: z.array(z.object({ name: z.string(), status: TestStatusOutput, durationMs: z.number().min(0).optional() })),
  failToPass: OutcomeOutput.optional(),
  passToPass: OutcomeOutput.optional(),
  notes: z.array(z.string()),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  exitCode: z.number().int().nullable().optional(),
  timedOut: z.boolean().optional(),
  durationMs: z.number().min(0),
});

/**
 * The verdict as the agent sees it: outcomes and test names, but no failure texts of hidden
 * tests and no server paths (a later attempt at the same task must not learn the tests).
 * The full verdict stays in the trajectory and the scoring log.
 */
export function publicVerdict(v: Verdict): Record<string, unknown> {
  const { logRef: _logRef, tests, ...rest } = v;
  return {
    ...rest,
    tests: tests.map(({ name, status, durationMs }) => ({ name, status, ...(durationMs !== undefined ? { durationMs } : {}) })),
  };
}

export function formatVerdict(v: Verdict): string {
  const lines = [`Verdict: ${v.status.toUpperCase()} (reward ${v.reward})`];
  if (v.error) lines.push(`Infrastructure error ${v.error.code}: ${v.error.message} (not counted as a wrong answer)`);
  const counts = { passed: 0, failed: 0, error: 0, skipped: 0 };
  for (const t of v.tests) counts[t.status]++;
  lines.push(`Hidden tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.error} errors, ${counts.skipped} skipped`);
  if (v.failToPass)
    lines.push(`FAIL_TO_PASS: ${v.failToPass.passed.length}/${v.failToPass.passed.length + v.failToPass.failed.length} pass`);
  if (v.passToPass)
    lines.push(`PASS_TO_PASS: ${v.passToPass.passed.length}/${v.passToPass.passed.length + v.passToPass.failed.length} pass`);
  for (const n of v.notes) lines.push(`Note: ${n}`);
  return lines.join('\n');
}

export const submitTool = episodeTool({
  name: 'submit',
  title: 'Submit for scoring',
  description:
    'Submit the current changes. They are applied to a fresh copy of the start state and scored with the ' +
    'hidden tests; the verdict (reward 1 or 0) is returned and the episode ends. Call it once, when you are done.',
  input: z.object({}),
  output: PublicVerdictOutput,
  annotations: { destructiveHint: true },
  allowedAfterEnd: true,
  exemptFromBudget: true,
  async run(episode, _args, ctx) {
    if (episode.state !== 'running' && !episode.verdict) {
      throw new GymError('EPISODE_ENDED', `episode ${episode.id} was ${episode.state} without a submission`);
    }
    const verdict = await episode.lifecycle.submit(episode, ctx);
    return { text: formatVerdict(verdict), data: publicVerdict(verdict) };
  },
});
