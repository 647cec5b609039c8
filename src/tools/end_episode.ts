import { z } from 'zod';
import { episodeTool } from './types.ts';

export const endEpisodeTool = episodeTool({
  name: 'end_episode',
  title: 'End the episode without scoring',
  description: 'Give up the episode: its sandbox is removed and nothing is scored. Use submit instead to be scored.',
  input: z.object({}),
  output: z.object({ episodeId: z.string(), state: z.enum(['running', 'submitted', 'ended', 'expired']) }),
  annotations: { destructiveHint: true, idempotentHint: true },
  allowedAfterEnd: true,
  exemptFromBudget: true,
  async run(episode) {
    const was = episode.state;
    await episode.lifecycle.end(episode);
    return {
      text: was === 'running' ? `Episode ${episode.id} ended.` : `Episode ${episode.id} was already ${was}.`,
      data: { episodeId: episode.id, state: episode.state },
    };
  },
});
