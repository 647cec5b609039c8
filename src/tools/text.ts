import path from 'node:path';
import { GymError } from '../errors.ts';
import type { Episode } from '../episode/episode.ts';

export const MAX_TEXT_FILE_BYTES = 8 * 1024 * 1024;
export const MAX_LINE_CHARS = 2000;

/** True when the bytes look like a binary file: a NUL byte, or not UTF-8, near the start. */
export function looksBinary(data: Buffer): boolean {
  const head = data.subarray(0, 8192);
  if (head.includes(0)) return true;
  try {
    const end = data.length > head.length ? lastCompleteUtf8(head) : head.length;
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, end));
    return false;
  } catch {
    return true;
  }
}

/** Where the window ends without a multi-byte character cut by it (only when the window cut the data). */
function lastCompleteUtf8(buf: Buffer): number {
  // Walk back over continuation bytes to the lead byte of the last character.
  for (let i = buf.length - 1; i >= Math.max(0, buf.length - 4); i--) {
    const b = buf[i]!;
    if (b < 0x80) return buf.length;
    if (b >= 0xc0) {
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      return i + need > buf.length ? i : buf.length;
    }
  }
  return buf.length;
}

/**
 * The key a file's edit history is kept under: one per file however its path is spelled
 * (`./a.py`, `a.py`, `<workdir>/a.py`).
 */
export function historyKey(episode: Episode, rel: string): string {
  let p = rel.trim();
  const workdir = episode.sandbox.workdir;
  if (path.posix.isAbsolute(p)) {
    const inside = path.posix.relative(workdir, p);
    if (!inside.startsWith('..') && !path.posix.isAbsolute(inside)) p = inside;
  }
  return path.posix.normalize(p || '.').replace(/\/+$/, '');
}

/** Reads a workspace text file, refusing directories, binaries and very large files. */
export async function readTextFile(episode: Episode, rel: string): Promise<string> {
  const st = await episode.sandbox.stat(rel);
  if (!st) throw new GymError('FILE_NOT_FOUND', `no such file: '${rel}'`);
  if (st.type === 'dir') throw new GymError('NOT_A_FILE', `'${rel}' is a directory; use list_dir`);
  if (st.size > MAX_TEXT_FILE_BYTES) throw new GymError('FILE_TOO_LARGE', `'${rel}' is ${st.size} bytes, more than ${MAX_TEXT_FILE_BYTES} this tool reads; use search or run_command`);
  const data = await episode.sandbox.readFile(rel);
  if (looksBinary(data)) throw new GymError('BINARY_FILE', `'${rel}' is a binary file (${data.length} bytes) and cannot be shown as text`);
  return data.toString('utf8');
}

/** Splits text into lines without the trailing empty one after a final newline. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export function cutLine(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)} … [line cut: ${line.length - MAX_LINE_CHARS} more characters]` : line;
}

/** `  12\tcode` lines, numbered from `first` (1-based). */
export function numbered(lines: string[], first: number): string {
  const width = String(first + lines.length - 1).length;
  return lines.map((l, i) => `${String(first + i).padStart(Math.max(width, 4))}\t${cutLine(l)}`).join('\n');
}

/** Records the old content, writes the new one. */
export async function writeWithHistory(episode: Episode, rel: string, content: string): Promise<void> {
  const st = await episode.sandbox.stat(rel);
  const before = st?.type === 'file' ? await episode.sandbox.readFile(rel) : null;
  await episode.sandbox.writeFile(rel, content);
  episode.rememberBefore(historyKey(episode, rel), before);
}

/** A short numbered excerpt around changed lines, for edit confirmations. */
export function excerpt(text: string, fromLine: number, toLine: number, context = 3): string {
  const lines = splitLines(text);
  const start = Math.max(1, fromLine - context);
  const end = Math.min(lines.length, toLine + context);
  return numbered(lines.slice(start - 1, end), start);
}
