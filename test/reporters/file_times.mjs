import { writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';

/**
 * A node:test reporter, loaded beside `spec` by `npm test`: the wall time of each test file,
 * written to a JSON file (BENCHGYM_TEST_TIMES, default test-times.json) and the slowest
 * printed at the end, so a slow run says which files its time went to.
 *
 * With several files at a time, the runner holds back a file's test events until the files
 * before it are reported; only the file's own enqueue/dequeue (at its start) and its own
 * test:complete (at its end, with the runner's duration) come as they happen. So a file's time
 * is from its own dequeue (its first event once it runs) to its own completion, and the
 * runner's duration is kept beside it.
 *
 * A Transform, not an async generator: --test-force-exit ends the process as soon as the
 * runner's own stream closes, before a generator has read its last events; a Transform has
 * seen every event by then, and what it has not printed yet is printed on the way out.
 * Plain JavaScript: the runner loads reporters before `--import tsx` takes effect (types in
 * file_times.d.mts).
 */

/**
 * The reporter, with its options.
 * @param {import('./file_times.d.mts').FileTimesOptions} options
 * @returns {Transform}
 */
export function fileTimesReporter(options = {}) {
  const now = options.now ?? (() => performance.now());
  const top = options.top ?? 15;
  const cwd = options.cwd ?? process.cwd();
  /**
   * @type {Map<string, { first: number; started?: number; last: number; completed?: number;
   * runnerMs?: number; tests: number; failed: number; passed: boolean }>}
   */
  const files = new Map();
  let done = false;

  /** @param {{ type: string; data?: any }} event */
  const add = (event) => {
    const data = event.data;
    const file = data?.file;
    if (!file) return;
    const t = now();
    let record = files.get(file);
    if (!record) files.set(file, (record = { first: t, last: t, tests: 0, failed: 0, passed: true }));
    record.last = t;
    const own = data.nesting === 0 && data.name === file;
    // Every file is enqueued at the start; it starts when it is dequeued.
    if (own && event.type === 'test:dequeue' && record.started === undefined) record.started = t;
    if (own && event.type === 'test:complete') {
      record.completed = t;
      record.runnerMs = data.details?.duration_ms;
      if (data.details?.passed === false) record.passed = false;
    }
    if (!own && (event.type === 'test:pass' || event.type === 'test:fail')) {
      record.tests++;
      if (event.type === 'test:fail') record.failed++;
    }
  };

  /** The JSON written, and the summary to print ('' without files). */
  const finish = () => {
    done = true;
    const times = [...files].map(([file, r]) => ({
      file: path.relative(cwd, file) || file,
      wallMs: Math.round((r.completed ?? r.last) - (r.started ?? r.first)),
      ...(r.runnerMs !== undefined ? { runnerMs: Math.round(r.runnerMs) } : {}),
      tests: r.tests,
      failed: r.failed,
      passed: r.passed && r.failed === 0,
    }));
    times.sort((a, b) => b.wallMs - a.wallMs);
    if (options.out) writeFileSync(options.out, JSON.stringify({ files: times }, null, 2) + '\n');
    if (times.length === 0) return '';
    const lines = times.slice(0, top).map((f) => `${seconds(f.wallMs).padStart(8)}  ${f.file}${f.passed ? '' : '  (failed)'}`);
    const where = options.out ? ` (all ${times.length} in ${options.out})` : '';
    return `\nslowest test files${where}:\n${lines.join('\n')}\n`;
  };

  const onExit = () => {
    if (done) return;
    const text = finish();
    if (text) writeSync(1, text);
  };
  if (options.onExit !== false) process.once('exit', onExit);
  return new Transform({
    writableObjectMode: true,
    transform(event, _encoding, callback) {
      add(event);
      callback();
    },
    flush(callback) {
      process.removeListener('exit', onExit);
      const text = done ? '' : finish();
      callback(null, text || undefined);
    },
  });
}

/** @param {number} ms */
function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

export default fileTimesReporter({ out: process.env.BENCHGYM_TEST_TIMES || 'test-times.json' });
