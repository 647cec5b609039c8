import { z } from 'zod';
import { episodeTool } from './types.ts';

const MAX_TEXT = 100_000;

export const getDiffTool = episodeTool({
  name: 'get_diff',
  title: 'Show the changes so far',
  description: 'Show a unified diff of every change made to the workspace since the episode started (what submit will score).',
  input: z.object({}),
  output: z.object({ diff: z.string(), files: z.array(z.string()), bytes: z.number().int().min(0) }),
  annotations: { readOnlyHint: true, idempotentHint: true },
  allowedAfterEnd: true,
  exemptFromBudget: true,
  async run(episode) {
    const diff = episode.state === 'running' ? await episode.sandbox.diff() : (episode.finalDiff ?? '');
    const files = [...diff.matchAll(/^diff --git a\/(.+?) b\//gm)].map((m) => m[1]!);
    const text = !diff
      ? 'No changes.'
      : diff.length > MAX_TEXT
        ? `${diff.slice(0, MAX_TEXT)}\n[diff cut at ${MAX_TEXT} characters of ${diff.length}]`
        : diff;
    return { text, data: { diff, files, bytes: Buffer.byteLength(diff) } };
  },
});
