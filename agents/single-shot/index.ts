/**
 * single-shot: one completion, no tools, no tests. The task and its source files go in,
 * the code blocks of the answer are written to the workspace and submitted. The runner
 * draws it n times per task (ModelConfig.temperature) to estimate pass@k.
 */
import { z } from 'zod';
import { CODE_SYSTEM_PROMPT, codeTaskPrompt, filesFromAnswer, gatherSourceFiles } from '../common/code.ts';
import { EpisodeHandle, infraErrorOf, resultFromError } from '../common/episode.ts';
import { ChatModel } from '../common/openai.ts';
import { resultText } from '../../src/agent/session.ts';
import type { Agent, AgentContext, AgentDefinition, AgentResult } from '../../src/agent/types.ts';

export const options = z
  .object({
    files: z
      .array(z.string())
      .optional()
      .describe('the files shown to the model (default: the workspace source files of the task language that are not tests)'),
    max_context_chars: z.number().int().min(1000).default(60_000).describe('source shown in the prompt; further files are named only'),
    system_prompt: z.string().optional().describe('replaces the built-in system prompt'),
  })
  .strict();

export type SingleShotOptions = z.infer<typeof options>;

class SingleShotAgent implements Agent {
  constructor(private readonly opts: SingleShotOptions) {}

  async run(ctx: AgentContext): Promise<AgentResult> {
    const { opts } = this;
    const model = new ChatModel(ctx.model, { record: (e) => ctx.record(e) });
    const ep = new EpisodeHandle(ctx);
    try {
      const { files, omitted } = await gatherSourceFiles(ep, ctx.task, { paths: opts.files, maxChars: opts.max_context_chars });
      const targets = files.map((f) => f.path);
      const system = opts.system_prompt ?? CODE_SYSTEM_PROMPT;
      const user = codeTaskPrompt(ctx.task, files, omitted);
      ctx.record({ type: 'prompt', system, user, files: targets, sample: ctx.sample });
      const { message } = await model.complete(
        [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        { signal: ctx.signal },
      );
      const answer = message.content ?? '';
      const extracted = filesFromAnswer(answer, targets, ctx.task.language);
      ctx.record({
        type: 'answer',
        answer,
        files: Object.keys(extracted.files),
        ...(extracted.problem ? { problem: extracted.problem } : {}),
      });
      for (const [path, content] of Object.entries(extracted.files)) {
        const written = await ep.writeFile(path, content);
        if (written.isError) ctx.record({ type: 'write_failed', path, message: resultText(written) });
      }
      // An answer without usable code is still submitted: the model's miss, scored as such.
      const outcome = await ep.submit();
      return { ...outcome, stopReason: outcome.submitted ? 'submitted' : 'error', steps: ep.calls, usage: { ...model.usage } };
    } catch (err) {
      const result = resultFromError(err, { steps: ep.calls, usage: model.usage });
      if (!infraErrorOf(err)) ctx.record({ type: 'agent_error', message: result.error });
      return result;
    }
  }
}

export const singleShotAgent: AgentDefinition<typeof options> = {
  name: 'single-shot',
  description: 'One completion, no tools: the code blocks of the answer are written and submitted (pass@k by sampling).',
  options,
  create: (opts) => new SingleShotAgent(opts),
};

export default singleShotAgent;
