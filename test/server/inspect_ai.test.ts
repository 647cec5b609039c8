/**
 * inspect_ai (PyPI, in a venv of its own) drives benchgym episodes over MCP: its MCP tool source
 * pointed at each episode's own endpoint, its scripted mock model calling the tools, a scorer
 * reading the verdict. Skips, saying why, when inspect_ai cannot be installed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { promisify } from 'node:util';
import type { Gym } from '../../src/episode/gym.ts';
import { PROJECT_ROOT } from '../../src/project.ts';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { episodePath } from '../../src/protocol/capability.ts';
import { makeGym, tempDir, trajectoryRecords } from '../helpers.ts';
import { INSPECT_AI, pythonWith } from '../python_venv.ts';

const SCRIPT = path.join(PROJECT_ROOT, 'test', 'server', 'python', 'inspect_episode.py');
type Json = Record<string, any>;

const found = await pythonWith(INSPECT_AI);

let gym: Gym;
let dataDir: string;
let cleanup: () => Promise<void>;
let server: RunningServer;
let dir: string;
before(async () => {
  if (found.skip) return;
  ({ gym, dataDir, cleanup } = await makeGym());
  // A token: the episode's own URL opens without it, and only that episode.
  server = await startHttpServer(gym, { port: 0, token: 'operator-secret-token' });
  dir = await tempDir('benchgym-inspect-');
});
after(async () => {
  await server?.close();
  await cleanup?.();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

/** Starts an episode and runs inspect_ai on its own MCP endpoint with the scripted tool calls. */
async function inspectEpisode(calls: [string, Json][]): Promise<{ id: string; out: Json }> {
  const episode = await gym.startEpisode({ suite: 'examples', taskId: 'roman-numerals' });
  const scriptFile = path.join(dir, `${episode.id}.json`);
  await fs.writeFile(scriptFile, JSON.stringify(calls));
  const url = `${server.url}${episodePath(episode, 'mcp')}`;
  const { stdout } = await promisify(execFile)(found.python!, [SCRIPT, url, episode.prompt, scriptFile, path.join(dir, 'logs')], {
    timeout: 8 * 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return { id: episode.id, out: JSON.parse(stdout.trim().split('\n').pop()!) as Json };
}

test(
  "inspect_ai's MCP tool source and scripted mock model drive an episode to its verdict: 1 with the gold solution, 0 without",
  { skip: found.skip ?? false, timeout: 15 * 60_000 },
  async () => {
    const task = await gym.registry.task('examples', 'roman-numerals');
    const gold = Object.entries(task.solution!.files!).map(([p, content]): [string, Json] => [
      'create_file',
      { path: p, content, overwrite: true },
    ]);
    const solved = await inspectEpisode([['view_file', { path: 'roman.py' }], ...gold, ['submit', {}]]);
    assert.equal(solved.out.status, 'success', solved.out.error);
    assert.deepEqual(solved.out.tools, ['view_file', 'create_file', 'submit']);
    assert.deepEqual(solved.out.tool_errors, [null, null, null]);
    assert.equal(solved.out.score, 1, solved.out.explanation);
    assert.match(solved.out.explanation, /^Verdict: PASSED \(reward 1\)/);
    assert.equal(gym.episode(solved.id).verdict?.reward, 1);
    assert.deepEqual(
      (await trajectoryRecords(dataDir, solved.id, 'step')).map((s) => s.tool),
      ['view_file', 'create_file', 'submit'],
    );

    const unsolved = await inspectEpisode([['submit', {}]]);
    assert.equal(unsolved.out.status, 'success', unsolved.out.error);
    assert.equal(unsolved.out.score, 0);
    assert.match(unsolved.out.explanation, /^Verdict: FAILED \(reward 0\)/);
    assert.equal(gym.episode(unsolved.id).state, 'submitted');
  },
);
