import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { TERMINAL_CLOSE, TerminalLineRecorder, terminalExtension } from '../../src/server/pty.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { makeGym, processesWithMarker, startExample, trajectoryRecords, waitFor } from '../helpers.ts';

interface Terminal {
  ws: WebSocket;
  output: () => string;
  controls: Record<string, unknown>[];
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  type: (text: string) => void;
}

function connect(base: string, episodeId: string, query = '', headers?: Record<string, string>): Terminal {
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/ws/episodes/${episodeId}/pty${query}`, { headers });
  let out = '';
  const controls: Record<string, unknown>[] = [];
  ws.on('message', (data, isBinary) => {
    if (isBinary) out += data.toString();
    else controls.push(JSON.parse(data.toString()));
  });
  return {
    ws,
    output: () => out,
    controls,
    opened: new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    }),
    closed: new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() }))),
    type: (text) => ws.send(Buffer.from(text), { binary: true }),
  };
}

describe('the terminal WebSocket endpoint', () => {
  let gym: Gym;
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;

  before(async () => {
    ({ gym, dataDir, cleanup } = await makeGym());
    server = await startHttpServer(gym, {
      port: 0,
      extensions: [terminalExtension({ highWaterMark: 64 * 1024, lowWaterMark: 16 * 1024 })],
    });
  });

  after(async () => {
    await server.close();
    await cleanup();
  });

  test('input → output, the initial size, resize, exit message and close 1000; the typed lines are in the trajectory', async () => {
    const id = await startExample(gym, 'roman-numerals');
    const t = connect(server.url, id, '?cols=100&rows=30');
    await t.opened;
    t.type('echo hello-$((6*7))\r');
    await waitFor(t.output, /hello-42\r\n/);
    const ready = t.controls.find((c) => c.type === 'ready');
    assert.deepEqual(
      { ...ready, session: undefined },
      { type: 'ready', episodeId: id, session: undefined, backend: 'local', cols: 100, rows: 30 },
    );

    t.type('echo size-$((1+1)) $(stty size); ls\r');
    await waitFor(t.output, /size-2 30 100\r\n/);
    await waitFor(t.output, /roman\.py/);
    t.ws.send(JSON.stringify({ type: 'resize', cols: 120, rows: 40 }));
    t.type('echo size-$((1+2)) $(stty size)\r');
    await waitFor(t.output, /size-3 40 120\r\n/);

    // Text frames are control messages: {"type":"input"} is input, anything else an error.
    t.ws.send(JSON.stringify({ type: 'input', data: 'echo via-$((2+3))-text\r' }));
    await waitFor(t.output, /via-5-text\r\n/);
    t.ws.send('ls -la\r');
    t.ws.send(JSON.stringify({ type: 'resize', cols: 0, rows: 5 }));
    await waitFor(() => JSON.stringify(t.controls), /resize needs whole-number cols and rows/);
    assert.ok(t.controls.some((c) => c.type === 'error' && /text frames are JSON control messages/.test(String(c.message))));

    // Editing keys: Backspace deletes, arrows are dropped, Ctrl-C discards the line; two lines in one frame.
    t.type('echo twx\x7fo\x1b[A\x1b[D\r');
    t.type('abandoned line\x03');
    t.type('echo a-$((1))\recho b-$((2))\r');
    await waitFor(t.output, /b-2\r\n/);
    t.type('exit 5\r');
    const closed = await t.closed;
    assert.deepEqual(closed, { code: 1000, reason: 'exited' });
    assert.deepEqual(t.controls.at(-1), { type: 'exit', code: 5 });

    await gym.episode(id).trajectory.flush();
    const records = await trajectoryRecords(dataDir, id, 'terminal');
    const session = ready!.session;
    assert.ok(records.every((r) => r.episodeId === id && r.session === session && typeof r.at === 'string'));
    assert.deepEqual(records[0], { ...records[0], event: 'open', backend: 'local', cols: 100, rows: 30 });
    assert.deepEqual(
      records.filter((r) => r.event === 'input').map((r) => r.input),
      [
        'echo hello-$((6*7))',
        'echo size-$((1+1)) $(stty size); ls',
        'echo size-$((1+2)) $(stty size)',
        'echo via-$((2+3))-text',
        'echo two',
        'echo a-$((1))',
        'echo b-$((2))',
        'exit 5',
      ],
    );
    assert.deepEqual(
      { ...records.at(-1), at: undefined },
      { type: 'terminal', episodeId: id, session, event: 'close', by: 'exit', exitCode: 5, at: undefined },
    );
    assert.equal(gym.episode(id).state, 'running', 'leaving the terminal does not end the episode');
  });

  test('an unknown episode, an ended episode: refused with a close code and reason', async () => {
    const unknown = connect(server.url, 'ep-0000000000000000');
    assert.deepEqual(await unknown.closed, {
      code: TERMINAL_CLOSE.EPISODE_NOT_FOUND,
      reason: "EPISODE_NOT_FOUND: no episode 'ep-0000000000000000' (it may have expired; start a new one with start_episode)",
    });

    const id = await startExample(gym, 'roman-numerals');
    await gym.endEpisode(gym.episode(id));
    const ended = connect(server.url, id);
    assert.deepEqual(await ended.closed, { code: TERMINAL_CLOSE.EPISODE_ENDED, reason: `EPISODE_ENDED: episode ${id} is ended` });
  });

  test('ending the episode ends its open terminals', async () => {
    const id = await startExample(gym, 'roman-numerals');
    const t = connect(server.url, id);
    await t.opened;
    t.type('echo up-$((1+1))\r');
    await waitFor(t.output, /up-2\r\n/);
    await gym.endEpisode(gym.episode(id));
    assert.deepEqual(await t.closed, { code: 1000, reason: 'episode ended' });
    assert.deepEqual(t.controls.at(-1), { type: 'exit', code: null, reason: 'episode ended' });
  });

  test('closing the connection ends the shell and is recorded', async () => {
    const id = await startExample(gym, 'roman-numerals');
    const t = connect(server.url, id);
    await t.opened;
    t.type('echo "pty-$((1+1))=$BENCHGYM_PTY"\r');
    const marker = (await waitFor(t.output, /pty-2=(\S+)\r\n/))[1]!;
    t.ws.close(1000, 'bye');
    await t.closed;
    const deadline = Date.now() + 5000;
    for (;;) {
      await gym.episode(id).trajectory.flush();
      const records = await trajectoryRecords(dataDir, id, 'terminal');
      const close = records.find((r) => r.event === 'close');
      if (close) {
        assert.equal(close.by, 'disconnect');
        assert.equal(close.reason, '1000 bye');
        break;
      }
      assert.ok(Date.now() < deadline, 'a close record is written');
      await new Promise((r) => setTimeout(r, 100));
    }
    for (;;) {
      const left = await processesWithMarker(marker, 'BENCHGYM_PTY');
      if (!left.length) break;
      assert.ok(Date.now() < deadline, `processes of the terminal are left: ${left.join(', ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  test('a slow viewer pauses the shell instead of filling the server', async () => {
    const id = await startExample(gym, 'roman-numerals');
    const t = connect(server.url, id);
    await t.opened;
    t.type('echo go-$((1+1))\r');
    await waitFor(t.output, /go-2\r\n/);
    // 64 MB of output: far more than the socket buffers and the server's high-water mark.
    t.ws.pause();
    t.type('head -c 64000000 /dev/zero | tr "\\0" x; touch done.flag\r');
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(await gym.episode(id).sandbox.stat('done.flag'), null, 'the shell waits while the viewer does not read');
    t.ws.resume();
    const deadline = Date.now() + 60_000;
    while (!(await gym.episode(id).sandbox.stat('done.flag'))) {
      assert.ok(Date.now() < deadline, 'the shell goes on once the viewer reads again');
      await new Promise((r) => setTimeout(r, 100));
    }
    t.ws.close();
    await t.closed;
  });

  test('the access checks apply: a token is needed when the server has one', async () => {
    const { gym: g2, cleanup: c2 } = await makeGym();
    const s2 = await startHttpServer(g2, { port: 0, token: 'sesame', extensions: [terminalExtension()] });
    try {
      const id = await startExample(g2, 'roman-numerals');
      const refused = new WebSocket(`${s2.url.replace(/^http/, 'ws')}/ws/episodes/${id}/pty`);
      const status = await new Promise<number>((resolve) => refused.on('unexpected-response', (_req, res) => resolve(res.statusCode!)));
      assert.equal(status, 401);
      for (const t of [connect(s2.url, id, '?token=sesame'), connect(s2.url, id, '', { Authorization: 'Bearer sesame' })]) {
        await t.opened;
        t.type('echo in-$((2+2))\r');
        await waitFor(t.output, /in-4\r\n/);
        t.ws.close();
        await t.closed;
      }
    } finally {
      await s2.close();
      await c2();
    }
  });
});

test('the line recorder: lines as typed, edits applied, control characters and escape sequences dropped', () => {
  const r = new TerminalLineRecorder();
  assert.deepEqual(r.feed('ls -l'), []);
  assert.deepEqual(r.feed(' src\r'), ['ls -l src']);
  assert.deepEqual(r.feed('\r\n  \r'), [], 'empty lines are not recorded');
  assert.deepEqual(r.feed('git statsu\x7f\x7fus\n'), ['git status']);
  assert.deepEqual(r.feed('\x1b[200~pasted\rtwo\x1b[201~\r'), ['pasted', 'two']);
  assert.deepEqual(r.feed('rm -rf /\x15echo safe\r'), ['echo safe'], 'Ctrl-U discards');
  assert.deepEqual(r.feed('\x1bOA\x1b]11;rgb:0000/0000/0000\x07\tcat\x1bb f\r'), ['cat f'], 'SS3, OSC, Alt-b and Tab are dropped');
  // UTF-8 split across chunks.
  const bytes = Buffer.from('echo héllo\r');
  assert.deepEqual(r.feed(bytes.subarray(0, 7)), []);
  assert.deepEqual(r.feed(bytes.subarray(7)), ['echo héllo']);
  assert.equal(r.feed('x'.repeat(10_000) + '\r')[0]!.length, 4096, 'lines are capped');
});
