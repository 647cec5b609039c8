import { promises as fs } from 'node:fs';

/** One whole line of a JSONL file: where it is, and the few facts a transcript orders by. */
export interface IndexedLine {
  start: number;
  /** Exclusive, without the newline. */
  end: number;
  type: string;
  /** ISO time of the record (`at`, `startedAt`), or undefined. */
  time?: string;
  attempt?: number;
  /** Small fields kept for the transcript's plan (an attempt's gym trajectory). */
  gymTrajectory?: string;
}

interface Entry {
  size: number;
  /** Where the next unread line starts (a line without its newline yet is read again later). */
  scanned: number;
  lines: IndexedLine[];
}

const CHUNK = 1 << 20;
const SPAN_READ_MAX = 16 << 20;

/**
 * Byte offsets of the lines of JSONL files, built once and extended as a file grows (a live
 * episode appends), so a page of a long trajectory reads only its own lines.
 */
export class LineIndex {
  private readonly files = new Map<string, Entry>();

  constructor(private readonly maxFiles = 256) {}

  /** The file's whole lines so far; a missing file has none. */
  async lines(file: string): Promise<IndexedLine[]> {
    let stat;
    try {
      stat = await fs.stat(file);
    } catch {
      return [];
    }
    if (!stat.isFile()) return [];
    let entry = this.files.get(file);
    // A file that shrank was replaced: start over.
    if (!entry || stat.size < entry.size) entry = { size: 0, scanned: 0, lines: [] };
    if (stat.size > entry.scanned) await scan(file, entry, stat.size);
    entry.size = stat.size;
    this.files.delete(file);
    this.files.set(file, entry);
    if (this.files.size > this.maxFiles) this.files.delete(this.files.keys().next().value!);
    return entry.lines;
  }

  /** The parsed records of some of a file's lines, in the order given. */
  async read(file: string, lines: IndexedLine[]): Promise<Record<string, unknown>[]> {
    if (!lines.length) return [];
    const fh = await fs.open(file, 'r');
    try {
      const out: Record<string, unknown>[] = [];
      const from = Math.min(...lines.map((l) => l.start));
      const to = Math.max(...lines.map((l) => l.end));
      // A page's lines are mostly neighbours: one read of their span, unless it is huge.
      if (to - from <= SPAN_READ_MAX) {
        const span = Buffer.alloc(to - from);
        await fh.read(span, 0, span.length, from);
        return lines.map((l) => parseRecord(span.subarray(l.start - from, l.end - from).toString('utf8')) ?? { type: 'unreadable' });
      }
      for (const line of lines) {
        const buf = Buffer.alloc(line.end - line.start);
        await fh.read(buf, 0, buf.length, line.start);
        out.push(parseRecord(buf.toString('utf8')) ?? { type: 'unreadable' });
      }
      return out;
    } finally {
      await fh.close();
    }
  }
}

async function scan(file: string, entry: Entry, size: number): Promise<void> {
  const fh = await fs.open(file, 'r');
  try {
    let pos = entry.scanned;
    let pending: Buffer[] = [];
    let pendingStart = pos;
    while (pos < size) {
      const buf = Buffer.alloc(Math.min(CHUNK, size - pos));
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (!bytesRead) break;
      let from = 0;
      for (;;) {
        const nl = buf.indexOf(0x0a, from);
        if (nl < 0 || nl >= bytesRead) break;
        const piece = buf.subarray(from, nl);
        const text = pending.length ? Buffer.concat([...pending, piece]).toString('utf8') : piece.toString('utf8');
        pending = [];
        const lineEnd = pos + nl;
        if (text.trim()) entry.lines.push(describe(text, pendingStart, lineEnd));
        from = nl + 1;
        pendingStart = pos + from;
      }
      if (from < bytesRead) pending.push(Buffer.from(buf.subarray(from, bytesRead)));
      pos += bytesRead;
    }
    entry.scanned = pendingStart;
  } finally {
    await fh.close();
  }
}

function describe(text: string, start: number, end: number): IndexedLine {
  const r = parseRecord(text);
  if (!r) return { start, end, type: 'unreadable' };
  const time = typeof r.at === 'string' ? r.at : typeof r.startedAt === 'string' ? r.startedAt : undefined;
  return {
    start,
    end,
    type: typeof r.type === 'string' ? r.type : 'event',
    ...(time ? { time } : {}),
    ...(typeof r.attempt === 'number' ? { attempt: r.attempt } : {}),
    ...(typeof r.gymTrajectory === 'string' ? { gymTrajectory: r.gymTrajectory } : {}),
  };
}

function parseRecord(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
