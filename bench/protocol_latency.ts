/**
 * `npm run bench -- --only protocol_latency`: the latency of one step of an episode over each
 * protocol benchgym speaks, side by side: in-process (`Gym.callEpisodeTool`), MCP over Streamable
 * HTTP (the episode's own endpoint, the SDK's Client), the gym protocol (`/ws`, JSON-RPC `step`),
 * OpenEnv's WebSocket (`/openenv/ws`, the messages openenv-core's EnvClient sends), and OpenEnv's
 * JSON-RPC `tools/call` over HTTP (`/openenv/mcp` with a session, MCPToolClient's production mode).
 * One episode per protocol on one server; calls run one at a time, protocol after protocol in
 * turn, so the machine's load falls on all alike. Two steps: `view_file roman.py` (no process)
 * and `run_command true` (one sandboxed exec).
 *
 * `openenv_python` times the same steps with the real openenv-core GenericEnvClient (Python,
 * async), when its venv exists (test/python_venv.ts's, or $BENCHGYM_PYTHON_OPENENV).
 *
 * Alone: `node --import tsx bench/protocol_latency.ts [--quick]`.
 */
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { WebSocket, type RawData } from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { localGym } from '../bin/builtins.ts';
import { episodePath } from '../src/protocol/capability.ts';
import { startHttpServer } from '../src/server/http.ts';
import { openEnvExtension } from '../src/server/openenv/extension.ts';
import { wsGymExtension } from '../src/server/ws_gym.ts';
import { envCacheDir } from './mcp_latency.ts';
import { summarize, timed, type LatencyStats } from './stats.ts';

export const PROTOCOL_CASES = ['protocol_view_file', 'protocol_run_command', 'openenv_python'] as const;
type ProtocolCase = (typeof PROTOCOL_CASES)[number];

export interface ProtocolBenchResult {
  stats: LatencyStats[];
  skipped?: string;
  extra: Record<string, unknown>;
  table: string;
}

const TASK_ID = 'roman-numerals';
const MAX_STEPS = 10_000;
const PROTOCOLS = ['direct', 'mcp', 'gym', 'openenv', 'openenv_rpc'] as const;
type Protocol = (typeof PROTOCOLS)[number];

/** One JSON reply per message sent, in order: what both WebSocket protocols do for one request at a time. */
class OneAtATime {
  private waiting?: (m: Record<string, unknown>) => void;
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: RawData) => {
      const m = JSON.parse(String(data)) as Record<string, unknown>;
      // The gym protocol's notifications (progress) carry a method; the reply does not.
      if (typeof m.method === 'string') return;
      const w = this.waiting;
      this.waiting = undefined;
      w?.(m);
    });
  }
  static open(url: string): Promise<OneAtATime> {
    const ws = new WebSocket(url);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new OneAtATime(ws)));
      ws.once('error', reject);
    });
  }
  send(message: unknown): Promise<Record<string, unknown>> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.ws.send(JSON.stringify(message));
    });
  }
  close(): void {
    this.ws.close();
  }
}

function pythonOpenEnv(): string | undefined {
  const given = process.env.BENCHGYM_PYTHON_OPENENV;
  if (given) return given;
  const venv = path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'benchgym', 'openenv', 'bin', 'python');
  return existsSync(venv) ? venv : undefined;
}

const PYTHON_TIMER = `
import asyncio, json, sys, time
from openenv.core import GenericEnvClient
url, n = sys.argv[1], int(sys.argv[2])
async def main():
    out = {"view_file": [], "run_command": []}
    async with GenericEnvClient(base_url=url) as env:
        await env.reset(task_id="${TASK_ID}", max_steps=${MAX_STEPS})
        actions = {
            "view_file": {"tool_name": "view_file", "arguments": {"path": "roman.py"}},
            "run_command": {"tool_name": "run_command", "arguments": {"command": "true"}},
        }
        for name, action in actions.items():
            for i in range(n + 10):
                t0 = time.perf_counter()
                r = await env.step(action)
                ms = (time.perf_counter() - t0) * 1000
                assert r.observation["error"] is None, r.observation["error"]
                if i >= 10:
                    out[name].append(ms)
    print(json.dumps(out))
asyncio.run(main())
`;

export async function runProtocolBench(opts: {
  quick: boolean;
  cases?: ReadonlySet<string>;
  log?: (m: string) => void;
}): Promise<ProtocolBenchResult> {
  const log = opts.log ?? (() => {});
  const want = (c: ProtocolCase) => !opts.cases || opts.cases.has(c);
  const n = opts.quick ? 50 : 300;
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-bench-protocols-'));
  const gym = localGym({ dataDir, cacheDir: envCacheDir() });
  const server = await startHttpServer(gym, { port: 0, extensions: [wsGymExtension(), openEnvExtension()] });
  const ws = server.url.replace(/^http/, 'ws');
  const closers: (() => Promise<void> | void)[] = [];
  const stats: LatencyStats[] = [];
  const extra: Record<string, unknown> = { loadAvg1mStart: Math.round(os.loadavg()[0]! * 100) / 100 };
  try {
    const direct = await gym.startEpisode({ suite: 'examples', taskId: TASK_ID, maxSteps: MAX_STEPS });
    const ctx = { signal: new AbortController().signal, progress() {} };
    const toolOf = (name: string) => gym.episodeTools(direct).find((t) => t.name === name)!;

    const mcpEpisode = await gym.startEpisode({ suite: 'examples', taskId: TASK_ID, maxSteps: MAX_STEPS });
    const mcp = new Client({ name: 'bench', version: '0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}${episodePath(mcpEpisode, 'mcp')}`)));
    closers.push(() => mcp.close());

    const gymWs = await OneAtATime.open(`${ws}/ws`);
    closers.push(() => gymWs.close());
    let rpcId = 0;
    const reset = (await gymWs.send({
      jsonrpc: '2.0',
      id: ++rpcId,
      method: 'reset',
      params: { task_id: TASK_ID, options: { max_steps: MAX_STEPS } },
    })) as { result: { episode_id: string } };
    const gymEpisode = reset.result.episode_id;

    const openenv = await OneAtATime.open(`${ws}/openenv/ws`);
    closers.push(() => openenv.close());
    await openenv.send({ type: 'reset', data: { task_id: TASK_ID, max_steps: MAX_STEPS } });

    const post = async (body: unknown) =>
      (await (
        await fetch(`${server.url}/openenv/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json()) as Record<string, any>;
    const session = (await post({ jsonrpc: '2.0', id: 1, method: 'openenv/session/create' })).result.session_id as string;
    await post({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'start_episode', arguments: { task_id: TASK_ID, max_steps: MAX_STEPS }, session_id: session },
    });
    closers.push(
      async () => void (await post({ jsonrpc: '2.0', id: 3, method: 'openenv/session/close', params: { session_id: session } })),
    );

    const steps: Record<'view_file' | 'run_command', { args: Record<string, unknown>; check: (data: Record<string, unknown>) => boolean }> =
      {
        view_file: { args: { path: 'roman.py' }, check: (d) => d.path === 'roman.py' },
        run_command: { args: { command: 'true' }, check: (d) => d.exitCode === 0 },
      };
    const call = (p: Protocol, tool: keyof typeof steps): (() => Promise<void>) => {
      const { args, check } = steps[tool];
      const ok = (data: unknown, where: string) => {
        if (!data || typeof data !== 'object' || !check(data as Record<string, unknown>))
          throw new Error(`${tool} over ${where} failed: ${JSON.stringify(data).slice(0, 300)}`);
      };
      switch (p) {
        case 'direct':
          return async () => ok((await gym.callEpisodeTool(direct, toolOf(tool), args, ctx)).data, p);
        case 'mcp':
          return async () => ok((await mcp.callTool({ name: tool, arguments: args })).structuredContent, p);
        case 'gym':
          return async () =>
            ok(
              ((await gymWs.send({ jsonrpc: '2.0', id: ++rpcId, method: 'step', params: { episode_id: gymEpisode, tool, args } })) as any)
                .result?.observation?.data,
              p,
            );
        case 'openenv':
          return async () =>
            ok(
              ((await openenv.send({ type: 'step', data: { type: 'call_tool', tool_name: tool, arguments: args } })) as any).data
                ?.observation?.result?.data,
              p,
            );
        case 'openenv_rpc':
          return async () =>
            ok(
              (await post({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: tool, arguments: args, session_id: session } }))
                .result?.data,
              p,
            );
      }
    };

    for (const tool of ['view_file', 'run_command'] as const) {
      if (!want(`protocol_${tool}`)) continue;
      log(`protocol_${tool}: ${PROTOCOLS.length} protocols, 10 warm-up + ${n} timed calls each, interleaved`);
      const calls = PROTOCOLS.map((p) => call(p, tool));
      for (const c of calls) for (let i = 0; i < 10; i++) await c();
      const samples = PROTOCOLS.map(() => [] as number[]);
      for (let i = 0; i < n; i++) for (const [k, c] of calls.entries()) samples[k]!.push((await timed(c)).ms);
      for (const [k, p] of PROTOCOLS.entries())
        stats.push(summarize(`protocol_${tool} [${p}]`, `${tool} ${JSON.stringify(steps[tool].args)} over ${p}`, samples[k]!));
    }

    if (want('openenv_python')) {
      const python = pythonOpenEnv();
      if (!python) extra.openenv_python = 'skipped: no openenv-core venv (test/python_venv.ts makes one; or set BENCHGYM_PYTHON_OPENENV)';
      else {
        log(`openenv_python: GenericEnvClient, 10 warm-up + ${n} timed steps per tool`);
        const script = path.join(dataDir, 'time_openenv.py');
        await fs.writeFile(script, PYTHON_TIMER);
        const { stdout } = await promisify(execFile)(python, [script, `${server.url}/openenv`, String(n)], {
          timeout: 20 * 60_000,
          maxBuffer: 16 * 1024 * 1024,
        });
        const out = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, number[]>;
        for (const [tool, samples] of Object.entries(out))
          stats.push(summarize(`openenv_python [${tool}]`, `${tool} step with openenv-core's GenericEnvClient (Python, async)`, samples));
      }
    }
    extra.loadAvg1mEnd = Math.round(os.loadavg()[0]! * 100) / 100;
  } finally {
    for (const close of closers) await Promise.resolve(close()).catch(() => {});
    await server.close();
    await gym.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
  const head = ['case', 'n', 'p50 ms', 'p95 ms', 'p99 ms', 'mean ms'];
  const rows = stats.map((s) => [s.name, String(s.n), s.p50.toFixed(2), s.p95.toFixed(2), s.p99.toFixed(2), s.mean.toFixed(2)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const table = [head, ...rows].map((r) => r.map((c, i) => (i ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ')).join('\n');
  return { stats, extra, table };
}

export const PROTOCOL_BENCHMARK = { name: 'protocol_latency', cases: PROTOCOL_CASES, run: runProtocolBench };

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runProtocolBench({ quick: process.argv.includes('--quick'), log: (m) => console.error(`[bench] ${m}`) }).then(
    (r) => {
      console.log(`${os.cpus().length} cpus, load ${os.loadavg()[0]!.toFixed(2)}`);
      console.log(r.table);
      console.log(JSON.stringify(r.extra));
    },
    (err) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exitCode = 1;
    },
  );
}
