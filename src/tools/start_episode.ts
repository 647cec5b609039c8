import { z } from 'zod';
import { Count, McpPathOutput } from './output.ts';
import { gymTool } from './types.ts';

/**
 * The episode's own endpoint as an absolute URL on the replica that holds it
 * (a server given --advertise-url; the MCP layer fills it in from mcpPath).
 */
export const McpUrlOutput = z
  .string()
  .optional()
  .describe(
    "the episode's own MCP endpoint as an absolute URL on the server replica that holds " +
      'the episode (servers started with --advertise-url); connect there, not through a load balancer',
  );

export const startEpisodeTool = gymTool({
  name: 'start_episode',
  title: 'Start an episode',
  description:
    "Start working on a task: a sandbox is made with the task's start state and environment. " +
    'Returns the episode_id (pass it to the other tools), the problem statement and the ' +
    'workspace layout. The first start of a task may take a while (its environment is built once).',
  input: z.object({
    task_id: z.string().min(1).describe('task id (see list_tasks)'),
    suite: z.string().min(1).optional().describe('suite id (default: the first served suite)'),
    prompt_variant: z.string().optional().describe('another rendering of the problem statement, if the task has one'),
    context: z
      .string()
      .min(1)
      .optional()
      .describe(
        "another start state the task offers (e.g. 'aware', the repository " +
          "as the developer saw it, or 'ignored', its newest version); see list_tasks",
      ),
    max_steps: z.number().int().min(1).max(10_000).optional().describe('tool calls allowed before only submit remains'),
    time_limit_s: z.number().positive().max(86_400).optional().describe('seconds allowed before only submit remains'),
  }),
  output: z.object({
    episodeId: z.string().describe('pass it as episode_id to the other tools'),
    suite: z.string(),
    taskId: z.string(),
    title: z.string(),
    language: z.string(),
    kind: z.string(),
    prompt: z.string(),
    context: z.string(),
    workdir: z.string(),
    files: z.array(z.string()).describe('the workspace two levels deep; directories end with /'),
    hasVisibleTests: z.boolean(),
    budgets: z.object({ maxSteps: Count, deadline: z.string().describe('ISO 8601') }),
    sandbox: z.object({ backend: z.string(), workdir: z.string(), isolation: z.string() }),
    mcpPath: McpPathOutput,
    mcpUrl: McpUrlOutput,
  }),
  annotations: { readOnlyHint: false },
  async run(gym, args, ctx) {
    const episode = await gym.startEpisode(
      {
        suite: args.suite ?? gym.registry.defaultSuite(),
        taskId: args.task_id,
        promptVariant: args.prompt_variant,
        context: args.context,
        maxSteps: args.max_steps,
        timeLimitMs: args.time_limit_s ? args.time_limit_s * 1000 : undefined,
      },
      ctx,
    );
    const { entries } = await episode.sandbox.list('.', { depth: 2, limit: 200 });
    const layout = entries.map((e) => `${e.path}${e.type === 'dir' ? '/' : ''}`);
    const visible = episode.task.tests.visible;
    const data = {
      episodeId: episode.id,
      suite: episode.task.suite,
      taskId: episode.task.id,
      title: episode.task.title ?? episode.task.id,
      language: episode.task.language,
      kind: episode.task.kind,
      prompt: episode.prompt,
      context: episode.context,
      workdir: episode.sandbox.workdir,
      files: layout,
      hasVisibleTests: Boolean(visible),
      budgets: { maxSteps: episode.budgets.maxSteps, deadline: new Date(episode.budgets.deadline).toISOString() },
      sandbox: episode.sandboxFacts,
      ...(ctx.mcpPathOf ? { mcpPath: ctx.mcpPathOf(episode.id) } : {}),
    };
    const text = [
      `Episode ${episode.id} started for ${episode.task.suite}/${episode.task.id}.`,
      '',
      episode.prompt,
      '',
      `Workspace (${layout.length} entries, paths relative to the root):`,
      ...layout.slice(0, 60).map((p) => `  ${p}`),
      ...(layout.length > 60 ? [`  ... (${layout.length - 60} more: list_dir)`] : []),
      '',
      visible
        ? 'run_tests runs the visible tests; submit scores your changes with hidden tests.'
        : 'There are no visible tests; submit scores your changes with hidden tests.',
      `Budget: ${episode.budgets.maxSteps} tool calls, until ${data.budgets.deadline}.`,
    ].join('\n');
    return { text, data };
  },
});
