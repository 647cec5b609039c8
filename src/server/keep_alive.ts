import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** What the server advertises (`Keep-Alive: timeout=5`, Node's default): clients drop an idle connection about then. */
export const KEEP_ALIVE_ADVERTISED_S = 5;
/**
 * How long the server really keeps an idle connection: long past what it advertises and past the
 * common clients' own idle limits (undici: the advertised time less 2 s; httpx 5 s; aiohttp 15 s;
 * Go's net/http 90 s), so a client whose event loop lags by seconds under load still finds the
 * connection it reuses open.
 */
export const KEEP_ALIVE_HELD_MS = 120_000;

/**
 * Keeps idle keep-alive connections open well past the time the server advertises.
 *
 * Node closes an idle connection 1 s after the `Keep-Alive: timeout` it advertises. A client reuses
 * an idle connection until its own timer (undici: 3 s for `timeout=5`) runs; when its event loop is
 * busy for longer (many episodes in one process, a loaded machine), it writes a POST on a
 * connection the server has already closed, and a POST is not retried: the agent sees
 * `fetch failed` (cause `UND_ERR_SOCKET other side closed`). The server now advertises the same 5 s
 * but holds the connection for KEEP_ALIVE_HELD_MS.
 */
export function holdIdleConnections(server: Server): void {
  server.keepAliveTimeout = KEEP_ALIVE_HELD_MS;
  // A Keep-Alive header set by the application replaces Node's own, which would advertise the held time.
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (res.shouldKeepAlive) res.setHeader('Keep-Alive', `timeout=${KEEP_ALIVE_ADVERTISED_S}`);
  });
}
