import { after, before } from 'node:test';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import type { Gym } from '../src/episode/gym.ts';
import type { ToolContext } from '../src/tools/types.ts';
import { builtinRegistry, localGym, type LocalGymOptions } from '../bin/builtins.ts';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RunningServer } from '../src/server/http.ts';

export { builtinRegistry, localGym };

/**
 * Env caches (venvs, the Maven repository) shared by every test process, so each env is
 * built once per machine; episodes and trajectories go to a fresh directory per gym.
 */
export const TEST_CACHE_DIR = process.env.BENCHGYM_TEST_CACHE ?? path.join(os.tmpdir(), 'benchgym-test-cache');

/** A gym's options in a test: the local backend's (`isolation`, `executor`, `gradle`) when it gives no `sandboxes`. */
export type TestGymOptions = Partial<LocalGymOptions>;

/** A gym over `opts.sandboxes`, else over the local backend, in a fresh data dir; envs in TEST_CACHE_DIR. */
export async function makeGym(opts: TestGymOptions = {}): Promise<{ gym: Gym; dataDir: string; cleanup: () => Promise<void> }> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-test-'));
  const gym = localGym({ cacheDir: TEST_CACHE_DIR, ...opts, dataDir });
  return {
    gym,
    dataDir,
    cleanup: async () => {
      await gym.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A gym behind a real HTTP server on a free port, and an MCP SDK client connected to its `/mcp`. */
export async function mcpOverHttp(
  clientName = 'benchgym-test',
): Promise<{ gym: Gym; server: RunningServer; client: Client; close: () => Promise<void> }> {
  // Loaded here, not at the top: most tests importing this file need no HTTP server or MCP client.
  const [{ Client }, { StreamableHTTPClientTransport }, { startHttpServer }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('../src/server/http.ts'),
  ]);
  const { gym, cleanup } = await makeGym();
  const server = await startHttpServer(gym, { port: 0 });
  const client = new Client({ name: clientName, version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  return {
    gym,
    server,
    client,
    close: async () => {
      await client.close();
      await server.close();
      await cleanup();
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
  return (r.data as { episodeId: string }).episodeId;
}

// ---------------------------------------------------------------------------
// Helpers added for the unit and behaviour tests.

import assert from 'node:assert/strict';
import { GymError, type GymErrorCode } from '../src/errors.ts';
import { TaskSchema, type Task, type TaskInput } from '../src/tasks/schema.ts';

/** A fresh temporary directory under the OS temp dir. */
export function tempDir(prefix = 'benchgym-t-'): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}

/** Awaits `p` and asserts it rejects with a GymError of `code` (and a message matching `message`). */
export async function expectGymError(p: Promise<unknown>, code: GymErrorCode, message?: RegExp): Promise<GymError> {
  let caught: unknown;
  try {
    await p;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught, `expected a GymError ${code}, but the call succeeded`);
  assert.ok(caught instanceof GymError, `expected a GymError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, `expected ${code}, got ${caught.code}: ${caught.message}`);
  if (message) assert.match(caught.message, message);
  return caught;
}

/** PIDs of live processes whose environment carries `BENCHGYM_SANDBOX=<id>`. */
export async function processesWithMarker(id: string, name = 'BENCHGYM_SANDBOX'): Promise<number[]> {
  const needle = Buffer.from(`${name}=${id}\0`);
  const found: number[] = [];
  for (const pid of (await fs.readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    const environ = await fs.readFile(`/proc/${pid}/environ`).catch(() => null);
    if (environ?.includes(needle)) found.push(Number(pid));
  }
  return found;
}

/** Waits (up to `waitMs`) for every process with the sandbox's marker to be gone; returns those left. */
export async function markerSurvivors(id: string, waitMs = 3000): Promise<number[]> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const left = await processesWithMarker(id);
    if (!left.length || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An in-memory Python task (workspace given as files), validated by the task schema. */
export function pythonTask(overrides: Partial<TaskInput> & { files: Record<string, string>; hidden?: Record<string, string> }): Task {
  const { files, hidden, ...rest } = overrides;
  return TaskSchema.parse({
    id: 'adhoc',
    suite: 'adhoc',
    language: 'python',
    kind: 'function',
    prompt: 'an ad-hoc test task',
    env: { kind: 'python', version: '3.11' },
    workspace: { type: 'files', files },
    tests: { hidden: { runner: { type: 'pytest', args: ['tests'] }, files: hidden ?? {} } },
    ...rest,
  });
}

/** Polls `read()` until it matches `re` (terminal output, logs); the error shows the tail. */
export async function waitFor(read: () => string, re: RegExp, ms = 15_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = re.exec(read());
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${re} in: ${JSON.stringify(read().slice(-800))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The records of an episode's trajectory file, optionally of one type. */
export async function trajectoryRecords(dataDir: string, episodeId: string, type?: string): Promise<Record<string, unknown>[]> {
  const text = await fs.readFile(path.join(dataDir, 'trajectories', `${episodeId}.jsonl`), 'utf8');
  const records = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return type ? records.filter((r) => r.type === type) : records;
}

/**
 * Hooks for a file of tool tests on one example episode: started before the tests, the gym
 * cleaned up after. `call` runs an episode tool in it.
 */
export function exampleEpisode(taskId: string): {
  readonly gym: Gym;
  readonly id: string;
  call: (name: string, args?: Record<string, unknown>) => ReturnType<Gym['callTool']>;
} {
  let gym: Gym | undefined;
  let id: string | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  before(async () => {
    ({ gym, cleanup } = await makeGym());
    id = await startExample(gym, taskId);
  });
  after(() => cleanup?.());
  const ready = () => {
    if (!gym || !id) throw new Error('exampleEpisode: the episode exists once the before hook has run');
    return { gym, id };
  };
  return {
    get gym() {
      return ready().gym;
    },
    get id() {
      return ready().id;
    },
    call: (name, args = {}) => ready().gym.callTool(name, args, testContext(), ready().id),
  };
}

/** Whether a process is running (not a zombie waiting for its new parent to reap it). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The pids whose command line matches `pattern` (pgrep -f); none when nothing matches. */
export function pgrep(pattern: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Waits up to `waitMs` for no process to match `pattern`; returns those still there. */
export async function waitGone(pattern: string, waitMs = 3000, pollMs = 100): Promise<number[]> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const left = pgrep(pattern);
    if (!left.length || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
