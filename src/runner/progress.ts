import type { ResultRecord } from './results.ts';

/** What the runner tells whoever watches a run. */
export interface ProgressSink {
  /** `done` and `passed` count (task, sample) pairs finished by an earlier, resumed session. */
  start(total: number, done: number, passed: number, infra: number): void;
  /** A (task, sample) has its final result. */
  finished(record: ResultRecord): void;
  /** An attempt failed for infrastructure reasons and will be tried again. */
  retrying(record: ResultRecord, delayMs: number): void;
  stop(): void;
}

/** No output (library use, tests). */
export const silentProgress: ProgressSink = { start() {}, finished() {}, retrying() {}, stop() {} };

interface Counters {
  total: number;
  done: number;
  passed: number;
  infra: number;
  /** Finished in this session: the ETA's rate. */
  doneHere: number;
  started: number;
}

/**
 * Progress on stderr: a bar redrawn in place on a terminal (done/total, passing so far, ETA),
 * plain lines otherwise (one per finished episode), so logs stay readable.
 */
export function streamProgress(stream: NodeJS.WriteStream = process.stderr, tty: boolean = Boolean(stream.isTTY)): ProgressSink {
  const c: Counters = { total: 0, done: 0, passed: 0, infra: 0, doneHere: 0, started: Date.now() };
  let timer: NodeJS.Timeout | undefined;
  let lastLine = '';
  const draw = () => {
    const line = barLine(c, stream.columns || 100);
    if (line !== lastLine) stream.write(`\r\x1b[K${line}`);
    lastLine = line;
  };
  const above = (text: string) => {
    // A message above the bar: clear the bar, print, redraw.
    if (tty) {
      stream.write(`\r\x1b[K${text}\n`);
      lastLine = '';
      draw();
    } else stream.write(`${text}\n`);
  };
  return {
    start(total, done, passed, infra) {
      Object.assign(c, { total, done, passed, infra, doneHere: 0, started: Date.now() });
      if (tty) {
        draw();
        timer = setInterval(draw, 1000);
        timer.unref();
      } else {
        stream.write(`run: ${total} episodes${done ? `, ${done} already done (resumed)` : ''}\n`);
      }
    },
    finished(r) {
      c.done++;
      c.doneHere++;
      if (r.status === 'passed') c.passed++;
      if (r.infra) c.infra++;
      const what = r.infra ? `infra error ${r.infraError?.code ?? ''}`.trim() : r.status;
      const line =
        `[${c.done}/${c.total}] ${r.task}#${r.sample} ${what} (${(r.durations.totalMs / 1000).toFixed(1)} ` +
        `s${r.attempt > 1 ? `, attempt ${r.attempt}` : ''}) · ${passing(c)} · ETA ${eta(c)}`;
      if (tty) {
        if (r.infra) above(line);
        draw();
      } else stream.write(`${line}\n`);
    },
    retrying(r, delayMs) {
      above(
        `retry: ${r.task}#${r.sample} attempt ${r.attempt} hit an infrastructure ` +
          `failure (${r.infraError?.code}: ${truncate(r.infraError?.message ?? '', 160)}` +
          `); trying again in ${(delayMs / 1000).toFixed(0)} s`,
      );
    },
    stop() {
      if (timer) clearInterval(timer);
      if (tty) {
        draw();
        stream.write('\n');
      }
    },
  };
}

/** Passed over every finished sample (an infrastructure failure did not pass), and over the scored ones when there were failures. */
function passing(c: Counters): string {
  const scored = c.done - c.infra;
  const rate = (n: number) => (n ? ` (${((100 * c.passed) / n).toFixed(0)}%)` : '');
  return (
    `passing ${c.passed}/${c.done}${rate(c.done)}` + `${c.infra ? ` · infra ${c.infra} · scored ${c.passed}/${scored}${rate(scored)}` : ''}`
  );
}

function eta(c: Counters): string {
  const left = c.total - c.done;
  if (left <= 0) return '0 s';
  if (!c.doneHere) return '?';
  return duration(((Date.now() - c.started) / c.doneHere) * left);
}

export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

function barLine(c: Counters, columns: number): string {
  const text = ` ${c.done}/${c.total} · ${passing(c)} · ETA ${eta(c)}`;
  const width = Math.max(10, Math.min(40, columns - text.length - 3));
  const filled = c.total ? Math.round((width * c.done) / c.total) : 0;
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]${text}`.slice(0, Math.max(20, columns - 1));
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
