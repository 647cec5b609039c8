import http from 'node:http';
import https from 'node:https';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolRequest, CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CLIENT_INFO, type EpisodeSession } from '../agent/session.ts';
import { GymError, type GymErrorCode } from '../errors.ts';
import { capabilityOfPath, withoutEpisodeKeys } from '../protocol/capability.ts';

/**
 * Episodes on a benchgym server reached over HTTP, possibly one of several replicas behind a
 * load balancer (a Kubernetes Service): each episode lives on the replica that started it, and
 * the runner talks to it there (start_episode's `mcpUrl`). A replica that stops answering takes
 * its episodes with it; the runner then records them as infrastructure failures and retries.
 */

/** A benchgym server (or the Service in front of its replicas). */
export interface RemoteServer {
  /** e.g. http://benchgym.benchgym.svc:7420 (a trailing /mcp is ignored). */
  url: string;
  token?: string;
}

/** What the runner needs of start_episode's answer. */
const Started = z
  .object({
    episodeId: z.string().min(1),
    context: z.string(),
    prompt: z.string(),
    mcpPath: z.string().optional(),
    mcpUrl: z.string().optional(),
  })
  .passthrough();

/** The public verdict submit returns (PublicVerdictOutput), as far as a result line needs it. */
const PublicVerdict = z.object({
  reward: z.union([z.literal(0), z.literal(1)]),
  status: z.enum(['passed', 'failed', 'error']),
  tests: z.array(z.object({ name: z.string(), status: z.enum(['passed', 'failed', 'error', 'skipped']) })),
  failToPass: z.object({ passed: z.array(z.string()), failed: z.array(z.string()) }).optional(),
  passToPass: z.object({ passed: z.array(z.string()), failed: z.array(z.string()) }).optional(),
  notes: z.array(z.string()),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  durationMs: z.number().min(0),
});
export type PublicVerdict = z.infer<typeof PublicVerdict>;

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Why a request failed when the server's end of the connection went away (refused, reset, closed), or undefined (anything else: an abort, a bad answer). */
export function connectionFailure(err: unknown): string | undefined {
  for (
    let e = err as { name?: string; code?: string; message?: string; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (e.name === 'AbortError') return undefined;
    if (e.code && CONNECTION_CODES.has(e.code)) return `${e.code}${e.message && !e.message.includes(e.code) ? ` (${e.message})` : ''}`;
    if (/other side closed|socket hang up/i.test(e.message ?? '')) return e.message;
  }
  return undefined;
}

function baseOf(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/mcp$/, '');
}

/**
 * Which replica answers at `server.url`: GET /health on a connection of its own (a load
 * balancer spreads connections, not requests), its `replica` field, else the URL itself (a single
 * server). Connection failures are retried a few times (a Service may still route to a pod that just died).
 */
export async function replicaOf(server: RemoteServer, signal?: AbortSignal, attempts = 4): Promise<string> {
  const base = baseOf(server.url);
  let last = '';
  for (let i = 0; i < attempts; i++) {
    if (signal?.aborted) throw new GymError('CANCELLED', 'the run was stopped');
    try {
      const body = await getFresh(`${base}/health`, server.token, signal);
      const replica = z.object({ replica: z.string().url().optional() }).passthrough().safeParse(body);
      if (!replica.success) throw new GymError('SANDBOX_UNAVAILABLE', `${base}/health did not answer as a benchgym server`);
      return replica.data.replica ? baseOf(replica.data.replica) : base;
    } catch (err) {
      const lost = connectionFailure(err);
      if (!lost)
        throw err instanceof GymError
          ? err
          : new GymError('SANDBOX_UNAVAILABLE', `the benchgym server ${base} did not answer: ${(err as Error).message}`);
      last = lost;
      await new Promise((r) => setTimeout(r, 250 * (i + 1)));
    }
  }
  throw new GymError('SANDBOX_UNAVAILABLE', `the benchgym server ${base} is not reachable (${last})`);
}

/** A GET on a new connection (no keep-alive pool), its JSON body. */
function getFresh(url: string, token: string | undefined, signal?: AbortSignal): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const lib = url.startsWith('https:') ? https : http;
    const req = lib.get(
      url,
      {
        agent: false,
        headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        signal,
        timeout: 30_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('error', reject);
        res.on('end', () => {
          if (res.statusCode !== 200)
            return reject(
              new GymError(
                res.statusCode === 401 ? 'UNAUTHORIZED' : 'SANDBOX_UNAVAILABLE',
                `GET ${url}: HTTP ${res.statusCode} ${text.slice(0, 300)}`,
              ),
            );
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(new GymError('SANDBOX_UNAVAILABLE', `GET ${url}: not JSON`));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer within 30 s'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
  });
}

/**
 * fetch that tells `onLost` when the server's end went away: a refused or reset connection, a
 * response stream cut off (the replica was killed during a call), or 404 on an episode
 * endpoint (the replica came back without the episode).
 */
function watchedFetch(onLost: (why: string) => void): typeof fetch {
  return async (input, init) => {
    let res: Response;
    try {
      res = await fetch(input, init);
    } catch (err) {
      const lost = connectionFailure(err);
      if (lost) onLost(lost);
      throw err;
    }
    if (
      res.status === 404 &&
      capabilityOfPath(new URL(String(input instanceof Request ? input.url : input)).pathname)?.endpoint === 'mcp'
    ) {
      onLost(`HTTP 404: ${(await res.clone().text()).slice(0, 300)}`);
    }
    if (!res.body) return res;
    const reader = res.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (err) {
          const lost = connectionFailure(err);
          if (lost) onLost(lost);
          controller.error(err);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

function transport(url: string, token: string | undefined, onLost: (why: string) => void): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(url), {
    fetch: watchedFetch(onLost),
    ...(token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {}),
  });
}

/** A tool error of the server: its code, message and whether it met the sandbox failing after the agent's code could run there. */
const ToolError = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.object({ afterAgentCode: z.boolean().optional() }).passthrough().optional(),
  }),
});

/**
 * A client that keeps what submit answered, whoever called it (the verdict survives an agent that
 * fails afterwards), and the first sandbox failure after the agent's code could run (the server's
 * Episode.sandboxFailure, as its tool errors tell it).
 */
class VerdictKeepingClient extends Client {
  verdict: PublicVerdict | undefined;
  sandboxFailure: { code: string; message: string } | undefined;

  override async callTool(
    params: CallToolRequest['params'],
    resultSchema?: Parameters<Client['callTool']>[1],
    options?: RequestOptions,
  ): ReturnType<Client['callTool']> {
    const result = await super.callTool(params, resultSchema, options);
    if (params.name === 'submit' && !result.isError) {
      const parsed = PublicVerdict.safeParse(result.structuredContent);
      if (parsed.success) this.verdict = parsed.data;
    }
    if (result.isError && !this.sandboxFailure) {
      const failed = ToolError.safeParse(result.structuredContent);
      const error = failed.success ? failed.data.error : undefined;
      if (error?.code === 'SANDBOX_UNAVAILABLE' && error.details?.afterAgentCode)
        this.sandboxFailure = { code: error.code, message: error.message };
    }
    return result;
  }
}

function gymErrorOf(result: CallToolResult, what: string): GymError {
  const error = (result.structuredContent as { error?: { code?: string; message?: string } } | undefined)?.error;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  return new GymError((error?.code ?? 'INTERNAL') as GymErrorCode, `${what}: ${error?.message ?? text}`);
}

/** start_episode's arguments. */
export interface RemoteStart {
  suite: string;
  taskId: string;
  promptVariant?: string;
  context?: string;
  maxSteps?: number;
  timeLimitMs?: number;
}

/** An episode on a server replica, with a client connected to its own endpoint. */
export interface RemoteEpisode {
  id: string;
  context: string;
  prompt: string;
  /** The replica that holds it and the episode's endpoint there (with its key: record withoutEpisodeKeys(mcpUrl)). */
  replica: string;
  mcpUrl: string;
  session: EpisodeSession;
  /** What submit answered, when it was called and scored. */
  verdict(): PublicVerdict | undefined;
  /** Why the replica was lost (it stopped answering), or undefined. */
  lost(): string | undefined;
  /** The first sandbox failure a tool call met after the agent's code could run (the server's Episode.sandboxFailure). */
  sandboxFailure(): { code: string; message: string } | undefined;
  /** The final diff (get_diff), when the replica still answers. */
  finalDiff(): Promise<string | undefined>;
  /** Ends the episode on its replica (a no-op once submitted) and closes the client; never throws. */
  end(): Promise<void>;
}

const START_CALL = { timeout: 30 * 60_000, resetTimeoutOnProgress: true, maxTotalTimeout: 60 * 60_000 } as const;
const SHORT_CALL = { timeout: 30_000 } as const;

/**
 * Starts an episode on one replica of `server` and connects to it there. `onLost` is called
 * once when that replica stops answering (the caller aborts the agent: its calls would only time out).
 */
export async function startRemoteEpisode(
  server: RemoteServer,
  start: RemoteStart,
  opts: { signal: AbortSignal; onLost: (why: string) => void },
): Promise<RemoteEpisode> {
  const replica = await replicaOf(server, opts.signal);
  let lost: string | undefined;
  const onLost = (why: string) => {
    if (lost) return;
    lost = `the benchgym replica ${replica} stopped answering (${why}): its episodes are lost`;
    opts.onLost(lost);
  };
  const gymClient = new Client(CLIENT_INFO);
  let started: z.infer<typeof Started>;
  try {
    await gymClient.connect(transport(`${replica}/mcp`, server.token, onLost));
    const args = {
      suite: start.suite,
      task_id: start.taskId,
      ...(start.promptVariant !== undefined ? { prompt_variant: start.promptVariant } : {}),
      ...(start.context !== undefined ? { context: start.context } : {}),
      ...(start.maxSteps !== undefined ? { max_steps: start.maxSteps } : {}),
      ...(start.timeLimitMs !== undefined ? { time_limit_s: start.timeLimitMs / 1000 } : {}),
    };
    const result = (await gymClient.callTool({ name: 'start_episode', arguments: args }, undefined, {
      ...START_CALL,
      signal: opts.signal,
      onprogress: () => {},
    })) as CallToolResult;
    if (result.isError) throw gymErrorOf(result, `start_episode on ${replica}`);
    const parsed = Started.safeParse(result.structuredContent);
    if (!parsed.success) throw new GymError('INTERNAL', `start_episode on ${replica} answered without an episode: ${parsed.error.message}`);
    started = parsed.data;
  } catch (err) {
    if (lost) throw new GymError('SANDBOX_UNAVAILABLE', lost);
    const why = connectionFailure(err);
    if (why) throw new GymError('SANDBOX_UNAVAILABLE', `the benchgym replica ${replica} stopped answering (${why})`);
    throw err;
  } finally {
    await gymClient.close().catch(() => {});
  }
  // Where the replica says the episode is; a server without --advertise-url is reached where it was asked.
  if (!started.mcpPath)
    throw new GymError(
      'INTERNAL',
      `start_episode on ${replica} named no endpoint for episode ${started.episodeId} (mcpPath): not a benchgym server of this version?`,
    );
  const mcpUrl = started.mcpUrl ?? `${replica}${started.mcpPath}`;
  const client = new VerdictKeepingClient(CLIENT_INFO);
  try {
    // The episode's key, in its URL, opens its endpoint: the operator's token stays with the gym-wide client.
    await client.connect(transport(mcpUrl, undefined, onLost));
  } catch (err) {
    await client.close().catch(() => {});
    throw new GymError(
      'SANDBOX_UNAVAILABLE',
      lost ??
        `could not connect to episode ${started.episodeId} at ${withoutEpisodeKeys(mcpUrl)}: ${withoutEpisodeKeys((err as Error).message)}`,
    );
  }
  let ended = false;
  return {
    id: started.episodeId,
    context: started.context,
    prompt: started.prompt,
    replica,
    mcpUrl,
    session: {
      client,
      episodeId: started.episodeId,
      started: started as Record<string, unknown>,
      close: () => client.close().catch(() => {}),
    },
    verdict: () => client.verdict,
    lost: () => lost,
    sandboxFailure: () => client.sandboxFailure,
    async finalDiff() {
      if (lost) return undefined;
      const r = (await client.callTool({ name: 'get_diff', arguments: {} }, undefined, SHORT_CALL).catch(() => undefined)) as
        CallToolResult | undefined;
      const diff = r && !r.isError ? (r.structuredContent as { diff?: unknown } | undefined)?.diff : undefined;
      return typeof diff === 'string' ? diff : undefined;
    },
    async end() {
      if (ended) return;
      ended = true;
      if (!lost) await client.callTool({ name: 'end_episode', arguments: {} }, undefined, SHORT_CALL).catch(() => {});
      await client.close().catch(() => {});
    },
  };
}
