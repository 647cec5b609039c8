/**
 * Issue 34, part 3: where a step's time goes between the client and the executor.
 *
 *   npm run bench -- --only step_floor [--quick]           ~1 min
 *   node --import tsx bench/step_floor.ts [--quick]        the same, standalone (add --cpu-prof to profile)
 *
 * One gym on the local backend (default isolation, in-sandbox executor on), served over Streamable
 * HTTP MCP, MCP over WebSocket and the WebSocket gym protocol, in this process; real SDK clients and
 * a raw `ws` client. Every figure is sampled once per round, rounds interleaved, so the load of a
 * shared machine falls on each alike. The layers, from the bottom:
 *   exec_raw         episode.sandbox.exec('true'): the executor round trip, nothing of the gym
 *   *_direct         gym.callTool in-process: + validation, budgets, serialisation, trajectory
 *   *_http / *_ws_mcp / *_gym   the same tool over each protocol: + transport and framing
 *   ping_*           each protocol's no-op: the transport floor alone
 * The gym's own share above the executor is run_command_direct - exec_raw (p50s).
 */
import os from 'node:os';
import { setMaxListeners } from 'node:events';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { startHttpServer } from '../src/server/http.ts';
import { wsGymExtension } from '../src/server/ws_gym.ts';
import { wsMcpExtension } from '../src/server/ws_mcp.ts';
import type { ToolContext } from '../src/tools/types.ts';
import type { ExecutorClient } from '../src/sandbox/executor/client.ts';
import { localGym } from '../bin/builtins.ts';
import { envCacheDir } from './mcp_latency.ts';
import { round, summarize, type LatencyStats } from './stats.ts';

export const STEP_FLOOR_CASES = ['step_floor'] as const;

export interface StepFloorResult {
  stats: LatencyStats[];
  skipped?: string;
  extra: Record<string, unknown>;
  table: string;
}

// The SDK's client transport uses the global WebSocket, which Node 20 does not have.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

const TASK = 'roman-numerals';
const FILE = 'roman.py';

/** A JSON-RPC client of the gym protocol over one WebSocket: one request at a time is all the bench needs. */
export class GymWsClient {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      const m = JSON.parse(raw.toString()) as { id?: number; result?: unknown; error?: { message: string } };
      if (typeof m.id !== 'number') return; // progress and output notifications
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.error) w?.reject(new Error(m.error.message));
      else w?.resolve(m.result);
    });
    ws.on('close', () => {
      for (const w of this.waiting.values()) w.reject(new Error('the gym WebSocket closed'));
      this.waiting.clear();
    });
  }

  static async connect(url: string): Promise<GymWsClient> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new GymWsClient(ws);
  }

  request<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) }));
    });
  }

  /** One step; a tool failure (an observation with an error) is thrown, as the bench counts only working steps. */
  async step(
    episodeId: string,
    tool: string,
    args: Record<string, unknown>,
    key?: string,
  ): Promise<{ observation: { data: Record<string, unknown> } }> {
    const r = await this.request<{ observation: { data: Record<string, unknown> }; info: { error?: { message: string } } }>('step', {
      episode_id: episodeId,
      ...(key ? { episode_key: key } : {}),
      tool,
      args,
    });
    if (r.info.error) throw new Error(`${tool}: ${r.info.error.message}`);
    return r;
  }

  close(): void {
    this.ws.close();
  }
}

const keepAlive = new HttpAgent({ keepAlive: true, maxSockets: 1 });
let rawId = 1_000_000;

/** One JSON-RPC ping POSTed as the SDK would (same session, same headers), its whole answer read. */
function rawPing(url: string, sessionId: string, protocolVersion: string | undefined): Promise<void> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: rawId++, method: 'ping' });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': sessionId,
    'content-length': String(Buffer.byteLength(body)),
  };
  if (protocolVersion) headers['mcp-protocol-version'] = protocolVersion;
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', agent: keepAlive, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () =>
        res.statusCode === 200 && text.includes('"result"') ? resolve() : reject(new Error(`raw ping: ${res.statusCode} ${text}`)),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

function hr(): bigint {
  return process.hrtime.bigint();
}

export async function runStepFloor(opts: { quick: boolean; log: (m: string) => void }): Promise<StepFloorResult> {
  // Every tool call is a step of one episode (start_episode's max_steps caps at 10,000): 1,000 rounds of the 7 figures that step, + the warm-up.
  const rounds = opts.quick ? 300 : 1000;
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-bench-stepfloor-'));
  const gym = localGym({ dataDir, cacheDir: envCacheDir(), defaults: { maxEpisodes: 8 } });
  const server = await startHttpServer(gym, { host: '127.0.0.1', port: 0, extensions: [wsMcpExtension(), wsGymExtension()] });
  const wsBase = server.url.replace(/^http/, 'ws');
  // The SDK's Streamable HTTP client hands one AbortSignal to every fetch (undici drops each
  // listener only when its request is collected): thousands of calls warn. Not the server's.
  setMaxListeners(0);
  const http = new Client({ name: 'bench-step-floor', version: '0.1.0' });
  const wsMcp = new Client({ name: 'bench-step-floor-ws', version: '0.1.0' });
  let gymWs: GymWsClient | undefined;
  const samples = new Map<string, number[]>();
  const descriptions = new Map<string, string>();
  const loads: number[] = [];
  try {
    const httpTransport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`));
    await http.connect(httpTransport);
    await wsMcp.connect(new WebSocketClientTransport(new URL(`${wsBase}/mcp/ws`)));
    gymWs = await GymWsClient.connect(`${wsBase}/ws`);
    opts.log('starting an episode (builds the env on first use)');
    const started = await http.callTool({ name: 'start_episode', arguments: { task_id: TASK, max_steps: 10_000 } }, undefined, {
      timeout: 30 * 60_000,
    });
    const id = (started.structuredContent as { episodeId: string }).episodeId;
    const episode = gym.episode(id);
    const key = episode.key;
    const ctx: ToolContext = { signal: new AbortController().signal, progress() {} };
    const local = episode.sandbox as unknown as { startExecutor?: () => Promise<{ client: ExecutorClient }> };
    if (!local.startExecutor) throw new Error(`the step floor needs the local sandbox with its executor (got ${episode.sandbox.backend})`);
    const executor = (await local.startExecutor()).client;
    const checkCall = (r: Awaited<ReturnType<Client['callTool']>>) => {
      if (r.isError) throw new Error(JSON.stringify(r.content).slice(0, 300));
    };
    const figures: [string, string, () => Promise<unknown>][] = [
      ['ping_http', 'MCP ping over Streamable HTTP (/mcp)', () => http.ping()],
      [
        'ping_http_raw',
        "MCP ping over Streamable HTTP from a bare node:http keep-alive client (the SDK client's own share is ping_http minus this)",
        () => rawPing(`${server.url}/mcp`, httpTransport.sessionId!, httpTransport.protocolVersion),
      ],
      ['ping_ws_mcp', 'MCP ping over MCP-over-WebSocket (/mcp/ws)', () => wsMcp.ping()],
      [
        'ping_gym',
        'gym protocol ping over /ws', // A server from before `ping` answers METHOD_NOT_FOUND: the same round trip, for the before figure.
        () =>
          gymWs!.request('ping').catch((e: Error) => {
            if (!/Method not found/.test(e.message)) throw e;
          }),
      ],
      [
        'executor_exec',
        "the executor client's exec of bash -c true: the round trip with none of the sandbox's per-command handling",
        () => executor.exec(['/bin/bash', '-c', 'true'], { cwd: '.', clearEnv: true, env: { PATH: '/usr/bin:/bin' }, stdin: '' }),
      ],
      [
        'exec_raw',
        "episode.sandbox.exec('true'): + the local sandbox's per-command handling (cgroup, OOM count, sweep, disk watch)",
        () => episode.sandbox.exec('true'),
      ],
      [
        'run_command_direct',
        "gym.callTool run_command 'true' in-process (no transport)",
        () => gym.callTool('run_command', { command: 'true' }, ctx, id),
      ],
      [
        'run_command_http',
        "run_command 'true' over Streamable HTTP MCP",
        async () => checkCall(await http.callTool({ name: 'run_command', arguments: { episode_id: id, command: 'true' } })),
      ],
      [
        'run_command_ws_mcp',
        "run_command 'true' over MCP-over-WebSocket",
        async () => checkCall(await wsMcp.callTool({ name: 'run_command', arguments: { episode_id: id, command: 'true' } })),
      ],
      ['run_command_gym', "step run_command 'true' over the gym protocol", () => gymWs!.step(id, 'run_command', { command: 'true' }, key)],
      ['read_raw', `episode.sandbox.readFile('${FILE}'): the executor round trip alone`, () => episode.sandbox.readFile(FILE)],
      ['view_file_direct', `gym.callTool view_file ${FILE} in-process`, () => gym.callTool('view_file', { path: FILE }, ctx, id)],
      [
        'view_file_http',
        `view_file ${FILE} over Streamable HTTP MCP`,
        async () => checkCall(await http.callTool({ name: 'view_file', arguments: { episode_id: id, path: FILE } })),
      ],
      ['view_file_gym', `step view_file ${FILE} over the gym protocol`, () => gymWs!.step(id, 'view_file', { path: FILE }, key)],
    ];
    // BENCHGYM_STEP_FLOOR_FIGURES=ping_http,view_file_http narrows the loop (to profile one path with --cpu-prof).
    const only = process.env.BENCHGYM_STEP_FLOOR_FIGURES?.split(',');
    if (only) figures.splice(0, figures.length, ...figures.filter(([name]) => only.includes(name)));
    for (const [name, description] of figures) {
      samples.set(name, []);
      descriptions.set(name, description);
    }
    opts.log(`${rounds} rounds of ${figures.length} figures, interleaved (load ${os.loadavg()[0]!.toFixed(2)})`);
    for (let i = 0; i < 50; i++) for (const [, , fn] of figures) await fn(); // warm-up: JIT, sockets
    for (let i = 0; i < rounds; i++) {
      for (const [name, , fn] of figures) {
        const t = hr();
        await fn();
        samples.get(name)!.push(Number(hr() - t) / 1e6);
      }
      if (i % 100 === 0) loads.push(os.loadavg()[0]!);
    }
    await http.callTool({ name: 'end_episode', arguments: { episode_id: id } });
  } finally {
    gymWs?.close();
    await http.close().catch(() => {});
    await wsMcp.close().catch(() => {});
    await server.close();
    await gym.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
  const stats = [...samples].map(([name, ms]) => summarize(name, descriptions.get(name)!, ms));
  const p50 = (name: string) => stats.find((s) => s.name === name)?.p50 ?? NaN;
  const extra = {
    rounds,
    isolation: 'local backend, default isolation, executor on',
    loadAvg1m: {
      min: round(Math.min(...loads), 2),
      median: round([...loads].sort((a, b) => a - b)[Math.floor(loads.length / 2)]!, 2),
      max: round(Math.max(...loads), 2),
    },
    shares: {
      sandboxAboveExecutorClient: round(p50('exec_raw') - p50('executor_exec')),
      gymAboveExecutor: round(p50('run_command_direct') - p50('exec_raw')),
      viewFileGymAboveExecutor: round(p50('view_file_direct') - p50('read_raw')),
      httpAboveGym: round(p50('run_command_http') - p50('run_command_direct')),
      wsMcpAboveGym: round(p50('run_command_ws_mcp') - p50('run_command_direct')),
      gymProtocolAboveGym: round(p50('run_command_gym') - p50('run_command_direct')),
    },
  };
  return { stats, extra, table: renderTable(stats, extra) };
}

function renderTable(stats: LatencyStats[], extra: { shares: Record<string, number>; loadAvg1m: Record<string, number> }): string {
  const head = ['figure', 'n', 'min ms', 'p50 ms', 'p99 ms'];
  const rows = stats.map((s) => [s.name, String(s.n), s.min.toFixed(3), s.p50.toFixed(3), s.p99.toFixed(3)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const shares = Object.entries(extra.shares).map(([k, v]) => `  ${k}: ${v.toFixed(3)} ms (p50 difference)`);
  return [
    line(head),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map(line),
    '',
    `load (1 min): ${JSON.stringify(extra.loadAvg1m)}`,
    ...shares,
  ].join('\n');
}

/** Registered in bench/run.ts as an opt-in benchmark. */
export const STEP_FLOOR_BENCHMARK = {
  name: 'step_floor',
  cases: [] as readonly string[],
  optIn: true,
  run: (o: { quick: boolean; log: (m: string) => void }) => runStepFloor(o),
};

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runStepFloor({ quick: process.argv.includes('--quick'), log: (m) => console.error(`[bench] ${m}`) }).then(
    (r) => {
      console.log(r.table);
      const out = process.env.BENCHGYM_BENCH_OUT;
      if (out) return fs.writeFile(out, JSON.stringify({ date: new Date().toISOString(), ...r }, null, 2) + '\n');
    },
    (err) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exitCode = 1;
    },
  );
}
