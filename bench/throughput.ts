/**
 * Issue 34, part 4: rollout throughput. N concurrent episodes (N = 8, 32, 64, 128), each taking
 * 50 steps (run a command, view a file, edit it, in turn), over the WebSocket gym protocol and over
 * MCP (Streamable HTTP), on the local and Docker backends; side by side with mini-swe-agent and
 * SWE-ReX at the same N (bench/throughput/peers.py, their own environment classes).
 *
 *   npm run bench -- --only throughput [--quick]
 *   BENCHGYM_THROUGHPUT_N=8,32 BENCHGYM_THROUGHPUT_SYSTEMS=gym-local,mcp-local npm run bench -- --only throughput
 *
 * The server runs in a process of its own (bench/throughput/server.ts): its CPU (utime + stime from
 * /proc, over the steps only) and peak RSS (sampled every 100 ms) are the server's, not the clients'.
 * Episodes start before the clock starts (all N at once); the steps of all N then run at once, and
 * steps/s is N x 50 over the wall time of that phase. A system that fails to start its N episodes
 * within the cap (Docker at N = 128 on a small machine) is reported as stopped there, with why.
 */
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { baseImageName } from '../src/env/images.ts';
import { dockerAvailable } from '../src/sandbox/docker/index.ts';
import { envCacheDir } from './mcp_latency.ts';
import { ensureSwerexImage, ensureVenv } from './peers.ts';
import { percentile, round, summarize, type LatencyStats } from './stats.ts';
import { GymWsClient } from './step_floor.ts';

const execFileP = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const TASK = 'roman-numerals';
const FILE = 'bench_file.py';
const CONTENT =
  Array.from({ length: 60 }, (_, i) => `line_${String(i + 1).padStart(2, '0')} = ${i + 1}  # a line of the benchmark file`).join('\n') +
  '\n# marker 0\n';
const SYSTEMS = ['gym-local', 'mcp-local', 'msa-local', 'rex-local', 'gym-docker', 'mcp-docker', 'msa-docker', 'rex-docker'] as const;
type System = (typeof SYSTEMS)[number];
const LABEL: Record<System, string> = {
  'gym-local': 'benchgym local, gym protocol (WebSocket)',
  'mcp-local': 'benchgym local, MCP (Streamable HTTP)',
  'msa-local': 'mini-swe-agent LocalEnvironment (threads)',
  'rex-local': 'SWE-ReX LocalRuntime (in-process, asyncio)',
  'gym-docker': 'benchgym Docker, gym protocol (WebSocket)',
  'mcp-docker': 'benchgym Docker, MCP (Streamable HTTP)',
  'msa-docker': 'mini-swe-agent DockerEnvironment (docker exec, threads)',
  'rex-docker': 'SWE-ReX DockerDeployment (swerex-remote per container)',
};

export interface ThroughputRow {
  system: System;
  label: string;
  n: number;
  steps: number;
  ok?: number;
  errors?: number;
  stepsPerSecond?: number;
  p50?: number;
  p99?: number;
  wallS?: number;
  /** The server's CPU seconds over the steps (benchgym), or the driver's over the whole run with its children apart (peers). */
  cpuS?: number;
  cpuChildrenS?: number;
  /** The server's peak RSS (benchgym), or the driver's (peers). */
  rssMiB?: number;
  startS?: number;
  stopped?: string;
  firstErrors?: string[];
}

export interface ThroughputResult {
  stats: LatencyStats[];
  skipped?: string;
  extra: Record<string, unknown>;
  table: string;
}

/** The server child: its URL, and /proc figures. */
class ServerProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(backend: 'local' | 'docker', maxEpisodes: number, dataDir: string): Promise<ServerProcess> {
    // BENCHGYM_THROUGHPUT_SERVER_ARGS='--cpu-prof --cpu-prof-dir=DIR' profiles the server alone.
    const extra = process.env.BENCHGYM_THROUGHPUT_SERVER_ARGS?.split(' ').filter(Boolean) ?? [];
    const child = spawn(
      process.execPath,
      [...extra, '--import', 'tsx', path.join(HERE, 'throughput', 'server.ts'), backend, String(maxEpisodes), dataDir, envCacheDir()],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the throughput server exited with ${code}`)));
    });
    return new ServerProcess(child, (JSON.parse(line) as { url: string }).url);
  }

  /** utime + stime of the server process, in seconds. */
  cpuSeconds(): number {
    const stat = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  }

  rssMiB(): number {
    const kb = /^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${this.child.pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : 0;
  }

  async stop(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin!.end();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 120_000))]);
    this.child.kill('SIGKILL');
  }
}

/** One episode as the bench drives it: setup (untimed) and one step by index. */
interface Driven {
  step(i: number): Promise<void>;
  close(): Promise<void>;
}

async function gymEpisode(url: string): Promise<Driven> {
  const c = await GymWsClient.connect(`${url.replace(/^http/, 'ws')}/ws`);
  const reset = await c.request<{ episode_id: string }>('reset', { task_id: TASK, options: { max_steps: 10_000 } });
  const id = reset.episode_id;
  await c.step(id, 'create_file', { path: FILE, content: CONTENT });
  let marker = 0;
  return {
    async step(i) {
      const kind = i % 3;
      if (kind === 0) {
        const r = await c.step(id, 'run_command', { command: `echo step ${i}` });
        if (r.observation.data.exitCode !== 0) throw new Error(`run_command exited ${String(r.observation.data.exitCode)}`);
      } else if (kind === 1) await c.step(id, 'view_file', { path: FILE });
      else await c.step(id, 'edit_file', { path: FILE, old_str: `# marker ${marker}`, new_str: `# marker ${++marker}` });
    },
    async close() {
      await c.request('close', { episode_id: id }).catch(() => {});
      c.close();
    },
  };
}

async function mcpEpisode(url: string): Promise<Driven> {
  const client = new Client({ name: 'bench-throughput', version: '0.1.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 30 * 60_000 });
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content).slice(0, 300)}`);
    return (r.structuredContent ?? {}) as Record<string, unknown>;
  };
  const id = (await call('start_episode', { task_id: TASK, max_steps: 10_000 })).episodeId as string;
  await call('create_file', { episode_id: id, path: FILE, content: CONTENT });
  let marker = 0;
  return {
    async step(i) {
      const kind = i % 3;
      if (kind === 0) {
        const r = await call('run_command', { episode_id: id, command: `echo step ${i}` });
        if (r.exitCode !== 0) throw new Error(`run_command exited ${String(r.exitCode)}`);
      } else if (kind === 1) await call('view_file', { episode_id: id, path: FILE });
      else await call('edit_file', { episode_id: id, path: FILE, old_str: `# marker ${marker}`, new_str: `# marker ${++marker}` });
    },
    async close() {
      await call('end_episode', { episode_id: id }).catch(() => {});
      await client.close().catch(() => {});
    },
  };
}

async function runBenchgym(system: System, n: number, steps: number, startCapMs: number, log: (m: string) => void): Promise<ThroughputRow> {
  const backend = system.endsWith('docker') ? 'docker' : 'local';
  const row: ThroughputRow = { system, label: LABEL[system], n, steps };
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-bench-throughput-'));
  const server = await ServerProcess.start(backend, n, dataDir);
  const episodes: Driven[] = [];
  try {
    const t0 = Date.now();
    const open = system.startsWith('gym') ? gymEpisode : mcpEpisode;
    const started = await Promise.allSettled(
      Array.from({ length: n }, () => open(server.url)).map((p) =>
        Promise.race([
          p,
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`not started within ${startCapMs / 1000} s`)), startCapMs)),
        ]),
      ),
    );
    for (const s of started) if (s.status === 'fulfilled') episodes.push(s.value);
    row.startS = round((Date.now() - t0) / 1000, 1);
    const failed = started.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed.length) {
      row.stopped = `${failed.length} of ${n} episodes did not start: ${String((failed[0]!.reason as Error)?.message ?? failed[0]!.reason).slice(0, 300)}`;
      return row;
    }
    const latencies: number[] = [];
    const errors: string[] = [];
    let peakRss = server.rssMiB();
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, server.rssMiB())), 100);
    const cpu0 = server.cpuSeconds();
    const w0 = process.hrtime.bigint();
    await Promise.all(
      episodes.map(async (ep) => {
        for (let i = 0; i < steps; i++) {
          const t = process.hrtime.bigint();
          try {
            await ep.step(i);
            latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
          } catch (err) {
            // fetch's own message is "fetch failed": its cause says what the socket did.
            const cause = (err as { cause?: { code?: string; message?: string } }).cause;
            errors.push(`${(err as Error).message}${cause ? `: ${cause.code ?? ''} ${cause.message ?? ''}` : ''}`.slice(0, 200));
          }
        }
      }),
    );
    const wallS = Number(process.hrtime.bigint() - w0) / 1e9;
    clearInterval(sampler);
    Object.assign(row, figures(latencies, wallS), {
      errors: errors.length,
      cpuS: round(server.cpuSeconds() - cpu0, 2),
      rssMiB: round(Math.max(peakRss, server.rssMiB()), 1),
      ...(errors.length ? { firstErrors: errors.slice(0, 3) } : {}),
    });
    log(
      `  ${system} N=${n}: ${row.stepsPerSecond} steps/s, p50 ${row.p50} ms, p99 ${row.p99} ms, server CPU ${row.cpuS} s, RSS ${row.rssMiB} MiB`,
    );
    return row;
  } finally {
    await Promise.all(episodes.map((e) => e.close().catch(() => {})));
    await server.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

function figures(latencies: number[], wallS: number) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    ok: sorted.length,
    stepsPerSecond: round(sorted.length / wallS, 1),
    p50: round(percentile(sorted, 50), 2),
    p99: round(percentile(sorted, 99), 2),
    wallS: round(wallS, 2),
  };
}

async function runPeer(
  system: System,
  n: number,
  steps: number,
  python: string,
  images: { base: string; rex?: string },
  timeoutMs: number,
  log: (m: string) => void,
): Promise<ThroughputRow> {
  const row: ThroughputRow = { system, label: LABEL[system], n, steps };
  const cfg = JSON.stringify({ peer: system, n, steps, image: images.base, rex_image: images.rex });
  try {
    const { stdout } = await execFileP(python, [path.join(HERE, 'throughput', 'peers.py'), cfg], {
      maxBuffer: 64 * 1024 ** 2,
      timeout: timeoutMs,
      env: { ...process.env, MSWEA_SILENT_STARTUP: '1' },
    });
    const r = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      latencies: number[];
      wallS: number;
      cpuSelfS: number;
      cpuChildrenS: number;
      maxRssMiB: number;
      errors: number;
      firstErrors: string[];
    };
    Object.assign(row, figures(r.latencies, r.wallS), {
      errors: r.errors,
      cpuS: round(r.cpuSelfS, 2),
      cpuChildrenS: round(r.cpuChildrenS, 2),
      rssMiB: round(r.maxRssMiB, 1),
      ...(r.errors ? { firstErrors: r.firstErrors } : {}),
    });
    log(`  ${system} N=${n}: ${row.stepsPerSecond} steps/s, p50 ${row.p50} ms, p99 ${row.p99} ms`);
  } catch (err) {
    row.stopped = `the peer's run failed: ${(err as Error).message.split('\n').slice(-4).join(' ').slice(0, 400)}`;
    log(`  ${system} N=${n}: ${row.stopped}`);
  }
  return row;
}

export async function runThroughput(opts: { quick: boolean; log: (m: string) => void }): Promise<ThroughputResult> {
  const log = opts.log;
  const ns = (process.env.BENCHGYM_THROUGHPUT_N ?? (opts.quick ? '8,32' : '8,32,64,128')).split(',').map(Number);
  const steps = Number(process.env.BENCHGYM_THROUGHPUT_STEPS ?? 50);
  const want = new Set((process.env.BENCHGYM_THROUGHPUT_SYSTEMS ?? SYSTEMS.join(',')).split(',') as System[]);
  const startCapMs = Number(process.env.BENCHGYM_THROUGHPUT_START_CAP_S ?? 600) * 1000;
  const skipped: string[] = [];
  const base = baseImageName('python', '3.11');
  const docker =
    (await dockerAvailable()) &&
    (await execFileP('docker', ['image', 'inspect', base]).then(
      () => true,
      () => false,
    ));
  if (!docker) skipped.push(`Docker rows: no Docker daemon or no ${base}`);
  const venv = await ensureVenv(log);
  let rexImage: string | undefined;
  if ('error' in venv) skipped.push(`peers: ${venv.error}`);
  else if (docker && want.has('rex-docker') && venv.versions['swe-rex']) {
    rexImage = await ensureSwerexImage(base, path.join(path.dirname(venv.python), 'pip'), venv.versions['swe-rex'], log).catch(
      (err: Error) => {
        skipped.push(`SWE-ReX in Docker: image build failed: ${err.message.slice(0, 200)}`);
        return undefined;
      },
    );
  }
  const rows: ThroughputRow[] = [];
  const loads: number[] = [];
  const stoppedAt = new Map<System, number>();
  for (const n of ns) {
    for (const system of SYSTEMS) {
      if (!want.has(system)) continue;
      if (system.endsWith('docker') && !docker) continue;
      if (system.startsWith('msa') || system.startsWith('rex')) {
        if ('error' in venv || !venv.versions[system.startsWith('msa') ? 'mini-swe-agent' : 'swe-rex']) continue;
        if (system === 'rex-docker' && !rexImage) continue;
      }
      // Past the N where a system stopped, it stops again: said once, not tried.
      if (stoppedAt.has(system)) {
        rows.push({ system, label: LABEL[system], n, steps, stopped: `not tried: stopped at N=${stoppedAt.get(system)}` });
        continue;
      }
      loads.push(os.loadavg()[0]!);
      log(`${system} N=${n} (load ${os.loadavg()[0]!.toFixed(2)})`);
      const row =
        system.startsWith('gym') || system.startsWith('mcp')
          ? await runBenchgym(system, n, steps, startCapMs, log).catch(
              (err: Error) => ({ system, label: LABEL[system], n, steps, stopped: err.message.slice(0, 300) }) as ThroughputRow,
            )
          : await runPeer(system, n, steps, (venv as { python: string }).python, { base, rex: rexImage }, startCapMs + 30 * 60_000, log);
      if (row.stopped) stoppedAt.set(system, n);
      rows.push(row);
    }
  }
  const sortedLoads = [...loads].sort((a, b) => a - b);
  const extra = {
    steps,
    ns,
    rows,
    loadAvg1m: {
      min: round(sortedLoads[0] ?? NaN, 2),
      median: round(sortedLoads[Math.floor(sortedLoads.length / 2)] ?? NaN, 2),
      max: round(sortedLoads.at(-1) ?? NaN, 2),
    },
    cpus: os.cpus().length,
  };
  const stats = rows
    .filter((r) => r.p50 !== undefined)
    .map((r) => ({
      ...summarize(`${r.system} N=${r.n}`, `${r.label}: one step, ${r.n} episodes at once`, [r.p50!]),
      p50: r.p50!,
      p99: r.p99!,
    }));
  const result = { stats, extra, table: renderTable(rows, extra.loadAvg1m), ...(skipped.length ? { skipped: skipped.join('; ') } : {}) };
  const file = path.join(os.tmpdir(), 'benchgym-throughput-results.json');
  await fs.writeFile(file, JSON.stringify({ date: new Date().toISOString(), ...result }, null, 2) + '\n');
  log(`throughput done; figures in ${file}`);
  return result;
}

function renderTable(rows: ThroughputRow[], load: Record<string, number>): string {
  const head = ['system', 'N', 'steps/s', 'p50 ms', 'p99 ms', 'CPU s', 'RSS MiB', 'errors', 'note'];
  const cells = rows.map((r) => [
    r.system,
    String(r.n),
    ...[r.stepsPerSecond, r.p50, r.p99, r.cpuS, r.rssMiB, r.errors].map((x) => (x === undefined ? '-' : String(x))),
    r.stopped ?? '',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => (i === 8 ? 0 : c[i]!.length))));
  const line = (c: string[]) => c.map((x, i) => (i === 0 ? x.padEnd(widths[i]!) : i === 8 ? x : x.padStart(widths[i]!))).join('  ');
  return [line(head), ...cells.map(line), '', `load (1 min) at each row's start: ${JSON.stringify(load)}`].join('\n');
}

/** Registered in bench/run.ts as an opt-in benchmark. */
export const THROUGHPUT_BENCHMARK = { name: 'throughput', cases: [] as readonly string[], optIn: true, run: runThroughput };

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runThroughput({ quick: process.argv.includes('--quick'), log: (m) => console.error(`[bench] ${m}`) }).then(
    (r) => console.log(`${r.skipped ? `skipped: ${r.skipped}\n` : ''}${r.table}`),
    (err) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exitCode = 1;
    },
  );
}
