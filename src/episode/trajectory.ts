import { closeSync, openSync, promises as fs, writeSync } from 'node:fs';
import path from 'node:path';

/**
 * Whether `p` can name a gym trajectory file: an absolute, normalized path of a `.jsonl` file
 * directly in a `trajectories` folder. Paths read from files (results.jsonl, a run's records)
 * are checked with this before they are opened.
 */
export function isGymTrajectoryPath(p: string): boolean {
  const inTrajectories = path.basename(path.dirname(p)) === 'trajectories';
  return path.isAbsolute(p) && path.normalize(p) === p && inTrajectories && /^[A-Za-z0-9._-]+\.jsonl$/.test(path.basename(p));
}

export interface TrajectoryStep {
  type: 'step';
  step: number;
  tool: string;
  args: unknown;
  ok: boolean;
  observation?: string;
  data?: unknown;
  error?: { code: string; message: string };
  startedAt: string;
  durationMs: number;
}

const MAX_OBSERVATION_CHARS = 64 * 1024;
/** Any other string (a tool's arguments, a verdict's diff) is kept up to this many characters. */
export const MAX_FIELD_CHARS = 2 * 1024 * 1024;
/** A whole line: past it, strings are cut shorter until it fits, so no record costs the server (or a reader) hundreds of MB. */
export const MAX_LINE_CHARS = 4 * 1024 * 1024;

function cutString(s: string, limit: number): string {
  return s.length > limit ? `${s.slice(0, limit)}\n[... cut at ${limit} of ${s.length} characters in the trajectory]` : s;
}

/** A copy with every string longer than `limit` cut, through plain objects and arrays. */
function cutStrings(value: unknown, limit: number): unknown {
  if (typeof value === 'string') return cutString(value, limit);
  if (Array.isArray(value)) return value.map((v) => cutStrings(v, limit));
  if (value && typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    if (proto === Object.prototype || proto === null)
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutStrings(v, limit)]));
  }
  return value;
}

/** The JSON line of a record, at most MAX_LINE_CHARS long (plus the newline). */
export function trajectoryLine(record: Record<string, unknown>): string {
  const r = { ...record };
  if (typeof r.observation === 'string' && r.observation.length > MAX_OBSERVATION_CHARS) {
    r.observation = `${r.observation.slice(0, MAX_OBSERVATION_CHARS)}\n[... cut at ${MAX_OBSERVATION_CHARS} characters in the trajectory]`;
  }
  let line = JSON.stringify(cutStrings(r, MAX_FIELD_CHARS));
  for (const limit of [64 * 1024, 4096]) {
    if (line.length <= MAX_LINE_CHARS) return line;
    line = JSON.stringify(cutStrings(r, limit));
  }
  if (line.length <= MAX_LINE_CHARS) return line;
  // Still too long (a huge array of small values): keep what identifies the record.
  const kept = Object.fromEntries(
    Object.entries(r)
      .filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
      .map(([k, v]) => [k, typeof v === 'string' ? cutString(v, 4096) : v]),
  );
  return JSON.stringify({
    ...kept,
    truncated:
      `the record was ${line.length} characters after cutting, over the ` +
      `trajectory's ${MAX_LINE_CHARS} per line: only its scalar fields are kept`,
  });
}

/**
 * Every call of an episode, appended as JSON lines as it happens. `append` writes the line to the
 * file (a write on a descriptor kept open, into the kernel) before it returns: a step is finished
 * when its answer is sent, and the Gym records it before answering, so a crash of the server loses
 * no finished step. One write per record, not an open-append-close, is what a step costs here.
 */
export class Trajectory {
  private fd: number | null = null;

  constructor(readonly file: string) {}

  static async open(dir: string, episodeId: string, header: Record<string, unknown>): Promise<Trajectory> {
    await fs.mkdir(dir, { recursive: true });
    const t = new Trajectory(path.join(dir, `${episodeId}.jsonl`));
    t.append({ type: 'episode', episodeId, ...header, startedAt: new Date().toISOString() });
    return t;
  }

  append(record: Record<string, unknown>): void {
    const line = Buffer.from(trajectoryLine(record) + '\n');
    try {
      this.fd ??= openSync(this.file, 'a');
      for (let at = 0; at < line.length;) at += writeSync(this.fd, line, at);
    } catch {
      // A full disk or a removed folder costs the record, not the episode's call (as before).
      this.release();
    }
  }

  /** Lets go of the file (an episode's end); a later record (get_diff after the end) opens it again. */
  flush(): Promise<void> {
    this.release();
    return Promise.resolve();
  }

  private release(): void {
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    this.fd = null;
  }
}
