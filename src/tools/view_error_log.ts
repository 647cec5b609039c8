import { z } from 'zod';
import { GymError } from '../errors.ts';
import { parseFailures } from '../scoring/errors_log.ts';
import { episodeTool } from './types.ts';

const PAGE_LINES = 200;
const MAX_DETAIL_LINES = 60;

function clip(text: string, maxLines: number): string {
  const lines = text.split('\n');
  return lines.length <= maxLines
    ? text
    : `${lines.slice(0, maxLines).join('\n')}\n[... ${lines.length - maxLines} more lines in the full log]`;
}

export const viewErrorLogTool = episodeTool({
  name: 'view_error_log',
  title: "View the last test run's errors",
  description:
    'Show what went wrong in the last run_tests: failing tests first with their tracebacks or assertion ' +
    'messages, compiler errors as file:line: message, then the full log, 200 lines a page (page 2, 3, ... for more).',
  input: z.object({ page: z.number().int().min(1).default(1).describe('page of the full log') }),
  output: z.object({
    failures: z.array(z.object({ test: z.string(), status: z.string(), message: z.string().optional(), details: z.string().optional() })),
    compilerErrors: z.array(
      z.object({ file: z.string(), line: z.number().int(), column: z.number().int().optional(), message: z.string() }),
    ),
    tracebacks: z.array(z.string()),
    page: z.number().int().min(1),
    pages: z.number().int().min(1),
    exitCode: z.number().int().nullable(),
    timedOut: z.boolean(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true },
  async run(episode, args) {
    const run = episode.lastTestRun;
    if (!run) throw new GymError('NO_TEST_RUN', 'no tests have run yet in this episode; call run_tests first');
    const parsed = parseFailures(run, episode.sandbox.workdir);
    const logLines = run.log.split('\n');
    const pages = Math.max(1, Math.ceil(logLines.length / PAGE_LINES));
    if (args.page > pages) throw new GymError('INVALID_ARGUMENT', `invalid 'page': ${args.page} (the log has ${pages} pages)`);
    const out: string[] = [];
    if (args.page === 1) {
      out.push(`Last test run at ${run.at}: ${run.command}`);
      if (run.exec.timedOut) out.push('The run timed out: the tests were killed.');
      if (parsed.compilerErrors.length) {
        out.push(`\nCompiler errors (${parsed.compilerErrors.length}):`);
        for (const e of parsed.compilerErrors) out.push(`${e.file}:${e.line}${e.column ? `:${e.column}` : ''}: ${e.message}`);
      }
      if (parsed.failures.length) {
        out.push(`\nFailing tests (${parsed.failures.length}):`);
        for (const f of parsed.failures) {
          out.push(`\n=== ${f.status.toUpperCase()} ${f.test}`);
          if (f.details) out.push(clip(f.details, MAX_DETAIL_LINES));
          else if (f.message) out.push(f.message);
        }
      }
      for (const tb of parsed.tracebacks) out.push(`\n${clip(tb, MAX_DETAIL_LINES)}`);
      if (!parsed.failures.length && !parsed.compilerErrors.length && !parsed.tracebacks.length) out.push('\nNo failures in the last run.');
    }
    const slice = logLines.slice((args.page - 1) * PAGE_LINES, args.page * PAGE_LINES);
    out.push(`${args.page === 1 ? '\n' : ''}--- full log, page ${args.page} of ${pages} ---\n${slice.join('\n')}`);
    if (args.page < pages) out.push(`[more: view_error_log with page=${args.page + 1}]`);
    return { text: out.join('\n'), data: { ...parsed, page: args.page, pages, exitCode: run.exec.exitCode, timedOut: run.exec.timedOut } };
  },
});
