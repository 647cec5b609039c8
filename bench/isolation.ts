/**
 * Isolation under attack (issue 12, "Done when" 3): does one episode's `view_file` stay fast
 * while another episode runs a bomb? Documented in docs/BENCHMARKS.md, "Isolation under attack".
 *
 *   npm run bench -- --only isolation            every bomb on the local backend, and on Docker when a
 *                                                daemon answers: about 5 min when nothing stalls, plus
 *                                                about 20 s per stalled bomb (grace, server restart)
 *   npm run bench -- --only isolation --quick    4 s windows instead of 10 s: about 3 min
 *   npm run bench -- --only fifo,regex           some bombs: fifo, regex, sessions, fork, memory, output, disk
 *   BENCHGYM_BENCH_BACKENDS=local npm run bench -- --only isolation    one backend (local or docker)
 *
 * Opt-in (not in a bare `npm run bench`): it runs fork, memory, output and disk bombs. Per
 * backend it starts a real `benchgym serve` child process (127.0.0.1, port 0, a bearer token,
 * a fresh data dir, the examples suite; bubblewrap when available), then per bomb: a fresh
 * victim episode whose own SDK client loops `view_file roman.py` on `/episodes/<id>/<key>/mcp`, a
 * quiet baseline, the bomb from attacker episodes on `/mcp` for one window, and the victim's
 * latencies while the bomb and its aftermath last. A server that does not answer the victim
 * within the grace after the bomb is recorded as stalled, killed and restarted. Every loop is
 * bounded in count and time, every bomb command by `timeout` inside it and by the bench's own
 * caps (process count, memory, disk); traffic is loopback only. Results go to
 * bench/results/isolation.json plus a markdown table on stdout (latest.json only when run
 * together with the default benchmarks).
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs, createWriteStream, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';
import { dockerAvailable, dockerClient } from '../src/sandbox/docker/index.ts';
import { reapStale } from '../src/sandbox/docker/index.ts';
import { envCacheDir } from './mcp_latency.ts';
import { round, summarize, type LatencyStats } from './stats.ts';

export const ISOLATION_CASES = ['fifo', 'regex', 'sessions', 'fork', 'memory', 'output', 'disk'] as const;
export type IsolationCase = (typeof ISOLATION_CASES)[number];
type Backend = 'local' | 'docker';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.join(BENCH_DIR, '..', 'bin', 'benchgym.js');
const RESULTS_FILE = path.join(BENCH_DIR, 'results', 'isolation.json');
const TASK_ID = 'roman-numerals';
const FILE = 'roman.py';

/** A victim call slower than this is a timeout (recorded at this value, a lower bound); a Docker view_file is an exec. */
const VICTIM_TIMEOUT_MS: Record<Backend, number> = { local: 2_000, docker: 5_000 };
/** Between victim calls: about 40 samples a second without hogging two shared cores. */
const VICTIM_PAUSE_MS = 20;
const VICTIM_MAX_SAMPLES = 20_000;
/** A victim answer this fast (or within twice the baseline p95) after the bomb: recovered. */
const RECOVERED_MS = 1_000;
/** How long a bomb's calls may outlast its window (server-side kills, output draining). */
const ATTACK_SLACK_MS = 20_000;
const SESSIONS = 2_000;
const SESSION_CONCURRENCY = 16;
/** The session flood, run in a worker thread: plain JavaScript, posts its counts back. */
const SESSION_FLOOD =
  `
const { parentPort, workerData: w } = require('node:worker_threads');
let next = 0, opened = 0;
const refused = new Map();
const note = (k) => refused.set(k, (refused.get(k) || 0) + 1);
(async () => {
  await Promise.all(Array.from({ length: w.concurrency }, async () => {
    while (next < w.sessions && Date.now() < w.deadline) {
      next++;
      try {
        const res = await fetch(w.url, { method: 'POST', headers: w.headers, body: w.body, signal: AbortSignal.timeout(Math.max(100, ` +
  `Math.floor(Math.min(10000, w.deadline - Date.now())))) });
        const text = await res.text();
        if (res.ok && res.headers.get('mcp-session-id')) opened++;
        else note('HTTP ' + res.status + ': ' + text);
      } catch (err) {
        note(err.name === 'TimeoutError' ? 'no answer (client gave up)' : String(err.message));
      }
    }
  }));
  parentPort.postMessage({ next, opened, refused: [...refused] });
})();
`;
const FIFO_EPISODES = 8;
/** The fork bomb doubles to depth 11: at most 4,095 processes (pid_max may be only 32,768). */
const FORK_DEPTH = 11;
const OUTPUT_BYTES = 2 * 1024 ** 3;
/** Caps so that an unlimited backend does not take the shared machine down with it. */
const MEMORY_CAP_MIB = Number(process.env.BENCHGYM_BENCH_MEMORY_CAP_MIB ?? 6144);
const DISK_CAP_MIB = Number(process.env.BENCHGYM_BENCH_DISK_CAP_MIB ?? 4096);
/** Whole-run cap: everything stops by itself. */
const HARD_LIMIT_MS = 20 * 60_000;

export interface IsolationRow {
  bomb: IsolationCase;
  backend: Backend;
  isolation: string;
  /** Victim view_file over the bomb and its aftermath (until the server answered fast again). */
  victim: LatencyStats & { timeouts: number; errors: number; longestGapMs: number };
  /** Victim view_file in the quiet seconds just before the bomb. */
  baseline: LatencyStats;
  /** What ended the bomb's calls, most frequent first. */
  stopped: string;
  stalled: boolean;
  /** From the bomb's end to the victim's first fast answer; null when stalled. */
  recoveryMs: number | null;
  /** A victim answer under this (1 s, or twice the baseline p95) counted as recovered. */
  fastMs: number;
  bombMs: number;
  attackCalls: number;
  serverRssMiB: { before: number; after: number };
  notes: string[];
  /** The last bomb command's output tail. */
  lastOutput?: string;
}

export interface IsolationResult {
  stats: LatencyStats[];
  skipped?: string;
  extra: Record<string, unknown>;
  rows: IsolationRow[];
  /** The markdown table of docs/BENCHMARKS.md's "Isolation under attack". */
  table: string;
}

interface Outcome {
  ok: boolean;
  timedOut: boolean;
  /** The call failed in transport (no tool result at all): session lost, server gone. */
  thrown: boolean;
  ms: number;
  text: string;
  data?: Record<string, unknown>;
}

interface Sample {
  start: number;
  end: number;
  ms: number;
  ok: boolean;
  timedOut: boolean;
}

const now = () => performance.now();

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'benchgym-bench-isolation', version: '0.1.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport, { timeout: 5_000 });
  return client;
}

async function disconnect(client: Client | undefined): Promise<void> {
  if (!client) return;
  const transport = client.transport as StreamableHTTPClientTransport | undefined;
  await Promise.race([transport?.terminateSession().catch(() => {}), sleep(2_000)]);
  await client.close().catch(() => {});
}

async function call(client: Client, name: string, args: Record<string, unknown>, timeoutMs: number): Promise<Outcome> {
  const t0 = now();
  try {
    const r = await client.callTool({ name, arguments: args }, undefined, {
      timeout: Math.max(1, timeoutMs),
      maxTotalTimeout: Math.max(1, timeoutMs),
    });
    const first = (r.content as { type: string; text?: string }[] | undefined)?.[0];
    return {
      ok: !r.isError,
      timedOut: false,
      thrown: false,
      ms: now() - t0,
      text: first?.text ?? '',
      data: r.structuredContent as Record<string, unknown> | undefined,
    };
  } catch (err) {
    const timedOut = err instanceof McpError && err.code === ErrorCode.RequestTimeout;
    return { ok: false, timedOut, thrown: !timedOut, ms: now() - t0, text: (err as Error).message };
  }
}

function must(what: string, o: Outcome): Outcome {
  if (!o.ok) throw new Error(`${what} failed: ${o.text.slice(0, 300)}`);
  return o;
}

/** The message of a JSON-RPC error body, else the body. */
function jsonRpcMessage(body: string): string {
  try {
    return String((JSON.parse(body) as { error?: { message?: unknown } }).error?.message ?? body);
  } catch {
    return body;
  }
}

function oneLine(s: string, max = 90): string {
  const line = s.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A `benchgym serve` child on loopback; its own process, so a stalled one can be killed. */
class ServerChild {
  private exited = false;

  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
    private readonly out: { tail: string },
  ) {
    child.once('exit', () => (this.exited = true));
  }

  static async start(opts: {
    backend: Backend;
    dataDir: string;
    cacheDir: string;
    token: string;
    serverId: string;
    logFile: string;
  }): Promise<ServerChild> {
    const args = [
      BIN,
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--data-dir',
      opts.dataDir,
      '--cache-dir',
      opts.cacheDir,
      '--token',
      opts.token,
    ];
    if (opts.backend === 'docker') args.push('--sandbox', 'docker', '--server-id', opts.serverId);
    const env = { ...process.env };
    delete env.BENCHGYM_TOKEN;
    const child = spawn(process.execPath, args, { cwd: path.join(BENCH_DIR, '..'), env, stdio: ['ignore', 'ignore', 'pipe'] });
    const log = createWriteStream(opts.logFile, { flags: 'a' });
    const out = { tail: '' };
    child.stderr!.on('data', (chunk: Buffer) => {
      log.write(chunk);
      out.tail = (out.tail + chunk.toString()).slice(-8_000);
    });
    child.once('exit', () => log.end());
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`benchgym serve did not start within 60 s: ${out.tail.slice(-500)}`)), 60_000);
      const onData = () => {
        const m = /MCP \(Streamable HTTP\): (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(out.tail);
        if (!m) return;
        clearTimeout(timer);
        child.stderr!.off('data', onData);
        resolve(m[1]!);
      };
      child.stderr!.on('data', onData);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`benchgym serve exited (${code ?? signal}): ${out.tail.slice(-500)}`));
      });
    }).catch((err) => {
      child.kill('SIGKILL');
      throw err;
    });
    return new ServerChild(child, url, out);
  }

  get alive(): boolean {
    return !this.exited;
  }

  get stderrTail(): string {
    return this.out.tail;
  }

  rssMiB(): number {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.child.pid}/status`, 'utf8'));
      return m ? round(Number(m[1]) / 1024, 1) : NaN;
    } catch {
      return NaN;
    }
  }

  /** SIGTERM (the server ends its episodes), then SIGKILL after graceMs. */
  async stop(graceMs: number): Promise<'exited' | 'killed'> {
    if (this.exited) return 'exited';
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    if (await Promise.race([gone.then(() => true), sleep(graceMs).then(() => false)])) return 'exited';
    this.child.kill('SIGKILL');
    await Promise.race([gone, sleep(5_000)]);
    return 'killed';
  }
}

/** The second episode: view_file in a loop on its own endpoint, every call timed. */
class Victim {
  readonly samples: Sample[] = [];
  private stopped = false;
  private loop?: Promise<void>;
  private client?: Client;
  errorTexts = new Map<string, number>();

  constructor(
    private readonly url: string,
    private readonly token: string,
    readonly episodeId: string,
    private readonly mcpPath: string,
    readonly timeoutMs: number,
  ) {}

  start(hardDeadline: number): void {
    this.loop = (async () => {
      while (!this.stopped && this.samples.length < VICTIM_MAX_SAMPLES && now() < hardDeadline) {
        if (!this.client) {
          // A lost session (a server that evicts or restarts) is reconnected, the gap timed.
          const t0 = now();
          this.client = await connect(`${this.url}${this.mcpPath}`, this.token).catch(() => undefined);
          if (!this.client) {
            this.samples.push({ start: t0, end: now(), ms: now() - t0, ok: false, timedOut: true });
            await sleep(200);
            continue;
          }
        }
        const start = now();
        const o = await call(this.client, 'view_file', { path: FILE }, this.timeoutMs);
        this.samples.push({ start, end: now(), ms: o.ms, ok: o.ok, timedOut: o.timedOut });
        if (!o.ok && !o.timedOut) {
          const key = oneLine(o.text, 120);
          this.errorTexts.set(key, (this.errorTexts.get(key) ?? 0) + 1);
          if (o.thrown) {
            const lost = this.client;
            this.client = undefined;
            void disconnect(lost);
          }
        }
        await sleep(VICTIM_PAUSE_MS);
      }
    })();
  }

  /** Samples overlapping [from, to]. */
  between(from: number, to: number): Sample[] {
    return this.samples.filter((s) => s.start <= to && s.end >= from);
  }

  /** Waits for an answer under fastMs that started after `since`; its end, or null after graceMs. */
  async recovered(since: number, graceMs: number, fastMs: number): Promise<number | null> {
    const until = since + graceMs;
    for (;;) {
      const s = this.samples.find((x) => x.start >= since && x.ok && x.ms < fastMs);
      if (s) return s.end;
      if (now() > until || this.stopped) return null;
      await sleep(100);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.race([this.loop, sleep(this.timeoutMs + 1_000)]);
    await disconnect(this.client);
  }
}

interface BombCtx {
  backend: Backend;
  server: ServerChild;
  attacker: Client;
  token: string;
  windowS: number;
  /** Attacker episodes the bomb started (ended afterwards). */
  episodes: string[];
  outcomes: Map<string, number>;
  notes: string[];
  calls: number;
  /** The last bomb command's output tail, for the JSON (what the limit said, verbatim). */
  lastOutput?: string;
}

interface Bomb {
  name: IsolationCase;
  /** A longer window than the others' (the flood needs time to open its sessions). */
  windowMs?(base: number): number;
  setup(ctx: BombCtx): Promise<void>;
  /** Runs the bomb until `deadline` (performance.now() ms), recording outcomes. */
  attack(ctx: BombCtx, deadline: number): Promise<void>;
}

function record(ctx: BombCtx, what: string): void {
  ctx.calls++;
  ctx.outcomes.set(what, (ctx.outcomes.get(what) ?? 0) + 1);
}

async function startAttacker(ctx: BombCtx): Promise<string> {
  const o = must('start_episode (attacker)', await call(ctx.attacker, 'start_episode', { task_id: TASK_ID, max_steps: 10_000 }, 120_000));
  const id = (o.data as { episodeId: string }).episodeId;
  ctx.episodes.push(id);
  return id;
}

/** Repeats `one` until the deadline (a bomb that ends early is started again), at most 500 times. */
async function repeat(deadline: number, one: (remainingMs: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < 500 && now() < deadline - 1_500; i++) {
    await one(deadline - now());
    await sleep(50);
  }
}

function describeTool(o: Outcome, windowS: number): string {
  if (o.timedOut) return `no answer within the ${windowS} s window (client gave up)`;
  if (!o.ok) return `refused: ${oneLine(o.text)}`;
  return `answered in ${(o.ms / 1000).toFixed(1)} s: ${oneLine(o.text, 60)}`;
}

/** A run_command bomb's end: the kill, the exit, the output's last line. */
function describeExec(o: Outcome, windowS: number, lastLine = true): string {
  if (o.timedOut || !o.ok) return describeTool(o, windowS);
  const d = o.data as {
    exitCode: number | null;
    signal?: string | null;
    timedOut: boolean;
    stdout: string;
    stderr: string;
    durationMs: number;
  };
  const status = d.timedOut
    ? "killed at run_command's timeout"
    : d.exitCode === null
      ? `killed by ${d.signal ?? 'a signal'}`
      : d.exitCode === WINDOW_BOUND_EXIT
        ? "not stopped: ran to the bench's window bound"
        : d.exitCode === 137
          ? 'exit 137 (SIGKILL)'
          : d.exitCode === 0
            ? 'exit 0 (not stopped)'
            : `exit ${d.exitCode}`;
  const lines = `${d.stdout}\n${d.stderr}`
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lastLine && lines.length ? `${status}: ${oneLine(lines[lines.length - 1]!, 100)}` : status;
}

/** Exit status of a command the bench's own bound ended (GNU timeout's 124). */
const WINDOW_BOUND_EXIT = 124;

/** `timeout` inside the command: the bench's own bound, whatever the server allows. */
function bounded(command: string, remainingMs: number): { command: string; timeout_s: number; clientMs: number } {
  const s = Math.max(1, Math.ceil(remainingMs / 1000));
  return {
    command: `timeout -s TERM -k 1 ${s} bash -c ${shellQuote(command)}`,
    timeout_s: s + 5,
    clientMs: remainingMs + ATTACK_SLACK_MS - 2_000,
  };
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

async function execBomb(
  ctx: BombCtx,
  deadline: number,
  script: (remainingS: number) => string,
  describe: (o: Outcome) => string,
): Promise<void> {
  const id = ctx.episodes[0]!;
  await repeat(deadline, async (remaining) => {
    const b = bounded(script(Math.ceil(remaining / 1000)), remaining);
    const o = await call(ctx.attacker, 'run_command', { episode_id: id, command: b.command, timeout_s: b.timeout_s }, b.clientMs);
    const d = o.data as { stdout?: string; stderr?: string } | undefined;
    if (d) ctx.lastOutput = `${d.stdout ?? ''}\n--- stderr ---\n${d.stderr ?? ''}`.slice(-600);
    record(ctx, describe(o));
  });
}

const BOMBS: Record<IsolationCase, Bomb> = {
  fifo: {
    name: 'fifo',
    async setup(ctx) {
      // Eight episodes: calls within one episode are queued one at a time, across episodes not.
      for (let i = 0; i < FIFO_EPISODES; i++) {
        const id = await startAttacker(ctx);
        must('mkfifo', await call(ctx.attacker, 'run_command', { episode_id: id, command: 'mkfifo pipe' }, 60_000));
      }
    },
    async attack(ctx, deadline) {
      await Promise.all(
        ctx.episodes.map((id) =>
          repeat(deadline, async (remaining) =>
            record(ctx, describeTool(await call(ctx.attacker, 'view_file', { episode_id: id, path: 'pipe' }, remaining), ctx.windowS)),
          ),
        ),
      );
    },
  },
  regex: {
    name: 'regex',
    async setup(ctx) {
      const id = await startAttacker(ctx);
      must(
        'create_file',
        await call(ctx.attacker, 'create_file', { episode_id: id, path: 'bomb.txt', content: `${'a'.repeat(30)}b\n` }, 60_000),
      );
    },
    async attack(ctx, deadline) {
      const id = ctx.episodes[0]!;
      await repeat(deadline, async (remaining) =>
        record(
          ctx,
          describeTool(
            await call(ctx.attacker, 'search', { episode_id: id, query: '^(a+)+$', regex: true, glob: 'bomb.txt' }, remaining),
            ctx.windowS,
          ),
        ),
      );
    },
  },
  sessions: {
    name: 'sessions',
    windowMs: (base) => base * 2,
    async setup() {},
    async attack(ctx, deadline) {
      // Raw initialize requests: 2,000 sessions opened and never closed (no DELETE). The flood
      // runs in a worker thread: on the victim's event loop it would delay the victim's own
      // client, and the figure would measure the bench, not the server.
      const url = `${ctx.server.url}/mcp`;
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'flood', version: '0' } },
      });
      const headers = {
        Authorization: `Bearer ${ctx.token}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      };
      const rssBefore = ctx.server.rssMiB();
      const flood = new Worker(SESSION_FLOOD, {
        eval: true,
        workerData: { url, body, headers, sessions: SESSIONS, concurrency: SESSION_CONCURRENCY, deadline: Date.now() + (deadline - now()) },
      });
      const {
        next,
        opened,
        refused: refusedList,
      } = await new Promise<{ next: number; opened: number; refused: [string, number][] }>((resolve, reject) => {
        flood.once('message', resolve);
        flood.once('error', reject);
      });
      await flood.terminate();
      const refused = new Map<string, number>();
      for (const [text, n] of refusedList) {
        const key = text.startsWith('HTTP ')
          ? `${text.slice(0, text.indexOf(':') + 1)} ${oneLine(jsonRpcMessage(text.slice(text.indexOf(':') + 2)), 80)}`
          : oneLine(text, 60);
        refused.set(key, (refused.get(key) ?? 0) + n);
      }
      const rssAfter = ctx.server.rssMiB();
      const refusals = [...refused].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} ${k}`);
      const tried = Math.min(next, SESSIONS);
      record(
        ctx,
        `${opened} of ${tried} sessions opened${tried < SESSIONS ? ` (window ended at ${tried} of ${SESSIONS})` : ''}` +
          `${refusals.length ? `, refused: ${refusals.slice(0, 2).join('; ')}` : ', none refused'}; server ` +
          `RSS ${rssBefore} → ${rssAfter} MiB`,
      );
      ctx.calls = tried;
    },
  },
  fork: {
    name: 'fork',
    async setup(ctx) {
      await startAttacker(ctx);
    },
    async attack(ctx, deadline) {
      // Each process forks two until depth FORK_DEPTH; the leaves hold their pid until just
      // before the window ends, so the command ends by itself inside the bench's timeout.
      await execBomb(
        ctx,
        deadline,
        (s) =>
          `b() { if [ "$1" -gt 0 ]; then b $(($1-1)) & b $(($1-1)) & wait; else exec sleep ${Math.max(1, s - 1)}; fi; }; ` +
          `(sleep 2; n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo "processes visible after 2 s: $n") & b ${FORK_DEPTH}; wait`,
        (o) => {
          if (!o.ok || o.timedOut) return describeTool(o, ctx.windowS);
          const d = o.data as { stdout: string; stderr: string };
          const procs = /processes visible after 2 s: (\d+)/.exec(d.stdout)?.[1];
          const refusals = d.stderr
            .split('\n')
            .filter((l) => /fork|resource|limit/i.test(l))
            .map((l) => l.replace(/^.*?(fork: )/, '$1').trim());
          const counts = new Map<string, number>();
          for (const l of refusals) counts.set(l, (counts.get(l) ?? 0) + 1);
          const top = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
          const forks = top ? `${oneLine(top, 60)} (${refusals.length}+ lines)` : 'no fork refused';
          return (
            `${describeExec(o, ctx.windowS, false)}; ` +
            `${forks}; ${procs ? `${procs} processes after 2 s` : 'no process count (the watcher was starved)'}` +
            ` (bomb: up to ${2 ** (FORK_DEPTH + 1) - 1})`
          );
        },
      );
    },
  },
  memory: {
    name: 'memory',
    // First-touch page faults are slow in a VM: a 10 s window may end before a 2 GiB limit.
    windowMs: (base) => base * 2,
    async setup(ctx) {
      await startAttacker(ctx);
    },
    async attack(ctx, deadline) {
      // Touched pages (b"x" * n, not calloc'd zeros), up to the bench's cap, then held.
      await execBomb(
        ctx,
        deadline,
        (s) =>
          `python3 -c 'import time\nt = time.time(); a = []\n` +
          `while len(a) * 64 < ${MEMORY_CAP_MIB} and time.time() - t < ${s - 1}:\n  a.append(b"x" * ` +
          `(64 << 20))\n  if len(a) % 8 == 0: print("allocated %d MiB" % (len(a) * 64), flush=True)\n` +
          `print("allocated %d MiB, not stopped: %s" % (len(a) * 64, "the bench cap" if ` +
          `len(a) * 64 >= ${MEMORY_CAP_MIB} else "the window ended first"), flush=True)\n` +
          `time.sleep(max(0, ${s - 2} - (time.time() - t)))'`,
        (o) => describeExec(o, ctx.windowS),
      );
    },
  },
  output: {
    name: 'output',
    async setup(ctx) {
      await startAttacker(ctx);
    },
    async attack(ctx, deadline) {
      await execBomb(
        ctx,
        deadline,
        () =>
          `yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxy | head -c ${OUTPUT_BYTES}`,
        (o) => {
          if (!o.ok || o.timedOut) return describeTool(o, ctx.windowS);
          const d = o.data as { totalBytes?: { stdout: number }; stdout: string; durationMs: number };
          const total = d.totalBytes?.stdout ?? NaN;
          return (
            `${describeExec(o, ctx.windowS, false)}; ${round(total / 1024 ** 2, 0)} MiB drained ` +
            `in ${(d.durationMs / 1000).toFixed(1)} s, ${round(d.stdout.length / 1024, 0)} KiB kept`
          );
        },
      );
    },
  },
  disk: {
    name: 'disk',
    async setup(ctx) {
      await startAttacker(ctx);
    },
    async attack(ctx, deadline) {
      // 512 MiB files (fallocate, dd where it is not supported) up to the bench's cap, then the
      // full workspace is held until the window ends.
      const files = Math.max(1, Math.floor(DISK_CAP_MIB / 512));
      await execBomb(
        ctx,
        deadline,
        (s) =>
          `rm -f fill.*; mode=fallocate; fallocate -l 1M fill.probe 2>/dev/null || mode=dd; ` +
          `rm -f fill.probe; i=0; stop=""; while [ $i -lt ${files} ]; do i=$((i+1)); ` +
          `if [ $mode = fallocate ]; then fallocate -l 512M fill.$i; else dd if=/dev/zero of=fill.$i bs=1M count=512 ` +
          `status=none; fi || { stop="$mode stopped at file $i"; break; }; echo "$((i * 512)) MiB written ($mode)"; done; ` +
          `echo "\${stop:-no limit hit: the bench cap of ${files * 512} MiB reached}"; ` +
          `echo "$(du -sm . | cut -f1) MiB in the workspace"; sleep ${Math.max(0, s - 2)}`,
        (o) => {
          if (!o.ok || o.timedOut) return describeTool(o, ctx.windowS);
          const d = o.data as { stdout: string; stderr: string };
          const lines = `${d.stderr}\n${d.stdout}`.split('\n').map((l) => l.trim());
          const why =
            lines.find((l) => /^(dd|fallocate):|limit exceeded|no space left|quota|too large/i.test(l)) ??
            lines.find((l) => /no limit hit|stopped/.test(l));
          const size = /(\d+) MiB in the workspace/.exec(d.stdout)?.[1] ?? [...d.stdout.matchAll(/(\d+) MiB written/g)].pop()?.[1];
          // The command holds the disk after filling it, so its exit says nothing; the fill's end does.
          const limit =
            why && !/no limit hit/.test(why)
              ? `limit hit: ${oneLine(why, 80)}`
              : `${describeExec(o, ctx.windowS, false)}${why ? `: ${oneLine(why, 80)}` : ''}`;
          return `${limit}; ${size ?? 0} MiB written`;
        },
      );
    },
  },
};

interface BackendRun {
  backend: Backend;
  server: ServerChild;
  attacker: Client;
  isolation: string;
  firstStartMs: number;
}

export async function runIsolation(opts: {
  quick: boolean;
  cases?: ReadonlySet<string>;
  log: (m: string) => void;
}): Promise<IsolationResult> {
  const log = opts.log;
  const windowMs = opts.quick ? 4_000 : 10_000;
  const baselineMs = opts.quick ? 2_000 : 3_000;
  const graceMs = opts.quick ? 10_000 : 15_000;
  const hardDeadline = now() + HARD_LIMIT_MS;
  const bombs = ISOLATION_CASES.filter((c) => !opts.cases || opts.cases.size === 0 || opts.cases.has(c));
  const wanted = (process.env.BENCHGYM_BENCH_BACKENDS ?? 'local,docker').split(',').map((s) => s.trim()) as Backend[];
  const backends: Backend[] = [];
  const skipped: string[] = [];
  if (wanted.includes('local')) backends.push('local');
  if (wanted.includes('docker')) {
    if (await dockerAvailable()) backends.push('docker');
    else skipped.push('docker: no Docker daemon answers');
  }

  const token = randomBytes(16).toString('hex');
  const cacheDir = envCacheDir();
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-bench-isolation-'));
  const logFile = path.join(workDir, 'server.log');
  const serverId = `bench-iso-${randomBytes(4).toString('hex')}`;
  const rows: IsolationRow[] = [];
  const extra: Record<string, unknown> = {
    loadAvg1mAtStart: round(os.loadavg()[0]!, 2),
    windowS: windowMs / 1000,
    baselineS: baselineMs / 1000,
    graceS: graceMs / 1000,
    victimTimeoutMs: VICTIM_TIMEOUT_MS,
    recoveredMs: RECOVERED_MS,
    memoryCapMiB: MEMORY_CAP_MIB,
    diskCapMiB: DISK_CAP_MIB,
    forkProcesses: 2 ** (FORK_DEPTH + 1) - 1,
    sessions: SESSIONS,
  };
  const children = new Set<ServerChild>();
  const killAll = () => {
    for (const c of children) c.child.kill('SIGKILL');
  };
  process.once('exit', killAll);

  const startBackend = async (backend: Backend): Promise<BackendRun> => {
    const dataDir = path.join(workDir, `data-${backend}`);
    await fs.mkdir(dataDir, { recursive: true });
    const server = await ServerChild.start({ backend, dataDir, cacheDir, token, serverId, logFile });
    children.add(server);
    const attacker = await connect(`${server.url}/mcp`, token);
    // The first start builds the env (or the Docker env image) when the cache is cold.
    const t0 = now();
    const first = must('start_episode (warm-up)', await call(attacker, 'start_episode', { task_id: TASK_ID }, 15 * 60_000));
    const data = first.data as { episodeId: string; sandbox: { isolation: string } };
    await call(attacker, 'end_episode', { episode_id: data.episodeId }, 60_000);
    return { backend, server, attacker, isolation: data.sandbox.isolation, firstStartMs: round(now() - t0, 1) };
  };

  const stopBackend = async (run: BackendRun, graceMs: number): Promise<string> => {
    await disconnect(run.attacker);
    const how = await run.server.stop(graceMs);
    children.delete(run.server);
    if (run.backend === 'docker') await reapStale(dockerClient(), serverId).catch(() => {});
    return how;
  };

  try {
    for (const backend of backends) {
      log(`isolation: ${backend} backend, bombs ${bombs.join(', ')}, ${windowMs / 1000} s each`);
      let run: BackendRun;
      try {
        run = await startBackend(backend);
      } catch (err) {
        skipped.push(`${backend}: ${oneLine((err as Error).message, 200)}`);
        log(`  ${backend} skipped: ${(err as Error).message}`);
        continue;
      }
      extra[`${backend}FirstStartMs`] = run.firstStartMs;
      log(`  server ${run.server.url} (pid ${run.server.child.pid}), ${run.isolation}; first start_episode ${run.firstStartMs} ms`);
      for (const name of bombs) {
        if (now() > hardDeadline) {
          skipped.push(`${backend}/${name}: the bench's ${HARD_LIMIT_MS / 60_000} min limit was reached`);
          continue;
        }
        if (!run.server.alive) {
          log(`  the server died: restarting (${oneLine(run.server.stderrTail.slice(-300), 200)})`);
          await stopBackend(run, 1_000);
          run = await startBackend(backend);
        }
        let row: IsolationRow;
        try {
          row = await runBomb(BOMBS[name], run, { token, windowMs, baselineMs, graceMs, hardDeadline, log });
        } catch (err) {
          // A bomb that could not even be set up: noted, and the server restarted for the next.
          skipped.push(`${backend}/${name}: ${oneLine((err as Error).message, 200)}`);
          log(`  ${name} failed: ${(err as Error).message}; restarting the server`);
          await stopBackend(run, 3_000);
          run = await startBackend(backend);
          continue;
        }
        rows.push(row);
        log(
          `  ${name}: victim p50 ${row.victim.p50} / p95 ${row.victim.p95} / max ${row.victim.max} ` +
            `ms (n ${row.victim.n}, ${row.victim.timeouts} timeouts), baseline p95 ${row.baseline.p95} ` +
            `ms; ${row.stalled ? 'STALLED' : `recovered in ${row.recoveryMs} ms`}; ${row.stopped}`,
        );
        if (row.stalled || !run.server.alive) {
          const how = await stopBackend(run, 3_000);
          row.notes.push(`server ${how === 'killed' ? 'killed (SIGKILL)' : 'stopped'} and restarted after the bomb`);
          log(`  restarting the ${backend} server (the old one was ${how})`);
          run = await startBackend(backend);
        }
      }
      await stopBackend(run, 20_000);
    }
  } finally {
    process.removeListener('exit', killAll);
    for (const c of children) await c.stop(5_000);
    if (backends.includes('docker')) await reapStale(dockerClient(), serverId).catch(() => {});
    if (process.env.BENCHGYM_BENCH_SERVER_LOG)
      log(`server log tail:\n${(await fs.readFile(logFile, 'utf8').catch(() => '')).slice(-3_000)}`);
    await fs.rm(workDir, { recursive: true, force: true }).catch(() => {});
  }

  const table = renderTable(rows);
  const stats = rows
    .flatMap((r) => [r.victim, r.baseline])
    .map(({ name, description, unit, n, p50, p95, p99, mean, min, max }) => ({
      name,
      description,
      unit,
      n,
      p50,
      p95,
      p99,
      mean,
      min,
      max,
    }));
  const result: IsolationResult = { stats, rows, table, extra, ...(skipped.length ? { skipped: skipped.join('; ') } : {}) };
  await fs.mkdir(path.dirname(RESULTS_FILE), { recursive: true });
  await fs.writeFile(
    RESULTS_FILE,
    JSON.stringify({ date: new Date().toISOString(), loadAvg1mAtEnd: round(os.loadavg()[0]!, 2), ...result }, null, 2) + '\n',
  );
  log(`isolation: wrote ${path.relative(process.cwd(), RESULTS_FILE)}`);
  return result;
}

async function runBomb(
  bomb: Bomb,
  run: BackendRun,
  o: { token: string; windowMs: number; baselineMs: number; graceMs: number; hardDeadline: number; log: (m: string) => void },
): Promise<IsolationRow> {
  const windowMs = bomb.windowMs?.(o.windowMs) ?? o.windowMs;
  const ctx: BombCtx = {
    backend: run.backend,
    server: run.server,
    attacker: run.attacker,
    token: o.token,
    windowS: windowMs / 1000,
    episodes: [],
    outcomes: new Map(),
    notes: [],
    calls: 0,
  };
  const tag = `${run.backend}_${bomb.name}`;
  // A fresh victim per bomb: its step budget and session are its own.
  const v = must('start_episode (victim)', await call(run.attacker, 'start_episode', { task_id: TASK_ID, max_steps: 10_000 }, 120_000));
  const started = v.data as { episodeId: string; mcpPath: string };
  const victim = new Victim(run.server.url, o.token, started.episodeId, started.mcpPath, VICTIM_TIMEOUT_MS[run.backend]);
  let stalled = false;
  let recoveryMs: number | null = null;
  let bombStart = 0;
  let bombEnd = 0;
  let rssBefore = NaN;
  let rssAfter = NaN;
  let fastMs = RECOVERED_MS;
  try {
    await bomb.setup(ctx);
    victim.start(o.hardDeadline);
    const baseStart = now();
    await sleep(o.baselineMs);
    const baseEnd = now();
    rssBefore = run.server.rssMiB();
    bombStart = now();
    const deadline = bombStart + windowMs;
    const attack = bomb.attack(ctx, deadline).catch((err) => record(ctx, `bench error: ${oneLine((err as Error).message)}`));
    const settled = await Promise.race([attack.then(() => true), sleep(windowMs + ATTACK_SLACK_MS).then(() => false)]);
    if (!settled) ctx.notes.push(`the bomb's calls were still pending ${ATTACK_SLACK_MS / 1000} s after its window`);
    bombEnd = now();
    rssAfter = run.server.rssMiB();
    const quiet = victim
      .between(baseStart, baseEnd)
      .map((s) => s.ms)
      .sort((a, b) => a - b);
    fastMs = round(Math.max(RECOVERED_MS, 2 * (quiet[Math.floor(quiet.length * 0.95)] ?? 0)), 0);
    const back = await victim.recovered(bombEnd, o.graceMs, fastMs);
    stalled = back === null;
    recoveryMs = back === null ? null : round(back - bombEnd, 0);
    const to = back ?? now();
    const during = victim.between(bombStart, to);
    const base = victim.between(baseStart, baseEnd);
    const victimStats = summarize(
      `isolation_${tag}`,
      `victim view_file during ${bomb.name} (${run.backend})`,
      during.map((s) => s.ms),
    );
    const baseline = summarize(
      `isolation_${tag}_baseline`,
      `victim view_file before ${bomb.name} (${run.backend}), quiet`,
      base.map((s) => s.ms),
    );
    const errors = during.filter((s) => !s.ok && !s.timedOut).length;
    const okEnds = [
      bombStart,
      ...during
        .filter((s) => s.ok)
        .map((s) => s.end)
        .sort((a, b) => a - b),
      to,
    ];
    const longestGapMs = round(Math.max(...okEnds.slice(1).map((t, i) => t - okEnds[i]!)), 0);
    if (errors)
      ctx.notes.push(
        `victim errors: ${[...victim.errorTexts]
          .map(([k, n]) => `${n}× ${k}`)
          .slice(0, 3)
          .join('; ')}`,
      );
    if (base.some((s) => !s.ok)) ctx.notes.push(`${base.filter((s) => !s.ok).length} victim calls failed in the baseline`);
    const stopped =
      [...ctx.outcomes]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([k, n]) => (n > 1 ? `${k} (×${n})` : k))
        .join('; ') || 'no bomb call returned';
    return {
      bomb: bomb.name,
      backend: run.backend,
      isolation: run.isolation,
      victim: { ...victimStats, timeouts: during.filter((s) => s.timedOut).length, errors, longestGapMs },
      baseline,
      stopped,
      stalled,
      recoveryMs,
      fastMs,
      bombMs: round(bombEnd - bombStart, 0),
      attackCalls: ctx.calls,
      serverRssMiB: { before: rssBefore, after: rssAfter },
      notes: ctx.notes,
      ...(ctx.lastOutput !== undefined ? { lastOutput: ctx.lastOutput } : {}),
    };
  } finally {
    await victim.stop();
    if (!stalled && run.server.alive) {
      // End the attacker and victim episodes (kills what is left, frees the disk); bounded.
      const ids = [...ctx.episodes, victim.episodeId];
      const ended = await Promise.race([
        Promise.all(ids.map((id) => call(run.attacker, 'end_episode', { episode_id: id }, 15_000))).then(() => true),
        sleep(20_000).then(() => false),
      ]);
      if (!ended) ctx.notes.push('end_episode of the attacker episodes did not finish within 20 s');
    }
  }
}

function fmt(x: number): string {
  return Number.isNaN(x) ? '-' : x >= 100 ? x.toFixed(0) : x.toFixed(1);
}

function renderTable(rows: IsolationRow[]): string {
  const head =
    '| bomb | backend | victim p50 / p95 / max ms (n) | baseline p95 ms | what stopped the bomb |\n| --- | --- | --- | ---: | --- |';
  const lines = rows.map((r) => {
    const v = r.victim;
    const tail = [
      v.timeouts ? `${v.timeouts} timeouts ≥ ${VICTIM_TIMEOUT_MS[r.backend] / 1000} s` : '',
      v.errors ? `${v.errors} errors` : '',
      v.longestGapMs > r.fastMs ? `no answer for ${(v.longestGapMs / 1000).toFixed(1)} s` : '',
    ]
      .filter(Boolean)
      .join(', ');
    const victim = `${fmt(v.p50)} / ${fmt(v.p95)} / ${fmt(v.max)} (${v.n}${tail ? `; ${tail}` : ''})`;
    const verdict = r.stalled
      ? '**stalled** (no fast victim answer within the grace after the bomb; server killed); '
      : r.recoveryMs !== null && r.recoveryMs > r.fastMs
        ? `server recovered ${(r.recoveryMs / 1000).toFixed(1)} s after the bomb; `
        : '';
    return `| ${r.bomb} | ${r.backend} | ${victim} | ${fmt(r.baseline.p95)} | ${verdict}${r.stopped.replace(/\|/g, '\\|')} |`;
  });
  return [head, ...lines].join('\n');
}
