import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { z } from 'zod';

/** Which model to call, on any OpenAI-compatible endpoint. */
export interface ModelConfig {
  model: string;
  /** e.g. http://127.0.0.1:8000/v1 (`benchgym run` requires one: no silent public default). */
  baseURL?: string;
  /** Default: $OPENAI_API_KEY (or $BENCHGYM_API_KEY). */
  apiKey?: string;
  temperature?: number;
  maxTokens?: number;
  /** USD per 1M prompt / completion tokens, for cost accounting (0 when unknown). */
  pricing?: { prompt: number; completion: number };
  /** Retries of a call that failed with 429, 5xx or a connection error, with exponential backoff (default 5). */
  maxRetries?: number;
  /** The first backoff delay in ms, doubled on each retry up to 60 s; a Retry-After header wins (default 1000). */
  retryDelayMs?: number;
  /** Per-request timeout in ms (default 600000). */
  timeoutMs?: number;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  /** Model calls made. */
  calls: number;
}

/** What the runner hands an agent for one (task, sample). */
export interface AgentContext {
  /** An MCP client connected to this one episode (its own endpoint's scope: no episode_id argument). */
  client: Client;
  episodeId: string;
  task: { suite: string; id: string; prompt: string; language: string; kind: string; metadata: Record<string, unknown> };
  model: ModelConfig;
  /** 0-based sample index (pass@k draws several). */
  sample: number;
  signal: AbortSignal;
  /** Appends an event to this episode's agent trajectory (model messages, tool calls, rounds). */
  record(event: Record<string, unknown>): void;
}

/** How one agent run ended. Infrastructure failures are reported apart, never as wrong answers. */
export interface AgentResult {
  /** The structuredContent submit returned (reward, status, tests, ...), or null when nothing was scored. */
  verdict: Record<string, unknown> | null;
  submitted: boolean;
  /**
   * Why the agent stopped: 'submitted' | 'step_limit' | 'cost_limit' | 'context_limit' | 'rounds_exhausted' | 'model_stopped' | 'error'.
   */
  stopReason: string;
  steps: number;
  /** Feedback loops: rounds used and the round whose visible tests passed first (1-based). */
  rounds?: number;
  passedRound?: number;
  usage: TokenUsage;
  /** What went wrong when stopReason is 'error' and it was not an infrastructure failure. */
  error?: string;
  /** An infrastructure failure (model endpoint down, sandbox lost): the runner retries these. */
  infraError?: { code: string; message: string };
}

export interface Agent {
  run(ctx: AgentContext): Promise<AgentResult>;
}

/** An agent module: `agents/<name>/index.ts` exports one of these. */
export interface AgentDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  /** Agent-specific options: a zod object, `.strict()` so that an unknown key is refused (defaults documented in the schema). */
  options: S;
  /** Whether it calls the model (default true): `benchgym run` then checks the endpoint before any episode. */
  usesModel?: boolean;
  create(options: z.infer<S>): Agent;
}
