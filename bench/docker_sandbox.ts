/**
 * Docker backend figures: start_episode cold (no pool) and warm (pool), the exec round
 * trip, and 16 concurrent episodes each running the visible tests. In-process (Gym.callTool),
 * so the numbers are the sandbox's, not HTTP's (mcp_latency measures that layer).
 */
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { Gym } from '../src/episode/gym.ts';
import { DockerSandboxFactory } from '../src/sandbox/docker/index.ts';
import { dockerAvailable } from '../src/sandbox/docker/index.ts';
import { summarize, type LatencyStats } from './stats.ts';
import { builtinRegistry, localGym } from '../bin/builtins.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer } from '../src/server/http.ts';

export const DOCKER_CASES = [
  'docker_start_cold',
  'docker_start_warm',
  'docker_exec',
  'local_exec',
  'docker_concurrent16',
  'docker_executor',
] as const;
export type DockerCase = (typeof DOCKER_CASES)[number];

export interface DockerBenchResult {
  stats: LatencyStats[];
  skipped?: string;
  extra: Record<string, unknown>;
}

const TASK = 'roman-numerals';
const noop = { signal: new AbortController().signal, progress: () => {} };

function ms(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function episode(gym: Gym): Promise<{ id: string; ms: number }> {
  const t = process.hrtime.bigint();
  const r = await gym.callTool('start_episode', { task_id: TASK }, noop);
  return { id: (r.data as { episodeId: string }).episodeId, ms: ms(t) };
}

/** Round trips of `run_command 'true'` in one episode, in milliseconds. */
async function timeTrue(gym: Gym, episodeId: string, n: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await gym.callTool('run_command', { command: 'true' }, noop, episodeId);
    samples.push(ms(t));
  }
  return samples;
}

/** A 60-line Python file, the size issue 14's file figures use. */
const FILE_60_LINES =
  Array.from({ length: 60 }, (_, i) => `line_${String(i + 1).padStart(2, '0')} = ${i + 1}  # a line of the benchmark file`).join('\n') +
  '\n';

type McpCall = (name: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** The MCP tools over loopback HTTP with the SDK client, as an agent drives them. */
async function mcpClient(url: string): Promise<{ call: McpCall; close: () => Promise<void> }> {
  const client = new Client({ name: 'benchgym-bench', version: '0.1.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const call: McpCall = async (name, args) => {
    const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 30 * 60_000 });
    if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content).slice(0, 500)}`);
    return (r.structuredContent ?? {}) as Record<string, unknown>;
  };
  return { call, close: () => client.close() };
}

/**
 * Issue 14's Docker figures, over MCP, with the in-sandbox executor: run_command true,
 * edit_file + view_file of a 60-line file, warm start (pool) until the first command, cold start.
 * (The figures of `executor: 'off'`, one docker exec per operation, gone with it, stay in the docs' history.)
 */
async function executorSideBySide(opts: {
  quick: boolean;
  dataDir: string;
  cacheDir: string;
  serverId: string;
  log: (m: string) => void;
}): Promise<{ stats: LatencyStats[]; extra: Record<string, unknown> }> {
  const n = opts.quick ? 10 : 40;
  const starts = opts.quick ? 4 : 12;
  const stats: LatencyStats[] = [];
  const p50: Record<string, Record<string, number>> = {};
  for (const mode of ['executor'] as const) {
    const label = mode;
    const what = 'with the in-sandbox executor';
    const factory = new DockerSandboxFactory({ serverId: `${opts.serverId}-${mode}`, poolSize: 2 });
    const gym = new Gym({ registry: builtinRegistry(), dataDir: opts.dataDir, cacheDir: opts.cacheDir, sandboxes: factory });
    const server = await startHttpServer(gym, { host: '127.0.0.1', port: 0 });
    const mcp = await mcpClient(`${server.url}/mcp`);
    const start = async () => (await mcp.call('start_episode', { task_id: TASK })).episodeId as string;
    const end = (id: string) => mcp.call('end_episode', { episode_id: id });
    const sample = async (count: number, fn: () => Promise<unknown>) => {
      const out: number[] = [];
      for (let i = 0; i < count; i++) {
        const t = process.hrtime.bigint();
        await fn();
        out.push(ms(t));
      }
      return out;
    };
    const add = (name: string, description: string, samples: number[]) => {
      const s = summarize(`${name}_${label}`, `${description}, ${what}`, samples);
      stats.push(s);
      (p50[name] ??= {})[label] = s.p50;
    };
    try {
      const first = await start();
      const image = gym.episode(first).env.image!;
      await end(first);
      opts.log(`docker_executor (${label}): run_command, edit_file + view_file`);
      const id = await start();
      await mcp.call('run_command', { episode_id: id, command: 'true' });
      add(
        'docker_mcp_run_true',
        "run_command 'true' over MCP",
        await sample(n, () => mcp.call('run_command', { episode_id: id, command: 'true' })),
      );
      await mcp.call('create_file', { episode_id: id, path: 'bench_file.py', content: FILE_60_LINES });
      let k = 0;
      add(
        'docker_mcp_edit_view',
        'edit_file + view_file of a 60-line file over MCP',
        await sample(Math.min(n, 60), async () => {
          // A different line each time: every old_str is found once.
          const line = `line_${String(++k).padStart(2, '0')} = ${k}  #`;
          await mcp.call('edit_file', { episode_id: id, path: 'bench_file.py', old_str: line, new_str: line.replace('  #', ' #') });
          await mcp.call('view_file', { episode_id: id, path: 'bench_file.py' });
        }),
      );
      await end(id);
      opts.log(`docker_executor (${label}): warm start until the first command`);
      const warm: number[] = [];
      for (let i = 0; i < starts; i++) {
        await factory.warm(image); // refill outside the timed region, as an idle server would
        const t = process.hrtime.bigint();
        const e = await start();
        await mcp.call('run_command', { episode_id: e, command: 'true' });
        warm.push(ms(t));
        await end(e);
      }
      add('docker_mcp_warm_first_command', 'start_episode from a warm pool of 2 until its first run_command returns, over MCP', warm);
      await factory.close(); // the pool goes: what follows is cold
      opts.log(`docker_executor (${label}): cold start`);
      const coldFactory = new DockerSandboxFactory({ serverId: `${opts.serverId}-${mode}-cold`, poolSize: 0 });
      const coldGym = new Gym({ registry: builtinRegistry(), dataDir: opts.dataDir, cacheDir: opts.cacheDir, sandboxes: coldFactory });
      const coldServer = await startHttpServer(coldGym, { host: '127.0.0.1', port: 0 });
      const coldMcp = await mcpClient(`${coldServer.url}/mcp`);
      try {
        await coldMcp.call('end_episode', { episode_id: (await coldMcp.call('start_episode', { task_id: TASK })).episodeId });
        const cold: number[] = [];
        for (let i = 0; i < starts; i++) {
          const t = process.hrtime.bigint();
          const e = (await coldMcp.call('start_episode', { task_id: TASK })).episodeId as string;
          cold.push(ms(t));
          await coldMcp.call('end_episode', { episode_id: e });
        }
        add('docker_mcp_start_cold', 'start_episode, no pool, over MCP', cold);
      } finally {
        await coldMcp.close();
        await coldServer.close();
        await coldGym.close();
      }
    } finally {
      await mcp.close();
      await server.close();
      await gym.close();
    }
  }
  return { stats, extra: { executorP50: p50 } };
}

export async function runDockerBench(opts: {
  quick: boolean;
  cases?: ReadonlySet<string>;
  log: (m: string) => void;
}): Promise<DockerBenchResult> {
  const want = (c: DockerCase) => !opts.cases || opts.cases.size === 0 || opts.cases.has(c) || opts.cases.has('docker_sandbox');
  if (!(await dockerAvailable())) return { stats: [], skipped: 'no Docker daemon', extra: {} };
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-bench-docker-'));
  const cacheDir = process.env.BENCHGYM_BENCH_CACHE ?? path.join(os.tmpdir(), 'benchgym-bench-cache');
  const n = opts.quick ? 5 : 20;
  const stats: LatencyStats[] = [];
  const extra: Record<string, unknown> = {};
  const serverId = `bench-${randomBytes(4).toString('hex')}`;
  try {
    if (want('docker_start_cold') || want('docker_exec')) {
      const cold = new DockerSandboxFactory({ serverId, poolSize: 0 });
      const gym = new Gym({ registry: builtinRegistry(), dataDir, cacheDir, sandboxes: cold });
      try {
        await gym.callTool('end_episode', {}, noop, (await episode(gym)).id); // builds / checks the images once
        if (want('docker_start_cold')) {
          const samples: number[] = [];
          for (let i = 0; i < n; i++) {
            const e = await episode(gym);
            samples.push(e.ms);
            await gym.callTool('end_episode', {}, noop, e.id);
          }
          stats.push(
            summarize(
              'docker_start_cold',
              'start_episode, Docker, no pool: create volume + container, start, copy start state, baseline commit',
              samples,
            ),
          );
        }
        if (want('docker_exec')) {
          const e = await episode(gym);
          const samples = await timeTrue(gym, e.id, opts.quick ? 30 : 100);
          stats.push(
            summarize('docker_exec', "run_command 'true' in a Docker sandbox (exec create/start/inspect, timeout wrapper)", samples),
          );
        }
      } finally {
        await gym.close();
      }
    }
    if (want('docker_start_warm')) {
      const warm = new DockerSandboxFactory({ serverId, poolSize: 2 });
      const gym = new Gym({ registry: builtinRegistry(), dataDir, cacheDir, sandboxes: warm });
      try {
        const first = await episode(gym);
        const image = gym.episode(first.id).env.image!;
        await gym.callTool('end_episode', {}, noop, first.id);
        const samples: number[] = [];
        for (let i = 0; i < n; i++) {
          await warm.warm(image); // refill outside the timed region, as an idle server would
          const e = await episode(gym);
          samples.push(e.ms);
          await gym.callTool('end_episode', {}, noop, e.id);
        }
        stats.push(
          summarize('docker_start_warm', 'start_episode, Docker, warm pool of 2: take a started container, baseline commit', samples),
        );
      } finally {
        await gym.close();
      }
    }
    if (want('local_exec')) {
      const gym = localGym({ dataDir, cacheDir });
      try {
        const e = await episode(gym);
        const samples = await timeTrue(gym, e.id, opts.quick ? 30 : 100);
        stats.push(
          summarize('local_exec', `run_command 'true' in a local sandbox (${gym.episode(e.id).sandbox.isolation.split(':')[0]})`, samples),
        );
      } finally {
        await gym.close();
      }
    }
    if (want('docker_executor')) {
      const side = await executorSideBySide({ quick: opts.quick, dataDir, cacheDir, serverId, log: opts.log });
      stats.push(...side.stats);
      Object.assign(extra, side.extra);
    }
    if (want('docker_concurrent16')) {
      const factory = new DockerSandboxFactory({ serverId, poolSize: 0, maxContainers: 40 });
      const gym = new Gym({ registry: builtinRegistry(), dataDir, cacheDir, sandboxes: factory });
      try {
        await gym.callTool('end_episode', {}, noop, (await episode(gym)).id);
        const count = opts.quick ? 8 : 16;
        const wall = process.hrtime.bigint();
        const starts: number[] = [];
        const runs: number[] = [];
        await Promise.all(
          Array.from({ length: count }, async () => {
            const e = await episode(gym);
            starts.push(e.ms);
            const t = process.hrtime.bigint();
            const r = await gym.callTool('run_tests', {}, noop, e.id);
            runs.push(ms(t));
            if (!(r.data as { counts: { failed: number } }).counts.failed) throw new Error('the start state should fail its visible tests');
            await gym.callTool('end_episode', {}, noop, e.id);
          }),
        );
        extra.concurrentWallMs = Math.round(ms(wall));
        extra.concurrentEpisodes = count;
        stats.push(summarize(`docker_concurrent${count}_start`, `${count} concurrent start_episode calls (Docker, no pool)`, starts));
        stats.push(
          summarize(
            `docker_concurrent${count}_run_tests`,
            `${count} concurrent run_tests (pytest, 11 tests) in separate containers, 1 CPU each, on ${os.cpus().length} cores`,
            runs,
          ),
        );
      } finally {
        await gym.close();
      }
    }
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
  opts.log(`docker_sandbox done`);
  return { stats, extra };
}
