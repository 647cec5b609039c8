import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/** The SDK's own limit on a batch. */
const MAX_BATCH = 100;
/** A comment line on open SSE streams this often, so proxies keep them (the SDK's default). */
const KEEP_ALIVE_MS = 15_000;
/**
 * A JSON answer not ready by then becomes an event stream: its headers go at once and keep-alives
 * follow, as clients time out a response whose headers or body stall (fetch: 300 s each).
 */
export const JSON_ANSWER_WITHIN_MS = 1000;

type Message = JSONRPCMessage & {
  id?: RequestId;
  method?: string;
  params?: { _meta?: { progressToken?: unknown } };
  result?: unknown;
  error?: unknown;
};

/** One POST's requests: answered as one JSON body, or as an SSE stream when a request asked for progress. */
interface PostReply {
  res: ServerResponse;
  sse: boolean;
  pending: Set<RequestId>;
  responses: Message[];
  batch: boolean;
  keepAlive?: NodeJS.Timeout;
  /** While the answer may still go as JSON: the switch to an event stream. */
  streamAfter?: NodeJS.Timeout;
}

const isResponse = (m: Message) => m.id !== undefined && m.method === undefined && ('result' in m || 'error' in m);
const isRequest = (m: Message) => m.id !== undefined && typeof m.method === 'string';

/**
 * MCP's Streamable HTTP transport written on node:http, for the server side of `/mcp`.
 *
 * Same protocol as the SDK's StreamableHTTPServerTransport (same status codes and error texts),
 * without its conversion of every request and response into Web streams (Hono's node adapter,
 * ReadableStream, TextEncoder): that conversion was most of an MCP call's cost on the server.
 * A POST whose requests carry no progress token is answered with one JSON body (the spec lets the
 * server choose) when the answer is ready within JSON_ANSWER_WITHIN_MS; one that asks for progress,
 * or takes longer, gets an SSE stream (with keep-alives), so its notifications arrive before the
 * response and a long call is never a stalled response. No resumability (no event store), as before.
 */
export class NodeStreamableHttpTransport implements Transport {
  sessionId?: string;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  private started = false;
  private closed = false;
  private initialized = false;
  private readonly replies = new Map<RequestId, PostReply>();
  private standalone?: { res: ServerResponse; keepAlive: NodeJS.Timeout };

  constructor(private readonly opts: { sessionIdGenerator: () => string; onsessioninitialized?: (id: string) => void }) {}

  async start(): Promise<void> {
    if (this.started) throw new Error('Transport already started');
    this.started = true;
  }

  /** Serves one HTTP request of this session; `body` is the parsed JSON body of a POST. */
  async handleRequest(req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void> {
    if (req.method === 'POST') return this.post(req, res, body);
    if (req.method === 'GET') return this.get(req, res);
    if (req.method === 'DELETE') {
      if (this.refuseSession(req, res)) return;
      res.writeHead(200).end();
      await this.close();
      return;
    }
    this.error(res, 405, -32000, 'Method not allowed.', { Allow: 'GET, POST, DELETE' });
  }

  private post(req: IncomingMessage, res: ServerResponse, body: unknown): void {
    const accept = req.headers.accept ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return this.error(res, 406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      return this.error(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    }
    if (Array.isArray(body) && body.length > MAX_BATCH)
      return this.error(res, 400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`);
    let messages: Message[];
    try {
      messages = (Array.isArray(body) ? body : [body]).map((m) => JSONRPCMessageSchema.parse(m) as Message);
    } catch {
      return this.error(res, 400, -32700, 'Parse error: Invalid JSON-RPC message');
    }
    if (this.closed) return this.error(res, 404, -32001, 'Session not found');
    const initializing = messages.some((m) => m.method === 'initialize' && isRequest(m));
    if (initializing) {
      if (this.initialized) return this.error(res, 400, -32600, 'Invalid Request: Server already initialized');
      if (messages.length > 1) return this.error(res, 400, -32600, 'Invalid Request: Only one initialization request is allowed');
      this.sessionId = this.opts.sessionIdGenerator();
      this.initialized = true;
      this.opts.onsessioninitialized?.(this.sessionId);
    } else if (this.refuseSession(req, res)) return;

    const extra = { requestInfo: { headers: req.headers } };
    const requests = messages.filter(isRequest);
    if (requests.length === 0) {
      res.writeHead(202).end();
      for (const m of messages) this.onmessage?.(m, extra);
      return;
    }
    const sse = requests.some((m) => m.params?._meta?.progressToken !== undefined);
    const reply: PostReply = { res, sse: false, pending: new Set(requests.map((m) => m.id!)), responses: [], batch: Array.isArray(body) };
    for (const id of reply.pending) this.replies.set(id, reply);
    if (sse) this.startStream(reply);
    else reply.streamAfter = setTimeout(() => this.startStream(reply), JSON_ANSWER_WITHIN_MS);
    // A client gone before the answer: its requests' responses have nowhere to go.
    res.once('close', () => {
      clearTimeout(reply.streamAfter);
      clearInterval(reply.keepAlive);
      for (const id of reply.pending) if (this.replies.get(id) === reply) this.replies.delete(id);
    });
    for (const m of messages) this.onmessage?.(m, extra);
  }

  /** Answers the POST as an event stream from now on: headers now, then keep-alives, then the answers (those already in first). */
  private startStream(reply: PostReply): void {
    if (reply.sse || reply.res.headersSent) return;
    reply.sse = true;
    reply.res.writeHead(200, {
      ...this.sessionHeader(),
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    reply.res.flushHeaders();
    reply.keepAlive = keepAlive(reply.res);
    for (const m of reply.responses) writeEvent(reply.res, m);
  }

  private get(req: IncomingMessage, res: ServerResponse): void {
    if (!(req.headers.accept ?? '').includes('text/event-stream'))
      return this.error(res, 406, -32000, 'Not Acceptable: Client must accept text/event-stream');
    if (this.refuseSession(req, res)) return;
    if (this.standalone) return this.error(res, 409, -32000, 'Conflict: Only one SSE stream is allowed per session');
    res.writeHead(200, {
      ...this.sessionHeader(),
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    const stream = { res, keepAlive: keepAlive(res) };
    this.standalone = stream;
    res.once('close', () => {
      clearInterval(stream.keepAlive);
      if (this.standalone === stream) this.standalone = undefined;
    });
  }

  /** Answers (and returns true) when the request does not belong to this initialized session or names an unknown protocol version. */
  private refuseSession(req: IncomingMessage, res: ServerResponse): boolean {
    if (!this.initialized) return (this.error(res, 400, -32000, 'Bad Request: Server not initialized'), true);
    const id = req.headers['mcp-session-id'];
    if (!id) return (this.error(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required'), true);
    if (id !== this.sessionId) return (this.error(res, 404, -32001, 'Session not found'), true);
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      const text = `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`;
      return (this.error(res, 400, -32000, text), true);
    }
    return false;
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as Message;
    const response = isResponse(m);
    const requestId = response ? m.id! : options?.relatedRequestId;
    if (requestId === undefined) {
      if (response) throw new Error('Cannot send a response on a standalone SSE stream unless resuming a previous client request');
      if (this.standalone) writeEvent(this.standalone.res, m);
      return;
    }
    const reply = this.replies.get(requestId);
    // Progress of a request answered as JSON has no channel; that of a request whose client left neither.
    if (!reply) {
      if (response && !this.closed) throw new Error(`No connection established for request ID: ${String(requestId)}`);
      return;
    }
    if (reply.sse) writeEvent(reply.res, m);
    if (!response) return;
    reply.responses.push(m);
    reply.pending.delete(requestId);
    this.replies.delete(requestId);
    if (reply.pending.size > 0) return;
    clearTimeout(reply.streamAfter);
    clearInterval(reply.keepAlive);
    if (reply.sse) return void reply.res.end();
    const text = JSON.stringify(reply.batch ? reply.responses : reply.responses[0]);
    reply.res
      .writeHead(200, { ...this.sessionHeader(), 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) })
      .end(text);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const open = new Set([...this.replies.values()].map((r) => r.res));
    if (this.standalone) open.add(this.standalone.res);
    this.replies.clear();
    this.standalone = undefined;
    for (const res of open) if (!res.writableEnded) res.end();
    this.onclose?.();
  }

  private sessionHeader(): Record<string, string> {
    return this.sessionId === undefined ? {} : { 'mcp-session-id': this.sessionId };
  }

  private error(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
    this.onerror?.(new Error(message));
    const text = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
    res.writeHead(status, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
  }
}

function writeEvent(res: ServerResponse, message: Message): void {
  if (!res.writableEnded) res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}

function keepAlive(res: ServerResponse): NodeJS.Timeout {
  const timer = setInterval(() => {
    if (!res.writableEnded) res.write(': keepalive\n\n');
  }, KEEP_ALIVE_MS);
  timer.unref();
  return timer;
}
