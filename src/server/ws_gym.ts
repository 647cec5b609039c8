import { WebSocketServer, WebSocket, type RawData } from 'ws';
import { z } from 'zod';
import { GymError, toGymError, type GymErrorCode } from '../errors.ts';
import type { Episode } from '../episode/episode.ts';
import { isEpisodeToolOf, type Gym } from '../episode/gym.ts';
import type { ToolContext, ToolResult } from '../tools/types.ts';
import { parseInput } from '../validation.ts';
import { episodeByKey, episodePath } from '../protocol/capability.ts';
import type { ServerExtension } from './http.ts';

/**
 * The WebSocket gym protocol at `ws://HOST:PORT/ws`: JSON-RPC 2.0 for RL-style clients
 * (`reset` → observation, `step` → observation, reward, terminated, truncated, info),
 * with a running command's output streamed as notifications. It calls the same tool table
 * as MCP (`Gym.callTool`). docs/PROTOCOL.md, "WebSocket gym protocol", is the contract.
 */

export interface WsGymOptions {
  /** Endpoint path (default `/ws`). */
  path?: string;
  /** Largest incoming frame; bigger ones close the connection with 1009 (default 4 MiB). */
  maxPayload?: number;
  /** A ping every this many ms; a client that has not answered the previous one is dropped (default 30 s; 0 turns it off). */
  heartbeatMs?: number;
  /** While more than this many bytes wait to be sent, `output` notifications are dropped (default 1 MiB). */
  maxBufferedBytes?: number;
}

export const WS_DEFAULTS = { maxPayload: 4 * 1024 * 1024, heartbeatMs: 30_000, maxBufferedBytes: 1024 * 1024 } as const;

/** JSON-RPC 2.0 error codes used by the gym protocol. */
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  SERVER_ERROR: -32000,
} as const;

/** Codes that mean the request itself named something wrong: JSON-RPC "invalid params". */
const PARAM_CODES: ReadonlySet<GymErrorCode> = new Set(['INVALID_ARGUMENT', 'SUITE_NOT_FOUND', 'TASK_NOT_FOUND', 'EPISODE_NOT_FOUND']);

type RequestId = string | number;

interface StepResult {
  observation: ToolResult;
  reward: number;
  terminated: boolean;
  truncated: boolean;
  info: Record<string, unknown>;
}

/** Pings every client each `intervalMs`; one that did not answer the previous ping is terminated. */
export function startHeartbeat(wss: WebSocketServer, intervalMs: number): () => void {
  if (!intervalMs || intervalMs <= 0) return () => {};
  const alive = new WeakMap<WebSocket, boolean>();
  wss.on('connection', (ws: WebSocket) => {
    alive.set(ws, true);
    ws.on('pong', () => alive.set(ws, true));
  });
  const timer = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      try {
        ws.ping();
      } catch {
        ws.terminate();
      }
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Closes every client with 1001 (going away), terminating those that do not finish the
 * close handshake within `graceMs`, then the server (the HTTP server cannot close while
 * upgraded sockets stay open).
 */
export async function closeWebSocketServer(wss: WebSocketServer, graceMs = 500): Promise<void> {
  const open = [...wss.clients];
  await Promise.all(
    open.map(
      (ws) =>
        new Promise<void>((resolve) => {
          if (ws.readyState === WebSocket.CLOSED) return resolve();
          const timer = setTimeout(() => {
            ws.terminate();
            resolve();
          }, graceMs);
          ws.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
          ws.close(1001, 'server shutting down');
        }),
    ),
  );
  await new Promise<void>((resolve) => wss.close(() => resolve()));
}

const ParamsObject = z.looseObject({});
const ResetParams = z.object({
  task_id: z.string().min(1),
  suite: z.string().min(1).optional(),
  options: z
    .object({
      prompt_variant: z.string().optional(),
      max_steps: z.number().int().min(1).max(10_000).optional(),
      time_limit_s: z.number().positive().max(86_400).optional(),
    })
    .strict()
    .optional(),
});
const EpisodeKey = z
  .string()
  .min(1)
  .optional()
  .describe('the episode_key reset returned; needed for an episode this connection did not reset or fork');
const StepParams = z.object({
  episode_id: z.string().min(1),
  episode_key: EpisodeKey,
  tool: z.string().min(1),
  args: z.record(z.string(), z.unknown()).optional(),
});
const EpisodeParams = z.object({ episode_id: z.string().min(1), episode_key: EpisodeKey });
const CancelParams = z.object({ request_id: z.union([z.string(), z.number()]) });

/** The `/ws` endpoint as a server extension; `startHttpServer(gym, { extensions: [wsGymExtension()] })`. */
export function wsGymExtension(opts: WsGymOptions = {}): ServerExtension {
  return ({ gym, upgrades }) => {
    const mcpPathOf = (id: string) => episodePath(gym.episode(id), 'mcp');
    const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxPayload ?? WS_DEFAULTS.maxPayload, clientTracking: true });
    const stopHeartbeat = startHeartbeat(wss, opts.heartbeatMs ?? WS_DEFAULTS.heartbeatMs);
    const maxBuffered = opts.maxBufferedBytes ?? WS_DEFAULTS.maxBufferedBytes;
    upgrades.add(opts.path ?? '/ws', (req, socket, head) => {
      wss.handleUpgrade(req, socket, head, (ws) => {
        wss.emit('connection', ws, req);
        new GymConnection(gym, ws, maxBuffered, mcpPathOf);
      });
    });
    return async () => {
      stopHeartbeat();
      await closeWebSocketServer(wss);
    };
  };
}

/** One client connection: parses JSON-RPC, runs requests concurrently, streams notifications. */
class GymConnection {
  /** In-flight requests, for `cancel`. Closing the connection does not abort them. */
  private readonly running = new Map<RequestId, AbortController>();
  /** Output bytes dropped per request while the send buffer was over the limit, not yet reported. */
  private readonly dropped = new Map<RequestId, number>();
  /** Episodes this connection reset or forked: it holds their keys, so its steps need not repeat them. */
  private readonly held = new Set<string>();

  constructor(
    private readonly gym: Gym,
    private readonly ws: WebSocket,
    private readonly maxBuffered: number,
    private readonly mcpPathOf: (episodeId: string) => string,
  ) {
    ws.on('message', (data: RawData, isBinary: boolean) => this.onMessage(data, isBinary));
    // Errors (a bad frame, an oversize one) close the socket; ws reports them here first.
    ws.on('error', () => {});
  }

  private send(message: Record<string, unknown>): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', ...message }), () => {});
  }

  private reply(id: RequestId | null, result: unknown): void {
    this.send({ id, result });
  }

  private fail(id: RequestId | null, code: number, message: string, data?: unknown): void {
    this.send({ id, error: { code, message, ...(data !== undefined ? { data } : {}) } });
  }

  private failWith(id: RequestId | null, err: unknown): void {
    const e = toGymError(err);
    const code = PARAM_CODES.has(e.code) ? RPC.INVALID_PARAMS : e.code === 'INTERNAL' ? RPC.INTERNAL_ERROR : RPC.SERVER_ERROR;
    this.fail(id, code, `${e.code}: ${e.message}`, e.toJSON());
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    let message: unknown;
    try {
      if (isBinary) throw new Error('binary frames are not JSON-RPC; send text frames');
      message = JSON.parse(rawText(data));
    } catch (err) {
      return this.fail(null, RPC.PARSE_ERROR, `Parse error: ${(err as Error).message}`);
    }
    if (Array.isArray(message))
      return this.fail(null, RPC.INVALID_REQUEST, 'Invalid Request: batches are not supported; send one request per message');
    if (!message || typeof message !== 'object')
      return this.fail(null, RPC.INVALID_REQUEST, 'Invalid Request: expected a JSON-RPC 2.0 request object');
    const m = message as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
    const hasId = 'id' in m && m.id !== undefined;
    const validId = typeof m.id === 'string' || (typeof m.id === 'number' && Number.isFinite(m.id));
    if (m.jsonrpc !== '2.0' || typeof m.method !== 'string' || (hasId && !validId)) {
      return this.fail(
        validId ? (m.id as RequestId) : null,
        RPC.INVALID_REQUEST,
        "Invalid Request: needs jsonrpc '2.0', a string method and a string or number id",
      );
    }
    // A message without an id is a notification: it runs, and nothing is sent about it.
    const id = hasId ? (m.id as RequestId) : null;
    void this.dispatch(id, m.method, m.params);
  }

  private async dispatch(id: RequestId | null, method: string, rawParams: unknown): Promise<void> {
    const controller = new AbortController();
    if (id !== null) {
      // Answered with id null: with the duplicate id the client would take it for the running request's response.
      if (this.running.has(id))
        return this.fail(
          null,
          RPC.INVALID_REQUEST,
          `Invalid Request: a request with id ${JSON.stringify(id)} is still running; use a new id`,
        );
      this.running.set(id, controller);
    }
    try {
      if (rawParams !== undefined && (rawParams === null || typeof rawParams !== 'object' || Array.isArray(rawParams))) {
        throw new GymError('INVALID_ARGUMENT', 'params must be an object');
      }
      const params = parseInput(ParamsObject, rawParams, `params of ${method}`);
      const ctx = this.context(id, controller.signal);
      const step = (p: { episode_id: string; episode_key?: string }, tool: string, args: Record<string, unknown>) =>
        this.step(this.episodeOf(p.episode_id, p.episode_key), tool, args, this.context(id, controller.signal, p.episode_id));
      let result: unknown;
      switch (method) {
        case 'list_suites':
          result = (await this.gym.callTool('list_suites', params, ctx)).data;
          break;
        case 'list_tasks':
          result = (await this.gym.callTool('list_tasks', params, ctx)).data;
          break;
        case 'reset': {
          const p = parseInput(ResetParams, params, 'params of reset');
          const observation = await this.gym.callTool(
            'start_episode',
            { task_id: p.task_id, ...(p.suite ? { suite: p.suite } : {}), ...p.options },
            ctx,
          );
          const episode = this.gym.episode((observation.data as { episodeId: string }).episodeId);
          this.held.add(episode.id);
          result = { episode_id: episode.id, episode_key: episode.key, observation };
          break;
        }
        case 'step': {
          const p = parseInput(StepParams, params, 'params of step');
          result = await step(p, p.tool, p.args ?? {});
          break;
        }
        case 'submit':
          result = await step(parseInput(EpisodeParams, params, 'params of submit'), 'submit', {});
          break;
        case 'close':
          result = await step(parseInput(EpisodeParams, params, 'params of close'), 'end_episode', {});
          break;
        case 'ping':
          // The protocol's no-op, as MCP's: a client's liveness check, and the transport's floor.
          result = {};
          break;
        case 'cancel': {
          const target = this.running.get(parseInput(CancelParams, params, 'params of cancel').request_id);
          target?.abort(new GymError('CANCELLED', 'cancelled by the client'));
          result = { cancelled: Boolean(target) };
          break;
        }
        default:
          if (id !== null)
            this.fail(
              id,
              RPC.METHOD_NOT_FOUND,
              `Method not found: '${method}' (list_suites, list_tasks, reset, step, submit, close, cancel, ping)`,
            );
          return;
      }
      if (id !== null) {
        this.flushDropped(id);
        this.reply(id, result);
      }
    } catch (err) {
      if (id !== null) {
        this.flushDropped(id);
        this.failWith(id, err);
      }
    } finally {
      if (id !== null && this.running.get(id) === controller) this.running.delete(id);
      if (id !== null) this.dropped.delete(id);
    }
  }

  /**
   * The episode a step names: one this connection reset or forked, or one whose key the step
   * carries. Anything else is EPISODE_NOT_FOUND, the same whether the episode exists or not.
   */
  private episodeOf(episodeId: string, key: string | undefined): Episode {
    if (key === undefined && this.held.has(episodeId)) return this.gym.episode(episodeId);
    try {
      return episodeByKey(this.gym, episodeId, key ?? '');
    } catch {
      throw new GymError(
        'EPISODE_NOT_FOUND',
        `no episode '${episodeId}' reachable here: ${key === undefined ? 'this connection did not reset or fork it; give its episode_key' : 'no such episode, or not this episode_key'} (it may also have expired)`,
      );
    }
  }

  /**
   * One step of an episode. Tool failures are observations (the loop goes on); only an
   * unknown episode or a malformed request throws, as a JSON-RPC error.
   */
  private async step(episode: Episode, toolName: string, args: Record<string, unknown>, ctx: ToolContext): Promise<StepResult> {
    const episodeId = episode.id;
    // Another suite's tool is not unknown: the gym refuses it as an observation (TOOL_NOT_AVAILABLE).
    if (!isEpisodeToolOf(this.gym, toolName)) {
      const tools = this.gym.episodeTools(episode);
      const hint = ['list_suites', 'list_tasks', 'start_episode'].includes(toolName)
        ? `; '${toolName}' is a method of its own (start_episode is reset)`
        : '';
      throw new GymError('INVALID_ARGUMENT', `unknown episode tool '${toolName}'${hint} (tools: ${tools.map((t) => t.name).join(', ')})`);
    }
    let observation: ToolResult;
    let error: ReturnType<GymError['toJSON']> | undefined;
    try {
      observation = await this.gym.callTool(toolName, args, ctx, episodeId);
      // A fork is this connection's too; its mcpPath carries its key for any other client.
      if (toolName === 'fork_episode') this.held.add((observation.data as { episodeId: string }).episodeId);
    } catch (err) {
      const e = toGymError(err);
      if (e.code === 'EPISODE_NOT_FOUND') throw e;
      error = e.toJSON();
      observation = { text: `Error ${e.code}: ${e.message}`, data: { error } };
    }
    const terminated = episode.state !== 'running';
    const budgetSpent = episode.steps >= episode.budgets.maxSteps || Date.now() > episode.budgets.deadline;
    const reward = toolName === 'submit' && !error && episode.verdict ? episode.verdict.reward : 0;
    return {
      observation,
      reward,
      terminated,
      truncated: !terminated && (budgetSpent || error?.code === 'BUDGET_EXHAUSTED'),
      info: {
        tool: toolName,
        state: episode.state,
        steps: episode.steps,
        max_steps: episode.budgets.maxSteps,
        deadline: new Date(episode.budgets.deadline).toISOString(),
        ...(error ? { error } : {}),
      },
    };
  }

  private flushDropped(id: RequestId): void {
    const bytes = this.dropped.get(id);
    if (!bytes) return;
    this.dropped.delete(id);
    this.send({ method: 'output_dropped', params: { request_id: id, bytes } });
  }

  /** Progress and (for steps) output of request `id`, as notifications sent before its response. */
  private context(id: RequestId | null, signal: AbortSignal, episodeId?: string): ToolContext {
    return {
      signal,
      mcpPathOf: this.mcpPathOf,
      progress: (progress, total, message) => {
        if (id === null) return;
        this.send({
          method: 'progress',
          params: { request_id: id, progress, ...(total !== undefined ? { total } : {}), ...(message ? { message } : {}) },
        });
      },
      onOutput: (chunk, stream) => {
        if (id === null || !chunk) return;
        if (this.ws.bufferedAmount > this.maxBuffered) {
          this.dropped.set(id, (this.dropped.get(id) ?? 0) + Buffer.byteLength(chunk));
          return;
        }
        this.flushDropped(id);
        this.send({ method: 'output', params: { episode_id: episodeId, request_id: id, stream, chunk } });
      },
    };
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}
