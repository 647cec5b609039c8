import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Gym } from '../../src/episode/gym.ts';
import { PROJECT_ROOT } from '../../src/tasks/registry.ts';
import { connectInProcess } from '../../src/agent/session.ts';
import type { AgentContext, AgentDefinition, AgentResult, ModelConfig } from '../../src/agent/types.ts';
import { after, before } from 'node:test';
import { makeGym, startExample } from '../helpers.ts';
import { startScriptedOpenAI, type ScriptedServer } from './scripted_openai.ts';

export const EXAMPLES = path.join(PROJECT_ROOT, 'envs', 'examples', 'tasks');

export function readExample(rel: string): Promise<string> {
  return fs.readFile(path.join(EXAMPLES, rel), 'utf8');
}

/** A model config for the scripted endpoint: fast retries so failure tests stay short. */
export function scriptedModel(baseURL: string, extra: Partial<ModelConfig> = {}): ModelConfig {
  return { model: 'scripted-model', baseURL, apiKey: 'test', maxRetries: 2, retryDelayMs: 5, ...extra };
}

export interface AgentRun {
  result: AgentResult;
  events: Record<string, unknown>[];
  episodeId: string;
}

/** Starts an example episode, connects in-process, runs the agent as the runner would. */
export async function runAgent<S extends AgentDefinition>(
  gym: Gym,
  taskId: string,
  def: S,
  options: unknown,
  model: ModelConfig,
  extra: { start?: Record<string, unknown>; sample?: number; signal?: AbortSignal } = {},
): Promise<AgentRun> {
  const episodeId = await startExample(gym, taskId, extra.start);
  const session = await connectInProcess(gym, episodeId);
  const task = gym.episode(episodeId).task;
  const events: Record<string, unknown>[] = [];
  const ctx: AgentContext = {
    client: session.client,
    episodeId,
    task: {
      suite: task.suite,
      id: task.id,
      prompt: gym.episode(episodeId).prompt,
      language: task.language,
      kind: task.kind,
      metadata: task.metadata,
    },
    model,
    sample: extra.sample ?? 0,
    signal: extra.signal ?? new AbortController().signal,
    record: (e) => events.push(e),
  };
  try {
    const agent = def.create(def.options.parse(options));
    return { result: await agent.run(ctx), events, episodeId };
  } finally {
    await session.close();
  }
}

/**
 * Hooks for a describe block of agent tests: a gym on the shared test cache before, and
 * at the end every scripted endpoint closed and the gym cleaned up.
 */
export function agentTestBed(): {
  readonly gym: Gym;
  endpoint: (...args: Parameters<typeof startScriptedOpenAI>) => Promise<ScriptedServer>;
} {
  let gym: Gym | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  const servers: ScriptedServer[] = [];
  before(async () => {
    ({ gym, cleanup } = await makeGym());
  });
  after(async () => {
    for (const s of servers) await s.close();
    await cleanup?.();
  });
  return {
    get gym() {
      if (!gym) throw new Error('agentTestBed: the gym exists once the before hook has run');
      return gym;
    },
    async endpoint(...args) {
      const s = await startScriptedOpenAI(...args);
      servers.push(s);
      return s;
    },
  };
}
