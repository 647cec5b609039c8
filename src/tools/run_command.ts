import { z } from 'zod';
import { episodeTool } from './types.ts';
import { formatExec } from './format.ts';
import { ExecResultOutput } from './output.ts';

export const runCommandTool = episodeTool({
  name: 'run_command',
  title: 'Run a shell command',
  description:
    'Run a bash command in the workspace root (or cwd) and return its exit code and output. Each ' +
    'call starts a fresh shell: no state carries over, and nothing it starts outlives it. Long ' +
    'output keeps its head and tail. The command is killed at the timeout (default 60 s, at most 600 s).',
  input: z.object({
    command: z.string().min(1).describe('bash command line'),
    timeout_s: z.number().positive().max(600).default(60).describe('seconds before the command is killed'),
    cwd: z.string().optional().describe('working directory relative to the workspace root'),
  }),
  output: ExecResultOutput,
  annotations: { destructiveHint: true, openWorldHint: false },
  runsCode: true,
  async run(episode, args, ctx) {
    const result = await episode.sandbox.exec(args.command, {
      cwd: args.cwd,
      timeoutMs: args.timeout_s * 1000,
      signal: ctx.signal,
      onOutput: ctx.onOutput,
    });
    return { text: formatExec(result, args.timeout_s), data: { ...result } };
  },
});
