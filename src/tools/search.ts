import { z } from 'zod';
import { GymError } from '../errors.ts';
import { matchesAny } from '../sandbox/glob.ts';
import { RegexWorker } from './regex.ts';
import { episodeTool } from './types.ts';
import { cutLine, looksBinary } from './text.ts';

const MAX_FILE_BYTES = 2 * 1024 * 1024;
/** Texts handed to the regex worker per message: few round trips, bounded copies. */
const BATCH_CHARS = 4 * 1024 * 1024;

export const searchTool = episodeTool({
  name: 'search',
  title: 'Search file contents',
  description:
    'Search the workspace for a literal string (or a regular expression with regex=true). Prints `path:line: text` for each matching line, up to max_results. Restrict files with a glob such as "**/*.py".',
  input: z.object({
    query: z.string().min(1).describe('text to find (or a JavaScript regular expression with regex=true)'),
    path: z.string().default('.').describe('directory to search below (default: the root)'),
    regex: z.boolean().default(false),
    case_sensitive: z.boolean().default(true),
    glob: z.string().optional().describe('only files matching this glob'),
    max_results: z.number().int().min(1).max(1000).default(100),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true },
  async run(episode, args, ctx) {
    let re: RegExp;
    try {
      re = args.regex
        ? new RegExp(args.query, args.case_sensitive ? '' : 'i')
        : new RegExp(args.query.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), args.case_sensitive ? '' : 'i');
    } catch (err) {
      throw new GymError('INVALID_ARGUMENT', `invalid 'query': not a regular expression (${(err as Error).message})`);
    }
    const { entries } = await episode.sandbox.list(args.path, { depth: 64, limit: 100_000 });
    const files = entries.filter((e) => e.type === 'file' && e.size <= MAX_FILE_BYTES && (!args.glob || matchesAny(e.path, [args.glob])));
    const hits: { path: string; line: number; text: string }[] = [];
    let total = 0;
    const keep = (path: string, lines: string[], i: number) => {
      if (hits.length < args.max_results) hits.push({ path, line: i + 1, text: lines[i]!.length > 300 ? lines[i]!.slice(0, 300) + ' …' : lines[i]! });
    };
    // A literal (escaped) pattern is linear: matched here. A user regex may backtrack for ever: matched in a worker.
    const worker = args.regex ? new RegexWorker(re.source, re.flags, ctx.signal) : undefined;
    try {
      let batch: { path: string; text: string }[] = [];
      let batchChars = 0;
      const flush = async () => {
        if (!batch.length || !worker) return;
        const results = await worker.match(
          batch.map((b) => b.text),
          args.max_results - hits.length,
        );
        results.forEach((r, k) => {
          total += r.count;
          if (r.hits.length) {
            const lines = batch[k]!.text.split('\n');
            for (const i of r.hits) keep(batch[k]!.path, lines, i);
          }
        });
        batch = [];
        batchChars = 0;
      };
      for (const file of files) {
        const data = await episode.sandbox.readFile(file.path).catch(() => null);
        if (!data || looksBinary(data)) continue;
        const text = data.toString('utf8');
        if (worker) {
          batch.push({ path: file.path, text });
          batchChars += text.length;
          if (batchChars >= BATCH_CHARS) await flush();
          continue;
        }
        const lines = text.split('\n');
        for (let i = 0; i < lines.length; i++) {
          if (re.test(lines[i]!)) {
            total++;
            keep(file.path, lines, i);
          }
        }
      }
      await flush();
    } finally {
      await worker?.close();
    }
    const body = hits.map((h) => `${h.path}:${h.line}: ${cutLine(h.text)}`).join('\n');
    const more = total > hits.length ? `\n[${total - hits.length} more matches: narrow the search]` : '';
    return {
      text: hits.length ? `${total} matches for ${JSON.stringify(args.query)} in ${files.length} files:\n${body}${more}` : `No matches for ${JSON.stringify(args.query)} in ${files.length} files.`,
      data: { query: args.query, matches: hits, total, truncated: total > hits.length, filesSearched: files.length },
    };
  },
});
