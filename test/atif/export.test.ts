import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { promisify } from 'node:util';
import { exportGymTrajectories, exportRun } from '../../src/atif/export.ts';
import { exportTrajectoriesCommand } from '../../src/cli/commands/export_trajectories.ts';
import type { AtifTrajectory } from '../../src/atif/types.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { PROJECT_ROOT } from '../../src/project.ts';
import { OpenEnvSession } from '../../src/server/openenv/session.ts';
import { expectGymError, makeGym, tempDir, trajectoryRecords } from '../helpers.ts';
import { writeRuns } from './run_fixture.ts';

const BIN = path.join(PROJECT_ROOT, 'bin', 'benchgym.js');
type Json = Record<string, any>;

/** The installed command, as a user runs it. */
async function binary(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, 'export-trajectories', ...args], { timeout: 300_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

const readJson = async (file: string) => JSON.parse(await fs.readFile(file, 'utf8')) as AtifTrajectory & Json;
const resultsOf = async (dir: string) =>
  (await fs.readFile(path.join(dir, 'results.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Json);

describe('benchgym export-trajectories --format atif', () => {
  let gym: Gym;
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let root: string;
  let runs: { swe: string; gold: string };
  let served: string;
  before(async () => {
    ({ gym, dataDir, cleanup } = await makeGym());
    root = await tempDir('benchgym-atif-');
    runs = await writeRuns(gym, root);
    // An episode driven over OpenEnv, as a trainer would: the server's trajectory.
    const session = new OpenEnvSession(gym);
    const reset = (await session.reset({ task_id: 'parse-duration' })) as Json;
    served = reset.observation.data.episodeId;
    await session.step({ tool_name: 'view_file', arguments: { path: 'duration.py' } });
    await session.step({ tool_name: 'submit' });
    await session.close();
    await gym.episode(served).trajectory.flush();
  });
  after(async () => {
    await cleanup();
    await fs.rm(root, { recursive: true, force: true });
  });

  test(
    "a run: each attempt's model turns, tool calls, the gym's " + "observations and timing, the tokens and the verdict's reward",
    async () => {
      const { code, stdout } = await binary(runs.swe, '--format', 'atif');
      assert.equal(code, 0);
      assert.equal(stdout.trim(), `1 ATIF trajectories written to ${path.join(runs.swe, 'atif')}`);
      const t = await readJson(path.join(runs.swe, 'atif', 'roman-numerals__0__1.json'));
      const [result] = await resultsOf(runs.swe);
      assert.equal(t.agent.name, 'swe-agent');
      assert.equal(t.agent.model_name, 'scripted-model');
      assert.deepEqual(
        t.steps.map((s) => s.source),
        ['system', 'user', 'agent', 'agent', 'agent'],
      );
      const calls = t.steps.flatMap((s) => s.tool_calls ?? []).map((c) => c.function_name);
      assert.deepEqual(calls, ['view_file', 'no_such_tool', 'create_file', 'run_tests', 'submit']);
      const gymSteps = await trajectoryRecords(dataDir, result!.episodeId, 'step');
      const results = t.steps.flatMap((s) => s.observation?.results ?? []);
      assert.equal(results[0]!.content, gymSteps[0]!.observation, "the gym's whole observation, not the agent's cut copy");
      assert.match(results[1]!.content!, /unknown tool/);
      assert.match(results[3]!.content!, /not valid JSON/);
      assert.match(results[4]!.content!, /^Verdict: PASSED \(reward 1\)/);
      for (const r of [results[0], results[2], results[4]]) {
        assert.equal(typeof r!.extra!.started_at, 'string');
        assert.equal(typeof r!.extra!.duration_ms, 'number');
      }
      assert.deepEqual(
        t.steps.slice(2).map((s) => s.metrics?.prompt_tokens),
        [100, 100, 300],
      );
      assert.equal(t.final_metrics!.total_prompt_tokens, result!.tokens.prompt);
      assert.equal(t.final_metrics!.total_cost_usd, result!.costUsd);
      assert.equal(t.final_metrics!.extra!.reward, 1);
      assert.equal(t.final_metrics!.extra!.status, 'passed');
    },
  );

  test('the replay agent: its calls are steps without a model turn; every attempt of the run has its file', async () => {
    const report = await exportRun(runs.gold, path.join(root, 'gold-atif'));
    assert.deepEqual(report.written.map((f) => path.basename(f)).sort(), ['parse-duration__0__1.json', 'roman-numerals__0__1.json']);
    assert.deepEqual(report.notes, []);
    for (const file of report.written) {
      const t = await readJson(file);
      assert.equal(t.steps[0]!.source, 'user');
      assert.match(t.steps[0]!.message, /\S/, "the task's prompt, from the gym's header");
      assert.deepEqual(
        t.steps.slice(1).map((s) => [s.llm_call_count, s.tool_calls![0]!.function_name]),
        [
          [0, 'create_file'],
          [0, 'submit'],
        ],
      );
      assert.equal(t.final_metrics!.extra!.reward, 1);
    }
  });

  test("the server's trajectories: one file per episode, the prompt and each call with its observation", async () => {
    const out = path.join(root, 'served');
    const report = await exportGymTrajectories(path.join(dataDir, 'trajectories'), out);
    assert.deepEqual(report.notes, []);
    const episodes = (await fs.readdir(path.join(dataDir, 'trajectories'))).filter((f) => f.endsWith('.jsonl'));
    assert.deepEqual((await fs.readdir(out)).sort(), episodes.map((f) => f.replace(/\.jsonl$/, '.json')).sort());
    const t = await readJson(path.join(out, `${served}.json`));
    assert.equal(t.session_id, served);
    assert.equal(t.steps[0]!.message, gym.episode(served).prompt);
    assert.deepEqual(
      t.steps.slice(1).map((s) => s.tool_calls![0]!.function_name),
      ['view_file', 'submit'],
    );
    assert.equal(t.final_metrics!.extra!.reward, 0);
    const single = await exportGymTrajectories(path.join(dataDir, 'trajectories', `${served}.jsonl`), path.join(root, 'one'));
    assert.deepEqual(
      single.written.map((f) => path.basename(f)),
      [`${served}.json`],
    );
  });

  test('bad input: an unknown format, a missing path, a folder with no episode; each named', async () => {
    await expectGymError(
      exportTrajectoriesCommand.run([runs.swe, '--format', 'jsonl']),
      'INVALID_ARGUMENT',
      /--format: 'jsonl' is not a format this version writes \(atif\)/,
    );
    await expectGymError(exportTrajectoriesCommand.run([path.join(root, 'nope')]), 'INVALID_ARGUMENT', /nope: no such file or directory/);
    await expectGymError(exportTrajectoriesCommand.run([]), 'INVALID_ARGUMENT', /give one run directory/);
    const empty = await tempDir();
    const none = await exportGymTrajectories(empty, path.join(empty, 'out'));
    assert.deepEqual(none.written, []);
    assert.match(none.notes.join(), /holds no episode trajectory/);
    await fs.writeFile(path.join(empty, 'ep-torn.jsonl'), '{"type":"step"');
    assert.match(
      (await exportGymTrajectories(empty, path.join(empty, 'out'))).notes.join(),
      /ep-torn\.jsonl: .* is not a gym trajectory: its first record is not an episode header/,
    );
    await fs.rm(empty, { recursive: true });
  });

  test('a result line naming files outside its run (or a gym path that is no trajectory) has them left unread, and says so', async () => {
    const copy = path.join(root, 'tampered');
    await fs.cp(runs.swe, copy, { recursive: true });
    const secret = path.join(root, 'secret.txt');
    await fs.writeFile(secret, 'SECRET CONTENT\n');
    const [result] = await resultsOf(copy);
    await fs.writeFile(
      path.join(copy, 'results.jsonl'),
      `${JSON.stringify({ ...result, trajectory: '../secret.txt', gymTrajectory: secret })}\n`,
    );
    const report = await exportRun(copy, path.join(copy, 'atif'));
    const text = await fs.readFile(report.written[0]!, 'utf8');
    assert.doesNotMatch(text, /SECRET CONTENT/);
    assert.match(report.notes.join('\n'), /lies outside the run directory; it was not read/);
    assert.match(report.notes.join('\n'), /is not a trajectory file; it was not read/);
  });
});
