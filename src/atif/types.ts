/**
 * Harbor's Agent Trajectory Interchange Format (ATIF, RFC 0001), the fields benchgym writes:
 * a root with the agent and its steps (each with its tool calls and their observations, a
 * timestamp, the model's metrics), and final metrics. Harbor's pydantic models
 * (harbor.models.trajectories) are the reference; test/atif validates exports with them.
 */

/** v1.7 brought `extra` on tool calls and observation results, and `llm_call_count`; v1.6 documents stay valid. */
export const ATIF_VERSION = 'ATIF-v1.7';

export interface AtifAgent {
  name: string;
  version: string;
  model_name?: string;
  extra?: Record<string, unknown>;
}

export interface AtifToolCall {
  tool_call_id: string;
  function_name: string;
  arguments: Record<string, unknown>;
  extra?: Record<string, unknown>;
}

export interface AtifObservationResult {
  /** The tool call this result answers (a tool_call_id of the same step). */
  source_call_id?: string;
  content?: string;
  extra?: Record<string, unknown>;
}

export interface AtifMetrics {
  prompt_tokens?: number;
  completion_tokens?: number;
  cost_usd?: number;
  extra?: Record<string, unknown>;
}

export interface AtifStep {
  /** 1, 2, ... in order. */
  step_id: number;
  /** ISO 8601. */
  timestamp?: string;
  source: 'system' | 'user' | 'agent';
  /** Agent steps only. */
  model_name?: string;
  message: string;
  tool_calls?: AtifToolCall[];
  observation?: { results: AtifObservationResult[] };
  metrics?: AtifMetrics;
  /** 1: a model turn; 0: a call the agent's program made without a model (a harness writing files, an automatic submit). */
  llm_call_count?: number;
  extra?: Record<string, unknown>;
}

export interface AtifFinalMetrics {
  total_prompt_tokens?: number;
  total_completion_tokens?: number;
  total_cost_usd?: number;
  total_steps?: number;
  extra?: Record<string, unknown>;
}

export interface AtifTrajectory {
  schema_version: typeof ATIF_VERSION;
  session_id?: string;
  trajectory_id?: string;
  agent: AtifAgent;
  steps: AtifStep[];
  notes?: string;
  final_metrics?: AtifFinalMetrics;
  extra?: Record<string, unknown>;
}
