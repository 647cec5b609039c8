import { z } from 'zod';
import { Count, TaskInfoOutput } from './output.ts';
import { gymTool } from './types.ts';

export const listTasksTool = gymTool({
  name: 'list_tasks',
  title: 'List tasks',
  description: 'List the tasks of a suite (id, title, language, kind). Start one with start_episode.',
  input: z.object({
    suite: z.string().min(1).optional().describe('suite id (see list_suites; default: the first served suite)'),
    offset: z.number().int().min(0).default(0),
    limit: z.number().int().min(1).max(1000).default(100),
  }),
  output: z.object({ suite: z.string(), total: Count, offset: Count, tasks: z.array(TaskInfoOutput) }),
  annotations: { readOnlyHint: true, idempotentHint: true },
  async run(gym, args) {
    const suite = args.suite ?? gym.registry.defaultSuite();
    const tasks = await gym.registry.tasks(suite);
    const page = tasks.slice(args.offset, args.offset + args.limit).map((t) => gym.registry.publicTaskInfo(t));
    const lines = page.map((t) => `${t.id}  [${t.language}, ${t.kind}]  ${t.title}`);
    const more =
      args.offset + args.limit < tasks.length
        ? `\n[${tasks.length - args.offset - args.limit} more: offset=${args.offset + args.limit}]`
        : '';
    return {
      text: `${suite}: ${tasks.length} tasks\n${lines.join('\n')}${more}`,
      data: { suite, total: tasks.length, offset: args.offset, tasks: page },
    };
  },
});
