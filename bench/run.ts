/**
 * `npm run bench [-- --quick] [-- --only <name>[,<name>...]]`
 *
 * Runs the benchmarks, prints a table and writes bench/results/latest.json. `--only` takes a
 * benchmark name (mcp_latency) or case names (ping, view_file, view_file_scoped, ...).
 * Opt-in benchmarks (isolation: bombs, about 5 min) run only when named with `--only`; run
 * alone, they write only their own file (bench/results/isolation.json), not latest.json.
 */
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MCP_LATENCY_CASES, runMcpLatency, type McpLatencyCase, type McpLatencyResult, type MemoryPoint } from './mcp_latency.ts';
import type { LatencyStats } from './stats.ts';
import { DOCKER_CASES, runDockerBench, type DockerBenchResult } from './docker_sandbox.ts';
import { ISOLATION_CASES, runIsolation, type IsolationResult } from './isolation.ts';
import { EXECUTOR_CASES, runExecutorBench } from './executor.ts';

const RESULTS_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json');

interface Benchmark {
  name: string;
  cases: readonly string[];
  /** Not part of a bare `npm run bench`: runs only when named (or a case of it) with --only. */
  optIn?: boolean;
  run(opts: {
    quick: boolean;
    cases?: ReadonlySet<string>;
    log: (m: string) => void;
  }): Promise<McpLatencyResult | DockerBenchResult | IsolationResult>;
}

const BENCHMARKS: Benchmark[] = [
  {
    name: 'mcp_latency',
    cases: MCP_LATENCY_CASES,
    run: (opts) => runMcpLatency({ ...opts, cases: opts.cases as ReadonlySet<McpLatencyCase> | undefined }),
  },
  {
    name: 'docker_sandbox',
    cases: DOCKER_CASES,
    run: (opts) => runDockerBench(opts),
  },
  { name: 'executor', cases: EXECUTOR_CASES, run: (opts) => runExecutorBench(opts) },
  {
    name: 'isolation',
    cases: ISOLATION_CASES,
    optIn: true,
    run: (opts) => runIsolation(opts),
  },
  (await import('./protocol_latency.ts')).PROTOCOL_BENCHMARK, // one step over in-process, MCP, the gym protocol and OpenEnv (issue 35)
  (await import('./peers.ts')).PEERS_BENCHMARK, // opt-in: benchgym vs mini-swe-agent and SWE-ReX (issue 14)
  (await import('./viewer.ts')).VIEWER_BENCHMARK, // opt-in: benchgym view on a 10,000-result run (issue 19)
  (await import('./step_floor.ts')).STEP_FLOOR_BENCHMARK, // opt-in: where a step's time goes, layer by layer (issue 34)
  (await import('./throughput.ts')).THROUGHPUT_BENCHMARK, // opt-in: N concurrent episodes x 50 steps vs the peers (issue 34)
];

function usage(): string {
  const names = BENCHMARKS.map((b) => `${b.name}${b.optIn ? ' [opt-in]' : ''} (${b.cases.join(', ')})`).join('; ');
  return `usage: npm run bench -- [--quick] [--only <benchmark|case>[,...]]\nbenchmarks: ${names}`;
}

function machine() {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    /** 1-minute load average at the start: other work on the machine skews the tails. */
    loadAvg1m: Math.round(os.loadavg()[0]! * 100) / 100,
  };
}

function table(stats: LatencyStats[]): string {
  const head = ['benchmark', 'n', 'p50 ms', 'p95 ms', 'p99 ms', 'mean ms', 'min ms', 'max ms'];
  const rows = stats.map((s) => [s.name, String(s.n), ...[s.p50, s.p95, s.p99, s.mean, s.min, s.max].map((x) => x.toFixed(2))]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function memoryTable(points: MemoryPoint[]): string {
  const head = ['point', 'rss', 'heap total', 'heap used', 'external'];
  const rows = points.map((m) => [m.label, ...[m.rssMiB, m.heapTotalMiB, m.heapUsedMiB, m.externalMiB].map((x) => x.toFixed(1))]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return ['  ' + line(head), ...rows.map((r) => '  ' + line(r))].join('\n');
}

async function main(): Promise<number> {
  let values: { quick?: boolean; only?: string[]; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: { quick: { type: 'boolean' }, only: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (err) {
    console.error(`${(err as Error).message}\n${usage()}`);
    return 2;
  }
  if (values.help) {
    console.log(usage());
    return 0;
  }
  const quick = values.quick ?? false;
  const only = new Set(
    (values.only ?? [])
      .flatMap((s) => s.split(','))
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const known = new Set(BENCHMARKS.flatMap((b) => [b.name, ...b.cases]));
  const unknown = [...only].filter((o) => !known.has(o));
  if (unknown.length) {
    console.error(`unknown benchmark or case: ${unknown.join(', ')}\n${usage()}`);
    return 2;
  }

  const startedAt = new Date();
  const log = (m: string) => console.error(`[bench] ${m}`);
  const info = machine();
  log(`${info.cpus} cpus (${info.cpuModel}), ${info.memoryGiB} GiB, node ${info.node}, load ${info.loadAvg1m}${quick ? ', --quick' : ''}`);

  const results: Record<string, McpLatencyResult | DockerBenchResult | IsolationResult> = {};
  const allStats: LatencyStats[] = [];
  for (const bench of BENCHMARKS) {
    let cases: Set<string> | undefined;
    if (!only.size && bench.optIn) continue;
    if (only.size && !only.has(bench.name)) {
      cases = new Set(bench.cases.filter((c) => only.has(c)));
      if (cases.size === 0) continue;
    }
    log(`== ${bench.name}`);
    const t0 = process.hrtime.bigint();
    const result = await bench.run({ quick, cases, log });
    log(`== ${bench.name} done in ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1)} s`);
    results[bench.name] = result;
    allStats.push(...result.stats);
  }

  console.log('');
  console.log(table(allStats));
  for (const [name, r] of Object.entries(results)) {
    console.log('');
    if ('table' in r) {
      console.log(`${name}:${r.skipped ? ` skipped: ${r.skipped}` : ''}\n${r.table}`);
      continue;
    }
    if (!('context' in r)) {
      console.log(`${name}: ${r.skipped ? `skipped (${r.skipped})` : JSON.stringify(r.extra)}`);
      continue;
    }
    console.log(`${name}: isolation: ${r.context.isolation}`);
    console.log(`${name}: first start_episode (env warm-up): ${r.context.firstStartMs} ms`);
    console.log(`${name}: memory (MiB)`);
    console.log(memoryTable(r.memory));
  }

  const report = {
    date: startedAt.toISOString(),
    durationS: Math.round((Date.now() - startedAt.getTime()) / 100) / 10,
    machine: info,
    options: { quick, only: [...only] },
    benchmarks: results,
  };
  // An opt-in benchmark alone keeps its own file (isolation.json): latest.json keeps the latency run.
  if (Object.keys(results).every((name) => BENCHMARKS.find((b) => b.name === name)?.optIn)) return 0;
  await fs.mkdir(path.dirname(RESULTS_FILE), { recursive: true });
  await fs.writeFile(RESULTS_FILE, JSON.stringify(report, null, 2) + '\n');
  console.log(`\nwrote ${path.relative(process.cwd(), RESULTS_FILE)}`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exitCode = 1;
  },
);
