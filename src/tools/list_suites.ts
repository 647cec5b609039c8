import { z } from 'zod';
import { gymTool } from './types.ts';

export const listSuitesTool = gymTool({
  name: 'list_suites',
  title: 'List suites',
  description: 'List the benchmark suites this server serves, with their task counts.',
  input: z.object({}),
  output: z.object({
    suites: z.array(
      z.object({ id: z.string(), description: z.string(), dataset: z.string().optional(), taskCount: z.number().int().min(0) }),
    ),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true },
  async run(gym) {
    const suites = await gym.registry.list();
    return { text: suites.map((s) => `${s.id} (${s.taskCount} tasks): ${s.description}`).join('\n') || 'No suites.', data: { suites } };
  },
});
