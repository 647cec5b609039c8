import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express, Request, Response, NextFunction } from 'express';
import { isLoopbackHost, loopbackHostNames, refuseReason, type AccessPolicy } from '../protocol/access.ts';
import { SESSION_DEFAULTS, SessionTable } from './sessions.ts';
import { UpgradeRouter } from './upgrade.ts';
import express from 'express';
import { hostHeaderValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { GymError, toGymError } from '../errors.ts';
import type { Episode } from '../episode/episode.ts';
import type { Gym } from '../episode/gym.ts';
import { capabilityOfPath, episodeByKey, isEpisodesPath, NO_EPISODE_ENDPOINT, withoutEpisodeKeys } from '../protocol/capability.ts';
import { createEpisodeMcpServer, createGymMcpServer } from '../protocol/mcp.ts';
import { NodeStreamableHttpTransport } from './mcp_http_transport.ts';
import { onReplica, parseAdvertiseUrl } from '../protocol/replica.ts';
import { docsRoute, landingRoute } from './landing.ts';
import { gymLiveEpisodes } from '../viewer/live.ts';
import { viewerRouter } from '../viewer/router.ts';

export interface HttpServerOptions {
  host?: string;
  port?: number;
  /** Bearer token; required when binding to anything but loopback. */
  token?: string;
  /** Extra Origins allowed (browsers): host names or whole origins; loopback origins always are. */
  allowedOrigins?: string[];
  /** Extra Host header names accepted besides the loopback ones (a loopback bind), or the only ones (any other bind). */
  allowedHosts?: string[];
  /** Streamable HTTP sessions with no request for this long are closed (default 30 min). */
  sessionIdleMs?: number;
  /** Streamable HTTP sessions open at once; a new one past this gets CAPACITY (default 512). */
  maxSessions?: number;
  /** New sessions a second after a burst of 64 (default 20): initialize floods cost CPU every episode needs. */
  sessionsPerSecond?: number;
  /** More endpoints on the same server: WebSocket protocols, terminal pages. */
  extensions?: ServerExtension[];
  /**
   * This replica's own URL, when several serve behind one address (a Kubernetes Service): start_episode
   * and fork_episode then name each episode's endpoint on it (`mcpUrl`), /health says it, and a request
   * for an episode this replica does not hold says which replica was asked. Checked by parseAdvertiseUrl.
   */
  advertiseUrl?: string;
}

/**
 * Adds routes and WebSocket endpoints to the HTTP server, behind the same access checks.
 * It may return a function that `close()` calls first (open WebSockets keep the HTTP server from closing).
 */
export type ServerExtension = (ctx: {
  gym: Gym;
  app: Express;
  upgrades: UpgradeRouter;
  replicaUrl?: string;
  /** The server's JSON parser leaves requests below `prefix` alone: the extension reads their bodies (and answers their errors) itself. */
  readsOwnBody(prefix: string): void;
}) => void | (() => void | Promise<void>);

export interface RunningServer {
  url: string;
  /** The advertised URL (advertiseUrl), else `url`. */
  replicaUrl: string;
  host: string;
  port: number;
  http: Server;
  /** Streamable HTTP MCP sessions open now. */
  mcpSessions(): number;
  close(): Promise<void>;
}

/** Every refusal and error outside MCP's own answers: a status and a JSON-RPC error body (docs/PROTOCOL.md). */
function jsonRpcError(res: Response, status: number, message: string, code = -32000): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * Express's own error handler prints the stack (and with it the server's paths) outside
 * production: every error that reaches the app ends here instead, said in a line.
 */
export function httpErrorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  const e = err as { status?: unknown; statusCode?: unknown; type?: unknown; expose?: unknown; message?: unknown };
  const raw = Number(e?.status ?? e?.statusCode);
  const status = Number.isInteger(raw) && raw >= 400 && raw < 600 ? raw : 500;
  // body-parser and the router mark client errors (a bad body, a bad URL) as safe to show; anything else is said by its status only.
  const said =
    status < 500 && e?.expose !== false && typeof e?.message === 'string' ? e.message : status < 500 ? 'bad request' : 'internal error';
  if (res.headersSent) return void res.end();
  jsonRpcError(
    res,
    status,
    `${status < 500 ? 'INVALID_ARGUMENT' : 'INTERNAL'}: ${said}`,
    e?.type === 'entity.parse.failed' ? -32700 : -32000,
  );
}

/** Serves MCP over Streamable HTTP: `/mcp` (gym-wide, the operator's) and `/episodes/<id>/<key>/mcp` (one episode, opened by its key). */
export async function startHttpServer(gym: Gym, opts: HttpServerOptions = {}): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? 7420;
  const loopback = isLoopbackHost(host);
  const replicaUrl = opts.advertiseUrl === undefined ? undefined : parseAdvertiseUrl(opts.advertiseUrl);
  if (!loopback && !opts.token) {
    throw new GymError(
      'UNAUTHORIZED',
      `binding to ${host} exposes the server beyond this machine: give a token (--token or BENCHGYM_TOKEN)`,
    );
  }
  // DNS-rebinding protection: on loopback only loopback (or configured) names are valid Host headers.
  const allowedHosts = loopback
    ? loopbackHostNames(host, opts.allowedHosts)
    : opts.allowedHosts?.length
      ? opts.allowedHosts.map((h) => h.toLowerCase())
      : undefined;
  // The SDK's Host validation, then ours, then the session rate, and only then the body is
  // read: a refused request (a flood of initialize requests) costs no JSON parsing.
  const app = express();
  app.disable('x-powered-by');
  if (allowedHosts) app.use(hostHeaderValidation(allowedHosts));

  const policy: AccessPolicy = { token: opts.token, allowedOrigins: opts.allowedOrigins, allowedHosts };
  const noEpisodeEndpoint = (res: Response, err: unknown = new GymError('EPISODE_NOT_FOUND', NO_EPISODE_ENDPOINT)) => {
    const e = toGymError(onReplica(err, replicaUrl));
    jsonRpcError(res, 404, `${e.code}: ${e.message}`);
  };
  app.use((req: Request, res: Response, next: NextFunction) => {
    // Below /episodes/ an episode's key opens the door, not the token, and nothing opens without one;
    // everything else is the operator's.
    const episodes = isEpisodesPath(req.path);
    const reason = refuseReason(req, episodes ? { ...policy, token: undefined } : policy);
    if (reason) return jsonRpcError(res, reason.status, reason.message);
    if (!episodes) return next();
    const capability = capabilityOfPath(req.path);
    if (!capability) return noEpisodeEndpoint(res);
    try {
      res.locals.episode = episodeByKey(gym, capability.id, capability.key);
    } catch (err) {
      return noEpisodeEndpoint(res, err);
    }
    next();
  });
  // JSON bodies for every route but the MCP endpoints, which read theirs after the session check.
  const json = express.json();
  const isMcpPath = (p: string) => p === '/mcp' || capabilityOfPath(p)?.endpoint === 'mcp';
  const ownBodyPrefixes: string[] = [];
  // Lower case, as the router matches paths.
  const readsOwnBody = (p: string) =>
    isMcpPath(p) || ownBodyPrefixes.some((prefix) => p.toLowerCase() === prefix || p.toLowerCase().startsWith(`${prefix}/`));
  app.use((req: Request, res: Response, next: NextFunction) => (readsOwnBody(req.path) ? next() : json(req, res, next)));
  const upgrades = new UpgradeRouter(policy, (id, key) => {
    try {
      return episodeByKey(gym, id, key);
    } catch (err) {
      throw onReplica(err, replicaUrl);
    }
  });
  const disposers: (() => void | Promise<void>)[] = [];
  for (const extension of opts.extensions ?? []) {
    const readsOwnBodyOf = (prefix: string) => void ownBodyPrefixes.push(prefix.toLowerCase());
    const dispose = extension({ gym, app, upgrades, ...(replicaUrl ? { replicaUrl } : {}), readsOwnBody: readsOwnBodyOf });
    if (typeof dispose === 'function') disposers.push(dispose);
  }

  const sessions = new SessionTable<{ transport: NodeStreamableHttpTransport; server: McpServer; scope: string }>(
    {
      idleMs: opts.sessionIdleMs ?? SESSION_DEFAULTS.idleMs,
      max: opts.maxSessions ?? SESSION_DEFAULTS.max,
      newPerSecond: opts.sessionsPerSecond ?? SESSION_DEFAULTS.newPerSecond,
    },
    (s) => s.server.close(),
  );

  // A new session (no Mcp-Session-Id) that the rate or the cap would refuse is refused before its body is read.
  const refuseNewSession = (req: Request, res: Response, next: NextFunction) => {
    const refusal = req.method === 'POST' && !req.headers['mcp-session-id'] ? sessions.refusal() : undefined;
    if (refusal) return jsonRpcError(res, 503, `${refusal.code}: ${refusal.message}`);
    next();
  };

  let creationTurn: Promise<void> = Promise.resolve();
  const nextCreationTurn = (): Promise<void> => {
    const turn = creationTurn.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    creationTurn = turn;
    return turn;
  };

  const handle = (scope: () => string, makeServer: () => McpServer) => async (req: Request, res: Response) => {
    try {
      const sessionId = req.headers['mcp-session-id'];
      const id = Array.isArray(sessionId) ? sessionId[0] : sessionId;
      if (id) {
        const session = sessions.get(id);
        if (!session || session.scope !== scope())
          return jsonRpcError(
            res,
            404,
            `unknown MCP session '${id}'${replicaUrl ? ` on replica ${replicaUrl} (a session lives on the replica that initialized it: a load balancer in front of several replicas must keep a client on one)` : ''} (it may have been closed after ${Math.round(sessions.limits.idleMs / 1000)} s idle: initialize a new one)`,
            -32001,
          );
        // A request still running (an SSE stream, a long tool call) keeps the session from idling out.
        res.on('close', sessions.begin(id));
        return await session.transport.handleRequest(req, res, req.body);
      }
      if (req.method !== 'POST' || !isInitializeRequest(req.body))
        return jsonRpcError(res, 400, 'no session: send an initialize request first');
      const release = sessions.reserve();
      try {
        // New sessions are made one at a time, each after a turn of the event loop: a burst of
        // initialize requests then interleaves with the calls of the sessions already open.
        await nextCreationTurn();
        const server = makeServer();
        const transport: NodeStreamableHttpTransport = new NodeStreamableHttpTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid): void => sessions.add(sid, { transport, server, scope: scope() }),
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await server.connect(transport);
        await transport.handleRequest(req, res, req.body);
      } finally {
        release();
      }
    } catch (err) {
      const e = toGymError(err);
      if (!res.headersSent)
        jsonRpcError(res, e.code === 'EPISODE_NOT_FOUND' ? 404 : e.code === 'CAPACITY' ? 503 : 500, `${e.code}: ${e.message}`);
    }
  };

  app.all(
    '/mcp',
    refuseNewSession,
    json,
    handle(
      () => 'gym',
      () => createGymMcpServer(gym, { replicaUrl }),
    ),
  );
  // The episode's own endpoint: the access check above found the episode by its key.
  app.all('/episodes/:id/:key/mcp', refuseNewSession, json, (req: Request, res: Response) => {
    const episode = res.locals.episode as Episode;
    return handle(
      () => `episode:${episode.id}`,
      () => createEpisodeMcpServer(gym, episode.id, { replicaUrl }),
    )(req, res);
  });
  // The run viewer, for the episodes of this gym as they run (behind the checks above).
  app.get('/view', (req: Request, res: Response, next: NextFunction) =>
    req.path === '/view' ? res.redirect(301, `/view/${req.url.slice('/view'.length)}`) : next(),
  );
  app.use('/view', viewerRouter({ live: gymLiveEpisodes(gym) }));
  app.get('/health', async (_req: Request, res: Response) => {
    const episodes = gym.listEpisodes();
    res.json({
      ok: true,
      server: 'benchgym',
      suites: gym.registry.suiteIds(),
      episodes: { running: episodes.filter((e) => e.state === 'running').length, total: episodes.length },
      sandbox: gym.sandboxes.backend,
      ...(replicaUrl ? { replica: replicaUrl } : {}),
    });
  });
  // What is served and how to connect: the operator's page (the token applies, as to /health).
  app.get('/', landingRoute(gym, { token: Boolean(opts.token), upgradePaths: upgrades.paths }));
  app.get('/docs/:name', docsRoute());
  // Whatever no route took, and whatever failed on the way (a malformed body, a path that does not decode): a short answer, never a stack.
  app.use((req: Request, res: Response) => jsonRpcError(res, 404, `no endpoint at ${req.method} ${withoutEpisodeKeys(req.path)}`));
  app.use(httpErrorHandler);

  const http = await new Promise<Server>((resolve, reject) => {
    // Express 5 calls back on errors too: a port in use must be said as such, naming the port.
    const s = app.listen(port, host, (err?: Error) => (err ? reject(listenError(err, host, port)) : resolve(s)));
  });
  upgrades.attach(http);
  const address = http.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${shownHost}:${address.port}`;
  return {
    url,
    replicaUrl: replicaUrl ?? url,
    host: address.address,
    port: address.port,
    http,
    mcpSessions: () => sessions.size,
    async close() {
      // Stop accepting first: nothing new starts while the rest shuts down.
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      await Promise.all(disposers.map(async (d) => d()).map((p) => p.catch(() => {})));
      await sessions.close();
      http.closeAllConnections();
      await closed;
    },
  };
}

/** Why the server could not listen, in words that name the address. */
function listenError(err: Error, host: string, port: number): GymError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new GymError(
      'INVALID_ARGUMENT',
      `port ${port} on ${host} is already in use: stop what listens there or choose another with --port`,
    );
  if (code === 'EACCES')
    return new GymError(
      'INVALID_ARGUMENT',
      `no permission to listen on ${host}:${port} (ports below 1024 need privileges): choose another with --port`,
    );
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    return new GymError('INVALID_ARGUMENT', `cannot listen on ${host}: no such address on this machine (--host)`);
  return new GymError('INTERNAL', `could not listen on ${host}:${port}: ${err.message}`);
}
