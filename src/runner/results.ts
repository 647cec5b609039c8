import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { GymError } from '../errors.ts';

/** Counts of a FAIL_TO_PASS or PASS_TO_PASS list. */
export interface ListCounts {
  passed: number;
  failed: number;
}

/**
 * One line of `results.jsonl`: one episode (one attempt at one (task, sample)). The suite's
 * annotations (Suite.annotateResult) sit beside these fields at the top level of the line.
 */
export interface ResultRecord {
  runId: string;
  suite: string;
  task: string;
  /** 0-based sample index. */
  sample: number;
  /** 1-based; an infrastructure failure is tried again with the next attempt number. */
  attempt: number;
  /** The (task, sample)'s result: false only for an infrastructure failure that was retried. */
  final: boolean;
  agent: string;
  model: string;
  episodeId: string | null;
  /** 'error' is an infrastructure failure, not a wrong answer (`infra` is then true); metrics count it as a sample that did not pass. */
  status: 'passed' | 'failed' | 'error';
  reward: 0 | 1;
  infra: boolean;
  /**
   * `afterAgentCode`: the episode's sandbox failed after the agent's code
   * could run there (counted against it when it recurs, in strict scoring).
   */
  infraError?: { code: string; message: string; source: 'agent' | 'verdict' | 'gym'; afterAgentCode?: true };
  /** The gym's verdict (authoritative, read from the episode, not from the agent); null when nothing was scored. */
  verdict: {
    reward: 0 | 1;
    status: 'passed' | 'failed' | 'error';
    tests: { passed: number; failed: number; error: number; skipped: number };
    failToPass?: ListCounts;
    passToPass?: ListCounts;
    notes: string[];
  } | null;
  submitted: boolean;
  stopReason: string;
  steps: number;
  rounds?: number;
  passedRound?: number;
  /** What went wrong in the agent when it stopped with an error that was not an infrastructure failure (counted as failed). */
  agentError?: string;
  tokens: { prompt: number; completion: number; total: number; calls: number };
  costUsd: number;
  startedAt: string;
  endedAt: string;
  durations: { startMs: number; agentMs: number; scoringMs: number; totalMs: number };
  /** Task facts for breakdowns: language, kind and the task's scalar metadata (library, level, ...). */
  metadata: Record<string, string | number | boolean>;
  /** Relative to the run directory. */
  trajectory: string;
  /** The gym's own trajectory of the episode (absolute path). */
  gymTrajectory: string | null;
  notes?: string[];
}

/** What a reader of results.jsonl insists on; everything else is carried along. */
const ResultLine = z.looseObject({
  task: z.string().min(1),
  sample: z.number().int().nonnegative(),
  attempt: z.number().int().positive(),
  final: z.boolean(),
  status: z.enum(['passed', 'failed', 'error']),
  infra: z.boolean(),
});

export interface ReadResults {
  records: ResultRecord[];
  /** Bytes of the file that hold whole, valid lines (a torn last line lies beyond). */
  validBytes: number;
  /** The torn last line, if any (a kill -9 in the middle of a write). */
  tornTail?: string;
}

/**
 * Reads results.jsonl. A last line cut short by a kill is tolerated (and reported as torn);
 * any other malformed line is an error, since appends are whole lines.
 */
export async function readResults(file: string): Promise<ReadResults> {
  let buf: Buffer;
  try {
    buf = await fs.readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], validBytes: 0 };
    throw err;
  }
  const records: ResultRecord[] = [];
  let offset = 0;
  let lineNo = 0;
  while (offset < buf.length) {
    const nl = buf.indexOf(0x0a, offset);
    const end = nl < 0 ? buf.length : nl;
    const text = buf.subarray(offset, end).toString('utf8');
    lineNo++;
    const isLast = nl < 0 || nl === buf.length - 1;
    if (text.trim() === '') {
      offset = end + 1;
      continue;
    }
    const parsed = parseLine(text);
    if (!parsed) {
      // Only the last line can be torn: appends write whole lines.
      if (isLast) return { records, validBytes: offset, tornTail: text };
      throw new GymError(
        'INVALID_ARGUMENT',
        `${file}: line ${lineNo} is not a result record; only the last line may be cut short (by a kill): fix or remove the line`,
      );
    }
    if (nl < 0) {
      // A whole record without its newline: keep it, and let the next append start a new line.
      records.push(parsed);
      return { records, validBytes: buf.length, tornTail: '' };
    }
    records.push(parsed);
    offset = end + 1;
  }
  return { records, validBytes: buf.length };
}

function parseLine(text: string): ResultRecord | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  const ok = ResultLine.safeParse(raw);
  return ok.success ? (ok.data as unknown as ResultRecord) : undefined;
}

/** The final record of each (task, sample); later lines win (there should be only one). */
export function finalResults(records: ResultRecord[]): ResultRecord[] {
  const byKey = new Map<string, ResultRecord>();
  for (const r of records) if (r.final) byKey.set(pairKey(r.task, r.sample), r);
  return [...byKey.values()];
}

export function pairKey(task: string, sample: number): string {
  return `${task}\u0000${sample}`;
}

/**
 * Appends records to results.jsonl, one JSON object per line, each write fsync'd before the
 * next, so a kill leaves at most a torn last line and never loses a line it acknowledged.
 */
export class ResultsWriter {
  private chain: Promise<void> = Promise.resolve();

  private constructor(
    private readonly handle: FileHandle,
    readonly file: string,
  ) {}

  /** Opens for appending; a torn tail from an earlier kill is cut off first (`validBytes` from readResults). */
  static async open(file: string, validBytes?: number): Promise<ResultsWriter> {
    await fs.mkdir(path.dirname(file), { recursive: true });
    if (validBytes !== undefined) {
      const size = (await fs.stat(file).catch(() => null))?.size ?? 0;
      if (size > validBytes) await fs.truncate(file, validBytes);
      else if (size === validBytes && size > 0) {
        // A whole last record without its newline: end the line before appending.
        const fh = await fs.open(file, 'r');
        try {
          const last = Buffer.alloc(1);
          await fh.read(last, 0, 1, size - 1);
          if (last[0] !== 0x0a) await fs.appendFile(file, '\n');
        } finally {
          await fh.close();
        }
      }
    }
    const handle = await fs.open(file, 'a');
    return new ResultsWriter(handle, file);
  }

  append(record: ResultRecord): Promise<void> {
    const line = JSON.stringify(record) + '\n';
    const next = this.chain.then(async () => {
      await this.handle.write(line);
      await this.handle.sync();
    });
    this.chain = next.catch(() => {});
    return next;
  }

  async close(): Promise<void> {
    await this.chain;
    await this.handle.close();
  }
}

/** `<task>__<sample>.jsonl`, with characters a file name should not hold replaced. */
export function trajectoryName(task: string, sample: number): string {
  return `${task.replace(/[^A-Za-z0-9._@+-]/g, '_')}__${sample}.jsonl`;
}
