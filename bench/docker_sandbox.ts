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
import { dockerAvailable } from '../src/sandbox/docker/client.ts';
import { summarize, type LatencyStats } from './stats.ts';
import { builtinRegistry } from '../bin/builtins.ts';

export const DOCKER_CASES = ['docker_start_cold', 'docker_start_warm', 'docker_exec', 'local_exec', 'docker_concurrent16'] as const;
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
  return { id: (r.data as { episode_id: string }).episode_id, ms: ms(t) };
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

export async function runDockerBench(opts: { quick: boolean; cases?: ReadonlySet<string>; log: (m: string) => void }): Promise<DockerBenchResult> {
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
          stats.push(summarize('docker_start_cold', 'start_episode, Docker, no pool: create volume + container, start, copy start state, baseline commit', samples));
        }
        if (want('docker_exec')) {
          const e = await episode(gym);
          const samples = await timeTrue(gym, e.id, opts.quick ? 30 : 100);
          stats.push(summarize('docker_exec', "run_command 'true' in a Docker sandbox (exec create/start/inspect, timeout wrapper)", samples));
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
        stats.push(summarize('docker_start_warm', 'start_episode, Docker, warm pool of 2: take a started container, baseline commit', samples));
      } finally {
        await gym.close();
      }
    }
    if (want('local_exec')) {
      const gym = new Gym({ registry: builtinRegistry(), dataDir, cacheDir });
      try {
        const e = await episode(gym);
        const samples = await timeTrue(gym, e.id, opts.quick ? 30 : 100);
        stats.push(summarize('local_exec', `run_command 'true' in a local sandbox (${gym.episode(e.id).sandbox.isolation.split(':')[0]})`, samples));
      } finally {
        await gym.close();
      }
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
        stats.push(summarize(`docker_concurrent${count}_run_tests`, `${count} concurrent run_tests (pytest, 11 tests) in separate containers, 1 CPU each, on ${os.cpus().length} cores`, runs));
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
