import { z } from 'zod';
import { compileGlob } from '../sandbox/glob.ts';
import { Count } from './output.ts';
import { episodeTool } from './types.ts';

const MAX_RESULTS = 200;

export const findFilesTool = episodeTool({
  name: 'find_files',
  title: 'Find files by name',
  description:
    'Find files whose path matches a glob such as "**/*.py" or "src/**/Test*.java" (a ' +
    'pattern without / matches file names anywhere). Paths are relative to the workspace root.',
  input: z.object({
    pattern: z.string().min(1).describe('glob: *, **, ?, [abc], {a,b}'),
    path: z.string().default('.').describe('directory to search below (default: the root)'),
  }),
  output: z.object({
    pattern: z.string(),
    files: z.array(z.string()).describe('the first 200 matching paths, sorted'),
    total: Count.describe('matching files in all'),
    truncated: z.boolean(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true },
  async run(episode, args) {
    const re = compileGlob(args.pattern);
    const { entries, truncated: walkCut } = await episode.sandbox.list(args.path, { depth: 64, limit: 100_000 });
    const nameOnly = !args.pattern.includes('/');
    const matches = entries
      .filter((e) => e.type !== 'dir')
      .map((e) => e.path)
      .filter((p) => re.test(p) || (nameOnly && re.test(p.slice(p.lastIndexOf('/') + 1))))
      .sort();
    const shown = matches.slice(0, MAX_RESULTS);
    const more = matches.length > MAX_RESULTS ? `\n[${matches.length - MAX_RESULTS} more matches: narrow the pattern]` : '';
    return {
      text: shown.length ? `${matches.length} files match ${args.pattern}:\n${shown.join('\n')}${more}` : `No files match ${args.pattern}.`,
      data: { pattern: args.pattern, files: shown, total: matches.length, truncated: matches.length > MAX_RESULTS || walkCut },
    };
  },
});
