import { toGymError } from '../../errors.ts';
import type { SessionTable } from '../sessions.ts';
import { definitionOf } from '../../protocol/mcp.ts';
import { rpcErrorCode } from './errors.ts';
import type { OpenEnvSession } from './session.ts';
import { JSON_RPC, JsonRpcRequest, OpenEnvValidationError, parseWire } from './wire.ts';

type RpcId = string | number | null;

/** A JSON-RPC 2.0 response as OpenEnv's JsonRpcResponse serializes it (`error.data` is always there, null when empty). */
export type RpcResponse =
  { jsonrpc: '2.0'; id: RpcId; result: unknown } | { jsonrpc: '2.0'; id: RpcId; error: { code: number; message: string; data: unknown } };

export interface RpcContext {
  /** The session of the WebSocket the request came on: its tools, and the one openenv/session/create names. */
  bound?: OpenEnvSession;
  /** Sessions made by `openenv/session/create` over HTTP, by id; they idle out as MCP sessions do. */
  sessions: SessionTable<OpenEnvSession>;
  newSession(): OpenEnvSession;
}

export function rpcError(id: RpcId, code: number, message: string, data: unknown = null): RpcResponse {
  return { jsonrpc: '2.0', id, error: { code, message, data } };
}

/**
 * OpenEnv's MCP JSON-RPC methods (`POST /mcp`, the `/mcp` WebSocket, `{"type": "mcp"}`
 * messages): `tools/list`, `tools/call`, and its session methods `openenv/session/create` and
 * `openenv/session/close`. A request naming no session (and arriving on none) runs on a fresh
 * one that is closed after it, as OpenEnv's stateless requests run on a fresh environment.
 */
export async function handleRpc(raw: unknown, ctx: RpcContext): Promise<RpcResponse> {
  let request: ReturnType<typeof JsonRpcRequest.parse>;
  try {
    request = parseWire(JsonRpcRequest, raw, 'request');
  } catch (err) {
    return rpcError(null, JSON_RPC.INVALID_REQUEST, (err as OpenEnvValidationError).message);
  }
  const id = request.id ?? null;
  const { method, params } = request;
  const sessionId = params.session_id;
  if (sessionId !== undefined && typeof sessionId !== 'string')
    return rpcError(id, JSON_RPC.INVALID_PARAMS, "Invalid params - 'session_id' must be a string");

  if (method === 'openenv/session/create') {
    if (ctx.bound) return { jsonrpc: '2.0', id, result: { session_id: ctx.bound.id } };
    let release: () => void;
    try {
      release = ctx.sessions.reserve();
    } catch (err) {
      const e = toGymError(err);
      return rpcError(id, JSON_RPC.SERVER_ERROR, `${e.code}: ${e.message}`, e.toJSON());
    }
    const session = ctx.newSession();
    ctx.sessions.add(session.id, session);
    release();
    return { jsonrpc: '2.0', id, result: { session_id: session.id } };
  }
  if (method === 'openenv/session/close') {
    if (!sessionId) return rpcError(id, JSON_RPC.INVALID_PARAMS, "Invalid params - 'session_id' is required");
    if (ctx.bound?.id === sessionId)
      return rpcError(id, JSON_RPC.INVALID_REQUEST, 'Cannot close active WebSocket-managed session via MCP method');
    const session = ctx.sessions.get(sessionId);
    if (!session) return rpcError(id, JSON_RPC.INVALID_PARAMS, `Unknown session_id: ${sessionId}`);
    ctx.sessions.delete(sessionId);
    await session.close();
    return { jsonrpc: '2.0', id, result: { session_id: sessionId, closed: true } };
  }
  if (method !== 'tools/list' && method !== 'tools/call') {
    return rpcError(
      id,
      JSON_RPC.METHOD_NOT_FOUND,
      `Method not found: ${method} (tools/list, tools/call, openenv/session/create, openenv/session/close)`,
    );
  }

  let session = ctx.bound;
  let temporary = false;
  let done = () => {};
  if (!session && sessionId) {
    session = ctx.sessions.get(sessionId);
    if (!session)
      return rpcError(
        id,
        JSON_RPC.INVALID_PARAMS,
        `Unknown session_id: ${sessionId} (it may have been closed, or idled out: create another)`,
      );
    done = ctx.sessions.begin(sessionId);
  }
  if (!session) {
    session = ctx.newSession();
    temporary = true;
  }
  try {
    if (method === 'tools/list') {
      const tools = session.tools().map((tool) => {
        const def = definitionOf(tool, false);
        return {
          name: tool.name,
          title: tool.title,
          description: tool.description,
          input_schema: def.inputSchema,
          output_schema: def.outputSchema,
          annotations: def.annotations,
        };
      });
      return { jsonrpc: '2.0', id, result: { tools } };
    }
    const name = params.name;
    if (typeof name !== 'string' || !name) return rpcError(id, JSON_RPC.INVALID_PARAMS, "Missing 'name' in params");
    const args = params.arguments ?? {};
    if (!args || typeof args !== 'object' || Array.isArray(args))
      return rpcError(id, JSON_RPC.INVALID_PARAMS, "Invalid params - 'arguments' must be an object");
    const outcome = await session.callTool(name, args as Record<string, unknown>);
    if (outcome.gymError) return rpcError(id, rpcErrorCode(outcome.gymError), outcome.error!.message, outcome.gymError.toJSON());
    return { jsonrpc: '2.0', id, result: outcome.result };
  } finally {
    done();
    if (temporary) await session.close();
  }
}
