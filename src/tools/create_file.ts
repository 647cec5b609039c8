import { z } from 'zod';
import { GymError } from '../errors.ts';
import { Count } from './output.ts';
import { episodeTool } from './types.ts';
import { splitLines, writeWithHistory } from './text.ts';

export const createFileTool = episodeTool({
  name: 'create_file',
  title: 'Create a file',
  description:
    'Create a new text file with the given content (parent directories ' +
    'are made). Refuses to replace an existing file unless overwrite is true.',
  input: z.object({
    path: z.string().min(1).describe('file path relative to the workspace root'),
    content: z.string().describe('the whole content of the file'),
    overwrite: z.boolean().default(false).describe('replace the file if it exists'),
  }),
  output: z.object({ path: z.string(), lines: Count, created: z.boolean().describe('false when an existing file was replaced') }),
  annotations: { destructiveHint: false },
  async run(episode, args) {
    const st = await episode.sandbox.stat(args.path);
    if (st?.type === 'dir') throw new GymError('NOT_A_FILE', `'${args.path}' is a directory`);
    if (st && !args.overwrite)
      throw new GymError('FILE_EXISTS', `'${args.path}' already exists; use edit_file, or create_file with overwrite=true`);
    await writeWithHistory(episode, args.path, args.content);
    const lines = splitLines(args.content).length;
    return { text: `${st ? 'Replaced' : 'Created'} ${args.path} (${lines} lines).`, data: { path: args.path, lines, created: !st } };
  },
});
