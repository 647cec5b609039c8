/**
 * Issue 14's side-by-side figures: benchgym against mini-swe-agent and SWE-ReX in one run,
 * on one machine, on the same image (benchgym/base-python:3.11), loops interleaved call by
 * call so that the load of a shared machine falls on every system alike.
 *
 *   npm run bench -- --only peers            ~8 min
 *   npm run bench -- --only peers --quick    ~3 min
 *
 * The peers are installed from PyPI into a venv for this benchmark only
 * (~/.cache/benchgym/peers-venv, or $BENCHGYM_PEERS_VENV); a peer that cannot be installed is skipped and said so.
 * They are driven by bench/peers/driver.py, which times each peer call itself.
 * SWE-ReX runs in a derived image (base + `pip install swe-rex`, built with --network host);
 * its container keeps `--network none`: swerex-remote listens on a unix socket in a
 * bind-mounted directory (see driver.py) instead of a published TCP port.
 * benchgym is driven over MCP (loopback HTTP). The Docker rows with executor on come twice: the server in
 * a process of its own (bench/throughput/server.ts), as an agent sees it, and in the bench's own process
 * (client and server share one event loop; the pool, cold and in-process rows need the gym at hand).
 */
import os from 'node:os';
import path from 'node:path';
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Gym } from '../src/episode/gym.ts';
import { startHttpServer, type RunningServer } from '../src/server/http.ts';
import { DockerSandboxFactory } from '../src/sandbox/docker/index.ts';
import { dockerAvailable } from '../src/sandbox/docker/index.ts';
import { bubblewrapAvailable, LocalSandboxFactory } from '../src/sandbox/local/index.ts';
import { baseImageName } from '../src/env/images.ts';
import type { SandboxFactory } from '../src/sandbox/types.ts';
import type { ToolContext } from '../src/tools/types.ts';
import { builtinRegistry } from '../bin/builtins.ts';
import { envCacheDir } from './mcp_latency.ts';
import { ServerProcess } from './throughput/server_process.ts';
import { summarize, type LatencyStats } from './stats.ts';

export const PEERS_CASES = ['peers_command', 'peers_file', 'peers_start', 'peers_concurrent64'] as const;
export type PeersCase = (typeof PEERS_CASES)[number];

export interface PeersBenchResult {
  stats: LatencyStats[];
  skipped?: string;
  extra: Record<string, unknown>;
  table: string;
}

const execFileP = promisify(execFile);
const TASK = 'roman-numerals';
const MAX_STEPS = 10_000;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const DRIVER = path.join(HERE, 'peers', 'driver.py');
const FILE_60_LINES =
  Array.from({ length: 60 }, (_, i) => `line_${String(i + 1).padStart(2, '0')} = ${i + 1}  # a line of the benchmark file`).join('\n') +
  '\n';

function ms(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function timedMs(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return ms(t);
}

/** The peers' venv, made on first use; null with the reason when pip cannot install them. */
export async function ensureVenv(
  log: (m: string) => void,
): Promise<{ python: string; versions: Record<string, string> } | { error: string }> {
  const dir = process.env.BENCHGYM_PEERS_VENV ?? path.join(os.homedir(), '.cache', 'benchgym', 'peers-venv');
  const python = path.join(dir, 'bin', 'python');
  const pip = path.join(dir, 'bin', 'pip');
  const versions: Record<string, string> = {};
  try {
    await fs.access(python);
  } catch {
    log(`creating ${dir} (python3 -m venv) for mini-swe-agent and swe-rex`);
    try {
      await execFileP('python3', ['-m', 'venv', dir]);
    } catch (err) {
      return { error: `python3 -m venv failed: ${(err as Error).message}` };
    }
  }
  for (const pkg of ['mini-swe-agent', 'swe-rex']) {
    const shown = await execFileP(pip, ['show', pkg]).catch(() => null);
    if (!shown) {
      log(`pip install ${pkg} into ${dir}`);
      const installed = await execFileP(pip, ['install', '-q', pkg], { maxBuffer: 16 * 1024 ** 2 }).then(
        () => true,
        (err: Error) => {
          log(`  pip install ${pkg} failed, that peer is skipped: ${err.message.split('\n').slice(-3).join(' ')}`);
          return false;
        },
      );
      if (!installed) continue;
    }
    const version = /^Version: (.+)$/m.exec((await execFileP(pip, ['show', pkg])).stdout)?.[1];
    if (version) versions[pkg] = version;
  }
  return { python, versions };
}

/** benchgym/base-python:3.11 plus swe-rex (wheels fetched on the host, installed without network). */
export async function ensureSwerexImage(base: string, pip: string, version: string, log: (m: string) => void): Promise<string> {
  const image = `benchgym-peers/swerex:${version}`;
  if (
    await execFileP('docker', ['image', 'inspect', image]).then(
      () => true,
      () => false,
    )
  )
    return image;
  const ctx = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-peers-image-'));
  try {
    log(`building ${image} from ${base} (docker build --network host)`);
    await execFileP(pip, ['wheel', '-q', `swe-rex==${version}`, '-w', path.join(ctx, 'wheels')], { maxBuffer: 16 * 1024 ** 2 });
    await fs.writeFile(
      path.join(ctx, 'Dockerfile'),
      [
        `FROM ${base}`,
        'COPY wheels /tmp/swerex-wheels',
        'RUN pip install --no-index --find-links /tmp/swerex-wheels --break-system-packages ' +
          'swe-rex && rm -rf /tmp/swerex-wheels && swerex-remote --version',
        '',
      ].join('\n'),
    );
    await execFileP('docker', ['build', '-q', '--network', 'host', '-t', image, ctx], { maxBuffer: 16 * 1024 ** 2 });
    return image;
  } finally {
    await fs.rm(ctx, { recursive: true, force: true });
  }
}

interface DriverReply {
  id: number;
  ok: boolean;
  ms?: number;
  error?: string;
}

/** bench/peers/driver.py: one request, one reply, in order. */
class PeerDriver {
  private next = 1;
  private readonly waiting = new Map<number, (r: DriverReply) => void>();
  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const reply = JSON.parse(line) as DriverReply;
      this.waiting.get(reply.id)?.(reply);
      this.waiting.delete(reply.id);
    });
  }

  static async start(python: string): Promise<PeerDriver> {
    const child = spawn(python, [DRIVER], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, MSWEA_SILENT_STARTUP: '1', PYTHONUNBUFFERED: '1' },
    });
    const stderr: string[] = [];
    child.stderr.on('data', (b: Buffer) => {
      stderr.push(b.toString());
      if (stderr.length > 200) stderr.shift();
    });
    const ready = await new Promise<boolean>((resolve) => {
      const rl = createInterface({ input: child.stdout });
      rl.once('line', (line) => {
        rl.close();
        resolve(line.includes('"ready"'));
      });
      child.once('exit', () => resolve(false));
    });
    if (!ready) throw new Error(`the peers' driver did not start: ${stderr.join('').slice(-2000)}`);
    return new PeerDriver(child);
  }

  call(op: string, args: Record<string, unknown> = {}): Promise<DriverReply> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, resolve);
      this.child.stdin.write(JSON.stringify({ id, op, ...args }) + '\n', (err) => err && reject(err));
    });
  }

  /** A timed peer call: its own figure, or an exception the caller counts. */
  async timed(op: string, args: Record<string, unknown> = {}): Promise<number> {
    const r = await this.call(op, args);
    if (!r.ok || r.ms === undefined) throw new Error(`${op}: ${r.error ?? 'not ok'}`);
    return r.ms;
  }

  async close(): Promise<void> {
    await Promise.race([this.call('close'), new Promise((r) => setTimeout(r, 30_000))]);
    this.child.kill();
  }
}

type McpCall = (name: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** A gym with its HTTP server and an SDK client, as an agent would reach it. */
interface GymOverMcp {
  label: string;
  gym: Gym;
  factory: SandboxFactory;
  server: RunningServer;
  client: Client;
  call: McpCall;
}

async function mcpConnect(url: string): Promise<{ client: Client; call: McpCall }> {
  const client = new Client({ name: 'benchgym-bench-peers', version: '0.1.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const call: McpCall = async (name, args) => {
    const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 30 * 60_000 });
    if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content).slice(0, 500)}`);
    const data = (r.structuredContent ?? {}) as Record<string, unknown>;
    if (name === 'run_command' && data.exitCode !== 0)
      throw new Error(`run_command exited ${String(data.exitCode)}: ${JSON.stringify(data).slice(0, 300)}`);
    return data;
  };
  return { client, call };
}

async function gymOverMcp(
  label: string,
  factory: SandboxFactory,
  dataDir: string,
  cacheDir: string,
  maxEpisodes = 64,
): Promise<GymOverMcp> {
  const gym = new Gym({
    registry: builtinRegistry(),
    dataDir: path.join(dataDir, label.replace(/\W+/g, '-')),
    cacheDir,
    sandboxes: factory,
    defaults: { maxEpisodes },
  });
  const server = await startHttpServer(gym, { host: '127.0.0.1', port: 0 });
  const { client, call } = await mcpConnect(`${server.url}/mcp`);
  return { label, gym, factory, server, client, call };
}

async function closeGym(g: GymOverMcp): Promise<void> {
  await g.client.close().catch(() => {});
  await g.server.close();
  await g.gym.close();
}

/** A gym served by a process of its own, as an agent reaches it. */
interface GymOutOfProcess {
  label: string;
  server: ServerProcess;
  client: Client;
  call: McpCall;
}

const startEpisode = async (g: { call: McpCall }) =>
  (await g.call('start_episode', { task_id: TASK, max_steps: MAX_STEPS })).episodeId as string;
const runTrue = (g: { call: McpCall }, id: string) => g.call('run_command', { episode_id: id, command: 'true' });

/** Samples per figure, and errors per figure (a peer's failure is counted, not fatal). */
class Figures {
  readonly samples = new Map<string, { description: string; ms: number[]; errors: number; lastError?: string }>();
  async add(name: string, description: string, fn: () => Promise<number | unknown>): Promise<void> {
    let f = this.samples.get(name);
    if (!f) this.samples.set(name, (f = { description, ms: [], errors: 0 }));
    const t = process.hrtime.bigint();
    try {
      const own = await fn();
      f.ms.push(typeof own === 'number' ? own : ms(t));
    } catch (err) {
      f.errors++;
      f.lastError = (err as Error).message.slice(0, 300);
    }
  }
  stats(): LatencyStats[] {
    return [...this.samples].filter(([, f]) => f.ms.length).map(([name, f]) => summarize(name, f.description, f.ms));
  }
  errors(): Record<string, { errors: number; lastError?: string }> {
    return Object.fromEntries(
      [...this.samples].filter(([, f]) => f.errors).map(([name, f]) => [name, { errors: f.errors, lastError: f.lastError }]),
    );
  }
}

/** Every step once per round, `rounds` times: each system sees the same load. */
async function interleave(rounds: number, steps: (() => Promise<void>)[]): Promise<void> {
  for (let i = 0; i < rounds; i++) for (const step of steps) await step();
}

export async function runPeersBench(opts: {
  quick: boolean;
  cases?: ReadonlySet<string>;
  log: (m: string) => void;
}): Promise<PeersBenchResult> {
  const want = (c: PeersCase) => !opts.cases || opts.cases.size === 0 || opts.cases.has(c) || opts.cases.has('peers');
  const log = opts.log;
  const rounds = { command: opts.quick ? 30 : 100, file: opts.quick ? 12 : 50, start: opts.quick ? 4 : 20, concurrentCommands: 20 };
  const figures = new Figures();
  const loadAtStart = Math.round(os.loadavg()[0]! * 100) / 100;
  const extra: Record<string, unknown> = { rounds };
  const skipped: string[] = [];
  const base = baseImageName('python', '3.11');
  const cacheDir = envCacheDir();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-bench-peers-'));
  const docker =
    (await dockerAvailable()) &&
    (await execFileP('docker', ['image', 'inspect', base]).then(
      () => true,
      () => false,
    ));
  if (!docker) skipped.push(`Docker figures: no Docker daemon or no ${base}`);
  const bwrap = await bubblewrapAvailable();
  if (!bwrap) skipped.push('bubblewrap figures: bubblewrap does not work here');

  let driver: PeerDriver | undefined;
  let msa = false;
  let rex = false;
  let rexImage = '';
  const gyms: GymOverMcp[] = [];
  let remote: GymOutOfProcess | undefined;
  try {
    const venv = await ensureVenv(log);
    if ('error' in venv) skipped.push(`all peers: ${venv.error}`);
    else {
      extra.peerVersions = venv.versions;
      msa = 'mini-swe-agent' in venv.versions;
      rex = 'swe-rex' in venv.versions;
      if (!msa) skipped.push('mini-swe-agent: pip install failed');
      if (!rex) skipped.push('SWE-ReX: pip install failed');
      if (rex && docker) {
        rexImage = await ensureSwerexImage(base, path.join(path.dirname(venv.python), 'pip'), venv.versions['swe-rex']!, log).catch(
          (err: Error) => {
            skipped.push(`SWE-ReX in Docker: image build failed: ${err.message.slice(0, 300)}`);
            return '';
          },
        );
      }
      if (msa || rex) {
        driver = await PeerDriver.start(venv.python).catch((err: Error) => {
          skipped.push(`all peers: ${err.message.slice(0, 500)}`);
          return undefined;
        });
      }
    }
    const rexDocker = driver && rex && rexImage !== '';

    log('starting the benchgym gyms (Docker, pool of 2; local bubblewrap, none; each with the in-sandbox executor)');
    const dockerOn = docker
      ? await gymOverMcp('docker executor on', new DockerSandboxFactory({ serverId: 'bench-peers-on', poolSize: 2 }), dataDir, cacheDir)
      : undefined;
    const localModes = [...(bwrap ? (['bwrap'] as const) : []), 'none'] as const;
    const locals: GymOverMcp[] = [];
    for (const isolation of localModes) {
      const dir = path.join(dataDir, `local-${isolation}`);
      const label = `local ${isolation} executor on`;
      locals.push(
        await gymOverMcp(
          label,
          new LocalSandboxFactory({ baseDir: path.join(dir, 'sandboxes'), isolation, cacheDir, privatePaths: [dir] }),
          dataDir,
          cacheDir,
        ),
      );
    }
    gyms.push(...[dockerOn].filter((g): g is GymOverMcp => !!g), ...locals);
    if (docker) {
      const server = await ServerProcess.start('docker', 8, path.join(dataDir, 'out-of-process'));
      remote = { label: 'docker executor on, server in its own process', server, ...(await mcpConnect(`${server.url}/mcp`)) };
    }
    const episodes = new Map<GymOverMcp | GymOutOfProcess, string>();
    for (const g of [...gyms, ...(remote ? [remote] : [])]) {
      const first = await startEpisode(g); // builds / checks the env and the image once
      await g.call('end_episode', { episode_id: first });
      const id = await startEpisode(g);
      for (let i = 0; i < 5; i++) await runTrue(g, id);
      episodes.set(g, id);
    }
    if (driver && msa) {
      await driver.timed('msa_local_start');
      if (docker) await driver.timed('msa_docker_start', { image: base });
    }
    if (rexDocker) await driver!.timed('rex_start', { image: rexImage });

    if (want('peers_command')) {
      log(`per-command round trip: ${rounds.command} rounds, every system once per round`);
      const steps: (() => Promise<void>)[] = [...gyms, ...(remote ? [remote] : [])].map(
        (g) => () =>
          figures.add(`benchgym ${g.label}: run_command true`, `tools/call run_command {command:'true'} over MCP, ${g.label}`, () =>
            runTrue(g, episodes.get(g)!),
          ),
      );
      if (remote)
        steps.push(() =>
          figures.add('benchgym MCP ping, server in its own process', 'MCP ping on /mcp of the server process, no tool runs', () =>
            remote!.client.ping(),
          ),
        );
      // Where benchgym's time goes: the MCP + HTTP floor, and the same tool without MCP.
      const ctx: ToolContext = { signal: new AbortController().signal, progress() {} };
      if (gyms[0])
        steps.push(() =>
          figures.add('benchgym MCP ping (HTTP + JSON-RPC floor)', 'MCP ping on /mcp, no tool runs', () => gyms[0]!.client.ping()),
        );
      for (const g of [dockerOn, locals[0]].filter((x): x is GymOverMcp => !!x)) {
        steps.push(() =>
          figures.add(
            `benchgym ${g.label}: run_command true in-process`,
            `gym.callTool run_command {command:'true'} without MCP/HTTP, ${g.label}`,
            async () => {
              const r = await g.gym.callTool('run_command', { command: 'true' }, ctx, episodes.get(g)!);
              if ((r.data as { exitCode?: number | null }).exitCode !== 0)
                throw new Error(`run_command 'true' failed: ${JSON.stringify(r.data).slice(0, 300)}`);
            },
          ),
        );
      }
      if (driver && msa) {
        steps.push(() =>
          figures.add(
            "mini-swe-agent LocalEnvironment: execute('true')",
            'LocalEnvironment.execute: subprocess.Popen(shell=True) per command, on the host',
            () => driver!.timed('msa_local_exec'),
          ),
        );
        if (docker)
          steps.push(() =>
            figures.add(
              "mini-swe-agent DockerEnvironment: execute('true')",
              `DockerEnvironment.execute: a docker exec (CLI) per command, ${base}, --network none`,
              () => driver!.timed('msa_docker_exec'),
            ),
          );
      }
      if (rexDocker) {
        steps.push(() =>
          figures.add(
            "SWE-ReX DockerDeployment: execute('true')",
            'RemoteRuntime.execute(Command(true, shell=True)) to swerex-remote in the container (unix socket)',
            () => driver!.timed('rex_execute'),
          ),
        );
        steps.push(() =>
          figures.add(
            "SWE-ReX DockerDeployment: run_in_session('true')",
            'RemoteRuntime.run_in_session(BashAction(true)) in its bash session in the container',
            () => driver!.timed('rex_run_in_session'),
          ),
        );
      }
      if (driver && rex)
        steps.push(() =>
          figures.add(
            "SWE-ReX LocalRuntime: execute('true')",
            'LocalRuntime.execute(Command(true, shell=True)) in the driver process, on the host',
            () => driver!.timed('rex_local_execute'),
          ),
        );
      await interleave(rounds.command, steps);
    }

    if (want('peers_file')) {
      log(`file write + read: ${rounds.file} rounds`);
      const fileGyms = [...gyms.filter((g) => g.label !== 'local none executor on'), ...(remote ? [remote] : [])];
      const edits = new Map<GymOverMcp | GymOutOfProcess, number>();
      for (const g of fileGyms) {
        await g.call('create_file', { episode_id: episodes.get(g)!, path: 'bench_file.py', content: FILE_60_LINES });
        edits.set(g, 0);
      }
      const steps: (() => Promise<void>)[] = fileGyms.map((g) => async () => {
        const id = episodes.get(g)!;
        let k = edits.get(g)! + 1;
        if (k > 60) {
          // untimed: every old_str stays unique
          await g.call('create_file', { episode_id: id, path: 'bench_file.py', content: FILE_60_LINES });
          k = 1;
        }
        edits.set(g, k);
        const line = `line_${String(k).padStart(2, '0')} = ${k}  #`;
        await figures.add(
          `benchgym ${g.label}: edit_file + view_file`,
          `tools/call edit_file (one line) then view_file of a 60-line file over MCP, ${g.label}`,
          async () => {
            await g.call('edit_file', { episode_id: id, path: 'bench_file.py', old_str: line, new_str: line.replace('  #', ' #') });
            await g.call('view_file', { episode_id: id, path: 'bench_file.py' });
          },
        );
      });
      if (rexDocker)
        steps.push(() =>
          figures.add(
            'SWE-ReX DockerDeployment: write_file + read_file',
            'RemoteRuntime.write_file then read_file of the same 60-line file in the container',
            () => driver!.timed('rex_file', { content: FILE_60_LINES }),
          ),
        );
      await interleave(rounds.file, steps);
    }
    for (const [g, id] of episodes) await g.call('end_episode', { episode_id: id });
    episodes.clear();

    if (want('peers_start')) {
      log(`starts: ${rounds.start} rounds (warm pool and cold, benchgym Docker; peers' starts), each until its first command returns`);
      const colds: GymOverMcp[] = [];
      if (docker) {
        for (const executor of ['on'] as const) {
          const g = await gymOverMcp(
            `docker cold executor ${executor}`,
            new DockerSandboxFactory({ serverId: `bench-peers-cold-${executor}`, poolSize: 0 }),
            dataDir,
            cacheDir,
          );
          gyms.push(g);
          colds.push(g);
          await g.call('end_episode', { episode_id: await startEpisode(g) });
        }
      }
      const untilFirstCommand = (g: GymOverMcp, before?: () => Promise<void>) => async () => {
        await before?.(); // refill the pool outside the timed region, as an idle server would
        let id = '';
        await figures.add(
          `benchgym ${g.label}: start until first command`,
          `tools/call start_episode then the first run_command 'true' returns, over MCP, ${g.label}`,
          async () => {
            id = await startEpisode(g);
            await runTrue(g, id);
          },
        );
        if (id) await g.call('end_episode', { episode_id: id });
      };
      const steps: (() => Promise<void>)[] = [];
      for (const g of [dockerOn].filter((x): x is GymOverMcp => !!x)) {
        const factory = g.factory as DockerSandboxFactory;
        const probe = await startEpisode(g);
        const image = g.gym.episode(probe).env.image!;
        await g.call('end_episode', { episode_id: probe });
        steps.push(untilFirstCommand({ ...g, label: `${g.label.replace('docker', 'docker warm')}` }, () => factory.warm(image)));
      }
      for (const g of colds) steps.push(untilFirstCommand(g));
      if (locals[0]) steps.push(untilFirstCommand(locals[0]));
      if (driver && msa) {
        if (docker) {
          steps.push(async () => {
            await figures.add(
              'mini-swe-agent DockerEnvironment: start until first command',
              "DockerEnvironment(...) (docker run -d) then execute('true') returns",
              () => driver!.timed('msa_docker_start', { image: base }),
            );
            await driver!.call('msa_docker_stop');
          });
        }
        steps.push(() =>
          figures.add(
            'mini-swe-agent LocalEnvironment: start until first command',
            "LocalEnvironment(...) then execute('true') returns",
            () => driver!.timed('msa_local_start'),
          ),
        );
      }
      if (rexDocker) {
        steps.push(async () => {
          await figures.add(
            'SWE-ReX DockerDeployment: start until first command',
            "DockerDeployment.start() (docker run, poll is_alive), create_session, run_in_session('true') returns",
            () => driver!.timed('rex_start', { image: rexImage }),
          );
          await driver!.call('rex_stop');
        });
      }
      await interleave(rounds.start, steps);
    }

    for (const g of gyms.splice(0)) await closeGym(g);
    await driver?.close();
    driver = undefined;

    if (want('peers_concurrent64')) {
      const backends: { label: string; factory: () => SandboxFactory }[] = [
        {
          label: `local ${bwrap ? 'bwrap' : 'none'} executor on`,
          factory: () =>
            new LocalSandboxFactory({
              baseDir: path.join(dataDir, 'concurrent-local', 'sandboxes'),
              isolation: bwrap ? 'bwrap' : 'none',
              cacheDir,
              privatePaths: [path.join(dataDir, 'concurrent-local')],
            }),
        },
      ];
      if (docker)
        backends.push({
          label: 'docker executor on',
          factory: () =>
            new DockerSandboxFactory({ serverId: 'bench-peers-concurrent', poolSize: 0, maxContainers: 72, capacityWaitMs: 300_000 }),
        });
      const concurrent: Record<string, unknown> = {};
      for (const b of backends) {
        log(`64 concurrent episodes x ${rounds.concurrentCommands} run_command over MCP, ${b.label}`);
        const g = await gymOverMcp(`concurrent ${b.label}`, b.factory(), dataDir, cacheDir, 80);
        try {
          await g.call('end_episode', { episode_id: await startEpisode(g) });
          const clients = await Promise.all(Array.from({ length: 64 }, () => mcpConnect(`${g.server.url}/mcp`)));
          const starts: number[] = [];
          const commands: number[] = [];
          const failures: string[] = [];
          const wall = process.hrtime.bigint();
          await Promise.all(
            clients.map(async (c) => {
              let id: string | undefined;
              try {
                starts.push(
                  await timedMs(
                    async () => (id = (await c.call('start_episode', { task_id: TASK, max_steps: MAX_STEPS })).episodeId as string),
                  ),
                );
                for (let i = 0; i < rounds.concurrentCommands; i++) {
                  try {
                    commands.push(await timedMs(() => c.call('run_command', { episode_id: id, command: 'true' })));
                  } catch (err) {
                    failures.push((err as Error).message.slice(0, 200));
                  }
                }
              } catch (err) {
                failures.push((err as Error).message.slice(0, 200));
              } finally {
                if (id)
                  await c
                    .call('end_episode', { episode_id: id })
                    .catch((err: Error) => failures.push(`end_episode: ${err.message.slice(0, 200)}`));
              }
            }),
          );
          const wallMs = Math.round(ms(wall));
          for (const c of clients) await c.client.close().catch(() => {});
          const name = `benchgym ${b.label}: 64 concurrent episodes`;
          if (starts.length)
            figures.samples.set(`${name}, start_episode`, {
              description: `64 concurrent start_episode over MCP (64 clients), ${b.label}`,
              ms: starts,
              errors: 0,
            });
          if (commands.length)
            figures.samples.set(`${name}, run_command true`, {
              description: `run_command 'true' over MCP while 64 episodes run 20 each at once, ${b.label}`,
              ms: commands,
              errors: 0,
            });
          concurrent[b.label] = {
            wallMs,
            episodes: 64,
            commandsPerEpisode: rounds.concurrentCommands,
            commandsOk: commands.length,
            errors: failures.length,
            firstErrors: failures.slice(0, 3),
          };
          log(`  ${b.label}: wall ${wallMs} ms, ${commands.length} commands ok, ${failures.length} errors`);
        } finally {
          await closeGym(g);
        }
      }
      extra.concurrent64 = concurrent;
    }
  } finally {
    await remote?.client.close().catch(() => {});
    await remote?.server.stop();
    for (const g of gyms) await closeGym(g).catch(() => {});
    await driver?.close().catch(() => {});
    await fs.rm(dataDir, { recursive: true, force: true });
  }
  const stats = figures.stats();
  extra.errors = figures.errors();
  extra.ratios = ratios(stats);
  extra.loadAvg1mAtEnd = Math.round(os.loadavg()[0]! * 100) / 100;
  const result = { stats, extra, table: renderTable(stats, extra), ...(skipped.length ? { skipped: skipped.join('; ') } : {}) };
  // run.ts keeps latest.json for the default run: the side-by-side figures go to a file of their own.
  const file = path.join(os.tmpdir(), 'benchgym-peers-results.json');
  await fs.writeFile(
    file,
    JSON.stringify(
      { date: new Date().toISOString(), cpus: os.cpus().length, loadAvg1mAtStart: loadAtStart, quick: opts.quick, ...result },
      null,
      2,
    ) + '\n',
  );
  opts.log(`peers done; figures in ${file}`);
  return result;
}

/** The ratios issue 14's targets name: benchgym p50 / peer p50. */
const TARGETS: [string, string, string, number][] = [
  [
    'Docker run_command true vs SWE-ReX execute (target <= 2x)',
    'benchgym docker executor on: run_command true',
    "SWE-ReX DockerDeployment: execute('true')",
    2,
  ],
  [
    'Docker run_command true, server in its own process, vs SWE-ReX execute (target <= 1.2x)',
    'benchgym docker executor on, server in its own process: run_command true',
    "SWE-ReX DockerDeployment: execute('true')",
    1.2,
  ],
  [
    'Docker run_command true vs mini-swe-agent DockerEnvironment',
    'benchgym docker executor on: run_command true',
    "mini-swe-agent DockerEnvironment: execute('true')",
    NaN,
  ],
  [
    'local (bwrap) run_command true vs mini-swe-agent LocalEnvironment (target <= 2x)',
    'benchgym local bwrap executor on: run_command true',
    "mini-swe-agent LocalEnvironment: execute('true')",
    2,
  ],
  [
    'local (none) run_command true vs mini-swe-agent LocalEnvironment',
    'benchgym local none executor on: run_command true',
    "mini-swe-agent LocalEnvironment: execute('true')",
    2,
  ],
  [
    'Docker edit_file + view_file vs SWE-ReX write_file + read_file (target <= 2x)',
    'benchgym docker executor on: edit_file + view_file',
    'SWE-ReX DockerDeployment: write_file + read_file',
    2,
  ],
  [
    'Docker edit_file + view_file, server in its own process, vs SWE-ReX write_file + read_file (target <= 1.2x)',
    'benchgym docker executor on, server in its own process: edit_file + view_file',
    'SWE-ReX DockerDeployment: write_file + read_file',
    1.2,
  ],
  [
    'Docker warm start until first command vs mini-swe-agent start (target < 1x)',
    'benchgym docker warm executor on: start until first command',
    'mini-swe-agent DockerEnvironment: start until first command',
    1,
  ],
  [
    'Docker warm start until first command vs SWE-ReX start',
    'benchgym docker warm executor on: start until first command',
    'SWE-ReX DockerDeployment: start until first command',
    NaN,
  ],
  [
    'Docker cold start until first command vs mini-swe-agent start',
    'benchgym docker cold executor on: start until first command',
    'mini-swe-agent DockerEnvironment: start until first command',
    NaN,
  ],
  [
    'Docker cold start until first command vs SWE-ReX start',
    'benchgym docker cold executor on: start until first command',
    'SWE-ReX DockerDeployment: start until first command',
    NaN,
  ],
];

function ratios(stats: LatencyStats[]): Record<string, { ratio: number; target?: number; met?: boolean }> {
  const p50 = (name: string) => stats.find((s) => s.name === name)?.p50;
  const out: Record<string, { ratio: number; target?: number; met?: boolean }> = {};
  for (const [label, ours, peer, target] of TARGETS) {
    const a = p50(ours);
    const b = p50(peer);
    if (a === undefined || b === undefined) continue;
    const ratio = Math.round((a / b) * 100) / 100;
    out[label] = Number.isNaN(target) ? { ratio } : { ratio, target, met: target === 1 ? ratio < 1 : ratio <= target };
  }
  return out;
}

function renderTable(stats: LatencyStats[], extra: Record<string, unknown>): string {
  const head = ['figure', 'n', 'p50 ms', 'p95 ms'];
  const rows = stats.map((s) => [s.name, String(s.n), s.p50.toFixed(2), s.p95.toFixed(2)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const ratioLines = Object.entries(extra.ratios as ReturnType<typeof ratios>).map(
    ([label, r]) => `  ${label}: ${r.ratio}x${r.met === undefined ? '' : r.met ? ' (met)' : ' (NOT met)'}`,
  );
  const concurrent = Object.entries(
    (extra.concurrent64 ?? {}) as Record<string, { wallMs: number; commandsOk: number; errors: number }>,
  ).map(([label, c]) => `  64 x 20 ${label}: wall ${c.wallMs} ms, ${c.commandsOk} commands ok, ${c.errors} errors`);
  return [
    line(head),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map(line),
    '',
    'ratios (benchgym p50 / peer p50):',
    ...ratioLines,
    ...concurrent,
  ].join('\n');
}

/** Registered in bench/run.ts as an opt-in benchmark. */
export const PEERS_BENCHMARK = { name: 'peers', cases: PEERS_CASES, optIn: true, run: runPeersBench };

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runPeersBench({ quick: process.argv.includes('--quick'), log: (m) => console.error(`[bench] ${m}`) }).then(
    (r) => {
      console.log(`${os.cpus().length} cpus, load ${os.loadavg()[0]!.toFixed(2)}${r.skipped ? `; skipped: ${r.skipped}` : ''}`);
      console.log(r.table);
      console.log(JSON.stringify(r.extra, null, 2));
    },
    (err) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exitCode = 1;
    },
  );
}
