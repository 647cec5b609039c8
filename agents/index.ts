/** The agents the runner can run, by name. */
import { parseAgentOptions } from '../src/agent/options.ts';
import { ownValue } from '../src/own.ts';
import type { Agent, AgentDefinition } from '../src/agent/types.ts';
import { feedbackAgent } from './feedback/index.ts';
import { replayAgent } from './replay/index.ts';
import { singleShotAgent } from './single-shot/index.ts';
import { sweAgent } from './swe-agent/index.ts';

export const AGENTS: Readonly<Record<string, AgentDefinition>> = {
  [sweAgent.name]: sweAgent,
  [feedbackAgent.name]: feedbackAgent,
  [singleShotAgent.name]: singleShotAgent,
  [replayAgent.name]: replayAgent,
};

export function agentNames(): string[] {
  return Object.keys(AGENTS);
}

/** The agent definition called `name`; throws naming the known agents. */
export function getAgent(name: string): AgentDefinition {
  const def = ownValue(AGENTS, name);
  if (!def) throw new Error(`unknown agent '${name}' (known: ${agentNames().join(', ')})`);
  return def;
}

/** Validates `options` with the agent's schema (defaults filled in) and creates the agent. */
export function createAgent(name: string, options: unknown = {}): Agent {
  const def = getAgent(name);
  const parsed = parseAgentOptions(def, options);
  if (!parsed.ok) throw new Error(`invalid options for agent '${name}': ${parsed.message}`);
  return def.create(parsed.options);
}

export type { Agent, AgentContext, AgentDefinition, AgentResult, ModelConfig, TokenUsage } from '../src/agent/types.ts';
