/** Real runs to export: the swe-agent against a scripted model, and the replay agent with the gold solution. */
import path from 'node:path';
import { AGENTS } from '../../agents/index.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { agentUnderTest } from '../../src/runner/agents.ts';
import { runExperiment } from '../../src/runner/runner.ts';
import { startScriptedOpenAI } from '../agents/scripted_openai.ts';

/**
 * `<root>/swe`: one swe-agent episode of roman-numerals whose model views the file, calls a tool
 * that does not exist, writes the gold solution, sends arguments that are not JSON, and submits
 * (reward 1). `<root>/gold`: the replay agent's gold solution of two tasks (reward 1 each).
 */
export async function writeRuns(gym: Gym, root: string): Promise<{ swe: string; gold: string }> {
  const task = await gym.registry.task('examples', 'roman-numerals');
  const gold = task.solution!.files!['roman.py']!;
  const model = await startScriptedOpenAI([
    {
      content: 'Let me look at the file.',
      tool_calls: [
        { name: 'view_file', arguments: { path: 'roman.py' } },
        { name: 'no_such_tool', arguments: {} },
      ],
    },
    {
      content: null,
      tool_calls: [
        { name: 'create_file', arguments: { path: 'roman.py', content: gold, overwrite: true } },
        { name: 'run_tests', arguments: '{not json' },
      ],
    },
    { content: 'Done.', tool_calls: [{ name: 'submit', arguments: {} }], usage: { prompt_tokens: 300, completion_tokens: 5 } },
  ]);
  const dirs = { swe: path.join(root, 'swe'), gold: path.join(root, 'gold') };
  try {
    await runExperiment({
      gym,
      outDir: dirs.swe,
      suite: 'examples',
      tasks: ['roman-numerals'],
      agent: agentUnderTest(AGENTS, 'swe-agent', {}, false),
      model: { model: 'scripted-model', baseURL: model.baseURL, apiKey: 'test', pricing: { prompt: 1, completion: 2 } },
    });
  } finally {
    await model.close();
  }
  await runExperiment({
    gym,
    outDir: dirs.gold,
    suite: 'examples',
    tasks: ['roman-numerals', 'parse-duration'],
    agent: agentUnderTest(AGENTS, 'replay', {}, true),
    model: { model: 'none', baseURL: 'http://127.0.0.1:9/v1', apiKey: 'none' },
  });
  return dirs;
}
