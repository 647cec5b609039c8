/**
 * feedback: the GitChameleon / self-debug loop. The model gets the task and the source
 * files and answers with whole files in fenced blocks; the agent writes them, runs the
 * visible tests and, while they fail, sends the error log back for another attempt, up to
 * `rounds` rounds. The last attempt is submitted. The model is given no tools.
 */
import { z } from 'zod';
import { CODE_SYSTEM_PROMPT, codeTaskPrompt, filesFromAnswer, gatherSourceFiles } from '../common/code.ts';
import { EpisodeHandle, infraErrorOf, resultFromError, type SubmitOutcome } from '../common/episode.ts';
import { ChatModel, truncateObservation, type ChatCompletionMessageParam } from '../common/openai.ts';
import { resultErrorCode, resultText } from '../../src/agent/session.ts';
import type { Agent, AgentContext, AgentDefinition, AgentResult } from '../../src/agent/types.ts';

export const options = z
  .object({
    rounds: z.number().int().min(1).default(3).describe('attempts: the first answer plus rounds-1 corrections after failing visible tests'),
    files: z
      .array(z.string())
      .optional()
      .describe('the files shown to the model (default: the workspace source files of the task language that are not tests)'),
    max_context_chars: z
      .number()
      .int()
      .min(1000)
      .default(60_000)
      .describe('source shown in the first prompt; further files are named only'),
    max_feedback_chars: z.number().int().min(500).default(12_000).describe('test output sent back per round (head and tail kept)'),
    system_prompt: z.string().optional().describe('replaces the built-in system prompt'),
  })
  .strict();

export type FeedbackOptions = z.infer<typeof options>;

interface TestOutcome {
  passed: boolean;
  /** The task has no visible tests: nothing to feed back. */
  noTests?: boolean;
  text: string;
}

/** Runs the visible tests; on failure the feedback is run_tests' summary plus view_error_log's text. */
async function runVisibleTests(ep: EpisodeHandle): Promise<TestOutcome> {
  const run = await ep.call('run_tests');
  if (resultErrorCode(run) === 'NO_VISIBLE_TESTS') return { passed: false, noTests: true, text: resultText(run) };
  if (run.isError) return { passed: false, text: resultText(run) };
  const data = run.structuredContent as {
    counts: { passed: number; failed: number; error: number };
    exitCode: number | null;
    timedOut: boolean;
  };
  const passed = data.counts.passed > 0 && data.counts.failed === 0 && data.counts.error === 0 && data.exitCode === 0 && !data.timedOut;
  if (passed) return { passed, text: resultText(run) };
  // The model has no tools: drop run_tests' pointer to view_error_log, and the raw log when
  // the failures were parsed out of it already (it repeats them).
  const summary = resultText(run)
    .split('\n')
    .filter((l) => !/^Use view_error_log/.test(l))
    .join('\n');
  const log = await ep.call('view_error_log');
  if (log.isError) return { passed, text: summary };
  const parsed = log.structuredContent as { failures?: unknown[]; compilerErrors?: unknown[] };
  let details = resultText(log);
  const fullLog = details.indexOf('\n--- full log, page');
  if (fullLog >= 0 && (parsed.failures?.length || parsed.compilerErrors?.length)) details = details.slice(0, fullLog);
  return { passed, text: `${summary}\n\n${details.trim()}` };
}

export function feedbackPrompt(testOutput: string, round: number, rounds: number, maxChars: number): string {
  const output = truncateObservation(testOutput, maxChars);
  const fence = output.includes('```') ? '~~~~' : '```';
  return (
    `Your solution fails the visible tests (attempt ${round} of ${rounds}). The test run:\n\n` +
    `${fence}text\n${output}\n${fence}\n\n` +
    'Find the cause and fix the code. Reply again with the complete new content ' +
    'of each file you change, in fenced code blocks labelled with their path.'
  );
}

class FeedbackAgent implements Agent {
  constructor(private readonly opts: FeedbackOptions) {}

  async run(ctx: AgentContext): Promise<AgentResult> {
    const { opts } = this;
    const model = new ChatModel(ctx.model, { record: (e) => ctx.record(e) });
    const ep = new EpisodeHandle(ctx);
    let round = 0;
    let passedRound: number | undefined;
    const base = () => ({
      steps: ep.calls,
      usage: { ...model.usage },
      rounds: round,
      ...(passedRound !== undefined ? { passedRound } : {}),
    });
    try {
      const { files, omitted } = await gatherSourceFiles(ep, ctx.task, { paths: opts.files, maxChars: opts.max_context_chars });
      const targets = files.map((f) => f.path);
      const system = opts.system_prompt ?? CODE_SYSTEM_PROMPT;
      const messages: ChatCompletionMessageParam[] = [
        { role: 'system', content: system },
        { role: 'user', content: codeTaskPrompt(ctx.task, files, omitted) },
      ];
      ctx.record({ type: 'prompt', system, user: messages[1]!.content, files: targets });
      let stopReason = 'rounds_exhausted';

      while (round < opts.rounds) {
        round++;
        const { message } = await model.complete(messages, { signal: ctx.signal });
        const answer = message.content ?? '';
        messages.push({ role: 'assistant', content: answer });
        const extracted = filesFromAnswer(answer, targets, ctx.task.language);
        ctx.record({
          type: 'round',
          round,
          answer,
          files: Object.keys(extracted.files),
          ...(extracted.problem ? { problem: extracted.problem } : {}),
        });

        const writeErrors: string[] = [];
        for (const [path, content] of Object.entries(extracted.files)) {
          const written = await ep.writeFile(path, content);
          if (written.isError) writeErrors.push(`${path}: ${resultText(written)}`);
        }
        if (!Object.keys(extracted.files).length || writeErrors.length) {
          const problem = extracted.problem ?? `some files could not be written:\n${writeErrors.join('\n')}`;
          ctx.record({ type: 'round_result', round, passed: false, problem });
          if (round < opts.rounds) {
            messages.push({
              role: 'user',
              content:
                `Your answer could not be used: ${problem}. Reply with the complete new content ` +
                `of each file you change, in fenced code blocks labelled with their path.`,
            });
          }
          continue;
        }

        const tests = await runVisibleTests(ep);
        ctx.record({ type: 'round_result', round, passed: tests.passed, ...(tests.noTests ? { noTests: true } : {}) });
        if (tests.noTests) {
          stopReason = 'submitted';
          break;
        }
        if (tests.passed) {
          passedRound = round;
          stopReason = 'submitted';
          break;
        }
        if (round < opts.rounds)
          messages.push({ role: 'user', content: feedbackPrompt(tests.text, round, opts.rounds, opts.max_feedback_chars) });
      }

      const outcome: SubmitOutcome = await ep.submit();
      return { ...outcome, stopReason: outcome.submitted ? stopReason : 'error', ...base() };
    } catch (err) {
      const result = resultFromError(err, base());
      if (!infraErrorOf(err)) ctx.record({ type: 'agent_error', message: result.error });
      return result;
    }
  }
}

export const feedbackAgent: AgentDefinition<typeof options> = {
  name: 'feedback',
  description:
    'Self-debug loop (GitChameleon style): whole files in code blocks, visible ' +
    'tests, error log fed back, up to `rounds` attempts; no tools for the model.',
  options,
  create: (opts) => new FeedbackAgent(opts),
};

export default feedbackAgent;
