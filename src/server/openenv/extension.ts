import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import { toGymError } from '../../errors.ts';
import { episodePath } from '../../protocol/capability.ts';
import type { ServerExtension } from '../http.ts';
import { SESSION_DEFAULTS, SessionTable } from '../sessions.ts';
import { closeWebSocketServer, startHeartbeat, WS_DEFAULTS } from '../ws_gym.ts';
import { openEnvRoutes } from './routes.ts';
import { OpenEnvSession } from './session.ts';
import { serveOpenEnvMcpSocket, serveOpenEnvSocket } from './ws.ts';

export interface OpenEnvOptions {
  /** The base path an OpenEnv client is given (default `/openenv`: `http://HOST:PORT/openenv`). */
  basePath?: string;
  /** Largest incoming frame; bigger ones close the connection with 1009 (default 4 MiB). */
  maxPayload?: number;
  /** Ping interval in ms; a client that missed the previous pong is dropped (default 30 s; 0 turns it off). */
  heartbeatMs?: number;
  /** A session with no message and no call running for this long is closed, and its episode ended (default 30 min). */
  sessionIdleMs?: number;
  /** Sessions open at once (WebSocket connections and HTTP MCP sessions, each counted apart); more are refused (default 512). */
  maxSessions?: number;
  /** New sessions a second after a burst of 64 (default 20). */
  sessionsPerSecond?: number;
}

/**
 * OpenEnv's environment endpoint beside benchgym's own protocols: `/openenv/ws` (the session
 * an OpenEnv client drives), `/openenv/mcp` (JSON-RPC over HTTP and WebSocket) and the HTTP
 * routes, all operator endpoints behind the server's token. Each session starts its own
 * episodes and ends them when it closes or its connection drops.
 * `startHttpServer(gym, { extensions: [openEnvExtension()] })`.
 */
export function openEnvExtension(opts: OpenEnvOptions = {}): ServerExtension {
  return ({ gym, app, upgrades, replicaUrl, readsOwnBody }) => {
    const base = (opts.basePath ?? '/openenv').replace(/\/+$/, '');
    const idleMs = opts.sessionIdleMs ?? SESSION_DEFAULTS.idleMs;
    const limits = {
      idleMs,
      max: opts.maxSessions ?? SESSION_DEFAULTS.max,
      newPerSecond: opts.sessionsPerSecond ?? SESSION_DEFAULTS.newPerSecond,
    };
    const mcpPathOf = (id: string) => episodePath(gym.episode(id), 'mcp');
    // Every session open now, so that closing the server waits for their episodes to end.
    const live = new Set<OpenEnvSession>();
    const newSession = () => {
      const session = new OpenEnvSession(gym, { mcpPathOf, ...(replicaUrl ? { replicaUrl } : {}) });
      live.add(session);
      session.onClose(() => live.delete(session));
      return session;
    };
    const httpSessions = new SessionTable<OpenEnvSession>(limits, (s) => s.close(), 'OpenEnv MCP sessions');
    const sockets = new SessionTable<WebSocket>(
      limits,
      (ws) => ws.close(1000, `idle for ${Math.round(idleMs / 1000)} s`),
      'OpenEnv sessions',
    );
    const rpc = { sessions: httpSessions, newSession };

    readsOwnBody(base);
    app.use(base, openEnvRoutes(gym, newSession, rpc));

    const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxPayload ?? WS_DEFAULTS.maxPayload });
    const stopHeartbeat = startHeartbeat(wss, opts.heartbeatMs ?? WS_DEFAULTS.heartbeatMs);
    const accept =
      (serve: typeof serveOpenEnvSocket): Parameters<typeof upgrades.add>[1] =>
      (req, socket, head) => {
        let release: () => void;
        try {
          release = sockets.reserve();
        } catch (err) {
          const e = toGymError(err);
          socket.end(`HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${e.code}: ${e.message}\n`);
          return;
        }
        socket.once('close', release);
        wss.handleUpgrade(req, socket, head, (ws) => {
          release();
          const id = randomUUID();
          sockets.add(id, ws);
          ws.once('close', () => sockets.delete(id));
          wss.emit('connection', ws, req);
          serve(ws, newSession(), rpc, () => sockets.begin(id));
        });
      };
    upgrades.add(`${base}/ws`, accept(serveOpenEnvSocket));
    upgrades.add(`${base}/mcp`, accept(serveOpenEnvMcpSocket));
    return async () => {
      stopHeartbeat();
      await closeWebSocketServer(wss);
      await Promise.all([sockets.close(), httpSessions.close(), ...[...live].map((s) => s.close())]).catch(() => {});
    };
  };
}
