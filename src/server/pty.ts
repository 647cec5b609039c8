import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import { toGymError } from '../errors.ts';
import type { Episode } from '../episode/episode.ts';
import type { Gym } from '../episode/gym.ts';
import type { PtySession } from '../sandbox/types.ts';
import type { ServerExtension } from './http.ts';
import { terminalPage } from './terminal_page.ts';

/**
 * Interactive terminals into an episode's sandbox, for people watching or taking over:
 * `ws://HOST:PORT/ws/episodes/<id>/pty` (the operator's, behind the server's token) and
 * `ws://HOST:PORT/episodes/<id>/<key>/pty` (the episode's own). Binary frames carry terminal bytes both ways;
 * text frames carry JSON control messages (see docs/PROTOCOL.md, "Terminals").
 */

/** Close codes besides 1000 (the shell exited) that a terminal connection can end with. */
export const TERMINAL_CLOSE = {
  EPISODE_NOT_FOUND: 4404,
  EPISODE_ENDED: 4410,
  TOO_MANY_TERMINALS: 4429,
  SANDBOX_UNAVAILABLE: 4503,
  TOO_SLOW: 4408,
} as const;

export interface TerminalOptions {
  /** Output bytes queued for a slow viewer before the terminal is paused (default 1 MiB). */
  highWaterMark?: number;
  /** Queued bytes under which a paused terminal resumes (default 64 KiB). */
  lowWaterMark?: number;
  /** Open terminals allowed per episode (default 8). */
  maxPerEpisode?: number;
  /** Ping interval; a connection that misses a pong is dropped (default 30 s). */
  pingIntervalMs?: number;
}

const MAX_LINE_CHARS = 4096;
const MAX_SIZE = 1000;

/** Serves the terminal WebSocket endpoint and the terminal page. */
export function terminalExtension(opts: TerminalOptions = {}): ServerExtension {
  return ({ gym, app, upgrades }) => {
    const wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20, perMessageDeflate: false });
    const open = new Map<string, number>();
    // The operator's terminal (the server's token) and the episode's own (its key).
    upgrades.add('/ws/episodes/:id/pty', (req, socket, head, params) => {
      wss.handleUpgrade(req, socket, head, (ws) => void serveTerminal(gym, ws, req, params.id!, open, opts));
    });
    upgrades.addEpisode('pty', (req, socket, head, episode) => {
      wss.handleUpgrade(req, socket, head, (ws) => void serveTerminal(gym, ws, req, episode.id, open, opts));
    });
    terminalPage(gym, app);
    // At shutdown: every terminal is told, its shell ends (ws 'close' kills it).
    return async () => {
      const closing = [...wss.clients].map(
        (ws) =>
          new Promise<void>((resolve) => {
            ws.once('close', () => resolve());
            closeWith(ws, 1001, 'the server is shutting down');
            setTimeout(() => {
              ws.terminate();
              resolve();
            }, 1000).unref();
          }),
      );
      await Promise.all(closing);
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    };
  };
}

/** Closes with a code and a reason cut to the 123 bytes a close frame allows. */
function closeWith(ws: WebSocket, code: number, reason: string): void {
  let r = reason;
  if (Buffer.byteLength(r) > 123) {
    while (Buffer.byteLength(r) > 120) r = r.slice(0, -1);
    r += '…';
  }
  ws.close(code, r);
}

function sizeParam(value: unknown, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 && n <= MAX_SIZE ? n : fallback;
}

async function serveTerminal(
  gym: Gym,
  ws: WebSocket,
  req: IncomingMessage,
  episodeId: string,
  open: Map<string, number>,
  opts: TerminalOptions,
): Promise<void> {
  const high = opts.highWaterMark ?? 1 << 20;
  const low = opts.lowWaterMark ?? 64 * 1024;
  const query = new URL(req.url ?? '/', 'http://x').searchParams;
  const startCols = sizeParam(query.get('cols'), 80);
  const startRows = sizeParam(query.get('rows'), 24);
  let cols = startCols;
  let rows = startRows;

  let episode: Episode;
  try {
    episode = gym.episode(episodeId);
  } catch (err) {
    const e = toGymError(err);
    return closeWith(ws, TERMINAL_CLOSE.EPISODE_NOT_FOUND, `${e.code}: ${e.message}`);
  }
  if (episode.state !== 'running')
    return closeWith(ws, TERMINAL_CLOSE.EPISODE_ENDED, `EPISODE_ENDED: episode ${episode.id} is ${episode.state}`);
  if (!episode.sandbox.pty)
    return closeWith(
      ws,
      TERMINAL_CLOSE.SANDBOX_UNAVAILABLE,
      `SANDBOX_UNAVAILABLE: the ${episode.sandbox.backend} sandbox has no terminals`,
    );
  const limit = opts.maxPerEpisode ?? 8;
  if ((open.get(episode.id) ?? 0) >= limit)
    return closeWith(
      ws,
      TERMINAL_CLOSE.TOO_MANY_TERMINALS,
      `CAPACITY: episode ${episode.id} has ${limit} terminals open, the most allowed`,
    );
  open.set(episode.id, (open.get(episode.id) ?? 0) + 1);

  const session = `term-${randomBytes(4).toString('hex')}`;
  const record = (fields: Record<string, unknown>) =>
    episode.trajectory.append({ type: 'terminal', episodeId: episode.id, session, ...fields, at: new Date().toISOString() });
  const lines = new TerminalLineRecorder();
  let pty: PtySession | undefined;
  let finished = false;
  // Input that arrives while the shell starts is kept and written once it is there.
  const early: Buffer[] = [];

  const input = (bytes: Buffer) => {
    episode.lastActiveAt = Date.now();
    for (const line of lines.feed(bytes)) record({ event: 'input', input: line });
    if (pty) pty.write(bytes);
    else early.push(bytes);
  };
  const sendJson = (msg: Record<string, unknown>) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
  };
  const finish = (how: { exitCode?: number | null; by: 'exit' | 'disconnect' | 'error'; reason?: string }) => {
    if (finished) return;
    finished = true;
    clearInterval(pinger);
    const left = (open.get(episode.id) ?? 1) - 1;
    if (left > 0) open.set(episode.id, left);
    else open.delete(episode.id);
    record({
      event: 'close',
      by: how.by,
      ...(how.by === 'exit' ? { exitCode: how.exitCode ?? null } : {}),
      ...(how.reason ? { reason: how.reason } : {}),
    });
  };

  ws.on('message', (data: RawData, isBinary: boolean) => {
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (isBinary) return input(buf);
    let msg: { type?: unknown; cols?: unknown; rows?: unknown; data?: unknown };
    try {
      msg = JSON.parse(buf.toString('utf8'));
    } catch {
      return sendJson({
        type: 'error',
        message: 'text frames are JSON control messages; send terminal input as binary frames (or {"type":"input","data":"..."})',
      });
    }
    if (msg?.type === 'resize') {
      const c = sizeParam(msg.cols, 0);
      const r = sizeParam(msg.rows, 0);
      if (!c || !r) return sendJson({ type: 'error', message: `resize needs whole-number cols and rows from 1 to ${MAX_SIZE}` });
      cols = c;
      rows = r;
      void pty?.resize(c, r).catch(() => {});
    } else if (msg?.type === 'input' && typeof msg.data === 'string') {
      input(Buffer.from(msg.data, 'utf8'));
    } else {
      sendJson({
        type: 'error',
        message: `unknown control message (expected {"type":"resize","cols":N,"rows":N} or {"type":"input","data":"..."})`,
      });
    }
  });
  ws.on('close', (code, reason) => {
    finish({ by: 'disconnect', reason: `${code}${reason.length ? ` ${reason.toString()}` : ''}` });
    void pty?.kill().catch(() => {});
  });
  ws.on('error', () => {});

  let alive = true;
  ws.on('pong', () => (alive = true));
  const pinger = setInterval(() => {
    if (!alive) return ws.terminate();
    alive = false;
    ws.ping();
  }, opts.pingIntervalMs ?? 30_000);
  pinger.unref();

  record({ event: 'open', backend: episode.sandbox.backend, cols, rows });
  try {
    pty = await episode.sandbox.pty({ cols, rows });
  } catch (err) {
    const e = toGymError(err);
    finish({ by: 'error', reason: `${e.code}: ${e.message}` });
    return closeWith(ws, TERMINAL_CLOSE.SANDBOX_UNAVAILABLE, `${e.code}: ${e.message}`);
  }
  if (finished) {
    // The viewer left while the shell was starting.
    await pty.kill().catch(() => {});
    return;
  }
  sendJson({ type: 'ready', episodeId: episode.id, session, backend: episode.sandbox.backend, cols, rows });
  for (const bytes of early.splice(0)) pty.write(bytes);

  let paused = false;
  const drained = () => {
    if (paused && ws.bufferedAmount < low) {
      paused = false;
      pty!.resume?.();
    }
  };
  pty.onData((chunk) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(chunk, { binary: true }, drained);
    if (!paused && ws.bufferedAmount > high) {
      if (pty!.pause) {
        paused = true;
        pty!.pause();
      } else if (ws.bufferedAmount > 16 * high) {
        closeWith(ws, TERMINAL_CLOSE.TOO_SLOW, 'the viewer reads the terminal too slowly');
      }
    }
  });
  pty.onExit((exitCode) => {
    const reason = episode.state === 'running' ? undefined : `episode ${episode.state}`;
    finish({ by: 'exit', exitCode, reason });
    sendJson({ type: 'exit', code: exitCode, ...(reason ? { reason } : {}) });
    if (ws.readyState === WebSocket.OPEN) ws.close(1000, reason ?? 'exited');
  });
  // A resize that came while the shell started.
  if (cols !== startCols || rows !== startRows) await pty.resize(cols, rows).catch(() => {});
}

/**
 * Turns the bytes typed into a terminal into the lines recorded in the trajectory: text
 * up to Enter (CR or LF), with Backspace/DEL deleting the last character, Ctrl-C and
 * Ctrl-U discarding the line, and escape sequences (arrow keys, function keys, terminal
 * replies) and other control characters dropped. Empty lines are not recorded. What the
 * shell did with the keys (history, completion, editing) is not reflected.
 */
export class TerminalLineRecorder {
  private readonly decoder = new StringDecoder('utf8');
  private line = '';
  private state: 'text' | 'esc' | 'csi' | 'osc' | 'oscEsc' | 'ss3' = 'text';

  feed(bytes: Buffer | string): string[] {
    const text = typeof bytes === 'string' ? bytes : this.decoder.write(bytes);
    const out: string[] = [];
    for (const ch of text) {
      const c = ch.codePointAt(0)!;
      switch (this.state) {
        case 'esc':
          this.state = ch === '[' ? 'csi' : ch === ']' ? 'osc' : ch === 'O' ? 'ss3' : 'text';
          continue;
        case 'csi':
          if (c >= 0x40 && c <= 0x7e) this.state = 'text';
          continue;
        case 'ss3':
          this.state = 'text';
          continue;
        case 'osc':
          if (c === 0x07) this.state = 'text';
          else if (c === 0x1b) this.state = 'oscEsc';
          continue;
        case 'oscEsc':
          this.state = ch === '\\' ? 'text' : 'osc';
          continue;
      }
      if (c === 0x1b) this.state = 'esc';
      else if (ch === '\r' || ch === '\n') {
        if (this.line.trim()) out.push(this.line);
        this.line = '';
      } else if (c === 0x7f || c === 0x08) this.line = [...this.line].slice(0, -1).join('');
      else if (c === 0x03 || c === 0x15) this.line = '';
      else if (c < 0x20 || (c >= 0x80 && c < 0xa0)) continue;
      else if (this.line.length < MAX_LINE_CHARS) this.line += ch;
    }
    return out;
  }
}
