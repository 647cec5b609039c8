import { z } from 'zod';
import { GymError } from '../errors.ts';
import { historyKey } from './text.ts';
import { Count } from './output.ts';
import { episodeTool } from './types.ts';

export const undoEditTool = episodeTool({
  name: 'undo_edit',
  title: 'Undo the last edit of a file',
  description: 'Revert the last edit_file / insert_lines / create_file on a file (a created file is removed). Can be repeated.',
  input: z.object({ path: z.string().min(1).describe('file path relative to the workspace root') }),
  output: z.object({
    path: z.string(),
    removed: z.boolean().describe('the file did not exist before the edit and was removed'),
    remainingUndos: Count,
  }),
  annotations: { destructiveHint: true },
  async run(episode, args) {
    const stack = episode.editHistory.get(historyKey(episode, args.path));
    const before = stack?.pop();
    if (!stack || before === undefined) throw new GymError('NOTHING_TO_UNDO', `no edit of '${args.path}' to undo`);
    if (before === null) await episode.sandbox.remove(args.path);
    else await episode.sandbox.writeFile(args.path, before);
    return {
      text:
        before === null ? `Removed ${args.path} (it did not exist before).` : `Restored ${args.path} to its content before the last edit.`,
      data: { path: args.path, removed: before === null, remainingUndos: stack.length },
    };
  },
});
