/**
 * The in-sandbox executor (issue 14): what one command and one file write + read cost over
 * its long-lived channel, against what the backends pay today per call: a fresh
 * `docker exec` (create, start, inspect through the Docker API) and a fresh local spawn.
 *
 *   npm run bench -- --only executor          ~200 calls per figure
 *   npm run bench -- --only executor --quick  ~50
 *   node --import tsx bench/executor.ts       the same, alone
 *
 * Local figures run the executor as a plain process over a temporary workspace (no
 * bubblewrap: this measures the channel, not the isolation). Docker figures use one
 * container of benchgym/base-python:3.11 (no network, tmpfs workspace, the binary mounted
 * read-only): the executor over one `docker exec -i` stream, versus one Docker API exec per call.
 */
import os from 'node:os';
import path from 'node:path';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { dockerAvailable, dockerClient } from '../src/sandbox/docker/index.ts';
import { baseImageName } from '../src/env/images.ts';
import { ensureExecutorBinary } from '../src/sandbox/executor/build.ts';
import type { ExecutorClient } from '../src/sandbox/executor/client.ts';
import { startExecutorProcess } from '../src/sandbox/executor/process.ts';
import { envCacheDir } from './mcp_latency.ts';
import { summarize, type LatencyStats } from './stats.ts';

export const EXECUTOR_CASES = [
  'executor_local_exec',
  'executor_local_file',
  'spawn_sh_true',
  'executor_docker_exec',
  'executor_docker_file',
  'docker_exec_true',
  'docker_exec_file',
] as const;
export type ExecutorCase = (typeof EXECUTOR_CASES)[number];

export interface ExecutorBenchResult {
  stats: LatencyStats[];
  skipped?: string;
  extra: Record<string, unknown>;
  table: string;
}

const execFileP = promisify(execFile);
const FILE_60_LINES =
  Array.from({ length: 60 }, (_, i) => `line ${String(i + 1).padStart(2, '0')}: def f${i}(x): return x * ${i} + 1`).join('\n') + '\n';

function ms(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** `warmup` untimed calls, then `n` timed ones, one at a time. */
async function sample(n: number, call: (i: number) => Promise<void>, warmup = 10): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await call(-1 - i);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await call(i);
    out.push(ms(t));
  }
  return out;
}

function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', 'true'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.resume();
    child.stderr.resume();
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`sh exited ${code}`))));
  });
}

/** One Docker API exec, as the Docker backend runs a command today: create, start (attached), inspect. */
async function dockerExec(container: Docker.Container, cmd: string[]): Promise<string> {
  const exec = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    stream.on('data', (b: Buffer) => chunks.push(b));
    stream.once('end', () => resolve());
    stream.once('close', () => resolve());
    stream.once('error', reject);
  });
  const info = await exec.inspect();
  if (info.ExitCode !== 0) throw new Error(`${cmd.join(' ')} exited ${info.ExitCode}`);
  return Buffer.concat(chunks).toString('latin1');
}

async function executorFile(ex: ExecutorClient, i: number): Promise<void> {
  await ex.write('bench/file.py', FILE_60_LINES.replace('line 01', `line ${i}`));
  const r = await ex.read('bench/file.py');
  if (!r.data.toString().includes(`line ${i}:`)) throw new Error('read back something else');
}

function renderTable(stats: LatencyStats[]): string {
  const p50 = (name: string) => stats.find((s) => s.name === name)?.p50;
  const ratio = (a: string, b: string) => {
    const x = p50(a);
    const y = p50(b);
    return x !== undefined && y !== undefined ? `${(y / x).toFixed(1)}x faster than ${b}` : '';
  };
  const note: Record<string, string> = {
    executor_local_exec: ratio('executor_local_exec', 'spawn_sh_true'),
    executor_docker_exec: ratio('executor_docker_exec', 'docker_exec_true'),
    executor_docker_file: ratio('executor_docker_file', 'docker_exec_file'),
  };
  const head = ['figure', 'n', 'p50 ms', 'p95 ms', ''];
  const rows = stats.map((s) => [s.name, String(s.n), s.p50.toFixed(2), s.p95.toFixed(2), note[s.name] ?? '']);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 || i === 4 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export async function runExecutorBench(opts: {
  quick: boolean;
  cases?: ReadonlySet<string>;
  log: (m: string) => void;
}): Promise<ExecutorBenchResult> {
  const want = (c: ExecutorCase) => !opts.cases || opts.cases.size === 0 || opts.cases.has(c) || opts.cases.has('executor');
  const n = opts.quick ? 50 : 200;
  const stats: LatencyStats[] = [];
  const extra: Record<string, unknown> = {};
  const skipped: string[] = [];
  const t0 = process.hrtime.bigint();
  const binary = await ensureExecutorBinary({ cacheDir: envCacheDir() });
  extra.binaryBytes = (await fs.stat(binary)).size;
  extra.firstUseMs = Math.round(ms(t0));

  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-bench-executor-'));
  try {
    if (want('executor_local_exec') || want('executor_local_file')) {
      const t = process.hrtime.bigint();
      const ex = await startExecutorProcess({ binary, root });
      extra.localStartMs = Math.round(ms(t) * 100) / 100;
      try {
        if (want('executor_local_exec')) {
          const samples = await sample(n, async () => {
            const r = await ex.exec('true');
            if (r.exitCode !== 0) throw new Error(`true exited ${r.exitCode}`);
          });
          stats.push(
            summarize(
              'executor_local_exec',
              "exec 'true' through a local executor process (one channel, a fork + exec of sh each)",
              samples,
            ),
          );
        }
        if (want('executor_local_file')) {
          stats.push(
            summarize(
              'executor_local_file',
              'write + read of a 60-line file through a local executor (2 round trips)',
              await sample(n, (i) => executorFile(ex, i)),
            ),
          );
        }
      } finally {
        await ex.close();
      }
    }
    if (want('spawn_sh_true')) {
      stats.push(summarize('spawn_sh_true', "a fresh spawn('sh', ['-c', 'true']) from Node per call", await sample(n, spawnTrue)));
    }
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }

  const dockerCases = (['executor_docker_exec', 'executor_docker_file', 'docker_exec_true', 'docker_exec_file'] as const).filter(want);
  const image = baseImageName('python', '3.11');
  const docker = dockerClient();
  if (dockerCases.length && !(await dockerAvailable())) skipped.push('Docker figures: no Docker daemon');
  else if (
    dockerCases.length &&
    !(await docker
      .getImage(image)
      .inspect()
      .then(
        () => true,
        () => false,
      ))
  )
    skipped.push(`Docker figures: image ${image} is missing`);
  else if (dockerCases.length) {
    const name = `benchgym-bench-executor-${randomBytes(4).toString('hex')}`;
    await execFileP('docker', [
      'run',
      '-d',
      '--rm',
      '--init',
      '--name',
      name,
      '--label',
      'benchgym.server=bench-executor',
      '--network',
      'none',
      '--tmpfs',
      '/workspace',
      '-w',
      '/workspace',
      '-v',
      `${binary}:/usr/local/bin/benchgym-executor:ro`,
      image,
      'sleep',
      'infinity',
    ]);
    try {
      const container = docker.getContainer(name);
      if (want('executor_docker_exec') || want('executor_docker_file')) {
        const t = process.hrtime.bigint();
        const ex = await startExecutorProcess({
          binary: 'benchgym-executor',
          root: '/workspace',
          wrapper: ['docker', 'exec', '-i', name],
          connectTimeoutMs: 60_000,
        });
        extra.dockerStartMs = Math.round(ms(t) * 100) / 100;
        try {
          if (want('executor_docker_exec')) {
            const samples = await sample(n, async () => {
              const r = await ex.exec('true');
              if (r.exitCode !== 0) throw new Error(`true exited ${r.exitCode}`);
            });
            stats.push(
              summarize(
                'executor_docker_exec',
                "exec 'true' through the executor in a container, over one `docker exec -i` stream",
                samples,
              ),
            );
          }
          if (want('executor_docker_file')) {
            stats.push(
              summarize(
                'executor_docker_file',
                'write + read of a 60-line file through the executor in a container (2 round trips)',
                await sample(n, (i) => executorFile(ex, i)),
              ),
            );
          }
        } finally {
          await ex.close();
        }
      }
      if (want('docker_exec_true')) {
        stats.push(
          summarize(
            'docker_exec_true',
            "a fresh Docker API exec of 'true' per call (create, start attached, inspect)",
            await sample(n, () => dockerExec(container, ['true']).then(() => {})),
          ),
        );
      }
      if (want('docker_exec_file')) {
        const samples = await sample(n, async (i) => {
          await dockerExec(container, [
            'sh',
            '-c',
            'mkdir -p bench && printf %s "$0" > bench/file.py',
            FILE_60_LINES.replace('line 01', `line ${i}`),
          ]);
          if (!(await dockerExec(container, ['cat', 'bench/file.py'])).includes(`line ${i}:`)) throw new Error('read back something else');
        });
        stats.push(
          summarize('docker_exec_file', 'write + read of a 60-line file as two fresh Docker API execs (sh -c printf >, cat)', samples),
        );
      }
    } finally {
      await execFileP('docker', ['rm', '-f', name]).catch(() => {});
    }
  }
  const table = renderTable(stats);
  opts.log('executor done');
  return { stats, extra, table, ...(skipped.length ? { skipped: skipped.join('; ') } : {}) };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const quick = process.argv.includes('--quick');
  runExecutorBench({ quick, log: (m) => console.error(`[bench] ${m}`) }).then(
    (r) => {
      console.log(`${os.cpus().length} cpus, load ${os.loadavg()[0]!.toFixed(2)}${r.skipped ? `; skipped: ${r.skipped}` : ''}`);
      console.log(r.table);
      console.log(JSON.stringify(r.extra));
    },
    (err) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exitCode = 1;
    },
  );
}
