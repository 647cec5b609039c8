import { z } from 'zod';
import { GymError } from '../../../src/errors.ts';
import { suiteMetadata } from '../../../src/tasks/suite.ts';
import { javaMethods } from '../java.ts';
import { HumanEvoMetadata } from '../metadata.ts';
import { episodeTool } from '../../../src/tools/types.ts';
import { looksBinary } from '../../../src/tools/text.ts';

const MAX_FILE_BYTES = 2 * 1024 * 1024;
/** Lines of code outside functions are cut into windows this long. */
const WINDOW = 30;

/** A piece of the repository's code the retriever can return. */
export interface Snippet {
  file: string;
  startLine: number;
  endLine: number;
  /** The function or method it is (qualified by its class), or null for other code. */
  symbol: string | null;
  code: string;
}

/** Lower-case word tokens, identifiers split at underscores and camel case. */
export function tokenSet(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/[A-Za-z][A-Za-z0-9]*|\d+/g)) {
    for (const part of m[0].replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(' ')) out.add(part.toLowerCase());
  }
  return out;
}

/** |A ∩ B| / |A ∪ B|: the similarity HumanEvo's retrieval ranks snippets by (paper §4.3.1). */
export function jaccard(a: Set<string>, b: Set<string>): number {
  if (!a.size && !b.size) return 0;
  let inter = 0;
  for (const t of a) if (b.has(t)) inter++;
  return inter / (a.size + b.size - inter);
}

/** Python functions and methods by indentation (decorators included), the rest in windows. */
export function pythonSnippets(file: string, src: string): Snippet[] {
  const lines = src.split('\n');
  const indentOf = (l: string) => /^\s*/.exec(l)![0].length;
  const out: Snippet[] = [];
  const covered = new Array<boolean>(lines.length).fill(false);
  const classes: { name: string; indent: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.trim()) continue;
    const ind = indentOf(line);
    while (classes.length && classes[classes.length - 1]!.indent >= ind) classes.pop();
    const cls = /^\s*class\s+(\w+)/.exec(line);
    if (cls) {
      classes.push({ name: cls[1]!, indent: ind });
      continue;
    }
    const def = /^\s*(?:async\s+)?def\s+(\w+)/.exec(line);
    // Functions nested in functions are already inside their parent's snippet.
    if (!def || covered[i]) continue;
    let start = i;
    while (start > 0 && /^\s*@/.test(lines[start - 1]!)) start--;
    let end = i;
    for (let j = i + 1; j < lines.length; j++) {
      if (!lines[j]!.trim()) continue;
      if (indentOf(lines[j]!) <= ind && !/^\s*[)\]}]/.test(lines[j]!)) break;
      end = j;
    }
    const owner = classes.filter((c) => c.indent < ind).pop();
    out.push({
      file,
      startLine: start + 1,
      endLine: end + 1,
      symbol: owner ? `${owner.name}.${def[1]}` : def[1]!,
      code: lines.slice(start, end + 1).join('\n'),
    });
    for (let k = start; k <= end; k++) covered[k] = true;
  }
  return [...out, ...windows(file, lines, covered)];
}

/** Java methods (by envs/humanevo's declaration scanner), the rest in windows. */
export function javaSnippets(file: string, src: string): Snippet[] {
  const lines = src.split('\n');
  const covered = new Array<boolean>(lines.length).fill(false);
  const out: Snippet[] = [];
  for (const m of javaMethods(src)) {
    const [a, b] = [m.docRange?.[0] ?? m.lines[0], m.lines[1]];
    out.push({ file, startLine: a, endLine: b, symbol: m.qualname, code: lines.slice(a - 1, b).join('\n') });
    for (let k = a - 1; k < b; k++) covered[k] = true;
  }
  return [...out, ...windows(file, lines, covered)];
}

function windows(file: string, lines: string[], covered: boolean[]): Snippet[] {
  const out: Snippet[] = [];
  let i = 0;
  while (i < lines.length) {
    if (covered[i]) {
      i++;
      continue;
    }
    const start = i;
    while (i < lines.length && !covered[i] && i - start < WINDOW) i++;
    const code = lines.slice(start, i).join('\n');
    if (code.trim()) out.push({ file, startLine: start + 1, endLine: i, symbol: null, code });
  }
  return out;
}

export function snippetsOf(language: 'python' | 'java', file: string, src: string): Snippet[] {
  return language === 'python' ? pythonSnippets(file, src) : javaSnippets(file, src);
}

/** The top `k` snippets by Jaccard similarity to the query, ties by path and line; `exclude` drops the target. */
export function rankSnippets(
  snippets: Snippet[],
  query: string,
  k: number,
  exclude?: (s: Snippet) => boolean,
): (Snippet & { score: number })[] {
  const q = tokenSet(query);
  return snippets
    .filter((s) => !exclude?.(s))
    .map((s) => ({ ...s, score: jaccard(q, tokenSet(s.code)) }))
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.file.localeCompare(b.file) || a.startLine - b.startLine)
    .slice(0, k);
}

export const retrieveContextTool = episodeTool({
  name: 'retrieve_context',
  title: 'Retrieve similar code from the repository',
  description:
    "Find code in this repository similar to a query, the way HumanEvo's retrieval does: the repository's " +
    'source files are cut into snippets (functions and methods, other code in 30-line windows), each scored by ' +
    "Jaccard similarity of its word set with the query's, and the top k returned with their path and lines. " +
    'The query defaults to the description of the function you are writing; that function itself is never returned.',
  input: z.object({
    query: z.string().min(1).max(20_000).optional().describe("text to match (default: the target function's docstring)"),
    k: z.number().int().min(1).max(50).default(5).describe('how many snippets to return'),
  }),
  output: z.object({
    query: z.string(),
    k: z.number().int(),
    snippets: z.number().int().describe('snippets the repository was cut into'),
    files: z.number().int(),
    excluded: z.object({ file: z.string(), symbol: z.string() }).nullable().describe('the target function, never returned'),
    hits: z.array(
      z.object({
        file: z.string(),
        startLine: z.number().int(),
        endLine: z.number().int(),
        symbol: z.string().nullable(),
        score: z.number(),
        code: z.string(),
      }),
    ),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(episode, args) {
    const meta = suiteMetadata(HumanEvoMetadata, episode.task);
    // The target's file in this episode's start state (in the ignored one it may have moved).
    const targetFile = episode.context === 'ignored' && meta.ignoredTargetFile ? meta.ignoredTargetFile : meta.targetFile;
    const { targetSymbol, docstring } = meta;
    const query = args.query ?? (docstring?.trim() ? docstring : undefined);
    if (!query) throw new GymError('INVALID_ARGUMENT', "invalid 'query': this task has no target description to default to; give a query");
    const language = episode.task.language;
    const ext = language === 'python' ? '.py' : '.java';
    const { entries } = await episode.sandbox.list('.', { depth: 64, limit: 100_000 });
    const files = entries.filter(
      (e) =>
        e.type === 'file' && e.path.endsWith(ext) && e.size <= MAX_FILE_BYTES && !e.path.split('/').some((p) => p.startsWith('.benchgym')),
    );
    const snippets: Snippet[] = [];
    for (const f of files) {
      const data = await episode.sandbox.readFile(f.path).catch(() => null);
      if (!data || looksBinary(data)) continue;
      snippets.push(...snippetsOf(language, f.path, data.toString('utf8')));
    }
    const isTarget = (s: Snippet) => s.file === targetFile && s.symbol === targetSymbol;
    const hits = rankSnippets(snippets, query, args.k, isTarget);
    const text = hits.length
      ? `${hits.length} of ${snippets.length} snippets most similar to ` +
        `the ${args.query ? 'query' : "target's description"} (Jaccard similarity):\n\n` +
        hits
          .map(
            (h, i) =>
              `#${i + 1} ${h.file}:${h.startLine}-${h.endLine}${h.symbol ? ` (${h.symbol})` : ''} score ${h.score.toFixed(3)}\n${h.code}`,
          )
          .join('\n\n')
      : `No snippet of the ${snippets.length} in ${files.length} files shares a word with the query.`;
    return {
      text,
      data: {
        query,
        k: args.k,
        snippets: snippets.length,
        files: files.length,
        excluded: targetFile && targetSymbol ? { file: targetFile, symbol: targetSymbol } : null,
        hits: hits.map((h) => ({
          file: h.file,
          startLine: h.startLine,
          endLine: h.endLine,
          symbol: h.symbol,
          score: Number(h.score.toFixed(6)),
          code: h.code,
        })),
      },
    };
  },
});
