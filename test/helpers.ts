import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { Gym, type GymOptions } from '../src/episode/gym.ts';
import type { ToolContext } from '../src/tools/types.ts';

/**
 * Env caches (venvs, the Maven repository) shared by every test process, so each env is
 * built once per machine; episodes and trajectories go to a fresh directory per gym.
 */
export const TEST_CACHE_DIR = process.env.BENCHGYM_TEST_CACHE ?? path.join(os.tmpdir(), 'benchgym-test-cache');

export async function makeGym(opts: Partial<GymOptions> = {}): Promise<{ gym: Gym; dataDir: string; cleanup: () => Promise<void> }> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-test-'));
  const gym = new Gym({ dataDir, cacheDir: TEST_CACHE_DIR, ...opts });
  return {
    gym,
    dataDir,
    cleanup: async () => {
      await gym.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A tool context for direct calls; collects progress messages and streamed output. */
export function testContext(signal: AbortSignal = new AbortController().signal): ToolContext & { messages: string[]; output: string[] } {
  const messages: string[] = [];
  const output: string[] = [];
  return {
    signal,
    messages,
    output,
    progress: (_p, _t, m) => {
      if (m) messages.push(m);
    },
    onOutput: (chunk) => output.push(chunk),
  };
}

/** Starts an example episode and returns its id. */
export async function startExample(gym: Gym, taskId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await gym.callTool('start_episode', { task_id: taskId, ...extra }, testContext());
  return (r.data as { episode_id: string }).episode_id;
}
