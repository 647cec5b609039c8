/**
 * `npm run bench -- --only viewer` (opt-in): how `benchgym view` copes with a large run.
 * A run of 10,000 results (2,000 with --quick) and one trajectory of 500 steps are written
 * to a temporary directory; the viewer serves them in this process. Timed: the first table
 * page from a cold start (the requests the page makes: run list, run, first 100 rows), pages
 * deep in the table sorted and filtered, the first and a late page of the 500-step
 * transcript, and, when Chromium is installed, the page itself until its first rows are drawn.
 * Memory: the process's RSS and heap before and after the run is loaded.
 *
 * Alone: `node --import tsx bench/viewer.ts [--quick]`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLink } from '../src/protocol/viewer_links.ts';
import { RunStore } from '../src/viewer/runs.ts';
import { startViewerServer } from '../src/viewer/server.ts';
import { taskName, writeFixtureRun } from '../test/viewer/fixture.ts';
import { summarize, type LatencyStats } from './stats.ts';

export const VIEWER_CASES = [
  'viewer_first_page',
  'viewer_page_sorted',
  'viewer_page_filtered',
  'viewer_transcript',
  'by_hand_jq_filter',
  'viewer_browser_first_rows',
] as const;

export interface ViewerBenchResult {
  stats: LatencyStats[];
  skipped?: string;
  extra: Record<string, unknown>;
  table: string;
}

const CHROMIUM = '/usr/bin/chromium';
const MiB = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;

function since(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = process.hrtime.bigint();
  const v = await fn();
  return [since(t0), v];
}

export async function runViewerBench(opts: {
  quick: boolean;
  cases?: ReadonlySet<string>;
  log: (m: string) => void;
}): Promise<ViewerBenchResult> {
  const results = opts.quick ? 2000 : 10_000;
  const steps = 500;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-bench-view-'));
  const runDir = path.join(dir, 'big-run');
  try {
    opts.log(`writing a run of ${results} results and a ${steps}-step trajectory`);
    await writeFixtureRun(runDir, { tasks: results / 2, samples: 2, longSteps: steps, trajectories: 20 });
    const bytes = (await fs.stat(path.join(runDir, 'results.jsonl'))).size;
    global.gc?.();
    const before = process.memoryUsage();
    const viewer = await startViewerServer({ runs: new RunStore([runDir]) }, { port: 0 });
    const get = async (p: string) => {
      const r = await fetch(`${viewer.url}${p}`);
      if (!r.ok) throw new Error(`${p}: HTTP ${r.status}`);
      return r.json() as Promise<any>;
    };
    try {
      // Cold: what the page asks for first, with nothing read yet.
      const [listMs] = await timed(() => get('api/runs'));
      const [runMs] = await timed(() => get('api/runs/big-run'));
      const [pageMs, first] = await timed(() => get('api/runs/big-run/results?limit=100'));
      if (first.total !== results || first.rows.length !== 100)
        throw new Error(`the first page is wrong: ${first.total} results, ${first.rows.length} rows`);
      const firstPageMs = listMs + runMs + pageMs;
      const loaded = process.memoryUsage();

      const n = opts.quick ? 20 : 50;
      const sortKeys = ['steps', 'tokens', 'durationMs', 'status', 'costUsd'];
      const sorted: number[] = [];
      for (let i = 0; i < n; i++) {
        // A new order every time: each request sorts all the rows again.
        const [ms] = await timed(() =>
          get(
            `api/runs/big-run/results?sort=${sortKeys[i % sortKeys.length]}&dir=${i % 2 ? 'asc' : 'desc'}&offset=${(i * 997) % (results - 100)}&limit=100`,
          ),
        );
        sorted.push(ms);
      }
      const filtered: number[] = [];
      for (let i = 0; i < n; i++) {
        const [ms] = await timed(() =>
          get(`api/runs/big-run/results?status=failed&m.library=lib${i % 3}&q=task-${i % 10}&offset=0&limit=100`),
        );
        filtered.push(ms);
      }
      const [transcriptColdMs, t0] = await timed(() => get(`api/runs/big-run/tasks/${taskName(0)}/0/items?limit=60`));
      if (t0.total !== 3 + steps * 2) throw new Error(`the long transcript has ${t0.total} entries`);
      const transcript: number[] = [];
      for (let i = 0; i < n; i++) {
        const [ms] = await timed(() => get(`api/runs/big-run/tasks/${taskName(0)}/0/items?from=${(i * 61) % 940}&limit=60`));
        transcript.push(ms);
      }
      // What a researcher does without the viewer: jq over results.jsonl, one filter each time.
      const byHand: number[] = [];
      let byHandSkipped: string | undefined;
      try {
        execFileSync('jq', ['--version'], { stdio: 'ignore' });
        for (let i = 0; i < Math.min(n, 10); i++) {
          const t0 = process.hrtime.bigint();
          execFileSync('sh', [
            '-c',
            `jq -c 'select(.status == "failed" and .metadata.library == "lib${i % 3}")' "$1" | head -n 100 > /dev/null`,
            'sh',
            path.join(runDir, 'results.jsonl'),
          ]);
          byHand.push(since(t0));
        }
      } catch {
        byHandSkipped = 'jq is not installed';
      }
      let browserMs: number | undefined;
      let browserSkipped: string | undefined;
      if (existsSync(CHROMIUM)) {
        const { chromium } = await import('playwright-core');
        const profile = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-bench-chromium-'));
        const context = await chromium.launchPersistentContext(profile, {
          executablePath: CHROMIUM,
          args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
          ],
        });
        try {
          const page = context.pages()[0] ?? (await context.newPage());
          // A second viewer that has read nothing yet: the page's time includes loading the run.
          const cold = await startViewerServer({ runs: new RunStore([runDir]) }, { port: 0 });
          try {
            [browserMs] = await timed(async () => {
              await page.goto(runLink('big-run', cold.url));
              await page.waitForSelector('#results tbody tr');
            });
          } finally {
            await cold.close();
          }
        } finally {
          await context.close();
          await fs.rm(profile, { recursive: true, force: true });
        }
      } else browserSkipped = `${CHROMIUM} is missing`;

      const stats = [
        summarize('viewer_first_page', `cold: run list + run + first 100 of ${results} rows`, [firstPageMs]),
        summarize('viewer_page_sorted', `a page deep in ${results} rows, sorted anew each time`, sorted),
        summarize('viewer_page_filtered', `status + metadata + task filters over ${results} rows`, filtered),
        summarize('viewer_transcript', `60 entries of a ${steps}-step trajectory (index built)`, transcript),
        ...(byHand.length
          ? [summarize('by_hand_jq_filter', `by hand: jq over results.jsonl, status + metadata filter, first 100 lines`, byHand)]
          : []),
        ...(browserMs !== undefined
          ? [summarize('viewer_browser_first_rows', 'Chromium, cold viewer: page load until the first rows are drawn', [browserMs])]
          : []),
      ].filter((s) => !opts.cases || opts.cases.has(s.name) || opts.cases.has('viewer'));
      const extra = {
        results,
        resultsFileMiB: MiB(bytes),
        firstPageMs: { list: round(listMs), run: round(runMs), rows: round(pageMs), total: round(firstPageMs) },
        transcriptFirstPageColdMs: round(transcriptColdMs),
        ...(browserMs !== undefined ? { browserFirstRowsMs: round(browserMs) } : { browserSkipped }),
        memoryMiB: {
          rssBefore: MiB(before.rss),
          rssLoaded: MiB(loaded.rss),
          heapBefore: MiB(before.heapUsed),
          heapLoaded: MiB(loaded.heapUsed),
        },
      };
      const table = [
        `  ${results} results (${extra.resultsFileMiB} MiB of results.jsonl), one ${steps}-step trajectory`,
        `  first table page, cold: ${extra.firstPageMs.total} ms (run list ${extra.firstPageMs.list}, run ${extra.firstPageMs.run}, rows ${extra.firstPageMs.rows})`,
        `  a page sorted anew: p50 ${stats.find((s) => s.name === 'viewer_page_sorted')?.p50} ms; filtered: p50 ${stats.find((s) => s.name === 'viewer_page_filtered')?.p50} ms`,
        `  500-step transcript: first page cold ${extra.transcriptFirstPageColdMs} ms, then p50 ${stats.find((s) => s.name === 'viewer_transcript')?.p50} ms a page`,
        byHand.length
          ? `  by hand (jq over results.jsonl, the same filter): p50 ${stats.find((s) => s.name === 'by_hand_jq_filter')?.p50} ms`
          : `  by hand: skipped (${byHandSkipped})`,
        browserMs !== undefined
          ? `  Chromium, cold viewer, page load to first rows drawn: ${round(browserMs)} ms`
          : `  Chromium: skipped (${browserSkipped})`,
        `  memory: RSS ${extra.memoryMiB.rssBefore} → ${extra.memoryMiB.rssLoaded} MiB, heap ${extra.memoryMiB.heapBefore} → ${extra.memoryMiB.heapLoaded} MiB once the run is loaded`,
      ].join('\n');
      return { stats, extra, table };
    } finally {
      await viewer.close();
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}

export const VIEWER_BENCHMARK = { name: 'viewer', cases: VIEWER_CASES, optIn: true, run: runViewerBench };

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runViewerBench({ quick: process.argv.includes('--quick'), log: (m) => console.error(`[bench] ${m}`) }).then(
    (r) => {
      console.log(`${os.cpus().length} cpus, load ${os.loadavg()[0]!.toFixed(2)}`);
      console.log(r.table);
    },
    (err) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exitCode = 1;
    },
  );
}
