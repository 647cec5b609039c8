/** Hand-made run directories in the formats `benchgym run` writes, for the viewer's tests and bench. */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { newManifest, writeManifest, type RunIdentity } from '../../src/runner/manifest.ts';
import { trajectoryName, type ResultRecord } from '../../src/runner/results.ts';

export const XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss=2">';

export interface FixtureOptions {
  agent?: string;
  model?: string;
  /** Tasks × samples; task i has metadata library lib<i % 3>, level <i % 2 + 1>. */
  tasks?: number;
  samples?: number;
  pricing?: RunIdentity['pricing'];
  /** Steps of the one long trajectory (task-000, sample 0); the others have 4. */
  longSteps?: number;
  /** Write trajectories for the first N pairs only (all by default). */
  trajectories?: number;
  /** Status of pair i (default: i % 5 === 0 passed, i % 7 === 3 error, else failed). */
  status?: (i: number) => ResultRecord['status'];
}

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

export function taskName(i: number): string {
  return `task-${String(i).padStart(3, '0')}`;
}

/** Writes run.json, results.jsonl, the agent trajectories and (under DIR/gym/trajectories/, as in a data dir) the gym's trajectories. */
export async function writeFixtureRun(dir: string, o: FixtureOptions = {}): Promise<{ pairs: number }> {
  const tasks = o.tasks ?? 6;
  const samples = o.samples ?? 2;
  const agent = o.agent ?? 'swe-agent';
  const model = o.model ?? 'scripted';
  const status = o.status ?? ((i: number) => (i % 5 === 0 ? 'passed' : i % 7 === 3 ? 'error' : 'failed'));
  const taskIds = Array.from({ length: tasks }, (_, i) => taskName(i));
  const identity: RunIdentity = {
    dataset: null,
    samples,
    tasks: null,
    maxSteps: null,
    timeLimitMs: null,
    baseURL: null,
    temperature: null,
    maxTokens: null,
    pricing: o.pricing ?? null,
  };
  const manifest = newManifest({ suite: 'examples', agent, model, options: identity, taskIds, settings: { concurrency: 1, retries: 0 } });
  await writeManifest(dir, manifest);
  await fs.mkdir(path.join(dir, 'trajectories'), { recursive: true });
  await fs.mkdir(path.join(dir, 'gym', 'trajectories'), { recursive: true });
  const lines: string[] = [];
  let i = 0;
  for (const task of taskIds) {
    for (let sample = 0; sample < samples; sample++, i++) {
      const st = status(i);
      const episodeId = `ep-${String(i).padStart(6, '0')}`;
      const gymFile = path.join(dir, 'gym', 'trajectories', `${episodeId}.jsonl`);
      const rel = path.join('trajectories', trajectoryName(task, sample));
      const ti = taskIds.indexOf(task);
      const record: ResultRecord = {
        runId: manifest.runId,
        suite: 'examples',
        task,
        sample,
        attempt: 1,
        final: true,
        agent,
        model,
        episodeId,
        status: st,
        reward: st === 'passed' ? 1 : 0,
        infra: st === 'error',
        ...(st === 'error'
          ? { infraError: { code: 'SANDBOX_UNAVAILABLE', message: `the sandbox died ${XSS}`, source: 'gym' as const } }
          : {}),
        verdict:
          st === 'error'
            ? null
            : {
                reward: st === 'passed' ? 1 : 0,
                status: st,
                tests: { passed: st === 'passed' ? 3 : 1, failed: st === 'passed' ? 0 : 2, error: 0, skipped: 0 },
                failToPass: { passed: st === 'passed' ? 1 : 0, failed: st === 'passed' ? 0 : 1 },
                passToPass: { passed: 1, failed: 0 },
                notes: [],
              },
        submitted: st !== 'error',
        stopReason: st === 'error' ? 'error' : 'submitted',
        steps: 4 + (i % 9),
        tokens: { prompt: 1000 + i, completion: 100 + (i % 50), total: 1100 + i + (i % 50), calls: 4 },
        costUsd: o.pricing ? 0.001 * (i % 13) : 0,
        startedAt: iso(i * 1000),
        endedAt: iso(i * 1000 + 900),
        durations: { startMs: 10, agentMs: 800, scoringMs: 90, totalMs: 900 + (i % 17) * 100 },
        metadata: {
          language: 'python',
          kind: 'function',
          library: `lib${ti % 3}`,
          level: (ti % 2) + 1,
          context: 'default',
          promptVariant: 'default',
        },
        trajectory: rel,
        gymTrajectory: gymFile,
      };
      lines.push(JSON.stringify(record));
      if (o.trajectories === undefined || i < o.trajectories) {
        const steps = task === taskIds[0] && sample === 0 ? (o.longSteps ?? 4) : 4;
        await writeTrajectories(path.join(dir, rel), gymFile, { task, sample, episodeId, status: st, steps, start: i * 1000 });
      }
    }
  }
  await fs.writeFile(path.join(dir, 'results.jsonl'), lines.join('\n') + '\n');
  return { pairs: i };
}

/** An agent trajectory and a gym trajectory as the swe-agent and the gym write them. */
export async function writeTrajectories(
  agentFile: string,
  gymFile: string,
  p: { task: string; sample: number; episodeId: string; status: string; steps: number; start: number },
): Promise<void> {
  const agent: unknown[] = [];
  const gym: unknown[] = [];
  let t = p.start;
  agent.push({
    type: 'attempt',
    attempt: 1,
    task: p.task,
    sample: p.sample,
    episodeId: p.episodeId,
    gymTrajectory: gymFile,
    startedAt: iso(t++),
  });
  gym.push({ type: 'episode', episodeId: p.episodeId, suite: 'examples', taskId: p.task, sandbox: 'local', startedAt: iso(t++) });
  agent.push({ type: 'prompt', system: 'You are an autonomous software engineer.', user: `Fix ${p.task}.`, attempt: 1, at: iso(t++) });
  for (let s = 1; s <= p.steps; s++) {
    const tool = s === 1 ? 'run_command' : s === 2 ? 'edit_file' : s === p.steps ? 'submit' : 'view_file';
    const args =
      tool === 'run_command'
        ? { command: `echo '${XSS}'` }
        : tool === 'edit_file'
          ? { path: 'lib.py', old_str: 'return a - b', new_str: 'return a + b' }
          : tool === 'view_file'
            ? { path: 'lib.py' }
            : {};
    const observation =
      tool === 'run_command'
        ? `[exit code 0]\n${XSS}\n${Array.from({ length: 60 }, (_, k) => `line ${k}`).join('\n')}`
        : tool === 'submit'
          ? `Verdict: ${p.status}`
          : `step ${s} output`;
    agent.push({ type: 'model_call', promptTokens: 100, completionTokens: 10, attempt: 1, at: iso(t) });
    agent.push({
      type: 'assistant',
      content: s === 1 ? `I will run ${XSS}` : `Step ${s}.`,
      toolCalls: [{ id: `c${s}`, name: tool, arguments: JSON.stringify(args) }],
      attempt: 1,
      at: iso(t++),
    });
    if (tool === 'submit')
      gym.push({
        type: 'verdict',
        verdict: {
          status: p.status === 'error' ? 'failed' : p.status,
          reward: p.status === 'passed' ? 1 : 0,
          tests: [
            { name: 'test_ok', status: 'passed' },
            ...(p.status === 'passed'
              ? [{ name: 'test_add', status: 'passed' }]
              : [{ name: 'test_add', status: 'failed', message: `AssertionError: ${XSS}` }]),
          ],
          failToPass: p.status === 'passed' ? { passed: ['test_add'], failed: [] } : { passed: [], failed: ['test_add'] },
          passToPass: { passed: ['test_ok'], failed: [] },
          notes: [],
        },
        diff: `diff --git a/lib.py b/lib.py\n--- a/lib.py\n+++ b/lib.py\n@@ -1 +1 @@\n-return a - b\n+return a + b ${XSS}\n`,
      });
    gym.push({ type: 'step', step: s, tool, args, ok: true, observation, startedAt: iso(t++), durationMs: 5 });
    agent.push({ type: 'tool', name: tool, args, ok: true, observation: observation.slice(0, 50), attempt: 1, at: iso(t++) });
  }
  agent.push({
    type: 'result',
    attempt: 1,
    status: p.status,
    reward: p.status === 'passed' ? 1 : 0,
    infra: p.status === 'error',
    stopReason: 'submitted',
    at: iso(t++),
  });
  await fs.writeFile(agentFile, agent.map((r) => JSON.stringify(r)).join('\n') + '\n');
  await fs.writeFile(gymFile, gym.map((r) => JSON.stringify(r)).join('\n') + '\n');
}
