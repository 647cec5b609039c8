/**
 * openenv-core's own clients (PyPI, in a venv of their own) against benchgym's /openenv: what
 * a trainer that speaks OpenEnv (TRL, torchforge, verl, TorchRL) sees. Skips, saying why, when
 * openenv-core cannot be installed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { promisify } from 'node:util';
import type { Gym } from '../../../src/episode/gym.ts';
import { startHttpServer, type RunningServer } from '../../../src/server/http.ts';
import { openEnvExtension } from '../../../src/server/openenv/extension.ts';
import { PROJECT_ROOT } from '../../../src/project.ts';
import { makeGym, tempDir, trajectoryRecords } from '../../helpers.ts';
import { OPENENV_CORE, pythonWith } from '../../python_venv.ts';

const SCRIPT = path.join(PROJECT_ROOT, 'test', 'server', 'openenv', 'python', 'openenv_clients.py');
const SESSIONS = 16;
type Json = Record<string, any>;

const found = await pythonWith(OPENENV_CORE);

let gym: Gym;
let dataDir: string;
let cleanup: () => Promise<void>;
let server: RunningServer;
before(async () => {
  if (found.skip) return;
  ({ gym, dataDir, cleanup } = await makeGym({ defaults: { maxEpisodes: 64 } }));
  server = await startHttpServer(gym, { port: 0, extensions: [openEnvExtension()] });
});
after(async () => {
  await server?.close();
  await cleanup?.();
});

test(
  "openenv-core's GenericEnvClient and MCPToolClient: reward 1 with the gold solution, " +
    "0 without, OpenEnv's error for a bad action, 16 sessions at once, openenv validate",
  { skip: found.skip ?? false, timeout: 15 * 60_000 },
  async () => {
    const dir = await tempDir();
    const goldFile = path.join(dir, 'gold.json');
    const task = await gym.registry.task('examples', 'roman-numerals');
    await fs.writeFile(goldFile, JSON.stringify(task.solution?.files));
    const { stdout } = await promisify(execFile)(found.python!, [SCRIPT, `${server.url}/openenv`, goldFile, String(SESSIONS)], {
      timeout: 14 * 60_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    await fs.rm(dir, { recursive: true, force: true });
    const out = JSON.parse(stdout.trim().split('\n').pop()!) as Json;

    // GenericEnvClient (its sync wrapper): the reset observation, the episode's tools, the gold solution's verdict.
    const g = out.generic_gold;
    assert.deepEqual(g.reset, { reward: null, done: false, keys: ['data', 'metadata', 'text'], task_id: 'roman-numerals' });
    assert.deepEqual(
      g.tools,
      gym.episodeTools({ task }).map((t) => t.name),
    );
    assert.deepEqual(g.view, { reward: 0, done: false, path: 'roman.py' });
    assert.deepEqual(g.submit, { reward: 1, done: true, status: 'passed' });
    assert.equal(g.state.state, 'submitted');
    assert.equal(g.state.label, 'gold-run');
    assert.equal(g.state.step_count, 3);

    // Without the solution: 0. A malformed action: the client raises with OpenEnv's error, naming the problem.
    const e = out.generic_empty;
    assert.deepEqual(e.submit, { reward: 0, done: true, status: 'failed' });
    assert.match(e.bad_action, /^Server error: Invalid action: data\.type: .*data\.tool_name: .* \(code: VALIDATION_ERROR\)$/);
    assert.deepEqual(e.tool_error, { error_type: 'execution_error', message: "FILE_NOT_FOUND: no such file: 'missing.py'" });
    assert.deepEqual(
      (await trajectoryRecords(dataDir, e.episode_id, 'step')).map((s) => s.tool),
      ['view_file', 'submit'],
      'the bad action ran nothing',
    );

    // MCPToolClient: tool discovery before and after reset, call_tool's data, a failed tool raising, the reward of a submit step.
    const m = out.mcp_tool_client;
    assert.deepEqual(m.tools_before_reset, ['list_suites', 'list_tasks', 'start_episode']);
    assert.equal(m.reset_metadata_task, 'roman-numerals');
    assert.ok(m.tools.includes('submit') && m.tools.includes('view_docs'), m.tools.join());
    assert.equal(m.submit_schema_type, 'object');
    assert.equal(m.view_path, 'roman.py');
    assert.equal(m.tool_error, "Tool 'view_file' failed: FILE_NOT_FOUND: no such file: 'missing.py' (type: execution_error)");
    assert.deepEqual(m.submit, { reward: 1, done: true, is_call_observation: true });
    assert.equal(m.done_after, true);

    // 16 sessions at once: one episode each, each its own verdict.
    const c = out.concurrent.results as Json[];
    assert.equal(c.length, SESSIONS);
    assert.equal(new Set(c.map((r) => r.episode_id)).size, SESSIONS);
    for (const r of c) {
      assert.equal(r.reward, r.i % 2 === 0 ? 1 : 0, JSON.stringify(r));
      assert.equal(r.done, true);
      assert.equal(r.label, `session-${r.i}`);
    }
    process.stderr.write(`${SESSIONS} concurrent OpenEnv sessions (reset, gold or nothing, submit): ${out.concurrent.seconds} s\n`);

    // openenv's own runtime check of a served environment.
    assert.equal(out.validate.passed, true, JSON.stringify(out.validate.criteria.filter((c: Json) => !c.passed)));

    // A session closed without a submission: its episode is ended, not left to idle out.
    const deadline = Date.now() + 15_000;
    while (gym.episode(out.abandoned).state === 'running' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(gym.episode(out.abandoned).state, 'ended');
    assert.deepEqual(
      gym
        .listEpisodes()
        .filter((ep) => ep.state === 'running')
        .map((ep) => ep.id),
      [],
      'every session closed with its client',
    );
  },
);
