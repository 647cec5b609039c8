/**
 * Start-up figures (issue 34): `--version`, `--help`, `tasks --suite examples` and `serve` until
 * it listens, for each benchgym given, in one interleaved run (A B C A B C ...: a machine whose
 * load drifts moves every variant alike), with the peers' own start-up beside them where it applies.
 *
 *   node --import tsx bench/startup.ts --variant after=PACKAGE_DIR --variant before=CHECKOUT [--runs 7] [--peers VENV]
 *
 * A variant is a directory holding bin/benchgym.js: a checkout (run through tsx) or an installed
 * package (node_modules/benchgym: compiled JavaScript). Peers: mini-swe-agent's `mini --help` and
 * SWE-ReX's `swerex-remote --help` and its server until it answers /is_alive, from a venv holding
 * both (default $BENCHGYM_PEERS_VENV; none: no peer rows). Wall time is spawn to exit (for serve:
 * spawn to the banner naming its URLs, printed once it listens); peak RSS is the kernel's
 * (/usr/bin/time -f %M), of the one process.
 */
import { spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface Sample {
  ms: number;
  rssMb?: number;
}

/** Runs argv to its exit under /usr/bin/time; the wall time and the peak RSS of the process. */
function timed(argv: string[], cwd: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn('/usr/bin/time', ['-f', 'RSS_KB=%M', ...argv], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const rss = /RSS_KB=(\d+)/.exec(err);
      if (code !== 0) return reject(new Error(`${argv.join(' ')} exited ${code}: ${err.slice(-500)}`));
      resolve({ ms, ...(rss ? { rssMb: Number(rss[1]) / 1024 } : {}) });
    });
  });
}

/** Spawns argv and resolves when `ready` says so (polled on the output, or by probing), then kills its process group. */
function untilReady(argv: string[], cwd: string, ready: (output: string) => boolean | Promise<boolean>): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(argv[0]!, argv.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      clearInterval(poll);
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
      if (err) reject(err);
      else resolve({ ms });
    };
    const check = async () => {
      if (!done && (await ready(out))) finish();
    };
    child.stdout.on('data', (d: Buffer) => ((out += d.toString()), void check()));
    child.stderr.on('data', (d: Buffer) => ((out += d.toString()), void check()));
    const poll = setInterval(() => void check(), 5);
    child.on('exit', (code) => finish(new Error(`${argv.join(' ')} exited ${code} before it was ready: ${out.slice(-500)}`)));
    setTimeout(() => finish(new Error(`${argv.join(' ')}: not ready in 120 s: ${out.slice(-500)}`)), 120_000).unref();
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

const stat = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor((s.length - 1) / 2)]!, max: s.at(-1)! };
};

interface Case {
  name: string;
  variant: string;
  run(): Promise<Sample>;
}

const { values } = parseArgs({
  options: { variant: { type: 'string', multiple: true }, runs: { type: 'string' }, peers: { type: 'string' }, json: { type: 'string' } },
});
const runs = Number(values.runs ?? 7);
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-startup-'));
const cacheDir = process.env.BENCHGYM_CACHE ?? path.join(os.homedir(), '.cache', 'benchgym');
const cases: Case[] = [];
for (const spec of values.variant ?? []) {
  const [variant, dir] = spec.split('=') as [string, string];
  const bin = path.join(path.resolve(dir), 'bin', 'benchgym.js');
  if (!existsSync(bin)) throw new Error(`--variant ${spec}: no bin/benchgym.js in ${dir}`);
  const cli = (...args: string[]) => ['node', bin, ...args];
  cases.push({ name: '--version', variant, run: () => timed(cli('--version'), dataDir) });
  cases.push({ name: '--help', variant, run: () => timed(cli('--help'), dataDir) });
  cases.push({
    name: 'tasks --suite examples',
    variant,
    run: () => timed(cli('tasks', '--suite', 'examples', '--data-dir', dataDir), dataDir),
  });
  cases.push({
    name: 'serve: listening',
    variant,
    run: async () =>
      untilReady(cli('serve', '--port', String(await freePort()), '--data-dir', dataDir, '--cache-dir', cacheDir), dataDir, (out) =>
        out.includes('viewer (browser)'),
      ),
  });
}
const peers = values.peers ?? process.env.BENCHGYM_PEERS_VENV;
if (peers && existsSync(path.join(peers, 'bin', 'mini')))
  cases.push({
    name: '--help',
    variant: 'mini-swe-agent (mini --help)',
    run: () => timed([path.join(peers, 'bin', 'mini'), '--help'], dataDir),
  });
if (peers && existsSync(path.join(peers, 'bin', 'swerex-remote'))) {
  const swerex = path.join(peers, 'bin', 'swerex-remote');
  cases.push({ name: '--help', variant: 'SWE-ReX (swerex-remote --help)', run: () => timed([swerex, '--help'], dataDir) });
  cases.push({
    name: 'serve: listening',
    variant: 'SWE-ReX (swerex-remote)',
    run: async () => {
      const port = await freePort();
      return untilReady([swerex, '--port', String(port), '--auth-token', 'x'], dataDir, async () => {
        const r = await fetch(`http://127.0.0.1:${port}/is_alive`, { headers: { 'X-API-Key': 'x' } }).catch(() => null);
        return r?.ok ?? false;
      });
    },
  });
}

const samples = new Map<Case, Sample[]>(cases.map((c) => [c, []]));
// One warm-up round (disk caches, the executor in the cache), then the counted rounds, interleaved.
for (let round = 0; round <= runs; round++) {
  for (const c of cases) {
    const s = await c.run();
    if (round > 0) samples.get(c)!.push(s);
  }
  process.stderr.write(`round ${round}/${runs} done (load ${os.loadavg()[0]!.toFixed(1)})\n`);
}
await fs.rm(dataDir, { recursive: true, force: true });

const rows = cases.map((c) => {
  const ss = samples.get(c)!;
  const ms = stat(ss.map((s) => s.ms));
  const rss = ss.every((s) => s.rssMb !== undefined) ? stat(ss.map((s) => s.rssMb!)) : undefined;
  return { case: c.name, variant: c.variant, ms, ...(rss ? { rssMb: rss } : {}) };
});
const f = (n: number) => n.toFixed(0);
process.stdout.write(
  `load average at the end: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}; ${os.cpus().length} cores; ${runs} runs each\n`,
);
process.stdout.write('| command | variant | wall ms min / median / max | peak RSS MB min / median |\n|---|---|---|---|\n');
for (const r of [...rows].sort((a, b) => a.case.localeCompare(b.case))) {
  process.stdout.write(
    `| ${r.case} | ${r.variant} | ${f(r.ms.min)} / ${f(r.ms.median)} / ${f(r.ms.max)} ` +
      `| ${r.rssMb ? `${f(r.rssMb.min)} / ${f(r.rssMb.median)}` : ''} |\n`,
  );
}
if (values.json) await fs.writeFile(values.json, JSON.stringify({ load: os.loadavg(), runs, rows }, null, 2) + '\n');
