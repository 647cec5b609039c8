import { z } from 'zod';
import { GymError } from '../errors.ts';
import { runTests } from '../scoring/runners.ts';
import type { RunnerSpec } from '../tasks/schema.ts';
import { Count, TestStatusOutput } from './output.ts';
import { episodeTool } from './types.ts';

function select(spec: RunnerSpec, tests: string[] | undefined): RunnerSpec {
  if (!tests?.length) return spec;
  if (spec.type === 'pytest') return { ...spec, args: tests };
  if (spec.type === 'maven' || spec.type === 'gradle') return { ...spec, tests };
  return spec;
}

export const runTestsTool = episodeTool({
  name: 'run_tests',
  title: 'Run the visible tests',
  description:
    "Run the task's visible tests and report each test's status (passed / failed / error / skipped) with the " +
    'first lines of each failure. Optionally run only some tests (pytest node ids such as tests/test_x.py::test_y, ' +
    'or Java tests such as FooTest, FooTest#bar or module:com.pkg.FooTest#bar in multi-module builds). Then use ' +
    'view_error_log for full tracebacks and compiler errors. Hidden tests decide the final score.',
  input: z.object({
    tests: z.array(z.string().min(1)).optional().describe('run only these tests'),
  }),
  output: z.object({
    command: z.string(),
    exitCode: z.number().int().nullable(),
    timedOut: z.boolean(),
    durationMs: z.number().min(0),
    counts: z.object({ passed: Count, failed: Count, error: Count, skipped: Count }),
    tests: z.array(
      z.object({ name: z.string(), status: TestStatusOutput, message: z.string().optional(), durationMs: z.number().min(0).optional() }),
    ),
  }),
  annotations: { readOnlyHint: false, idempotentHint: true },
  runsCode: true,
  async run(episode, args, ctx) {
    const visible = episode.task.tests.visible;
    if (!visible) throw new GymError('NO_VISIBLE_TESTS', 'this task has no visible tests; use run_command to try your code');
    ctx.progress(0, undefined, 'running the visible tests');
    const run = await runTests(episode.sandbox, episode.env, select(visible.runner, args.tests), {
      timeoutMs: visible.timeoutMs,
      signal: ctx.signal,
      onOutput: ctx.onOutput,
    });
    episode.lastTestRun = { ...run, at: new Date().toISOString() };
    const counts = { passed: 0, failed: 0, error: 0, skipped: 0 };
    for (const t of run.tests) counts[t.status]++;
    const status = run.exec.timedOut ? `timed out after ${visible.timeoutMs / 1000} s` : `exit code ${run.exec.exitCode}`;
    const lines = [
      `Visible tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.error} ` +
        `errors, ${counts.skipped} skipped (${status}, ${(run.exec.durationMs / 1000).toFixed(1)} s)`,
    ];
    for (const t of run.tests)
      lines.push(`${t.status.toUpperCase().padEnd(7)} ${t.name}${t.message ? ` — ${t.message.split('\n')[0]!.slice(0, 200)}` : ''}`);
    if (!run.tests.length) lines.push('No test results were reported; the code may not import or compile. See view_error_log.');
    if (counts.failed + counts.error > 0 || !run.tests.length) lines.push('Use view_error_log for the tracebacks and the full log.');
    return {
      text: lines.join('\n'),
      data: {
        command: run.command,
        exitCode: run.exec.exitCode,
        timedOut: run.exec.timedOut,
        durationMs: run.exec.durationMs,
        counts,
        tests: run.tests.map(({ details: _d, ...t }) => t),
      },
    };
  },
});
