import { randomUUID } from 'node:crypto';
import type { Episode } from '../../episode/episode.ts';
import type { Gym } from '../../episode/gym.ts';
import { GymError, toGymError } from '../../errors.ts';
import type { AnyTool, ToolContext, ToolResult } from '../../tools/types.ts';
import { definitionOf, toCallResult } from '../../protocol/mcp.ts';
import { toolErrorType } from './errors.ts';
import { TaskCursor } from './task_order.ts';
import {
  parseAction,
  parseWire,
  ResetData,
  type CallToolResultWire,
  type ListedTool,
  type ResetOptions,
  type StepResultWire,
} from './wire.ts';

export interface OpenEnvSessionOptions {
  /** An episode's own MCP path (with its key), handed to the session that started it, as start_episode's `mcpPath`. */
  mcpPathOf?: (episodeId: string) => string;
  /** This replica's URL (`serve --advertise-url`): results naming an episode's endpoint name it there too. */
  replicaUrl?: string;
}

/** A tool call's outcome as a CallToolObservation says it, before metadata. */
interface CallOutcome {
  result: CallToolResultWire | null;
  error: { error_type: string; message: string } | null;
  gymError?: GymError;
  /** Whether an episode tool ran (a step of the episode, counted and recorded). */
  episodeStep: boolean;
}

/**
 * One OpenEnv session (a WebSocket connection, or an HTTP MCP session): it holds at most one
 * episode at a time, the one its last `reset` (or `start_episode` call) started, and owns every
 * episode it started or forked; closing the session ends them. Before its first episode it
 * offers the gym tools (list_suites, list_tasks, start_episode); with one, that episode's tools.
 * Every call goes through the gym's one tool table (`Gym.callTool`, `Gym.callEpisodeTool`):
 * the same validation, budgets, errors and trajectory records as MCP and the gym protocol.
 */
export class OpenEnvSession {
  readonly id = randomUUID();
  private episode?: Episode;
  /** The client's `episode_id` of the last reset: a label, reported by `state`. */
  private label?: string;
  private cursor?: TaskCursor;
  private taskIndex?: number;
  private readonly owned = new Set<string>();
  private readonly calls = new Set<AbortController>();
  private closed = false;
  private closing?: Promise<void>;
  private readonly closeListeners: (() => void)[] = [];

  constructor(
    private readonly gym: Gym,
    private readonly opts: OpenEnvSessionOptions = {},
  ) {}

  /** The tools the session offers now: the gym tools before its first episode, then that episode's. */
  tools(): AnyTool[] {
    return this.episode ? this.gym.episodeTools(this.episode) : this.gym.tools.filter((t) => t.scope === 'gym');
  }

  /** The tools as a ListToolsObservation lists them. */
  listedTools(): ListedTool[] {
    return this.tools().map((tool) => {
      const def = definitionOf(tool, false);
      return { name: tool.name, description: tool.description, input_schema: def.inputSchema as Record<string, unknown> };
    });
  }

  /** Ends the episode the session holds (if it runs) and starts the one `raw` chooses. */
  async reset(raw: unknown): Promise<StepResultWire> {
    const options = parseWire(ResetData, raw ?? {}, 'reset data', ['data']);
    const started = await this.track(undefined, (ctx) => this.start(options, ctx));
    return { observation: this.resetObservation(started), reward: null, done: false };
  }

  /** One action: `list_tools`, or a tool call (`call_tool`); a failed call is an observation with its `error`. */
  async step(raw: unknown, opts: { timeoutMs?: number } = {}): Promise<StepResultWire> {
    const action = parseAction(raw, ['data']);
    if (action.type === 'list_tools') {
      return { observation: { tools: this.listedTools(), metadata: this.metadata() }, reward: null, done: this.done() };
    }
    const outcome = await this.callTool(action.tool_name, action.arguments, opts);
    return {
      observation: { tool_name: action.tool_name, result: outcome.result, error: outcome.error, metadata: this.metadata(outcome.gymError) },
      reward: this.rewardOf(action.tool_name, outcome),
      done: this.done(),
    };
  }

  /**
   * Calls a tool the session offers. Failures are outcomes, not exceptions: a tool the session
   * does not offer is `tool_not_found`; the tool's own failure carries its GymError.
   */
  async callTool(name: string, args: Record<string, unknown>, opts: { timeoutMs?: number } = {}): Promise<CallOutcome> {
    const tool = this.tools().find((t) => t.name === name);
    if (!tool) {
      const e = this.notOffered(name);
      return {
        result: null,
        error: { error_type: toolErrorType(e, false), message: `${e.code}: ${e.message}` },
        gymError: e,
        episodeStep: false,
      };
    }
    const timer = opts.timeoutMs ? { ms: opts.timeoutMs, fired: false } : undefined;
    try {
      const result = await this.track(timer, async (ctx) => {
        if (tool.scope === 'episode') return this.gym.callEpisodeTool(this.episode!, tool, args, ctx);
        if (tool.name === 'start_episode') return (await this.startFromTool(args, ctx)).result;
        return this.gym.callTool(tool.name, args, ctx);
      });
      // A fork is this session's too: it ends with the session.
      if (tool.name === 'fork_episode' && typeof result.data.episodeId === 'string') this.owned.add(result.data.episodeId);
      return { result: this.wireResult(tool, result), error: null, episodeStep: tool.scope === 'episode' };
    } catch (err) {
      const e = toGymError(err);
      return {
        result: null,
        error: { error_type: toolErrorType(e, Boolean(timer?.fired)), message: `${e.code}: ${e.message}` },
        gymError: e,
        episodeStep: tool.scope === 'episode',
      };
    }
  }

  /** The session's episode as OpenEnv's `state` reports it (its State model: episode_id, step_count, and more). */
  state(): Record<string, unknown> {
    const order = this.cursor
      ? { suite: this.cursor.suite, seed: this.cursor.seed, ...(this.taskIndex !== undefined ? { task_index: this.taskIndex } : {}) }
      : {};
    const ep = this.episode;
    if (!ep) return { episode_id: null, step_count: 0, ...order };
    const verdict = ep.verdict;
    return {
      episode_id: ep.id,
      step_count: ep.steps,
      ...order,
      suite: ep.task.suite,
      task_id: ep.task.id,
      ...(this.label !== undefined ? { label: this.label } : {}),
      state: ep.state,
      done: ep.state !== 'running',
      reward: verdict && verdict.status !== 'error' ? verdict.reward : null,
      max_steps: ep.budgets.maxSteps,
      steps_left: Math.max(0, ep.budgets.maxSteps - ep.steps),
      deadline: new Date(ep.budgets.deadline).toISOString(),
    };
  }

  /** Cancels the session's running calls and ends every episode it owns that still runs; a second call waits for the first. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      for (const c of this.calls) c.abort(new GymError('CANCELLED', 'the OpenEnv session closed'));
      await Promise.all([...this.owned].map((id) => this.endOwned(id)));
      for (const listener of this.closeListeners) listener();
    })();
    return this.closing;
  }

  /** Calls `listener` once the session has closed. */
  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private async start(options: ResetOptions, ctx: ToolContext): Promise<{ episode: Episode; result: ToolResult }> {
    const suite = options.suite ?? this.gym.registry.defaultSuite();
    let taskId = options.task_id;
    if (options.seed !== undefined || (!taskId && this.cursor?.suite !== suite)) {
      const ids = (await this.gym.registry.tasks(suite)).map((t) => t.id);
      if (!ids.length) throw new GymError('TASK_NOT_FOUND', `suite '${suite}' has no tasks`);
      this.cursor = TaskCursor.start(suite, ids, options.seed);
    }
    this.taskIndex = undefined;
    if (!taskId) {
      const next = this.cursor!.next();
      taskId = next.taskId;
      this.taskIndex = next.index;
    }
    const args = {
      task_id: taskId,
      suite,
      ...(options.prompt_variant ? { prompt_variant: options.prompt_variant } : {}),
      ...(options.context ? { context: options.context } : {}),
      ...(options.max_steps ? { max_steps: options.max_steps } : {}),
      ...(options.time_limit_s ? { time_limit_s: options.time_limit_s } : {}),
    };
    const started = await this.startFromTool(args, ctx);
    this.label = options.episode_id;
    return started;
  }

  /** start_episode for this session: the episode it held ends first; the new one is held and owned. */
  private async startFromTool(args: Record<string, unknown>, ctx: ToolContext): Promise<{ episode: Episode; result: ToolResult }> {
    if (this.episode) {
      await this.endOwned(this.episode.id);
      this.episode = undefined;
    }
    this.label = undefined;
    const result = await this.gym.callTool('start_episode', args, ctx);
    const episode = this.gym.episode(result.data.episodeId as string);
    this.owned.add(episode.id);
    // Closed while the episode started: it is nobody's, so it ends now.
    if (this.closed) {
      await this.endOwned(episode.id);
      throw new GymError('CANCELLED', 'the OpenEnv session closed while the episode started');
    }
    this.episode = episode;
    return { episode, result };
  }

  private async endOwned(id: string): Promise<void> {
    const episode = this.gym.findEpisode(id);
    if (episode?.state === 'running') await episode.serialize(() => this.gym.endEpisode(episode)).catch(() => {});
  }

  /** Runs `fn` with a context the session can cancel (on close) and, with `timer`, that is cancelled after `timer.ms`. */
  private async track<T>(timer: { ms: number; fired: boolean } | undefined, fn: (ctx: ToolContext) => Promise<T>): Promise<T> {
    if (this.closed) throw new GymError('CANCELLED', 'the OpenEnv session is closed');
    const controller = new AbortController();
    this.calls.add(controller);
    const timeout = timer
      ? setTimeout(() => {
          timer.fired = true;
          controller.abort(new GymError('CANCELLED', `the step ran past its timeout_s (${timer.ms / 1000} s)`));
        }, timer.ms)
      : undefined;
    try {
      return await fn({
        signal: controller.signal,
        progress: () => {},
        ...(this.opts.mcpPathOf ? { mcpPathOf: this.opts.mcpPathOf } : {}),
      });
    } finally {
      clearTimeout(timeout);
      this.calls.delete(controller);
    }
  }

  /** fastmcp's CallToolResult of a successful call: the text for models, the declared data for programs. */
  private wireResult(tool: AnyTool, result: ToolResult): CallToolResultWire {
    const call = toCallResult(tool, result, this.opts.replicaUrl);
    const data = (call.structuredContent ?? {}) as Record<string, unknown>;
    return {
      content: [{ type: 'text', text: result.text, annotations: null, meta: null }],
      structured_content: data,
      meta: null,
      data,
      is_error: false,
    };
  }

  private notOffered(name: string): GymError {
    const offered = this.tools().map((t) => t.name);
    if (!this.episode) {
      const known = this.gym.tools.some((t) => t.name === name);
      return new GymError(
        'TOOL_NOT_AVAILABLE',
        `${known ? `'${name}' is a tool of an episode, and this session has none yet` : `unknown tool '${name}'`}: ` +
          `reset first (or call start_episode); tools now: ${offered.join(', ')}`,
      );
    }
    const known = this.gym.tools.some((t) => t.name === name);
    return new GymError(
      'TOOL_NOT_AVAILABLE',
      `${known ? `'${name}' is not a tool of this episode` : `unknown tool '${name}'`} (its tools: ${offered.join(', ')})`,
    );
  }

  /** 0 or 1 for a submission's verdict, null when the verdict is an infrastructure failure (no answer was judged); 0 for other steps. */
  private rewardOf(toolName: string, outcome: CallOutcome): number | null {
    if (!outcome.episodeStep) return null;
    const verdict = this.episode?.verdict;
    if (toolName === 'submit' && !outcome.error && verdict) return verdict.status === 'error' ? null : verdict.reward;
    return 0;
  }

  private done(): boolean {
    return Boolean(this.episode && this.episode.state !== 'running');
  }

  /** What every observation carries besides OpenEnv's fields: where the episode stands, and benchgym's error of a failed call. */
  private metadata(error?: GymError): Record<string, unknown> {
    const ep = this.episode;
    const facts = ep
      ? {
          episode_id: ep.id,
          step_count: ep.steps,
          max_steps: ep.budgets.maxSteps,
          deadline: new Date(ep.budgets.deadline).toISOString(),
          state: ep.state,
          // The budget is spent but the episode runs: only submit, get_diff and end_episode are left.
          truncated: ep.state === 'running' && (ep.steps >= ep.budgets.maxSteps || Date.now() > ep.budgets.deadline),
        }
      : { episode_id: null, step_count: 0 };
    return { ...facts, ...(error ? { error: error.toJSON() } : {}) };
  }

  private resetObservation(started: { episode: Episode; result: ToolResult }): Record<string, unknown> {
    const { episode, result } = started;
    const data = toCallResult(
      this.gym.tools.find((t) => t.name === 'start_episode')!,
      result,
      this.opts.replicaUrl,
    ).structuredContent;
    return {
      text: result.text,
      data,
      metadata: { ...this.metadata(), suite: episode.task.suite, task_id: episode.task.id, prompt: episode.prompt },
    };
  }
}
