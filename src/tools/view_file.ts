import { z } from 'zod';
import { GymError } from '../errors.ts';
import { Count } from './output.ts';
import { episodeTool } from './types.ts';
import { numbered, readTextFile, splitLines } from './text.ts';

export const DEFAULT_WINDOW = 100;

export const viewFileTool = episodeTool({
  name: 'view_file',
  title: 'View a file',
  description:
    'Show a text file of the workspace with line numbers, 100 lines at a time by default. ' +
    'Give start_line / end_line for another range. Paths are relative to the workspace root.',
  input: z.object({
    path: z.string().min(1).describe('file path relative to the workspace root'),
    start_line: z.number().int().min(1).optional().describe('first line to show (1-based, default 1)'),
    end_line: z.number().int().min(1).optional().describe('last line to show (default start_line + 99)'),
  }),
  output: z.object({
    path: z.string(),
    startLine: z.number().int().min(1),
    endLine: z.number().int().min(0),
    totalLines: Count,
    content: z.string().describe('the lines shown, without numbers'),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true },
  async run(episode, args) {
    const text = await readTextFile(episode, args.path);
    const lines = splitLines(text);
    const start = args.start_line ?? 1;
    if (lines.length > 0 && start > lines.length) {
      throw new GymError('INVALID_ARGUMENT', `invalid 'start_line': ${start} is past the end of '${args.path}' (${lines.length} lines)`);
    }
    const end = Math.min(lines.length, args.end_line ?? start + DEFAULT_WINDOW - 1);
    if (end < start && lines.length > 0) throw new GymError('INVALID_ARGUMENT', `invalid 'end_line': ${end} is before start_line ${start}`);
    const shown = lines.slice(start - 1, end);
    const more = end < lines.length ? `\n[${lines.length - end} more lines: view_file with start_line=${end + 1}]` : '';
    const header = lines.length === 0 ? `${args.path} (empty file)` : `${args.path} (lines ${start}-${end} of ${lines.length})`;
    return {
      text: `${header}\n${numbered(shown, start)}${more}`,
      data: { path: args.path, startLine: start, endLine: end, totalLines: lines.length, content: shown.join('\n') },
    };
  },
});
