import { z } from 'zod';
import { Count, McpPathOutput } from './output.ts';
import { McpUrlOutput } from './start_episode.ts';
import { episodeTool } from './types.ts';

export const forkEpisodeTool = episodeTool({
  name: 'fork_episode',
  title: 'Fork the episode',
  description:
    'Copy this episode into a new one with the same workspace, edit history and remaining budget, for exploring ' +
    'alternatives (tree search). Returns the new episode_id; both episodes go on independently and each can be submitted.',
  input: z.object({}),
  output: z.object({
    episodeId: z.string().describe('the new episode'),
    forkedFrom: z.string(),
    atStep: Count,
    mcpPath: McpPathOutput,
    mcpUrl: McpUrlOutput,
  }),
  annotations: { readOnlyHint: false, idempotentHint: false },
  async run(episode, _args, ctx) {
    const fork = await episode.lifecycle.fork(episode);
    return {
      text: `Forked episode ${episode.id} into ${fork.id} (at step ${episode.steps}).`,
      data: {
        episodeId: fork.id,
        forkedFrom: episode.id,
        atStep: episode.steps,
        ...(ctx.mcpPathOf ? { mcpPath: ctx.mcpPathOf(fork.id) } : {}),
      },
    };
  },
});
