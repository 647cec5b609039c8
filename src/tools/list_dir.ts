import { z } from 'zod';
import { DirEntryOutput } from './output.ts';
import { episodeTool } from './types.ts';

export const listDirTool = episodeTool({
  name: 'list_dir',
  title: 'List a directory',
  description:
    'List files and directories below a path of the workspace, as a tree up to `depth` levels (default 2). Directories end with /.',
  input: z.object({
    path: z.string().default('.').describe('directory relative to the workspace root (default: the root)'),
    depth: z.number().int().min(1).max(10).default(2).describe('levels to descend (1-10)'),
  }),
  output: z.object({ path: z.string(), entries: z.array(DirEntryOutput), truncated: z.boolean() }),
  annotations: { readOnlyHint: true, idempotentHint: true },
  async run(episode, args) {
    const { entries, truncated } = await episode.sandbox.list(args.path, { depth: args.depth, limit: 500 });
    const base = args.path === '.' || args.path === '' ? '' : args.path.replace(/\/+$/, '') + '/';
    const lines = [...entries]
      .sort((a, b) => comparePaths(a.path, b.path))
      .map((e) => {
        const rel = base && e.path.startsWith(base) ? e.path.slice(base.length) : e.path;
        const depth = rel.split('/').length - 1;
        const name = rel.slice(rel.lastIndexOf('/') + 1);
        return `${'  '.repeat(depth)}${name}${e.type === 'dir' ? '/' : e.type === 'symlink' ? '@' : ''}`;
      });
    return {
      text: `${args.path}\n${lines.join('\n') || '(empty)'}${truncated ? '\n[listing cut at 500 entries: list a subdirectory]' : ''}`,
      data: { path: args.path, entries, truncated },
    };
  },
});

/** Orders paths as a tree: component by component, so a directory's children follow it directly. */
function comparePaths(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const c = x[i]!.localeCompare(y[i]!);
    if (c !== 0) return c;
  }
  return x.length - y.length;
}
