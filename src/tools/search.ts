import { z } from 'zod';
import { GymError } from '../errors.ts';
import { matchesAny } from '../sandbox/glob.ts';
import { RegexWorker } from './regex.ts';
import { Count } from './output.ts';
import { episodeTool } from './types.ts';
import { cutLine, looksBinary, splitLines } from './text.ts';

const MAX_FILE_BYTES = 2 * 1024 * 1024;
/** Texts handed to the regex worker per message: few round trips, bounded copies. */
const BATCH_CHARS = 4 * 1024 * 1024;

export const searchTool = episodeTool({
  name: 'search',
  title: 'Search file contents',
  description:
    'Search the workspace for a literal string (or a regular expression with regex=true). Prints ' +
    '`path:line: text` for each matching line, up to max_results. Restrict files with a glob such as "**/*.py".',
  input: z.object({
    query: z.string().min(1).describe('text to find (or a JavaScript regular expression with regex=true)'),
    path: z.string().default('.').describe('directory to search below (default: the root)'),
    regex: z.boolean().default(false),
    case_sensitive: z.boolean().default(true),
    glob: z.string().optional().describe('only files matching this glob'),
    max_results: z.number().int().min(1).max(1000).default(100),
  }),
  output: z.object({
    query: z.string(),
    matches: z
      .array(z.object({ path: z.string(), line: z.number().int().min(1), text: z.string() }))
      .describe('the first max_results matching lines'),
    total: Count.describe('matching lines in all'),
    files: Count.describe('files with at least one matching line'),
    filesSearched: Count.describe('text files read (binary, unreadable and larger than 2 MiB files are skipped)'),
    truncated: z.boolean().describe('matches holds fewer lines than total, or the walk stopped at 100,000 entries'),
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
    const { entries, truncated: walkCut } = await episode.sandbox.list(args.path, { depth: 64, limit: 100_000 });
    const candidates = entries.filter(
      (e) => e.type === 'file' && e.size <= MAX_FILE_BYTES && (!args.glob || matchesAny(e.path, [args.glob])),
    );
    const hits: { path: string; line: number; text: string }[] = [];
    let total = 0;
    let filesMatched = 0;
    let filesSearched = 0;
    const keep = (path: string, lines: string[], i: number) => {
      if (hits.length < args.max_results)
        hits.push({ path, line: i + 1, text: lines[i]!.length > 300 ? lines[i]!.slice(0, 300) + ' …' : lines[i]! });
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
          if (r.count) filesMatched++;
          if (r.hits.length) {
            const lines = splitLines(batch[k]!.text);
            for (const i of r.hits) keep(batch[k]!.path, lines, i);
          }
        });
        batch = [];
        batchChars = 0;
      };
      for (const file of candidates) {
        const data = await episode.sandbox.readFile(file.path).catch(() => null);
        if (!data || looksBinary(data)) continue;
        filesSearched++;
        const text = data.toString('utf8');
        if (worker) {
          batch.push({ path: file.path, text });
          batchChars += text.length;
          if (batchChars >= BATCH_CHARS) await flush();
          continue;
        }
        const lines = splitLines(text);
        let inFile = 0;
        for (let i = 0; i < lines.length; i++) {
          if (re.test(lines[i]!)) {
            inFile++;
            keep(file.path, lines, i);
          }
        }
        total += inFile;
        if (inFile) filesMatched++;
      }
      await flush();
    } finally {
      await worker?.close();
    }
    const body = hits.map((h) => `${h.path}:${h.line}: ${cutLine(h.text)}`).join('\n');
    const searched = `${filesSearched} file${filesSearched === 1 ? '' : 's'} searched`;
    const more =
      total > hits.length ? `\n[showing the first ${hits.length} of ${total} matching lines: narrow the search or raise max_results]` : '';
    const cut = walkCut ? '\n[the walk stopped at 100,000 entries: search a subdirectory for the rest]' : '';
    return {
      text: hits.length
        ? `${total} matching line${total === 1 ? '' : 's'} for ${JSON.stringify(args.query)} ` +
          `in ${filesMatched} file${filesMatched === 1 ? '' : 's'} (${searched}):\n${body}${more}${cut}`
        : `No matches for ${JSON.stringify(args.query)} (${searched}).${cut}`,
      data: { query: args.query, matches: hits, total, files: filesMatched, filesSearched, truncated: total > hits.length || walkCut },
    };
  },
});
