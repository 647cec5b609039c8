import type { z } from 'zod';
import type { Episode } from '../episode/episode.ts';
import type { Gym } from '../episode/gym.ts';
import type { Task } from '../tasks/schema.ts';

export interface ToolContext {
  signal: AbortSignal;
  /** Reports progress; protocols forward it (MCP progress notifications, WebSocket events). */
  progress(progress: number, total?: number, message?: string): void;
  /** Streams a running command's output. */
  onOutput?(chunk: string, stream: 'stdout' | 'stderr'): void;
  /** Where an episode's own MCP endpoint is, when the protocol serving the call has one (HTTP, not stdio). */
  mcpPathOf?(episodeId: string): string;
}

/** What every tool returns: text for the model, data for programs. */
export interface ToolResult<O = Record<string, unknown>> {
  text: string;
  data: O;
}

export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

interface ToolBase<S extends z.ZodObject> {
  name: string;
  title: string;
  /** Written for models: what it does, when to use it, what it returns. */
  description: string;
  input: S;
  /**
   * What `data` holds, key by key (camelCase): MCP's outputSchema, and what `structuredContent`
   * is checked against. A key not declared here is not sent.
   */
  output: z.ZodObject;
  annotations: ToolAnnotations;
}

/** A tool that acts on one episode. Protocol-agnostic: MCP, WebSocket and the runner call it alike. */
export interface EpisodeTool<S extends z.ZodObject = z.ZodObject> extends ToolBase<S> {
  scope: 'episode';
  /** May run after the episode was submitted or ended (e.g. get_diff). */
  allowedAfterEnd?: boolean;
  /** Still allowed when the step or time budget is spent (submit, get_diff, end_episode). */
  exemptFromBudget?: boolean;
  /**
   * Runs a process in the sandbox whose code the agent can shape (its commands, the tests over its
   * code, an import of the workspace): once such a tool ran, a sandbox failure may be the agent's doing.
   */
  runsCode?: boolean;
  /** Whether an episode of this task offers the tool (default: every episode of the suites that declare it). */
  appliesTo?(task: Task): boolean;
  run(episode: Episode, args: z.infer<S>, ctx: ToolContext): Promise<ToolResult>;
}

/** A tool that acts on the gym: listing suites and tasks, starting episodes. */
export interface GymTool<S extends z.ZodObject = z.ZodObject> extends ToolBase<S> {
  scope: 'gym';
  run(gym: Gym, args: z.infer<S>, ctx: ToolContext): Promise<ToolResult>;
}

export type AnyTool = EpisodeTool | GymTool;

/** Keeps the schema's type for the handler while storing tools in one table. */
export function episodeTool<S extends z.ZodObject>(def: Omit<EpisodeTool<S>, 'scope'>): EpisodeTool {
  return { ...def, scope: 'episode' } as unknown as EpisodeTool;
}

export function gymTool<S extends z.ZodObject>(def: Omit<GymTool<S>, 'scope'>): GymTool {
  return { ...def, scope: 'gym' } as unknown as GymTool;
}
