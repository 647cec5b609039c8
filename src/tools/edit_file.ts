import { z } from 'zod';
import { GymError } from '../errors.ts';
import { episodeTool } from './types.ts';
import { excerpt, numbered, readText, splitLines, writeWithHistory } from './text.ts';

const normalize = (line: string) => line.trim().replace(/\s+/g, ' ');
const indentOf = (line: string) => /^[ \t]*/.exec(line)![0];

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function exactMatches(text: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) at.push(i);
  return at;
}

/** Line windows equal to `old` when leading/trailing whitespace and runs of spaces are ignored. */
function tolerantMatches(fileLines: string[], oldLines: string[]): number[] {
  const want = oldLines.map(normalize);
  const have = fileLines.map(normalize);
  const at: number[] = [];
  for (let i = 0; i + want.length <= have.length; i++) {
    if (want.every((w, j) => have[i + j] === w)) at.push(i);
  }
  return at;
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) m.set(s.slice(i, i + 2), (m.get(s.slice(i, i + 2)) ?? 0) + 1);
  return m;
}

function similarity(a: string, b: string): number {
  if (!a.length || !b.length) return 0;
  if (a === b) return 1;
  const x = bigrams(a);
  const y = bigrams(b);
  let common = 0;
  for (const [k, n] of x) common += Math.min(n, y.get(k) ?? 0);
  return (2 * common) / (Math.max(1, a.length - 1) + Math.max(1, b.length - 1));
}

/** The lines most like the first line of `old`, with context, to show when nothing matched. */
function nearestCandidates(fileLines: string[], oldLines: string[]): string {
  const probe = normalize(oldLines.find((l) => l.trim()) ?? '');
  const scored = fileLines
    .map((l, i) => ({ i, score: similarity(normalize(l), probe) }))
    .filter((c) => c.score >= 0.4)
    .sort((a, b) => b.score - a.score)
    .slice(0, 3);
  if (!scored.length) return 'No similar lines found; view the file to copy the exact text.';
  return scored
    .map((c) => {
      const start = Math.max(0, c.i - 1);
      return (
        `near line ${c.i + 1} (similarity ${c.score.toFixed(2)}` +
        `):\n${numbered(fileLines.slice(start, c.i + Math.max(2, oldLines.length)), start + 1)}`
      );
    })
    .join('\n---\n');
}

function reindent(lines: string[], from: string, to: string): string[] {
  if (from === to) return lines;
  return lines.map((l) => (l.startsWith(from) ? to + l.slice(from.length) : l.trim() ? to + l.trimStart() : l));
}

export const editFileTool = episodeTool({
  name: 'edit_file',
  title: 'Edit a file (replace text)',
  description:
    'Replace old_str with new_str in a file. old_str must match exactly one place (include a few surrounding lines to make ' +
    'it unique); if no exact match exists, a match that ignores differences in indentation and spacing is used. On no match ' +
    'or several matches the error shows the candidates with line numbers. Set replace_all to change every occurrence.',
  input: z.object({
    path: z.string().min(1).describe('file path relative to the workspace root'),
    old_str: z.string().min(1).describe('the text to replace, copied from the file'),
    new_str: z.string().describe('the replacement text'),
    replace_all: z.boolean().default(false).describe('replace every exact occurrence'),
  }),
  output: z.object({
    path: z.string(),
    match: z.enum(['exact', 'whitespace-tolerant']),
    replacements: z.number().int().min(1),
    firstLine: z.number().int().min(1),
    lastLine: z.number().int().min(0),
  }),
  annotations: { destructiveHint: false },
  async run(episode, args) {
    const { text, bytes } = await readText(episode, args.path);
    const exact = exactMatches(text, args.old_str);
    let updated: string;
    let firstLine: number;
    let lastLine: number;
    let mode: 'exact' | 'whitespace-tolerant' = 'exact';
    if (exact.length === 1 || (exact.length > 1 && args.replace_all)) {
      updated = text.split(args.old_str).join(args.new_str);
      firstLine = lineOf(text, exact[0]!);
      lastLine = firstLine + splitLines(args.new_str).length - 1;
    } else if (exact.length > 1) {
      const lines = exact.map((i) => lineOf(text, i));
      throw new GymError(
        'EDIT_AMBIGUOUS',
        `old_str matches ${exact.length} places in '${args.path}' (lines ${lines.join(', ')}); ` +
          `add surrounding lines to make it unique, or set replace_all`,
        { lines },
      );
    } else {
      const fileLines = splitLines(text);
      const oldLines = splitLines(args.old_str).filter((l, i, all) => l.trim() || (i > 0 && i < all.length - 1));
      const tolerant = oldLines.length ? tolerantMatches(fileLines, oldLines) : [];
      if (tolerant.length > 1) {
        const lines = tolerant.map((i) => i + 1);
        throw new GymError(
          'EDIT_AMBIGUOUS',
          `old_str matches ${tolerant.length} places in '${args.path}' when whitespace ` +
            `is ignored (lines ${lines.join(', ')}); add surrounding lines to make it unique`,
          { lines },
        );
      }
      if (tolerant.length === 0) {
        throw new GymError('EDIT_NO_MATCH', `old_str was not found in '${args.path}'.\n${nearestCandidates(fileLines, oldLines)}`);
      }
      const at = tolerant[0]!;
      const firstOld = oldLines.find((l) => l.trim()) ?? '';
      const firstHave = fileLines[at + oldLines.indexOf(firstOld)] ?? '';
      const replacement = reindent(splitLines(args.new_str), indentOf(firstOld), indentOf(firstHave));
      fileLines.splice(at, oldLines.length, ...replacement);
      updated = fileLines.join('\n') + (text.endsWith('\n') || text === '' ? '\n' : '');
      firstLine = at + 1;
      lastLine = at + replacement.length;
      mode = 'whitespace-tolerant';
    }
    await writeWithHistory(episode, args.path, updated, bytes);
    const count = args.replace_all ? Math.max(exact.length, 1) : 1;
    return {
      text:
        `Edited ${args.path}${mode === 'exact' ? '' : ' (matched ignoring whitespace)'}` +
        `${count > 1 ? ` in ${count} places` : ''}:\n${excerpt(updated, firstLine, Math.max(firstLine, lastLine))}`,
      data: { path: args.path, match: mode, replacements: count, firstLine, lastLine },
    };
  },
});
