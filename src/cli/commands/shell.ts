import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { spawnSync } from 'node:child_process';
import { WebSocket } from 'ws';
import { GymError, type GymErrorCode } from '../../errors.ts';
import type { CliCommand } from '../command.ts';
import { capabilityOfPath, withoutEpisodeKeys } from '../../protocol/capability.ts';
import { parseFlags } from '../options.ts';

/** What the server calls its episodes; anything else is taken for a task id. */
const EPISODE_ID = /^ep-[0-9a-f]{16}$/;
/** Ctrl-]: leaves the terminal (as in telnet); the episode goes on. */
const DETACH = 0x1d;

const USAGE = `benchgym shell: a terminal into an episode's sandbox on a running server (Ctrl-] detaches;
the episode goes on). A task id starts an episode first and prints its id. An episode's own URL
(the mcpUrl start_episode returned, http://HOST:PORT/episodes/<id>/<key>/mcp) needs no token: its key opens it.

Usage:
  benchgym shell EPISODE_ID|TASK_ID [--url http://127.0.0.1:7420] [--token T] [--suite ID]
  benchgym shell EPISODE_URL

Options:
  --url URL          the server (default http://127.0.0.1:7420)
  --token T          its bearer token (default $BENCHGYM_TOKEN)
  --suite ID         the suite of TASK_ID (default: the server's first)

Example:
  benchgym shell roman-numerals
`;

export const shellCommand: CliCommand = {
  name: 'shell',
  summary: 'a terminal into an episode on a running server (a task id starts an episode first)',
  usage: USAGE,
  run: (args) => shell(args),
};

/**
 * `benchgym shell <episode-id | task-id>`: a terminal into an episode's sandbox on a
 * running server. With a task id it first starts an episode (over MCP) and prints its id.
 */
export async function shell(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { url: { type: 'string' }, token: { type: 'string' }, suite: { type: 'string' } });
  if (positionals.length !== 1)
    throw new GymError('INVALID_ARGUMENT', `give one episode id or task id (got ${positionals.length ? positionals.join(' ') : 'none'})`);
  const target = positionals[0]!;
  if (/^https?:\/\//i.test(target)) {
    if (values.url || values.token || values.suite)
      throw new GymError(
        'INVALID_ARGUMENT',
        "an episode's URL names its server and opens it by its key: give no --url, --token or --suite with it",
      );
    return attach(episodeTerminalUrl(target), undefined);
  }
  let base: URL;
  try {
    base = new URL(values.url ?? 'http://127.0.0.1:7420');
  } catch {
    throw new GymError('INVALID_ARGUMENT', `invalid --url: '${values.url}'`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new GymError('INVALID_ARGUMENT', `invalid --url: '${values.url}' (http:// or https://)`);
  const token = values.token ?? process.env.BENCHGYM_TOKEN;
  if (values.suite && EPISODE_ID.test(target)) throw new GymError('INVALID_ARGUMENT', '--suite goes with a task id, not an episode id');

  if (EPISODE_ID.test(target)) {
    // The operator's terminal: the server's token opens it.
    return attach({ url: new URL(`/ws/episodes/${encodeURIComponent(target)}/pty`, base), episodeId: target }, token);
  }
  const started = await startEpisode(base, token, target, values.suite);
  process.stderr.write(`benchgym shell: started episode ${started.episodeId} (${started.suite}/${started.taskId})\n`);
  // The episode's own terminal, next to its MCP endpoint: its key opens it.
  return attach({ url: new URL(started.mcpPath.replace(/\/mcp$/, '/pty'), base), episodeId: started.episodeId }, undefined);
}

/** The terminal endpoint of an episode's own URL (`…/episodes/<id>/<key>/mcp`, or its terminal page). */
function episodeTerminalUrl(target: string): { url: URL; episodeId: string; byUrl: true } {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new GymError('INVALID_ARGUMENT', `not a URL: '${withoutEpisodeKeys(target)}'`);
  }
  const capability = capabilityOfPath(url.pathname);
  if (!capability)
    throw new GymError(
      'INVALID_ARGUMENT',
      `not an episode's URL (http://HOST:PORT/episodes/<id>/<key>/mcp): '${withoutEpisodeKeys(target)}'`,
    );
  const prefix = url.pathname.slice(0, url.pathname.length - capability.endpoint.length);
  return { url: new URL(`${prefix}pty`, url.origin), episodeId: capability.id, byUrl: true };
}

async function startEpisode(
  base: URL,
  token: string | undefined,
  taskId: string,
  suite?: string,
): Promise<{ episodeId: string; mcpPath: string; suite: string; taskId: string }> {
  const client = new Client({ name: 'benchgym-shell', version: '0.1.0' });
  const transport = new StreamableHTTPClientTransport(
    new URL('/mcp', base),
    token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined,
  );
  try {
    try {
      await client.connect(transport);
    } catch (err) {
      throw new GymError('SANDBOX_UNAVAILABLE', `cannot reach the server at ${base.origin}: ${(err as Error).message}`);
    }
    const result = (await client.callTool(
      { name: 'start_episode', arguments: { task_id: taskId, ...(suite ? { suite } : {}) } },
      undefined,
      {
        // The first start of a task builds its environment: wait as long as progress comes.
        timeout: 120_000,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: 30 * 60_000,
        onprogress: () => {},
      },
    )) as CallToolResult;
    const data = result.structuredContent as
      | { episodeId?: string; mcpPath?: string; suite?: string; taskId?: string; error?: { code: GymErrorCode; message: string } }
      | undefined;
    if (result.isError || !data?.episodeId) {
      if (data?.error) throw new GymError(data.error.code, data.error.message);
      throw new GymError('INTERNAL', `start_episode failed: ${result.content.map((c) => (c.type === 'text' ? c.text : '')).join(' ')}`);
    }
    if (!data.mcpPath)
      throw new GymError(
        'INTERNAL',
        `start_episode named no endpoint for episode ${data.episodeId} (mcpPath): not a benchgym server of this version?`,
      );
    return { episodeId: data.episodeId, mcpPath: data.mcpPath, suite: data.suite ?? suite ?? '', taskId: data.taskId ?? taskId };
  } finally {
    await client.close().catch(() => {});
  }
}

/** Connects the local terminal to the episode's terminal at `url` until the shell exits or the user detaches. */
function attach(target: { url: URL; episodeId: string; byUrl?: boolean }, token: string | undefined): Promise<number> {
  const { stdin, stdout, stderr } = process;
  const interactive = Boolean(stdin.isTTY && stdout.isTTY);
  const { episodeId } = target;
  const url = new URL(target.url);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  if (stdout.isTTY) {
    url.searchParams.set('cols', String(stdout.columns));
    url.searchParams.set('rows', String(stdout.rows));
  }
  const ws = new WebSocket(url, { headers: token ? { Authorization: `Bearer ${token}` } : {}, perMessageDeflate: false });

  return new Promise<number>((resolve) => {
    let raw = false;
    let detached = false;
    let done = false;
    let exit: { code: number | null; reason?: string } | undefined;
    let sawOutput = false;
    // A message after remote output starts on a line of its own.
    const apart = (text: string) => (sawOutput ? `\n${text}` : text);
    // While the terminal is raw, "\n" alone does not return the carriage.
    const say = (text: string) => stderr.write(raw ? text.replace(/\n/g, '\r\n') : text);

    const send = (data: Buffer | string) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(data, { binary: typeof data !== 'string' });
    };
    const onInput = (chunk: Buffer) => {
      const at = interactive ? chunk.indexOf(DETACH) : -1;
      if (at < 0) return send(chunk);
      if (at > 0) send(chunk.subarray(0, at));
      detached = true;
      ws.close(1000, 'detached');
    };
    // Piped input: at its end, an end-of-file (Ctrl-D) for the remote shell, sent once
    // its output has been quiet for a moment and again after each quiet spell: bash loses
    // a Ctrl-D that comes while a command runs or before its prompt is up.
    let inputEnded = false;
    let eofTimer: NodeJS.Timeout | undefined;
    const scheduleEof = () => {
      if (!inputEnded || done) return;
      clearTimeout(eofTimer);
      eofTimer = setTimeout(() => {
        send(Buffer.from([0x04]));
        scheduleEof();
      }, 500);
    };
    const onEnd = () => {
      inputEnded = true;
      scheduleEof();
    };
    const onResize = () => send(JSON.stringify({ type: 'resize', cols: stdout.columns, rows: stdout.rows }));
    const signals: [NodeJS.Signals, () => void][] = (['SIGTERM', 'SIGHUP'] as const).map((sig) => [
      sig,
      () => finish(sig === 'SIGTERM' ? 143 : 129),
    ]);

    const restore = () => {
      clearTimeout(eofTimer);
      stdin.off('data', onInput);
      stdin.off('end', onEnd);
      stdout.off('resize', onResize);
      for (const [sig, fn] of signals) process.off(sig, fn);
      if (raw) {
        stdin.setRawMode(false);
        raw = false;
      }
      stdin.pause();
    };
    const finish = (code: number, message?: string) => {
      if (done) return;
      done = true;
      restore();
      if (message) stderr.write(message.endsWith('\n') ? message : `${message}\n`);
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.terminate();
      resolve(code);
    };

    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        let message = body.trim();
        try {
          message = JSON.parse(body).error?.message ?? message;
        } catch {
          // plain text
        }
        finish(2, `benchgym shell: the server refused the terminal (HTTP ${res.statusCode}): ${message}`);
      });
    });
    ws.on('error', (err) => finish(2, `benchgym shell: cannot connect to ${url.origin}: ${err.message}`));
    ws.on('open', () => {
      if (interactive) {
        stdin.setRawMode(true);
        raw = true;
        // Node's raw mode keeps output processing (LF → CR LF), which breaks full-screen
        // programs' cursor moves: the remote terminal has done that already. Leaving raw mode
        // puts back the saved settings, this included.
        spawnSync('stty', ['-opost'], { stdio: ['inherit', 'ignore', 'ignore'] });
        stdout.on('resize', onResize);
      }
      for (const [sig, fn] of signals) process.on(sig, fn);
      stdin.on('data', onInput);
      stdin.on('end', onEnd);
      stdin.resume();
    });
    ws.on('message', (data, isBinary) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary) {
        sawOutput = true;
        stdout.write(buf);
        return scheduleEof();
      }
      let msg: { type?: string; code?: number | null; reason?: string; message?: string };
      try {
        msg = JSON.parse(buf.toString('utf8'));
      } catch {
        return;
      }
      if (msg.type === 'ready' && interactive) say(apart(`benchgym shell: connected to ${episodeId} (Ctrl-] detaches)\n`));
      else if (msg.type === 'exit') exit = { code: msg.code ?? null, reason: msg.reason };
      else if (msg.type === 'error') say(apart(`benchgym shell: ${msg.message}\n`));
    });
    ws.on('close', (code, reason) => {
      // The episode's URL (its key) is not printed: the terminal's scrollback may be shared.
      const again = target.byUrl ? "benchgym shell with the episode's URL" : `benchgym shell ${episodeId}`;
      if (detached) return finish(0, apart(`benchgym shell: detached; episode ${episodeId} keeps running (${again} opens a new terminal)`));
      if (exit)
        return finish(
          exit.code ?? 1,
          exit.code === null ? apart(`benchgym shell: the shell was ended${exit.reason ? ` (${exit.reason})` : ''}`) : undefined,
        );
      const why = reason.toString() || `the connection closed (code ${code})`;
      finish(code === 1000 ? 0 : 2, apart(`benchgym shell: ${why}`));
    });
  });
}
