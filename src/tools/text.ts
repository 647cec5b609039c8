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

/** A workspace text file: its text, and the bytes it was read from (for the edit history). */
export interface TextFile {
  text: string;
  bytes: Buffer;
}

/**
 * Reads a workspace text file in one sandbox call, refusing directories, binaries and very
 * large files (the size limit is the sandbox's to check, so a huge file is never read).
 */
export async function readTextFile(episode: Episode, rel: string): Promise<string> {
  return (await readText(episode, rel)).text;
}

export async function readText(episode: Episode, rel: string): Promise<TextFile> {
  let data: Buffer;
  try {
    data = await episode.sandbox.readFile(rel, { maxBytes: MAX_TEXT_FILE_BYTES });
  } catch (err) {
    if (!(err instanceof GymError)) throw err;
    if (err.code === 'FILE_TOO_LARGE')
      throw new GymError(
        'FILE_TOO_LARGE',
        `'${rel}' is ${err.details?.size ?? 'more than ' + MAX_TEXT_FILE_BYTES} bytes, ` +
          `more than ${MAX_TEXT_FILE_BYTES} this tool reads; use search or run_command`,
      );
    // Only a failed read pays a second call, to say what the path is.
    if (err.code === 'NOT_A_FILE' && (await episode.sandbox.stat(rel).catch(() => null))?.type === 'dir')
      throw new GymError('NOT_A_FILE', `'${rel}' is a directory; use list_dir`);
    throw err;
  }
  if (looksBinary(data)) throw new GymError('BINARY_FILE', `'${rel}' is a binary file (${data.length} bytes) and cannot be shown as text`);
  return { text: data.toString('utf8'), bytes: data };
}

/** Splits text into lines without the trailing empty one after a final newline. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export function cutLine(line: string): string {
  return line.length > MAX_LINE_CHARS
    ? `${line.slice(0, MAX_LINE_CHARS)} … [line cut: ${line.length - MAX_LINE_CHARS} more characters]`
    : line;
}

/** `  12\tcode` lines, numbered from `first` (1-based). */
export function numbered(lines: string[], first: number): string {
  const width = String(first + lines.length - 1).length;
  return lines.map((l, i) => `${String(first + i).padStart(Math.max(width, 4))}\t${cutLine(l)}`).join('\n');
}

/**
 * Records the old content, writes the new one. A tool that has just read the file gives its
 * bytes as `before` (one sandbox call less); else the file is read here, if it exists.
 */
export async function writeWithHistory(episode: Episode, rel: string, content: string, before?: Buffer | null): Promise<void> {
  if (before === undefined) {
    const st = await episode.sandbox.stat(rel);
    before = st?.type === 'file' ? await episode.sandbox.readFile(rel) : null;
  }
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
