import { z } from 'zod';
import { GymError } from '../errors.ts';
import { Count } from './output.ts';
import { episodeTool } from './types.ts';
import { excerpt, readText, splitLines, writeWithHistory } from './text.ts';

export const insertLinesTool = episodeTool({
  name: 'insert_lines',
  title: 'Insert lines',
  description: 'Insert text after a given line of a file (line 0 inserts at the top). Shows the edited region with line numbers.',
  input: z.object({
    path: z.string().min(1).describe('file path relative to the workspace root'),
    line: z.number().int().min(0).describe('insert after this line number (0 = before the first line)'),
    text: z.string().describe('the lines to insert'),
  }),
  output: z.object({ path: z.string(), after: Count, inserted: Count }),
  annotations: { destructiveHint: false },
  async run(episode, args) {
    const { text: original, bytes } = await readText(episode, args.path);
    const lines = splitLines(original);
    if (args.line > lines.length)
      throw new GymError('INVALID_ARGUMENT', `invalid 'line': ${args.line} is past the end of '${args.path}' (${lines.length} lines)`);
    const inserted = splitLines(args.text.endsWith('\n') ? args.text : args.text + '\n');
    lines.splice(args.line, 0, ...inserted);
    const updated = lines.join('\n') + '\n';
    await writeWithHistory(episode, args.path, updated, bytes);
    return {
      text:
        `Inserted ${inserted.length} lines after line ${args.line} ` +
        `of ${args.path}:\n${excerpt(updated, args.line + 1, args.line + inserted.length)}`,
      data: { path: args.path, after: args.line, inserted: inserted.length },
    };
  },
});
