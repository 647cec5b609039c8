/**
 * swe-agent: a tool-calling loop over the episode's tools, in the spirit of SWE-agent's
 * agent-computer interface: the model sees the tools (windowed file viewer, exact-snippet
 * editor, search, shell, test runner), thinks, acts, observes, and submits when done.
 * Limits (steps, cost, context) submit the current diff rather than throwing the work away.
 */
import { z } from 'zod';
import type { ChatCompletionMessageParam } from '../common/openai.ts';
import {
  ChatModel,
  ModelRequestError,
  assistantParam,
  parseToolArguments,
  toOpenAITools,
  toolMessage,
  truncateObservation,
} from '../common/openai.ts';
import { EpisodeHandle, infraErrorOf, resultFromError, type SubmitOutcome } from '../common/episode.ts';
import { resultErrorCode, resultText } from '../../src/agent/session.ts';
import type { Agent, AgentContext, AgentDefinition, AgentResult } from '../../src/agent/types.ts';

export const options = z
  .object({
    max_steps: z
      .number()
      .int()
      .min(1)
      .default(50)
      .describe('the most tool calls (actions) the model may make before its diff is submitted'),
    cost_limit_usd: z
      .number()
      .nonnegative()
      .default(3)
      .describe('model spend (from ModelConfig.pricing) after which the diff is submitted; 0 = no limit'),
    max_observation_chars: z.number().int().min(200).default(16_000).describe('tool results longer than this keep their head and tail'),
    exclude_tools: z.array(z.string()).default(['end_episode', 'fork_episode']).describe('episode tools not offered to the model'),
    system_prompt: z.string().optional().describe('replaces the built-in system prompt ({max_steps} is filled in)'),
  })
  .strict();

export type SweAgentOptions = z.infer<typeof options>;

export const SYSTEM_PROMPT =
  `You are an autonomous software engineer. You solve a task in a code repository (the workspace) by ` +
  `calling tools, one action at a time, and you see each tool's output before your next step. There is no human to ask: work it out ` +
  `yourself.

THE TOOLS
- list_dir, find_files, search: find your way around the repository (search takes a regex and shows matching lines).
- view_file: shows a file 100 lines at a time, with line numbers; pass start_line / end_line to see another window.
- edit_file: replaces an exact snippet (old_str) with new_str. old_str must match one place: copy it from view_file without the line ` +
  `numbers and include enough surrounding lines to make it unique. Indentation matters.
- insert_lines: inserts text after a line number. create_file: writes a new file (overwrite=true replaces one). undo_edit: reverts ` +
  `your last edit of a file.
- run_command: runs a non-interactive bash command in the workspace root (e.g. python repro.py, git status). Each call is a fresh ` +
  `shell; nothing interactive (no editors, no pagers).
- run_tests: runs the task's visible tests (all, or the ones you name) and lists each test's status. view_error_log: the tracebacks ` +
  `/ compiler errors of the last run_tests.
- get_diff: every change you have made so far.
- submit: scores your changes with hidden tests and ends the task. Call it once, when you are done.

HOW TO WORK
1. Before each action, think briefly: what you know, what you will do next and why. Then call a tool.
2. Understand the problem and find the relevant code first.
3. When you can, reproduce the problem (a small script or a test) before changing the code, and run it again after the fix.
4. Make focused changes to the code, not to the existing tests: the hidden tests decide the score, and test files are reset to their ` +
  `original state before scoring.
5. Run the visible tests (run_tests) to check you broke nothing; read view_error_log when something fails.
6. Review get_diff, then call submit.

You have at most {max_steps} actions (tool calls). When they run out, your changes are submitted as they are.`;

export function userPrompt(task: AgentContext['task']): string {
  const kind =
    task.kind === 'repo-patch'
      ? 'The workspace is a repository; fix the problem described below.'
      : 'Implement what the task below asks, in the workspace files.';
  return (
    `${kind}\n\n<task>\n${task.prompt}\n</task>\n\nPaths are relative to the ` +
    `workspace root. Start by looking around, then solve the task and call submit.`
  );
}

export const NUDGE = 'Your reply called no tool. Go on with the task by calling one of the tools; when you are done, call submit.';

class SweAgent implements Agent {
  constructor(private readonly opts: SweAgentOptions) {}

  async run(ctx: AgentContext): Promise<AgentResult> {
    const { opts } = this;
    const model = new ChatModel(ctx.model, { record: (e) => ctx.record(e) });
    const ep = new EpisodeHandle(ctx);
    let steps = 0;
    const finish = (outcome: SubmitOutcome, stopReason: string): AgentResult => ({
      ...outcome,
      stopReason,
      steps,
      usage: { ...model.usage },
    });
    const autoSubmit = async (stopReason: string): Promise<AgentResult> => {
      ctx.record({ type: 'auto_submit', reason: stopReason });
      return finish(await ep.submit(), stopReason);
    };

    try {
      const listed = await ctx.client.listTools();
      const tools = toOpenAITools(listed.tools, { exclude: opts.exclude_tools });
      const offered = new Set(tools.map((t) => t.function.name));
      const system = (opts.system_prompt ?? SYSTEM_PROMPT).replaceAll('{max_steps}', String(opts.max_steps));
      const messages: ChatCompletionMessageParam[] = [
        { role: 'system', content: system },
        { role: 'user', content: userPrompt(ctx.task) },
      ];
      ctx.record({ type: 'prompt', system, user: messages[1]!.content, tools: [...offered] });
      let nudged = false;

      for (;;) {
        let completion;
        try {
          completion = await model.complete(messages, { tools, signal: ctx.signal });
        } catch (err) {
          // The conversation outgrew the model's context: an agent limit, like SWE-agent's exit_context.
          if (err instanceof ModelRequestError && err.contextOverflow) return await autoSubmit('context_limit');
          throw err;
        }
        const { message } = completion;
        messages.push(assistantParam(message));
        const calls = (message.tool_calls ?? []).filter((c) => c.type === 'function');
        ctx.record({
          type: 'assistant',
          content: message.content ?? null,
          toolCalls: calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
          finishReason: completion.finishReason,
        });

        if (opts.cost_limit_usd > 0 && model.usage.costUsd >= opts.cost_limit_usd) return await autoSubmit('cost_limit');

        if (!calls.length) {
          if (nudged) return await autoSubmit('model_stopped');
          nudged = true;
          messages.push({ role: 'user', content: NUDGE });
          ctx.record({ type: 'nudge' });
          continue;
        }
        nudged = false;

        let limitHit = false;
        for (const call of calls) {
          const name = call.function.name;
          if (limitHit || steps >= opts.max_steps) {
            limitHit = true;
            messages.push({ role: 'tool', tool_call_id: call.id, content: 'Not run: the step limit was reached.' });
            continue;
          }
          steps++;
          if (!offered.has(name)) {
            messages.push({
              role: 'tool',
              tool_call_id: call.id,
              content: `Error: there is no tool '${name}'. The tools are: ${[...offered].join(', ')}.`,
            });
            ctx.record({ type: 'tool', name, ok: false, error: 'unknown tool' });
            continue;
          }
          const parsed = parseToolArguments(call.function.arguments);
          if (!parsed.ok) {
            messages.push({ role: 'tool', tool_call_id: call.id, content: `Error: ${parsed.error}` });
            ctx.record({ type: 'tool', name, ok: false, error: parsed.error });
            continue;
          }
          if (name === 'submit') {
            const outcome = await ep.submit();
            return finish(outcome, outcome.submitted ? 'submitted' : 'error');
          }
          const result = await ep.call(name, parsed.args);
          const code = resultErrorCode(result);
          ctx.record({
            type: 'tool',
            name,
            args: parsed.args,
            ok: !result.isError,
            ...(code ? { code } : {}),
            observation: truncateObservation(resultText(result), 2000),
          });
          messages.push(toolMessage(call.id, result, opts.max_observation_chars));
          // The gym's own budget (max_steps / time limit of the episode) is spent: only submit is left.
          if (code === 'BUDGET_EXHAUSTED') limitHit = true;
        }
        if (limitHit || steps >= opts.max_steps) return await autoSubmit('step_limit');
      }
    } catch (err) {
      const result = resultFromError(err, { steps, usage: model.usage });
      if (!infraErrorOf(err)) ctx.record({ type: 'agent_error', message: result.error });
      return result;
    }
  }
}

export const sweAgent: AgentDefinition<typeof options> = {
  name: 'swe-agent',
  description: 'A tool-calling loop over the episode tools (SWE-agent style: think, act, observe; reproduce, fix, test, submit).',
  options,
  create: (opts) => new SweAgent(opts),
};

export default sweAgent;
