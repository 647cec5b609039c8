/**
 * Connecting an MCP client to one benchgym episode: in-process (tests, the runner), over
 * Streamable HTTP (the episode's own `<url>/episodes/<id>/<key>/mcp`) or over stdio (`benchgym mcp`, whose tools
 * take an `episode_id`: a scoped client injects it). Every kind hands agents the same thing:
 * a `Client` whose episode tools take no `episode_id`.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolRequest, CallToolResult, ListToolsRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Gym } from '../episode/gym.ts';
import { capabilityOfPath, withoutEpisodeKeys } from '../protocol/capability.ts';
import { createEpisodeMcpServer } from '../protocol/mcp.ts';
import { PROJECT_ROOT } from '../project.ts';

export const CLIENT_INFO = { name: 'benchgym-agent', version: '0.1.0' };

/**
 * Tool calls can run for minutes (test runs, scoring): the timeout restarts on every
 * progress notification (benchgym sends a heartbeat every 5 s), under a hard ceiling.
 */
export const LONG_CALL = { timeout: 120_000, resetTimeoutOnProgress: true, maxTotalTimeout: 30 * 60_000 } as const;

/** start_episode is silent while a task's environment is first built: a long plain timeout. */
const START_CALL = { timeout: 30 * 60_000, resetTimeoutOnProgress: true, maxTotalTimeout: 60 * 60_000 } as const;

/** The gym-wide tools: hidden from an episode-scoped client. */
const GYM_TOOL_NAMES = new Set(['list_suites', 'list_tasks', 'start_episode']);

export interface EpisodeSession {
  /** A client whose episode tools take no `episode_id`. */
  client: Client;
  episodeId: string;
  /** start_episode's structuredContent, when this session started the episode. */
  started?: Record<string, unknown>;
  /** Closes the connection (the episode itself lives on in the server until submitted, ended or expired). */
  close(): Promise<void>;
}

/**
 * Runs `fn` with a signal of its own that follows `parent`. Libraries add abort listeners to
 * the signal they are given and never remove them; a per-call signal keeps the agent's
 * long-lived one from collecting a listener per call.
 */
export async function withCallSignal<T>(parent: AbortSignal | undefined, fn: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  if (!parent) return fn(undefined);
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) controller.abort(parent.reason);
  else parent.addEventListener('abort', onAbort, { once: true });
  try {
    return await fn(controller.signal);
  } finally {
    parent.removeEventListener('abort', onAbort);
  }
}

/** Calls a tool with the long timeout (and a progress callback, so the server sends heartbeats). */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  opts: { signal?: AbortSignal; onprogress?: (p: { progress: number; message?: string }) => void } = {},
): Promise<CallToolResult> {
  const result = await withCallSignal(opts.signal, (signal) =>
    client.callTool({ name, arguments: args }, undefined, { ...LONG_CALL, signal, onprogress: opts.onprogress ?? (() => {}) }),
  );
  return result as CallToolResult;
}

/** The text content of a tool result. */
export function resultText(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type} content]`)).join('\n');
}

/** The error code of a failed tool result (INVALID_ARGUMENT for SDK-side schema errors), or undefined. */
export function resultErrorCode(result: CallToolResult): string | undefined {
  if (!result.isError) return undefined;
  const error = (result.structuredContent as { error?: { code?: string } } | undefined)?.error;
  return error?.code ?? 'INVALID_ARGUMENT';
}

/** Connects to an episode of a Gym in this process (no network). */
export async function connectInProcess(gym: Gym, episodeId: string): Promise<EpisodeSession> {
  const server = createEpisodeMcpServer(gym, episodeId);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client(CLIENT_INFO);
  await client.connect(clientTransport);
  return {
    client,
    episodeId,
    async close() {
      await client.close().catch(() => {});
      await server.close().catch(() => {});
    },
  };
}

function baseUrl(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/mcp$/, '');
}

function httpTransport(url: URL, token?: string): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(url, token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined);
}

export interface HttpOptions {
  /** The server, e.g. http://127.0.0.1:7420 (a trailing /mcp is ignored). */
  url: string;
  /** Bearer token, when the server has one (for the gym-wide `/mcp`; an episode's own endpoint needs none). */
  token?: string;
}

/**
 * Connects to an existing episode over Streamable HTTP, at its own endpoint: the `mcpUrl`
 * start_episode returned, or the server's URL and its `mcpPath` (`/episodes/<id>/<key>/mcp`).
 * The key in the path is what opens it: no token is sent.
 */
export async function connectHttp(opts: { mcpUrl: string } | { url: string; mcpPath: string }): Promise<EpisodeSession> {
  const where = 'mcpUrl' in opts ? opts.mcpUrl : `${baseUrl(opts.url)}${opts.mcpPath}`;
  let url: URL;
  try {
    url = new URL(where);
  } catch {
    throw new Error(`not an episode endpoint URL: '${withoutEpisodeKeys(where)}'`);
  }
  const capability = capabilityOfPath(url.pathname);
  if (!capability || capability.endpoint !== 'mcp')
    throw new Error(`not an episode endpoint (…/episodes/<id>/<key>/mcp): '${withoutEpisodeKeys(where)}'`);
  const client = new Client(CLIENT_INFO);
  await client.connect(httpTransport(url));
  return { client, episodeId: capability.id, close: () => client.close().catch(() => {}) };
}

export interface StartOptions {
  taskId: string;
  suite?: string;
  promptVariant?: string;
  maxSteps?: number;
  timeLimitS?: number;
}

function startArgs(opts: StartOptions): Record<string, unknown> {
  return {
    task_id: opts.taskId,
    ...(opts.suite !== undefined ? { suite: opts.suite } : {}),
    ...(opts.promptVariant !== undefined ? { prompt_variant: opts.promptVariant } : {}),
    ...(opts.maxSteps !== undefined ? { max_steps: opts.maxSteps } : {}),
    ...(opts.timeLimitS !== undefined ? { time_limit_s: opts.timeLimitS } : {}),
  };
}

async function startVia(client: Client, opts: StartOptions): Promise<Record<string, unknown>> {
  const result = (await client.callTool({ name: 'start_episode', arguments: startArgs(opts) }, undefined, {
    ...START_CALL,
    onprogress: () => {},
  })) as CallToolResult;
  if (result.isError) throw new Error(`start_episode failed: ${resultText(result)}`);
  return result.structuredContent as Record<string, unknown>;
}

/** Starts an episode through the gym-wide endpoint (`<url>/mcp`), then connects to its own endpoint. */
export async function startHttpEpisode(opts: HttpOptions & StartOptions): Promise<EpisodeSession> {
  const gymClient = new Client(CLIENT_INFO);
  await gymClient.connect(httpTransport(new URL(`${baseUrl(opts.url)}/mcp`), opts.token));
  let started: Record<string, unknown>;
  try {
    started = await startVia(gymClient, opts);
  } finally {
    await gymClient.close().catch(() => {});
  }
  if (typeof started.mcpPath !== 'string')
    throw new Error('start_episode named no endpoint for the episode (mcpPath): is this a benchgym server?');
  const session = await connectHttp(
    typeof started.mcpUrl === 'string' ? { mcpUrl: started.mcpUrl } : { url: opts.url, mcpPath: started.mcpPath },
  );
  return { ...session, started };
}

/**
 * A client for the gym-wide tool set (`/mcp`, stdio) bound to one episode: `callTool`
 * adds `episode_id`, and `listTools` shows the episode tools without it (and no gym tools),
 * exactly as the episode's own endpoint would.
 */
export class EpisodeScopedClient extends Client {
  episodeId: string | undefined;

  override async callTool(
    params: CallToolRequest['params'],
    resultSchema?: Parameters<Client['callTool']>[1],
    options?: RequestOptions,
  ): ReturnType<Client['callTool']> {
    const scoped =
      this.episodeId !== undefined && !GYM_TOOL_NAMES.has(params.name)
        ? { ...params, arguments: { ...params.arguments, episode_id: this.episodeId } }
        : params;
    return super.callTool(scoped, resultSchema, options);
  }

  override async listTools(params?: ListToolsRequest['params'], options?: RequestOptions): ReturnType<Client['listTools']> {
    const result = await super.listTools(params, options);
    if (this.episodeId === undefined) return result;
    return {
      ...result,
      tools: result.tools
        .filter((t) => !GYM_TOOL_NAMES.has(t.name))
        .map((t) => {
          const { episode_id: _e, ...properties } = (t.inputSchema.properties ?? {}) as Record<string, object>;
          const required = t.inputSchema.required?.filter((r) => r !== 'episode_id');
          return { ...t, inputSchema: { ...t.inputSchema, properties, ...(required ? { required } : {}) } };
        }),
    };
  }

  /** Calls a tool without adding the episode id (gym tools, or an explicit episode_id). */
  callGymTool(name: string, args: Record<string, unknown>, options?: RequestOptions): ReturnType<Client['callTool']> {
    return super.callTool({ name, arguments: args }, undefined, options);
  }
}

export interface StdioOptions extends StartOptions {
  /** Extra arguments of `benchgym mcp` (e.g. ['--suite', 'examples', '--data-dir', dir]). */
  serverArgs?: string[];
  /** The executable and its arguments; default: this Node running bin/benchgym.js. */
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Where the server's stderr goes (default: 'pipe', kept apart from the agent's output). */
  stderr?: 'inherit' | 'pipe' | 'ignore';
}

/**
 * Spawns `benchgym mcp` (MCP over stdio), starts an episode in it and returns a client
 * bound to that episode. Closing the session ends the server process (and its episodes).
 */
export async function spawnStdioEpisode(opts: StdioOptions): Promise<EpisodeSession> {
  const transport = new StdioClientTransport({
    command: opts.command ?? process.execPath,
    args: opts.args ?? [path.join(PROJECT_ROOT, 'bin', 'benchgym.js'), 'mcp', ...(opts.serverArgs ?? [])],
    env: { ...getDefaultEnvironment(), ...opts.env },
    cwd: opts.cwd,
    stderr: opts.stderr ?? 'pipe',
  });
  const client = new EpisodeScopedClient(CLIENT_INFO);
  await client.connect(transport);
  try {
    const started = await startVia(client, opts);
    client.episodeId = String(started.episodeId);
    return { client, episodeId: client.episodeId, started, close: () => client.close().catch(() => {}) };
  } catch (err) {
    await client.close().catch(() => {});
    throw err;
  }
}
