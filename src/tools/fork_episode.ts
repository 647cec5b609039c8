import { z } from 'zod';
import { episodeTool } from './types.ts';

export const forkEpisodeTool = episodeTool({
  name: 'fork_episode',
  title: 'Fork the episode',
  description:
    'Copy this episode into a new one with the same workspace, edit history and remaining budget, for exploring alternatives (tree search). Returns the new episode_id; both episodes go on independently and each can be submitted.',
  input: z.object({}),
  annotations: { readOnlyHint: false, idempotentHint: false },
  async run(episode) {
    const fork = await episode.lifecycle.fork(episode);
    return {
      text: `Forked episode ${episode.id} into ${fork.id} (at step ${episode.steps}).`,
      data: { episode_id: fork.id, forked_from: episode.id, at_step: episode.steps, mcp_path: `/episodes/${fork.id}/mcp` },
    };
  },
});
