import { Worker } from 'node:worker_threads';
import { GymError } from '../errors.ts';

/** Time a search's regular expression may run in total before the call fails. */
export const REGEX_TIME_LIMIT_MS = 5000;

// Plain JavaScript, run with eval so it needs no TypeScript loader in the worker.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.source, workerData.flags);
parentPort.on('message', ({ texts, want }) => {
  let left = want;
  const out = [];
  for (const text of texts) {
    // Lines as splitLines has them: no empty line after a final newline.
    const lines = text === '' ? [] : text.split('\\n');
    if (lines.length && lines[lines.length - 1] === '') lines.pop();
    const hits = [];
    let count = 0;
    for (let i = 0; i < lines.length; i++) {
      if (re.test(lines[i])) {
        count++;
        if (left > 0) { hits.push(i); left--; }
      }
    }
    out.push({ count, hits });
  }
  parentPort.postMessage(out);
});
`;

export interface FileMatches {
  /** Matching lines in the file. */
  count: number;
  /** 0-based indices of the first matching lines, at most `want` over the batch. */
  hits: number[];
}

/**
 * A user's regular expression, matched in a worker thread with a time limit. We keep
 * JavaScript's own regex semantics (the tool's contract) rather than a linear-time engine
 * such as RE2, and a catastrophic pattern (`^(a+)+$`) costs one terminated worker instead
 * of blocking the event loop every episode shares.
 */
export class RegexWorker {
  private readonly worker: Worker;
  private usedMs = 0;
  private failure?: GymError;

  constructor(
    readonly source: string,
    readonly flags: string,
    private readonly signal?: AbortSignal,
    private readonly limitMs = REGEX_TIME_LIMIT_MS,
  ) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { source, flags }, resourceLimits: { maxOldGenerationSizeMb: 256 } });
    this.worker.unref();
  }

  /** Matches each text's lines; throws INVALID_ARGUMENT once the time limit is spent, CANCELLED on abort. */
  match(texts: string[], want: number): Promise<FileMatches[]> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const finish = (err?: GymError, out?: FileMatches[]) => {
        clearTimeout(timer);
        this.signal?.removeEventListener('abort', onAbort);
        this.worker.off('message', onMessage);
        this.worker.off('error', onError);
        this.usedMs += Date.now() - started;
        if (err) {
          this.failure = err;
          void this.worker.terminate();
          reject(err);
        } else resolve(out!);
      };
      const onMessage = (out: FileMatches[]) => finish(undefined, out);
      const onError = (e: Error) =>
        finish(new GymError('INVALID_ARGUMENT', `invalid 'query': the regular expression failed (${e.message})`));
      const onAbort = () => finish(new GymError('CANCELLED', 'search was cancelled'));
      const timer = setTimeout(
        () =>
          finish(
            new GymError(
              'INVALID_ARGUMENT',
              `invalid 'query': the regular expression ran for more than ${this.limitMs / 1000} ` +
                `s (catastrophic backtracking, as in (a+)+ ?); simplify it or search for a literal`,
              {
                limitMs: this.limitMs,
              },
            ),
          ),
        Math.max(0, this.limitMs - this.usedMs),
      );
      if (this.signal?.aborted) return onAbort();
      this.signal?.addEventListener('abort', onAbort, { once: true });
      this.worker.on('message', onMessage);
      this.worker.on('error', onError);
      this.worker.postMessage({ texts, want });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate().catch(() => {});
  }
}
