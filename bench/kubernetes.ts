/**
 * The Kubernetes backend side by side with the Docker backend, in one run, on the same image
 * (benchgym/base-python:3.11): sandbox start cold and from the warm pool, the exec round trip
 * of `true`, a file write + read round trip of 1 KiB and 1 MiB, and start latency at 1, 8, 32
 * and 64 concurrent sandboxes. Sandbox level (factory.create, sandbox.exec): no MCP, no episode.
 * Both with the in-sandbox executor (required; the figures of one API exec per operation, before
 * it was, stay in the docs' history).
 *
 *   npx tsx bench/kubernetes.ts [--quick] [--levels 1,8,32,64]
 *
 * Needs the project's cluster (docker/cluster/up.sh; kubeconfig $BENCHGYM_KUBECONFIG, default
 * /tmp/benchgym-cluster/kubeconfig) and the Docker daemon. Writes bench/results/kubernetes.json
 * and prints the markdown table of docs/BENCHMARKS.md, "The Kubernetes backend".
 */
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { baseImageName } from '../src/env/images.ts';
import { DockerSandboxFactory } from '../src/sandbox/docker/index.ts';
import { dockerAvailable } from '../src/sandbox/docker/index.ts';
import { KubernetesSandboxFactory, loadImageBy } from '../src/sandbox/kubernetes/index.ts';
import type { Sandbox, SandboxFactory } from '../src/sandbox/types.ts';
import { summarize, type LatencyStats } from './stats.ts';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const RESULTS_FILE = path.join(BENCH_DIR, 'results', 'kubernetes.json');
const IMAGE = baseImageName('python', '3.11');
const NAMESPACE = 'benchgym-bench';
const MiB = 1024 ** 2;

const { values } = parseArgs({ options: { quick: { type: 'boolean' }, levels: { type: 'string' } } });
const quick = values.quick ?? false;
const levels = (values.levels ?? '1,8,32,64').split(',').map(Number);
const log = (m: string) => process.stderr.write(`[kubernetes bench] ${m}\n`);
const kubeconfig = process.env.BENCHGYM_KUBECONFIG ?? path.join(process.env.BENCHGYM_CLUSTER_DIR ?? '/tmp/benchgym-cluster', 'kubeconfig');
const serverId = `bench-${randomBytes(4).toString('hex')}`;
const create = { seed: {}, env: { image: IMAGE, vars: {} } };

type Backend = 'docker' | 'kubernetes';
/** Small CPU requests and memory limits, so 64 sandboxes fit a 2-core node, as the concurrency test does. */
const LIMITS = { memoryBytes: 256 * MiB, requestCpuMillis: 10 };

function factory(
  backend: Backend,
  poolSize: number,
  tag: string,
): SandboxFactory & { close(): Promise<void>; warm(image: string): Promise<void> } {
  if (backend === 'docker')
    return new DockerSandboxFactory({
      serverId: `${serverId}-${tag}`,
      poolSize,
      maxContainers: 80,
      limits: { memoryBytes: LIMITS.memoryBytes },
    });
  return new KubernetesSandboxFactory({
    kubeconfig,
    namespace: NAMESPACE,
    serverId: `${serverId}-${tag}`,
    poolSize,
    maxPods: 80,
    capacityWaitMs: 600_000,
    limits: { ...LIMITS, startTimeoutMs: 600_000 },
  });
}

const hr = () => process.hrtime.bigint();
const since = (t: bigint) => Number(hr() - t) / 1e6;

async function samples(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = hr();
    await fn();
    out.push(since(t));
  }
  return out;
}

const stats: LatencyStats[] = [];
const table: Record<string, Partial<Record<Backend, LatencyStats>>> = {};
const concurrency: Record<string, Record<number, { p50: number; p95: number; wallMs: number; failed: number; error?: string }>> = {};
function add(row: string, backend: Backend, description: string, s: number[]): void {
  const st = summarize(`${row}_${backend}`, description, s);
  stats.push(st);
  (table[row] ??= {})[backend] = st;
  log(`${st.name}: p50 ${st.p50} ms, p95 ${st.p95} ms (n ${st.n})`);
}

/** Cold and warm starts, exec round trip, file round trips of one backend. */
async function single(backend: Backend): Promise<void> {
  const n = quick ? 5 : 20;
  {
    const cold = factory(backend, 0, `${backend}-cold`);
    try {
      await (await cold.create(create)).destroy(); // first use: executor binary, image checks
      add(
        'start_cold',
        backend,
        "create a sandbox, no pool (container / pod started, executor up, start state laid out) until its first exec 'true' returns",
        await samples(n, async () => {
          const sb = await cold.create(create);
          await sb.exec('true');
          void sb.destroy().catch(() => {});
        }),
      );
    } finally {
      await cold.close();
    }
    const warm = factory(backend, 2, `${backend}-warm`);
    try {
      const s: number[] = [];
      for (let i = 0; i < n; i++) {
        await warm.warm(IMAGE); // refilled outside the timed region, as an idle server would be
        const t = hr();
        const sb = await warm.create(create);
        await sb.exec('true');
        s.push(since(t));
        await sb.destroy();
      }
      add('start_warm', backend, "create a sandbox from a warm pool of 2 (taken ready) until its first exec 'true' returns", s);
    } finally {
      await warm.close();
    }
  }
  const f = factory(backend, 0, `${backend}-ops`);
  let sb: Sandbox | undefined;
  try {
    sb = await f.create(create);
    const box = sb;
    await box.exec('true');
    add('exec_true', backend, "exec 'true' round trip (leftover sweep included)", await samples(quick ? 30 : 100, () => box.exec('true')));
    for (const [label, size] of [
      ['file_1k', 1024],
      ['file_1m', MiB],
    ] as const) {
      const data = randomBytes(size);
      add(
        label,
        backend,
        `writeFile + readFile of ${size === 1024 ? '1 KiB' : '1 MiB'}, bytes checked`,
        await samples(quick ? 10 : 30, async () => {
          await box.writeFile('bench.bin', data);
          const back = await box.readFile('bench.bin');
          if (!back.equals(data)) throw new Error(`${backend}: the ${label} round trip changed the bytes`);
        }),
      );
    }
  } finally {
    await sb?.destroy();
    await f.close();
  }
}

/** N sandboxes created at once (no pool): each one's start latency, and the wall time. */
async function concurrent(backend: 'docker' | 'kubernetes', count: number): Promise<void> {
  const f = factory(backend, 0, `${backend}-c${count}`);
  const started: Sandbox[] = [];
  const times: number[] = [];
  const errors: string[] = [];
  const wall = hr();
  try {
    await Promise.all(
      Array.from({ length: count }, async () => {
        const t = hr();
        try {
          const sb = await f.create(create);
          started.push(sb);
          await sb.exec('true');
          times.push(since(t));
        } catch (err) {
          errors.push((err as Error).message);
        }
      }),
    );
    const wallMs = since(wall);
    const st = summarize(
      `start_concurrent${count}_${backend}`,
      `${count} sandboxes created at once (no pool), each until its first exec 'true' returns`,
      times,
    );
    stats.push(st);
    (concurrency[backend] ??= {})[count] = {
      p50: st.p50,
      p95: st.p95,
      wallMs: Math.round(wallMs),
      failed: errors.length,
      ...(errors.length ? { error: errors[0] } : {}),
    };
    log(
      `${st.name}: p50 ${st.p50} ms, p95 ${st.p95} ms, wall ${Math.round(wallMs)} ` +
        `ms, ${errors.length} failed${errors.length ? `: ${errors[0]}` : ''}`,
    );
  } finally {
    await Promise.all(started.map((s) => s.destroy().catch(() => {})));
    await f.close();
  }
}

const fmt = (s?: LatencyStats) => (s ? `${Math.round(s.p50)} / ${Math.round(s.p95)}` : '–');

async function main(): Promise<void> {
  if (!(await dockerAvailable())) throw new Error('no Docker daemon');
  const began = Date.now();
  log(`loading ${IMAGE} into the cluster`);
  await loadImageBy(path.join(BENCH_DIR, '..', 'docker', 'cluster', 'load-image.sh'))(IMAGE);
  for (const backend of ['docker', 'kubernetes'] as const) {
    log(`${backend}: single sandbox`);
    await single(backend);
  }
  for (const count of levels) {
    for (const backend of ['docker', 'kubernetes'] as const) {
      log(`${backend}: ${count} concurrent starts`);
      await concurrent(backend, count);
    }
  }
  const rows: [string, string][] = [
    ['start_cold', 'sandbox start until the first command, cold'],
    ['start_warm', 'sandbox start until the first command, warm pool'],
    ['exec_true', 'exec round trip of `true`'],
    ['file_1k', 'file write + read, 1 KiB'],
    ['file_1m', 'file write + read, 1 MiB'],
  ];
  const lines = ['| p50 / p95, ms | Docker | Kubernetes |', '|---|---:|---:|'];
  for (const [key, label] of rows) lines.push(`| ${label} | ${fmt(table[key]?.docker)} | ${fmt(table[key]?.kubernetes)} |`);
  for (const count of levels) {
    const cell = (b: 'docker' | 'kubernetes') => {
      const c = concurrency[b]?.[count];
      return c
        ? `${Math.round(c.p50)} / ${Math.round(c.p95)} (wall ${(c.wallMs / 1000).toFixed(1)} s${c.failed ? `, ${c.failed} failed` : ''})`
        : '–';
    };
    lines.push(`| start, ${count} at once | ${cell('docker')} | ${cell('kubernetes')} |`);
  }
  const result = {
    date: new Date().toISOString(),
    durationS: Math.round((Date.now() - began) / 1000),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
      node: process.version,
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      loadAvg1m: Math.round(os.loadavg()[0]! * 100) / 100,
    },
    options: { quick, levels, image: IMAGE, limits: LIMITS },
    stats,
    concurrency,
    table: lines.join('\n'),
  };
  await fs.mkdir(path.dirname(RESULTS_FILE), { recursive: true });
  await fs.writeFile(RESULTS_FILE, JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(`${lines.join('\n')}\n\nwritten ${path.relative(process.cwd(), RESULTS_FILE)} in ${result.durationS} s\n`);
}

await main();
