/**
 * MCP latency benchmark: a real Gym and the Streamable HTTP server (in this process, port 0),
 * driven by a real SDK Client over loopback HTTP, as an agent would drive it.
 *
 * Cases (each can be picked with `--only <case>`):
 *   ping                MCP `ping` round trip: the HTTP + JSON-RPC floor, no tool runs
 *   view_file_direct    gym.callTool('view_file') in-process: the tool without MCP/HTTP
 *   view_file           tools/call view_file {episode_id, path:'roman.py'} on /mcp
 *   view_file_scoped    tools/call view_file {path:'roman.py'} on the episode's own /episodes/<id>/<key>/mcp
 *   run_command_direct  gym.callTool('run_command') in-process: the sandboxed exec without MCP/HTTP
 *   run_command         tools/call run_command {command:'true'}: one sandboxed exec round trip
 *   start_episode       tools/call start_episode (env cached), then end_episode (timed apart)
 *   run_command_local   run_command 'true' over MCP and in-process on the local backend, for
 *                       bubblewrap and none, each with the in-sandbox executor; skipped when
 *                       BENCHGYM_BENCH_BACKENDS leaves out local
 */
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Gym } from '../src/episode/gym.ts';
import { startHttpServer, type RunningServer } from '../src/server/http.ts';
import type { ToolContext } from '../src/tools/types.ts';
import { mib, round, summarize, timed, type LatencyStats } from './stats.ts';
import { builtinRegistry, localGym } from '../bin/builtins.ts';
import { bubblewrapAvailable, LocalSandboxFactory } from '../src/sandbox/local/index.ts';

export const MCP_LATENCY_CASES = [
  'ping',
  'view_file_direct',
  'view_file',
  'view_file_scoped',
  'run_command_direct',
  'run_command',
  'start_episode',
  'run_command_local',
] as const;
export type McpLatencyCase = (typeof MCP_LATENCY_CASES)[number];

const TASK_ID = 'roman-numerals';
const FILE = 'roman.py';
const WARMUP_CALLS = 20;
/** Enough step budget for every call the benchmark makes on one episode. */
const MAX_STEPS = 10_000;

export interface McpLatencyOptions {
  quick: boolean;
  /** Which cases to run (all when absent). */
  cases?: ReadonlySet<McpLatencyCase>;
  log?: (message: string) => void;
}

export interface MemoryPoint {
  label: string;
  rssMiB: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  /** Memory outside the JS heap held by JS objects (Buffers included). */
  externalMiB: number;
}

export interface McpLatencyResult {
  stats: LatencyStats[];
  memory: MemoryPoint[];
  context: {
    task: string;
    isolation: string;
    sandboxBackend: string;
    envCacheDir: string;
    /** The first start_episode, which builds the env when the cache is cold. */
    firstStartMs: number;
    iterations: Record<string, number>;
    note: string;
  };
}

export function envCacheDir(): string {
  return process.env.BENCHGYM_BENCH_CACHE ?? path.join(os.tmpdir(), 'benchgym-bench-cache');
}

type CallResult = Awaited<ReturnType<Client['callTool']>>;

function checkOk(tool: string, result: CallResult): CallResult {
  if (result.isError) {
    const first = (result.content as { type: string; text?: string }[])[0];
    throw new Error(`${tool} failed during the benchmark: ${first?.text ?? JSON.stringify(result)}`);
  }
  return result;
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'benchgym-bench', version: '0.1.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

function memoryPoint(label: string): MemoryPoint {
  const m = process.memoryUsage();
  return { label, rssMiB: mib(m.rss), heapUsedMiB: mib(m.heapUsed), heapTotalMiB: mib(m.heapTotal), externalMiB: mib(m.external) };
}

export async function runMcpLatency(opts: McpLatencyOptions): Promise<McpLatencyResult> {
  const log = opts.log ?? (() => {});
  const want = (c: McpLatencyCase) => !opts.cases || opts.cases.has(c);
  const n = {
    ping: opts.quick ? 100 : 500,
    view_file_direct: opts.quick ? 100 : 500,
    view_file: opts.quick ? 100 : 500,
    view_file_scoped: opts.quick ? 100 : 500,
    run_command_direct: opts.quick ? 30 : 100,
    run_command: opts.quick ? 30 : 100,
    start_episode: opts.quick ? 10 : 30,
    run_command_local: opts.quick ? 30 : 100,
  } satisfies Record<McpLatencyCase, number>;

  const memory: MemoryPoint[] = [memoryPoint('before gym + server')];
  const stats: LatencyStats[] = [];
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-bench-'));
  const cacheDir = envCacheDir();
  const gym = localGym({ dataDir, cacheDir });
  let server: RunningServer | undefined;
  const clients: Client[] = [];
  try {
    server = await startHttpServer(gym, { host: '127.0.0.1', port: 0 });
    const client = await connect(`${server.url}/mcp`);
    clients.push(client);

    const startEpisode = async (): Promise<{ id: string; mcpPath: string; isolation: string; backend: string }> => {
      const r = checkOk(
        'start_episode',
        await client.callTool({ name: 'start_episode', arguments: { task_id: TASK_ID, max_steps: MAX_STEPS } }, undefined, {
          timeout: 30 * 60_000,
        }),
      );
      const data = r.structuredContent as { episodeId: string; mcpPath: string; sandbox: { isolation: string; backend: string } };
      return { id: data.episodeId, mcpPath: data.mcpPath, isolation: data.sandbox.isolation, backend: data.sandbox.backend };
    };
    const endEpisode = async (id: string) => {
      checkOk('end_episode', await client.callTool({ name: 'end_episode', arguments: { episode_id: id } }));
    };

    // Warm the env cache (a cold cache builds a venv with pytest here, which can take a minute).
    log(`warming the env cache (${cacheDir}) with one start_episode of ${TASK_ID}`);
    const first = await timed(startEpisode);
    await endEpisode(first.value.id);
    log(`  first start_episode: ${round(first.ms, 1)} ms`);
    memory.push(memoryPoint('server up, env warm'));

    const ep = await startEpisode();
    const ctx: ToolContext = { signal: new AbortController().signal, progress() {} };

    const measure = async (
      name: McpLatencyCase,
      description: string,
      count: number,
      call: () => Promise<unknown>,
      warmup = WARMUP_CALLS,
    ) => {
      log(`${name}: ${warmup} warm-up + ${count} timed calls`);
      for (let i = 0; i < warmup; i++) await call();
      const samples: number[] = [];
      for (let i = 0; i < count; i++) samples.push((await timed(call)).ms);
      stats.push(summarize(name, description, samples));
      memory.push(memoryPoint(`after ${name}`));
    };

    if (want('ping')) {
      await measure('ping', 'MCP ping round trip on /mcp (HTTP + JSON-RPC floor)', n.ping, () => client.ping());
    }
    if (want('view_file_direct')) {
      await measure('view_file_direct', `gym.callTool view_file ${FILE} in-process (no MCP/HTTP)`, n.view_file_direct, () =>
        gym.callTool('view_file', { path: FILE }, ctx, ep.id),
      );
    }
    if (want('view_file')) {
      await measure('view_file', `tools/call view_file {episode_id, path:'${FILE}'} on /mcp`, n.view_file, async () =>
        checkOk('view_file', await client.callTool({ name: 'view_file', arguments: { episode_id: ep.id, path: FILE } })),
      );
    }
    if (want('view_file_scoped')) {
      const scoped = await connect(`${server.url}${ep.mcpPath}`);
      clients.push(scoped);
      await measure('view_file_scoped', `tools/call view_file {path:'${FILE}'} on /episodes/<id>/<key>/mcp`, n.view_file_scoped, async () =>
        checkOk('view_file', await scoped.callTool({ name: 'view_file', arguments: { path: FILE } })),
      );
    }
    if (want('run_command_direct')) {
      await measure(
        'run_command_direct',
        "gym.callTool run_command {command:'true'} in-process (no MCP/HTTP)",
        n.run_command_direct,
        async () => {
          const r = await gym.callTool('run_command', { command: 'true' }, ctx, ep.id);
          if ((r.data as { exitCode?: number | null }).exitCode !== 0)
            throw new Error(`run_command 'true' failed: ${JSON.stringify(r.data)}`);
        },
        5,
      );
    }
    if (want('run_command')) {
      await measure(
        'run_command',
        "tools/call run_command {command:'true'} on /mcp (sandboxed exec)",
        n.run_command,
        async () => {
          const r = checkOk(
            'run_command',
            await client.callTool({ name: 'run_command', arguments: { episode_id: ep.id, command: 'true' } }),
          );
          const exit = (r.structuredContent as { exitCode?: number | null } | undefined)?.exitCode;
          if (exit !== 0) throw new Error(`run_command 'true' failed: ${JSON.stringify(r.structuredContent)}`);
        },
        5,
      );
    }
    await endEpisode(ep.id);

    if (want('start_episode')) {
      log(`start_episode: ${n.start_episode} episodes (env cached), each ended with end_episode`);
      const starts: number[] = [];
      const ends: number[] = [];
      for (let i = 0; i < n.start_episode; i++) {
        const s = await timed(startEpisode);
        starts.push(s.ms);
        ends.push((await timed(() => endEpisode(s.value.id))).ms);
      }
      stats.push(summarize('start_episode', `tools/call start_episode ${TASK_ID} on /mcp, env cached`, starts));
      stats.push(summarize('end_episode', 'tools/call end_episode on /mcp (diff, remove sandbox)', ends));
      memory.push(memoryPoint('after start_episode'));
    }

    const backends = (process.env.BENCHGYM_BENCH_BACKENDS ?? 'local,docker').split(',').map((b) => b.trim());
    if (want('run_command_local') && backends.includes('local')) {
      stats.push(...(await localRunCommandVariants(dataDir, cacheDir, n.run_command_local, log)));
      memory.push(memoryPoint('after run_command_local'));
    }

    return {
      stats,
      memory,
      context: {
        task: `examples/${TASK_ID}`,
        isolation: ep.isolation,
        sandboxBackend: ep.backend,
        envCacheDir: cacheDir,
        firstStartMs: round(first.ms, 1),
        iterations: Object.fromEntries(Object.entries(n).filter(([k]) => want(k as McpLatencyCase))),
        note: 'Server and client share this process: RSS covers both.',
      },
    };
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    await server?.close();
    await gym.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * run_command 'true' on the local backend for each isolation mode (one executor per sandbox),
 * over MCP and in-process, interleaved call by call so that the machine's load falls on every variant alike.
 */
async function localRunCommandVariants(
  dataDir: string,
  cacheDir: string,
  count: number,
  log: (m: string) => void,
): Promise<LatencyStats[]> {
  const modes = (await bubblewrapAvailable()) ? (['bwrap', 'none'] as const) : (['none'] as const);
  const variants: { label: string; gym: Gym; server: RunningServer; client: Client; episode: string }[] = [];
  const ctx: ToolContext = { signal: new AbortController().signal, progress() {} };
  try {
    for (const isolation of modes) {
      for (const executor of ['on'] as const) {
        const label = `${isolation}, executor ${executor}`;
        const variantDir = path.join(dataDir, `local-${isolation}-${executor}`);
        const sandboxes = new LocalSandboxFactory({
          baseDir: path.join(variantDir, 'sandboxes'),
          isolation,
          cacheDir,
          privatePaths: [variantDir],
        });
        const gym = new Gym({ registry: builtinRegistry(), dataDir: variantDir, cacheDir, sandboxes });
        const server = await startHttpServer(gym, { host: '127.0.0.1', port: 0 });
        const client = await connect(`${server.url}/mcp`);
        const r = checkOk(
          'start_episode',
          await client.callTool({ name: 'start_episode', arguments: { task_id: TASK_ID, max_steps: MAX_STEPS } }, undefined, {
            timeout: 30 * 60_000,
          }),
        );
        const data = r.structuredContent as { episodeId: string; sandbox: { isolation: string } };
        log(`run_command_local ${label}: ${data.sandbox.isolation}`);
        variants.push({ label, gym, server, client, episode: data.episodeId });
      }
    }
    const overMcp = async (v: (typeof variants)[number]) => {
      const r = checkOk(
        'run_command',
        await v.client.callTool({ name: 'run_command', arguments: { episode_id: v.episode, command: 'true' } }),
      );
      if ((r.structuredContent as { exitCode?: number | null } | undefined)?.exitCode !== 0)
        throw new Error(`run_command 'true' failed (${v.label}): ${JSON.stringify(r.structuredContent)}`);
    };
    const direct = async (v: (typeof variants)[number]) => {
      const r = await v.gym.callTool('run_command', { command: 'true' }, ctx, v.episode);
      if ((r.data as { exitCode?: number | null }).exitCode !== 0)
        throw new Error(`run_command 'true' failed (${v.label}): ${JSON.stringify(r.data)}`);
    };
    log(`run_command_local: ${variants.length} variants, 5 warm-up + ${count} timed calls each, over MCP and in-process, interleaved`);
    for (const v of variants) for (let i = 0; i < 5; i++) await overMcp(v);
    const mcp = variants.map(() => [] as number[]);
    const inProcess = variants.map(() => [] as number[]);
    for (let i = 0; i < count; i++) {
      for (const [k, v] of variants.entries()) {
        mcp[k]!.push((await timed(() => overMcp(v))).ms);
        inProcess[k]!.push((await timed(() => direct(v))).ms);
      }
    }
    return variants.flatMap((v, k) => [
      summarize(`run_command_local [${v.label}]`, `tools/call run_command {command:'true'} on /mcp, local ${v.label}`, mcp[k]!),
      summarize(
        `run_command_local_direct [${v.label}]`,
        `gym.callTool run_command {command:'true'} in-process, local ${v.label}`,
        inProcess[k]!,
      ),
    ]);
  } finally {
    for (const v of variants) {
      await v.client.close().catch(() => {});
      await v.server.close();
      await v.gym.close();
    }
  }
}
