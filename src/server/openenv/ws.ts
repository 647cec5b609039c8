import { WebSocket, type RawData } from 'ws';
import { handleRpc, rpcError, type RpcContext } from './rpc.ts';
import { wsErrorData } from './errors.ts';
import type { OpenEnvSession } from './session.ts';
import { JSON_RPC, parseWire, WsMessages, type WsMessageType } from './wire.ts';

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}

function send(ws: WebSocket, message: unknown): void {
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message), () => {});
}

/**
 * One connection of OpenEnv's `/ws`: `reset`, `step`, `state`, `close` and `mcp` messages,
 * answered one at a time in the order they came (OpenEnv's client waits for each reply), each
 * with `{"type": "observation" | "state" | "mcp" | "error", "data": ...}`. A message that is
 * not JSON, of an unknown type or of the wrong shape is answered with an error and the
 * connection stays. `close` closes the connection (1000); the session ends with it.
 */
export function serveOpenEnvSocket(
  ws: WebSocket,
  session: OpenEnvSession,
  rpc: Omit<RpcContext, 'bound'>,
  onActivity: () => () => void,
): void {
  let turn: Promise<void> = Promise.resolve();
  ws.on('message', (data: RawData, isBinary: boolean) => {
    turn = turn.then(async () => {
      const done = onActivity();
      try {
        const reply = await answer(data, isBinary);
        if (reply) send(ws, reply);
      } finally {
        done();
      }
    });
  });
  ws.on('error', () => {});
  ws.on('close', () => void session.close());

  async function answer(data: RawData, isBinary: boolean): Promise<unknown> {
    let message: unknown;
    try {
      if (isBinary) throw new Error('binary frames are not JSON; send text frames');
      message = JSON.parse(rawText(data));
    } catch (err) {
      return { type: 'error', data: { message: `Invalid JSON: ${(err as Error).message}`, code: 'INVALID_JSON' } };
    }
    if (!message || typeof message !== 'object' || Array.isArray(message)) {
      return {
        type: 'error',
        data: {
          message: 'Invalid message: expected a JSON object with a type (reset, step, state, close, mcp)',
          code: 'VALIDATION_ERROR',
          errors: [],
        },
      };
    }
    const type = (message as { type?: unknown }).type;
    if (typeof type !== 'string' || !Object.hasOwn(WsMessages, type)) {
      return {
        type: 'error',
        data: { message: `Unknown message type: ${String(type ?? '')} (reset, step, state, close, mcp)`, code: 'UNKNOWN_TYPE' },
      };
    }
    try {
      switch (type as WsMessageType) {
        case 'reset':
          return { type: 'observation', data: await session.reset(parseWire(WsMessages.reset, message, 'message').data) };
        case 'step':
          return { type: 'observation', data: await session.step(parseWire(WsMessages.step, message, 'message').data) };
        case 'state':
          parseWire(WsMessages.state, message, 'message');
          return { type: 'state', data: session.state() };
        case 'close':
          parseWire(WsMessages.close, message, 'message');
          ws.close(1000, 'closed by the client');
          return undefined;
        case 'mcp':
          return { type: 'mcp', data: await handleRpc(parseWire(WsMessages.mcp, message, 'message').data, { ...rpc, bound: session }) };
      }
    } catch (err) {
      return { type: 'error', data: wsErrorData(err) };
    }
  }
}

/** One connection of OpenEnv's `/mcp` WebSocket: a JSON-RPC request per text frame, answered in order, on the connection's own session. */
export function serveOpenEnvMcpSocket(
  ws: WebSocket,
  session: OpenEnvSession,
  rpc: Omit<RpcContext, 'bound'>,
  onActivity: () => () => void,
): void {
  let turn: Promise<void> = Promise.resolve();
  ws.on('message', (data: RawData, isBinary: boolean) => {
    turn = turn.then(async () => {
      const done = onActivity();
      try {
        let request: unknown;
        try {
          if (isBinary) throw new Error('binary frames are not JSON; send text frames');
          request = JSON.parse(rawText(data));
        } catch (err) {
          return send(ws, rpcError(null, JSON_RPC.PARSE_ERROR, `Parse error: ${(err as Error).message}`));
        }
        send(ws, await handleRpc(request, { ...rpc, bound: session }));
      } finally {
        done();
      }
    });
  });
  ws.on('error', () => {});
  ws.on('close', () => void session.close());
}
