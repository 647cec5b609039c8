/**
 * A scripted OpenAI-compatible endpoint for agent tests: a real HTTP server implementing
 * POST /v1/chat/completions (non-streaming) that answers from a script, records every
 * request it received, reports `usage`, and fails with any HTTP status on demand.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedToolCall {
  name: string;
  /** An object is JSON-encoded; a string is sent as is (to test malformed arguments). */
  arguments?: Record<string, unknown> | string;
  id?: string;
}

export interface ScriptedReply {
  /** Assistant text. */
  content?: string | null;
  tool_calls?: ScriptedToolCall[];
  /** Default: { prompt_tokens: 100, completion_tokens: 20 }. */
  usage?: { prompt_tokens: number; completion_tokens: number };
  finish_reason?: string;
  /** Answer with this HTTP status (and an OpenAI-style error body) instead of a completion. */
  status?: number;
  headers?: Record<string, string>;
  errorMessage?: string;
}

export interface ChatRequest {
  model: string;
  messages: Array<{
    role: string;
    content?: unknown;
    tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
  }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: Record<string, unknown> } }>;
  temperature?: number;
  max_tokens?: number;
  [k: string]: unknown;
}

/** A queue of replies (taken in order; the last one repeats when `repeatLast`), or a function of the request. */
export type Script = ScriptedReply[] | ((req: ChatRequest, index: number) => ScriptedReply | Promise<ScriptedReply>);

export interface ScriptedServer {
  /** http://127.0.0.1:<port>/v1 */
  baseURL: string;
  /** Every well-formed request received, in order (failed ones included). */
  requests: ChatRequest[];
  /** Authorization headers seen. */
  authorizations: string[];
  /** All the text the server was sent (every message of every request), for assertions. */
  allText(): string;
  close(): Promise<void>;
}

function messageText(m: ChatRequest['messages'][number]): string {
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return m.content.map((p: { text?: string }) => p.text ?? '').join('');
  return '';
}

/** `models`: also serve GET /v1/models listing these (an endpoint without it answers 404 there). */
export async function startScriptedOpenAI(script: Script, opts: { repeatLast?: boolean; models?: string[] } = {}): Promise<ScriptedServer> {
  const requests: ChatRequest[] = [];
  const authorizations: string[] = [];
  let callIds = 0;

  const next = async (req: ChatRequest, index: number): Promise<ScriptedReply> => {
    if (typeof script === 'function') return script(req, index);
    if (index < script.length) return script[index]!;
    if (opts.repeatLast && script.length) return script[script.length - 1]!;
    return { status: 500, errorMessage: `the script has no reply #${index + 1}` };
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
          res.writeHead(status, { 'content-type': 'application/json', ...headers });
          res.end(JSON.stringify(body));
        };
        if (req.method === 'GET' && opts.models && req.url?.endsWith('/models')) {
          authorizations.push(String(req.headers.authorization ?? ''));
          return send(200, { object: 'list', data: opts.models.map((id) => ({ id, object: 'model', owned_by: 'scripted' })) });
        }
        if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions'))
          return send(404, { error: { message: `no route ${req.method} ${req.url}`, type: 'not_found' } });
        let body: ChatRequest;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
        } catch {
          return send(400, { error: { message: 'invalid JSON', type: 'invalid_request_error' } });
        }
        authorizations.push(String(req.headers.authorization ?? ''));
        const index = requests.length;
        requests.push(body);
        const reply = await next(body, index);
        if (reply.status && reply.status !== 200) {
          return send(
            reply.status,
            { error: { message: reply.errorMessage ?? `scripted ${reply.status}`, type: 'server_error', code: null } },
            reply.headers,
          );
        }
        const toolCalls = reply.tool_calls?.map((c) => ({
          id: c.id ?? `call_${++callIds}`,
          type: 'function',
          function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}) },
        }));
        const usage = reply.usage ?? { prompt_tokens: 100, completion_tokens: 20 };
        send(
          200,
          {
            id: `chatcmpl-${index + 1}`,
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: body.model,
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: reply.content ?? null, ...(toolCalls?.length ? { tool_calls: toolCalls } : {}) },
                finish_reason: reply.finish_reason ?? (toolCalls?.length ? 'tool_calls' : 'stop'),
              },
            ],
            usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
          },
          reply.headers,
        );
      })().catch((err: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(err), type: 'server_error' } }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    authorizations,
    allText: () => requests.flatMap((r) => r.messages.map(messageText)).join('\n'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
