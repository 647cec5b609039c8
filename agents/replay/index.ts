/**
 * replay: no model. Submits given predictions (a unified diff or whole files per task) or
 * the task's reference solution handed over by the runner (goldFiles / goldPatch): checks
 * that a suite's gold solutions score 1 and replays predictions made elsewhere.
 */
import { z } from 'zod';
import { EpisodeHandle, infraErrorOf, resultFromError } from '../common/episode.ts';
import { emptyUsage } from '../common/openai.ts';
import { resultText } from '../../src/agent/session.ts';
import { ownValue } from '../../src/own.ts';
import type { Agent, AgentContext, AgentDefinition, AgentResult } from '../../src/agent/types.ts';

const FileMap = z.record(z.string(), z.string());
const Prediction = z.union([z.string().describe('a unified diff'), z.object({ patch: z.string() }), z.object({ files: FileMap })]);

export const options = z
  .object({
    predictions: z.record(z.string(), Prediction).optional().describe("by task id (or 'suite/id'): a unified diff, {patch} or {files}"),
    patch: z.string().optional().describe('a unified diff for the task at hand'),
    files: FileMap.optional().describe('whole files (path → content) for the task at hand'),
    goldFiles: FileMap.optional().describe("the task's reference solution files (filled in by the runner)"),
    goldPatch: z.string().optional().describe("the task's reference solution diff (filled in by the runner)"),
  })
  .strict();

export type ReplayOptions = z.infer<typeof options>;

/** The workspace file a diff is written to before `git apply`; removed right after. */
export const REPLAY_DIFF = '.benchgym-replay.diff';

type Chosen = { source: string; patch?: string; files?: Record<string, string> };

export function choosePrediction(opts: ReplayOptions, task: AgentContext['task']): Chosen | undefined {
  const p = ownValue(opts.predictions, task.id) ?? ownValue(opts.predictions, `${task.suite}/${task.id}`);
  if (p !== undefined) return typeof p === 'string' ? { source: 'predictions', patch: p } : { source: 'predictions', ...p };
  if (opts.files || opts.patch !== undefined) return { source: 'options', files: opts.files, patch: opts.patch };
  if (opts.goldFiles || opts.goldPatch !== undefined) return { source: 'gold', files: opts.goldFiles, patch: opts.goldPatch };
  return undefined;
}

class ReplayAgent implements Agent {
  constructor(private readonly opts: ReplayOptions) {}

  async run(ctx: AgentContext): Promise<AgentResult> {
    const ep = new EpisodeHandle(ctx);
    const usage = emptyUsage();
    try {
      const chosen = choosePrediction(this.opts, ctx.task);
      if (!chosen)
        ctx.record({ type: 'replay', source: 'none', note: 'no prediction for this task: the unchanged workspace is submitted' });
      if (chosen?.patch?.trim()) {
        const patch = chosen.patch.endsWith('\n') ? chosen.patch : `${chosen.patch}\n`;
        const written = await ep.writeFile(REPLAY_DIFF, patch);
        if (written.isError) throw new Error(`could not write ${REPLAY_DIFF}: ${resultText(written)}`);
        const applied = await ep.call('run_command', {
          command: `git apply --whitespace=nowarn ${REPLAY_DIFF}; rc=$?; rm -f ${REPLAY_DIFF}; exit $rc`,
        });
        const exitCode = (applied.structuredContent as { exitCode?: number | null } | undefined)?.exitCode;
        ctx.record({
          type: 'replay',
          source: chosen.source,
          kind: 'patch',
          applied: !applied.isError && exitCode === 0,
          output: resultText(applied).slice(0, 4000),
        });
      }
      if (chosen?.files) {
        for (const [path, content] of Object.entries(chosen.files)) {
          const written = await ep.writeFile(path, content);
          if (written.isError) throw new Error(`could not write ${path}: ${resultText(written)}`);
        }
        ctx.record({ type: 'replay', source: chosen.source, kind: 'files', files: Object.keys(chosen.files) });
      }
      const outcome = await ep.submit();
      return { ...outcome, stopReason: outcome.submitted ? 'submitted' : 'error', steps: ep.calls, usage };
    } catch (err) {
      const result = resultFromError(err, { steps: ep.calls, usage });
      if (!infraErrorOf(err)) ctx.record({ type: 'agent_error', message: result.error });
      return result;
    }
  }
}

export const replayAgent: AgentDefinition<typeof options> = {
  name: 'replay',
  description: 'No model: applies given predictions (diff or files) or the gold solution the runner hands over, then submits.',
  options,
  usesModel: false,
  create: (opts) => new ReplayAgent(opts),
};

export default replayAgent;
