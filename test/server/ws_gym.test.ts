import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket, type ClientOptions, type RawData } from 'ws';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { wsGymExtension, type WsGymOptions } from '../../src/server/ws_gym.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { makeGym, testContext } from '../helpers.ts';
import { BUGGY, FIXED, REPRO_TEST } from './scenario.ts';

type Json = Record<string, any>;

class RpcError extends Error {
  constructor(readonly error: { code: number; message: string; data?: Json }) {
    super(`JSON-RPC ${error.code}: ${error.message}`);
  }
}

/** A minimal JSON-RPC client over a real `ws` socket; `log` keeps every message in arrival order. */
class RpcClient {
  readonly log: Json[] = [];
  private nextId = 1;
  private readonly pending = new Map<number | string, { resolve: (v: any) => void; reject: (e: unknown) => void }>();
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: RawData) => {
      const msg = JSON.parse(String(data)) as Json;
      this.log.push(msg);
      if (msg.id === undefined || msg.id === null) return;
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new RpcError(msg.error));
      else p.resolve(msg.result);
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
    this.closed.then(() => {
      for (const p of this.pending.values()) p.reject(new Error('connection closed'));
      this.pending.clear();
    });
  }

  static open(url: string, opts?: ClientOptions): Promise<RpcClient> {
    const ws = new WebSocket(url, opts);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new RpcClient(ws)));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with ${res.statusCode}`)));
    });
  }

  /** Sends a request; returns its id and the promise of its result. */
  request(method: string, params?: Json): { id: number; result: Promise<any> } {
    const id = this.nextId++;
    const result = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) }));
    return { id, result };
  }

  call(method: string, params?: Json): Promise<any> {
    return this.request(method, params).result;
  }

  step(episode_id: string, tool: string, args: Json = {}, episode_key?: string): Promise<Json> {
    return this.call('step', { episode_id, tool, args, ...(episode_key ? { episode_key } : {}) });
  }

  notes(method: string, requestId: number): Json[] {
    return this.log.filter((m) => m.method === method && m.params?.request_id === requestId).map((m) => m.params);
  }

  close(): void {
    this.ws.terminate();
  }
}

async function rpcError(p: Promise<unknown>): Promise<RpcError['error']> {
  try {
    await p;
  } catch (err) {
    if (err instanceof RpcError) return err.error;
    throw err;
  }
  assert.fail('expected a JSON-RPC error');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('WebSocket gym protocol (/ws)', () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let url: string;
  let client: RpcClient;

  const serverWith = (opts: WsGymOptions) => startHttpServer(gym, { port: 0, extensions: [wsGymExtension(opts)] });

  before(async () => {
    ({ gym, cleanup } = await makeGym());
    server = await serverWith({});
    url = `${server.url.replace(/^http/, 'ws')}/ws`;
    client = await RpcClient.open(url);
  });

  after(async () => {
    client.close();
    await server.close();
    await cleanup();
  });

  test('ping answers an empty result (with or without params); a notification ping gets no answer', async () => {
    assert.deepEqual(await client.call('ping'), {});
    assert.deepEqual(await client.call('ping', {}), {});
    const before = client.log.length;
    client.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'ping' }));
    assert.deepEqual(await client.call('ping'), {});
    assert.equal(client.log.length, before + 1, 'only the answer to the request with an id');
  });

  test('list_suites and list_tasks give the data of the MCP tools', async () => {
    const suites = await client.call('list_suites');
    assert.deepEqual(suites, (await gym.callTool('list_suites', {}, testContext())).data);
    const tasks = await client.call('list_tasks', { suite: 'examples' });
    assert.ok(tasks.tasks.some((t: Json) => t.id === 'inventory-discount-bug'));
    assert.deepEqual(tasks, (await gym.callTool('list_tasks', { suite: 'examples' }, testContext())).data);
    const missing = await rpcError(client.call('list_tasks', { suite: 'nope' }));
    assert.equal(missing.code, -32602);
    assert.equal(missing.data?.code, 'SUITE_NOT_FOUND');
  });

  test(
    'solves inventory-discount-bug: reset, failing tests, edit, ' + 'passing tests, submit → reward 1, same verdict as a direct run',
    async () => {
      const reset = await client.request('reset', { task_id: 'inventory-discount-bug', options: { max_steps: 50 } });
      const { episode_id, observation } = await reset.result;
      assert.match(episode_id, /^ep-/);
      assert.match(observation.text, /Sales tax is charged on the full price/);
      assert.equal(observation.data.episodeId, episode_id);
      assert.equal(observation.data.budgets.maxSteps, 50);
      assert.ok(
        client.notes('progress', reset.id).some((p) => p.message === 'ready'),
        'reset reports progress',
      );

      const viewed = await client.step(episode_id, 'view_file', { path: 'shop/cart.py', start_line: 70, end_line: 90 });
      assert.match(viewed.observation.text, /def taxable_amount/);
      assert.deepEqual([viewed.reward, viewed.terminated, viewed.truncated], [0, false, false]);
      assert.deepEqual(
        { state: viewed.info.state, steps: viewed.info.steps, max_steps: viewed.info.max_steps },
        { state: 'running', steps: 1, max_steps: 50 },
      );

      await client.step(episode_id, 'create_file', { path: 'tests/test_repro.py', content: REPRO_TEST });
      const failingReq = client.request('step', { episode_id, tool: 'run_tests', args: { tests: ['tests/test_repro.py'] } });
      const failing = await failingReq.result;
      assert.equal(failing.observation.data.counts.failed, 1, failing.observation.text);
      assert.equal(failing.reward, 0);
      assert.ok(client.notes('output', failingReq.id).length > 0, 'run_tests streams its output');
      const log = await client.step(episode_id, 'view_error_log');
      assert.match(log.observation.text, /test_coupon_lowers_the_tax/);
      const edited = await client.step(episode_id, 'edit_file', { path: 'shop/cart.py', old_str: BUGGY, new_str: FIXED });
      assert.equal(edited.info.error, undefined, edited.observation.text);
      const passing = await client.step(episode_id, 'run_tests', { tests: ['tests/test_repro.py'] });
      assert.deepEqual(passing.observation.data.counts, { passed: 1, failed: 0, error: 0, skipped: 0 }, passing.observation.text);

      const submitted = await client.call('submit', { episode_id });
      assert.equal(submitted.reward, 1, submitted.observation.text);
      assert.equal(submitted.terminated, true);
      assert.equal(submitted.truncated, false);
      assert.equal(submitted.info.state, 'submitted');
      assert.equal(submitted.observation.data.status, 'passed');
      assert.match(submitted.observation.text, /Verdict: PASSED \(reward 1\)/);

      // The same steps straight through the gym score the same tests the same way.
      const ctx = testContext();
      const direct = ((await gym.callTool('start_episode', { task_id: 'inventory-discount-bug' }, ctx)).data as Json).episodeId as string;
      await gym.callTool('create_file', { path: 'tests/test_repro.py', content: REPRO_TEST }, ctx, direct);
      await gym.callTool('edit_file', { path: 'shop/cart.py', old_str: BUGGY, new_str: FIXED }, ctx, direct);
      const verdict = (await gym.callTool('submit', {}, ctx, direct)).data as Json;
      const lists = (v: Json) => ({
        f2p: [...v.failToPass.passed].sort(),
        f2pFailed: v.failToPass.failed,
        p2p: [...v.passToPass.passed].sort(),
        p2pFailed: v.passToPass.failed,
      });
      assert.deepEqual(lists(submitted.observation.data), lists(verdict));
      assert.ok(verdict.failToPass.passed.length >= 5);

      // After the end: tools fail as observations, and the episode says it is over.
      const afterEnd = await client.step(episode_id, 'run_command', { command: 'true' });
      assert.equal(afterEnd.info.error.code, 'EPISODE_ENDED');
      assert.equal(afterEnd.terminated, true);
      const again = await client.call('submit', { episode_id });
      assert.equal(again.reward, 1, 'submit again returns the stored verdict');
    },
  );

  test("a running command's output arrives as notifications before the step's response", async () => {
    const { episode_id } = await client.call('reset', { task_id: 'roman-numerals' });
    const req = client.request('step', {
      episode_id,
      tool: 'run_command',
      args: { command: 'echo one; sleep 0.3; echo two; echo err >&2' },
    });
    const result = await req.result;
    const responseAt = client.log.findIndex((m) => m.id === req.id);
    const outputs = client.log.map((m, i) => ({ m, i })).filter(({ m }) => m.method === 'output' && m.params.request_id === req.id);
    assert.deepEqual(
      outputs.map(({ m }) => m.params.episode_id),
      outputs.map(() => episode_id),
    );
    const stdout = outputs
      .filter(({ m }) => m.params.stream === 'stdout')
      .map(({ m }) => m.params.chunk)
      .join('');
    assert.equal(stdout, 'one\ntwo\n');
    assert.ok(outputs.some(({ m }) => m.params.stream === 'stderr' && m.params.chunk === 'err\n'));
    assert.ok(outputs.length >= 2, 'one chunk before the sleep, one after');
    assert.ok(
      outputs.every(({ i }) => i < responseAt),
      'every output notification came before the response',
    );
    await sleep(100);
    assert.equal(client.notes('output', req.id).length, outputs.length, 'nothing of that request came after its response');
    assert.match(result.observation.text, /exit code 0/);
    assert.equal(result.observation.data.stdout, 'one\ntwo\n');
  });

  test('a tool error is a step result with info.error; a malformed call or unknown episode is a JSON-RPC error', async () => {
    const { episode_id } = await client.call('reset', { task_id: 'roman-numerals' });
    const missing = await client.step(episode_id, 'view_file', { path: 'nope.py' });
    assert.equal(missing.info.error.code, 'FILE_NOT_FOUND');
    assert.match(missing.observation.text, /^Error FILE_NOT_FOUND: /);
    assert.deepEqual(missing.observation.data.error, missing.info.error);
    assert.deepEqual([missing.reward, missing.terminated, missing.truncated], [0, false, false]);
    const badArgs = await client.step(episode_id, 'view_file', { path: 42 });
    assert.equal(badArgs.info.error.code, 'INVALID_ARGUMENT');
    assert.match(badArgs.observation.text, /path/);

    const unknown = await rpcError(client.step('ep-does-not-exist', 'view_file', { path: 'roman.py' }));
    assert.equal(unknown.code, -32602);
    assert.equal(unknown.data?.code, 'EPISODE_NOT_FOUND');
    assert.match(unknown.message, /EPISODE_NOT_FOUND/);
    const noTool = await rpcError(client.call('step', { episode_id }));
    assert.equal(noTool.code, -32602);
    assert.equal(noTool.data?.code, 'INVALID_ARGUMENT');
    assert.match(noTool.message, /tool/);
    const badTool = await rpcError(client.step(episode_id, 'rm_rf'));
    assert.equal(badTool.code, -32602);
    assert.match(badTool.message, /unknown episode tool 'rm_rf'/);
    const gymTool = await rpcError(client.step(episode_id, 'start_episode'));
    assert.match(gymTool.message, /reset/);
    const unknownTask = await rpcError(client.call('reset', { task_id: 'no-such-task' }));
    assert.equal(unknownTask.data?.code, 'TASK_NOT_FOUND');
    const badOption = await rpcError(client.call('reset', { task_id: 'roman-numerals', options: { max_stepz: 3 } }));
    assert.equal(badOption.code, -32602);
    const noMethod = await rpcError(client.call('teleport'));
    assert.equal(noMethod.code, -32601);
    // The episode is still fine.
    const ok = await client.step(episode_id, 'view_file', { path: 'roman.py', start_line: 1, end_line: 2 });
    assert.equal(ok.info.error, undefined);
  });

  test('bad JSON gets a parse error (-32700) and the connection stays open', async () => {
    client.ws.send('{"jsonrpc": "2.0", "id": 1, "method": ');
    client.ws.send('[]');
    client.ws.send('{"jsonrpc": "1.0", "id": 7, "method": "list_suites"}');
    await sleep(100);
    const errors = client.log.slice(-3);
    assert.deepEqual(
      errors.map((m) => [m.id, m.error?.code]),
      [
        [null, -32700],
        [null, -32600],
        [7, -32600],
      ],
    );
    assert.equal(client.ws.readyState, WebSocket.OPEN);
    assert.ok((await client.call('list_suites')).suites.length >= 1);
    // A notification (no id) runs and gets no answer.
    const before = client.log.length;
    client.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'list_suites' }));
    client.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'teleport' }));
    await sleep(100);
    assert.equal(client.log.length, before);
  });

  test('budgets: truncated when the steps are spent, BUDGET_EXHAUSTED as an observation, submit still works', async () => {
    const { episode_id } = await client.call('reset', { task_id: 'roman-numerals', options: { max_steps: 2 } });
    const first = await client.step(episode_id, 'list_dir');
    assert.equal(first.truncated, false);
    const second = await client.step(episode_id, 'list_dir');
    assert.equal(second.truncated, true, 'the last allowed step says the budget is spent');
    const third = await client.step(episode_id, 'list_dir');
    assert.equal(third.info.error.code, 'BUDGET_EXHAUSTED');
    assert.equal(third.truncated, true);
    assert.equal(third.terminated, false);
    const submitted = await client.call('submit', { episode_id });
    assert.equal(submitted.reward, 0);
    assert.equal(submitted.terminated, true);
    assert.equal(submitted.truncated, false);
  });

  test('close ends the episode; cancel stops a running step', async () => {
    const { episode_id } = await client.call('reset', { task_id: 'roman-numerals' });
    const t0 = Date.now();
    const long = client.request('step', { episode_id, tool: 'run_command', args: { command: 'sleep 30', timeout_s: 120 } });
    await sleep(300);
    client.ws.send(JSON.stringify({ jsonrpc: '2.0', id: long.id, method: 'list_suites' }));
    await sleep(100);
    const dup = client.log.at(-1)!;
    assert.equal(dup.id, null, 'a reused id is answered with id null, not as the running request');
    assert.equal(dup.error.code, -32600);
    assert.match(dup.error.message, new RegExp(`id ${long.id} is still running`));
    assert.deepEqual(await client.call('cancel', { request_id: long.id }), { cancelled: true });
    const cancelled = await long.result;
    assert.equal(cancelled.info.error.code, 'CANCELLED');
    assert.ok(Date.now() - t0 < 10_000);
    assert.deepEqual(await client.call('cancel', { request_id: 9999 }), { cancelled: false });

    const closed = await client.call('close', { episode_id });
    assert.equal(closed.terminated, true);
    assert.equal(closed.reward, 0);
    assert.equal(closed.info.state, 'ended');
    const diff = await client.step(episode_id, 'get_diff');
    assert.equal(diff.info.error, undefined, 'get_diff still answers after the end');
  });

  test('a client that disconnects mid-step does not cancel it; a new connection resumes the episode', async () => {
    const first = await RpcClient.open(url);
    const { episode_id, episode_key } = await first.call('reset', { task_id: 'roman-numerals' });
    const running = first.request('step', {
      episode_id,
      tool: 'run_command',
      args: { command: 'echo started; sleep 1; echo done > marker.txt; echo finished' },
    });
    for (let i = 0; i < 50 && !first.notes('output', running.id).length; i++) await sleep(50);
    assert.ok(first.notes('output', running.id).length > 0, 'the command started');
    first.ws.terminate();
    await assert.rejects(running.result, /connection closed/);

    const second = await RpcClient.open(url);
    try {
      // Another connection reaches the episode with its key only (the same refusal for a wrong key as for no episode).
      for (const key of [undefined, 'not-the-key', `${episode_key}x`]) {
        const refused = await rpcError(second.step(episode_id, 'view_file', { path: 'roman.py' }, key));
        assert.equal(refused.code, -32602);
        assert.equal(refused.data?.code, 'EPISODE_NOT_FOUND', refused.message);
        assert.ok(!refused.message.includes(String(episode_key)), refused.message);
      }
      // Queued behind the still-running command (calls on one episode run in order).
      const viewed = await second.step(episode_id, 'view_file', { path: 'marker.txt' }, episode_key);
      assert.equal(viewed.info.error, undefined, viewed.observation.text);
      assert.equal(viewed.observation.data.content.trim(), 'done');
      const diff = await second.step(episode_id, 'get_diff', {}, episode_key);
      assert.ok(diff.observation.data.files.includes('marker.txt'), diff.observation.text);
      assert.equal(gym.episode(episode_id).state, 'running');
      await second.call('close', { episode_id, episode_key });
    } finally {
      second.close();
    }
  });

  test('an oversize frame (5 MiB) closes the connection with 1009', async () => {
    const big = await RpcClient.open(url);
    big.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'list_suites', params: { pad: 'x'.repeat(5 * 1024 * 1024) } }));
    const { code } = await big.closed;
    assert.equal(code, 1009);
    // The server goes on.
    assert.ok((await client.call('list_suites')).suites.length >= 1);
  });

  test('Origin evil.example is refused at the upgrade; a token is required when set', async () => {
    await assert.rejects(RpcClient.open(url, { origin: 'https://evil.example' }), /403/);
    const ok = await RpcClient.open(url, { origin: 'http://localhost:3000' });
    ok.close();
    const guarded = await startHttpServer(gym, { port: 0, token: 'sekret', extensions: [wsGymExtension()] });
    try {
      const wsUrl = `${guarded.url.replace(/^http/, 'ws')}/ws`;
      await assert.rejects(RpcClient.open(wsUrl), /401/);
      const byHeader = await RpcClient.open(wsUrl, { headers: { authorization: 'Bearer sekret' } });
      assert.ok((await byHeader.call('list_suites')).suites.length >= 1);
      byHeader.close();
      const byQuery = await RpcClient.open(`${wsUrl}?token=sekret`);
      byQuery.close();
    } finally {
      await guarded.close();
    }
  });

  test('a client that stops answering pings is dropped; one that answers stays', async () => {
    const fast = await serverWith({ heartbeatMs: 250 });
    try {
      const wsUrl = `${fast.url.replace(/^http/, 'ws')}/ws`;
      const silent = await RpcClient.open(wsUrl, { autoPong: false });
      const healthy = await RpcClient.open(wsUrl);
      const t0 = Date.now();
      const { code } = await silent.closed;
      assert.equal(code, 1006, 'terminated without a close frame');
      assert.ok(Date.now() - t0 < 2000, `dropped after ${Date.now() - t0} ms`);
      await sleep(600);
      assert.equal(healthy.ws.readyState, WebSocket.OPEN, 'a client answering pings survives several intervals');
      assert.ok((await healthy.call('list_suites')).suites.length >= 1);
      healthy.close();
    } finally {
      await fast.close();
    }
  });

  test('a slow reader: output notifications are dropped and counted in output_dropped, never the response', async () => {
    const small = await serverWith({ maxBufferedBytes: 64 * 1024, heartbeatMs: 0 });
    const slow = await RpcClient.open(`${small.url.replace(/^http/, 'ws')}/ws`);
    try {
      const { episode_id } = await slow.call('reset', { task_id: 'roman-numerals' });
      const total = 30_000_000;
      const req = slow.request('step', {
        episode_id,
        tool: 'run_command',
        args: { command: `head -c ${total} /dev/zero | tr '\\0' a`, timeout_s: 120 },
      });
      const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      socket.pause();
      // Let the command finish while nothing is read.
      const episode = gym.episode(episode_id);
      while (episode.steps < 1) await sleep(20);
      await episode.serialize(async () => {});
      socket.resume();
      const result = await req.result;
      assert.equal(result.observation.data.totalBytes.stdout, total);
      const responseAt = slow.log.findIndex((m) => m.id === req.id);
      const droppedAt = slow.log.findIndex((m) => m.method === 'output_dropped');
      assert.ok(droppedAt >= 0 && droppedAt < responseAt, 'an output_dropped notice came before the response');
      const sent = slow.notes('output', req.id).reduce((n, p) => n + Buffer.byteLength(p.chunk), 0);
      const dropped = slow.notes('output_dropped', req.id).reduce((n, p) => n + p.bytes, 0);
      assert.ok(dropped > 0, 'output was dropped');
      assert.equal(sent + dropped, total, 'every byte was either sent or counted as dropped');
    } finally {
      slow.close();
      await small.close();
    }
  });

  test('closing the server closes its WebSockets with 1001', async () => {
    const temp = await serverWith({});
    const c = await RpcClient.open(`${temp.url.replace(/^http/, 'ws')}/ws`);
    const t0 = Date.now();
    await temp.close();
    assert.equal((await c.closed).code, 1001, 'going away');
    assert.ok(Date.now() - t0 < 3000);
  });
});
