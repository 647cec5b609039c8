import { randomUUID } from 'node:crypto';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { toGymError } from '../errors.ts';
import type { ServerExtension } from './http.ts';
import { createEpisodeMcpServer, createGymMcpServer } from '../protocol/mcp.ts';
import { SESSION_DEFAULTS, SessionTable } from './sessions.ts';
import { WS_DEFAULTS, closeWebSocketServer, startHeartbeat } from './ws_gym.ts';

/** The WebSocket subprotocol of MCP, as the SDK's WebSocketClientTransport asks for it. */
export const MCP_SUBPROTOCOL = 'mcp';

/**
 * A server-side MCP Transport over one WebSocket connection: one JSON-RPC message per text
 * frame, both ways. Messages that arrive before `start()` are kept and delivered then.
 */
export class WebSocketServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private started = false;
  private closed = false;
  private readonly early: JSONRPCMessage[] = [];

  constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: RawData, isBinary: boolean) => this.receive(data, isBinary));
    ws.on('error', (err: Error) => this.onerror?.(err));
    ws.on('close', () => {
      if (this.closed) return;
      this.closed = true;
      this.onclose?.();
    });
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('WebSocketServerTransport already started');
    this.started = true;
    for (const message of this.early.splice(0)) this.onmessage?.(message);
  }

  private receive(data: RawData, isBinary: boolean): void {
    let message: JSONRPCMessage;
    try {
      if (isBinary) throw new Error('binary frames are not JSON-RPC');
      const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as Buffer).toString('utf8');
      message = JSONRPCMessageSchema.parse(JSON.parse(text));
    } catch (err) {
      // Answer like a JSON-RPC server would, so the client learns why, and keep the connection.
      this.sendRaw({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${(err as Error).message.slice(0, 500)}` } });
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    if (this.started) this.onmessage?.(message);
    else this.early.push(message);
  }

  private sendRaw(message: unknown): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message), () => {});
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.ws.readyState !== WebSocket.OPEN) return reject(new Error('the WebSocket is not open'));
      this.ws.send(JSON.stringify(message), (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000);
    if (!this.closed) {
      this.closed = true;
      this.onclose?.();
    }
  }
}

export interface WsMcpOptions {
  /** Largest incoming frame; bigger ones close the connection with 1009 (default 4 MiB). */
  maxPayload?: number;
  /** Ping interval in ms; a client that missed the previous pong is dropped (default 30 s; 0 turns it off). */
  heartbeatMs?: number;
  /** A connection with no message and no call running for this long is closed (default 30 min). */
  sessionIdleMs?: number;
  /** Connections (MCP sessions) open at once; more are refused with 503 (default 512). */
  maxSessions?: number;
  /** New sessions a second after a burst of 64 (default 20): initialize floods cost CPU every episode needs. */
  sessionsPerSecond?: number;
}

/**
 * MCP over WebSocket: `/mcp/ws` (the gym-wide tools, as `/mcp`) and
 * `/episodes/<id>/<key>/mcp/ws` (one episode's tools, as `/episodes/<id>/<key>/mcp`). Each connection
 * gets its own MCP server; the subprotocol `mcp` is selected when the client offers it.
 */
export function wsMcpExtension(opts: WsMcpOptions = {}): ServerExtension {
  return ({ gym, upgrades, replicaUrl }) => {
    const wss = new WebSocketServer({
      noServer: true,
      maxPayload: opts.maxPayload ?? WS_DEFAULTS.maxPayload,
      handleProtocols: (protocols) => (protocols.has(MCP_SUBPROTOCOL) ? MCP_SUBPROTOCOL : false),
    });
    const stopHeartbeat = startHeartbeat(wss, opts.heartbeatMs ?? WS_DEFAULTS.heartbeatMs);
    const idleMs = opts.sessionIdleMs ?? SESSION_DEFAULTS.idleMs;
    const sessions = new SessionTable<WebSocket>(
      { idleMs, max: opts.maxSessions ?? SESSION_DEFAULTS.max, newPerSecond: opts.sessionsPerSecond ?? SESSION_DEFAULTS.newPerSecond },
      (ws) => ws.close(1000, `idle for ${Math.round(idleMs / 1000)} s`),
    );
    const accept =
      (makeServer: () => McpServer): Parameters<typeof upgrades.add>[1] =>
      (req, socket, head) => {
        let server: McpServer;
        let release: () => void;
        try {
          release = sessions.reserve();
          try {
            server = makeServer();
          } catch (err) {
            release();
            throw err;
          }
        } catch (err) {
          const e = toGymError(err);
          const status =
            e.code === 'EPISODE_NOT_FOUND'
              ? '404 Not Found'
              : e.code === 'CAPACITY'
                ? '503 Service Unavailable'
                : '500 Internal Server Error';
          socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${e.code}: ${e.message}\n`);
          return;
        }
        socket.once('close', release);
        wss.handleUpgrade(req, socket, head, (ws) => {
          release();
          const id = randomUUID();
          sessions.add(id, ws);
          ws.once('close', () => sessions.delete(id));
          wss.emit('connection', ws, req);
          const transport = new WebSocketServerTransport(ws);
          trackCalls(transport, () => sessions.begin(id));
          // The SDK's Protocol cleans up (and aborts the connection's in-flight calls) on close.
          server.connect(transport).catch(() => ws.terminate());
        });
      };
    upgrades.add(
      '/mcp/ws',
      accept(() => createGymMcpServer(gym, { replicaUrl })),
    );
    upgrades.addEpisode('mcp/ws', (req, socket, head, episode) =>
      accept(() => createEpisodeMcpServer(gym, episode.id, { replicaUrl }))(req, socket, head, {}),
    );
    return async () => {
      stopHeartbeat();
      await closeWebSocketServer(wss);
      await sessions.close().catch(() => {});
    };
  };
}

/** Marks the session busy from each request until its response, so a long call is not taken for idleness. */
function trackCalls(transport: WebSocketServerTransport, begin: () => () => void): void {
  const running = new Map<string | number, () => void>();
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage) => {
    const m = message as { id?: string | number; method?: string };
    if (m.id !== undefined && m.method === undefined) {
      running.get(m.id)?.();
      running.delete(m.id);
    }
    return send(message);
  };
  // The SDK sets onmessage in connect(), after this: wrap it through a property.
  let handler: ((message: JSONRPCMessage) => void) | undefined;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => handler,
    set: (fn: ((message: JSONRPCMessage) => void) | undefined) => {
      handler = fn
        ? (message) => {
            const m = message as { id?: string | number; method?: string };
            const done = begin();
            if (m.id !== undefined && m.method !== undefined && !running.has(m.id)) running.set(m.id, done);
            else done();
            fn(message);
          }
        : undefined;
    },
  });
}
