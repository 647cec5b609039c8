import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { once } from 'node:events';
import { promises as fs } from 'node:fs';
import { ExecutorClient } from '../../../src/sandbox/executor/client.ts';
import { startExecutorProcess } from '../../../src/sandbox/executor/process.ts';
import { killByEnvMarker } from '../../../src/sandbox/processes.ts';
import { expectGymError, tempDir } from '../../helpers.ts';
import { executorBinary, localExecutor, uniqueSleep } from './fixture.ts';

/** A fake executor: what the client writes comes out of `sent`; what the test writes to `reply` reaches the client. */
function fakeChannel() {
  const toExecutor = new PassThrough();
  const fromExecutor = new PassThrough();
  const lines: string[] = [];
  toExecutor.on('data', (b: Buffer) => lines.push(...b.toString().split('\n').filter(Boolean)));
  const client = new ExecutorClient({ input: toExecutor, output: fromExecutor }, { label: 'the fake executor' });
  return { client, lines, reply: (s: string) => fromExecutor.write(s), end: () => fromExecutor.end() };
}

describe('executor: the channel', () => {
  test('killing the executor mid-command: the pending call and every later one get SANDBOX_UNAVAILABLE', async () => {
    const { ex, marker, cleanup } = await localExecutor();
    try {
      const pending = ex.exec(`sleep ${uniqueSleep()}`, { env: { BENCHGYM_SANDBOX: marker } });
      const read = ex.read('nothing-yet').catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 200));
      process.kill(ex.info!.pid, 'SIGKILL');
      const started = Date.now();
      await expectGymError(pending, 'SANDBOX_UNAVAILABLE', /killed by SIGKILL/);
      assert.ok(Date.now() - started < 2000, 'no hang');
      await read;
      await expectGymError(ex.exec('true'), 'SANDBOX_UNAVAILABLE', /killed by SIGKILL/);
      await expectGymError(ex.write('a.txt', 'x'), 'SANDBOX_UNAVAILABLE');
      assert.match(ex.closedReason ?? '', /killed by SIGKILL/);
    } finally {
      await cleanup();
      await killByEnvMarker('BENCHGYM_SANDBOX', marker);
    }
  });

  test('the leader of a command does not outlive a killed executor', async () => {
    const { ex, marker, cleanup } = await localExecutor();
    const s = uniqueSleep();
    try {
      const pending = ex.exec(`exec sleep ${s}`).catch(() => {});
      await new Promise((r) => setTimeout(r, 200));
      process.kill(ex.info!.pid, 'SIGKILL');
      await pending;
      const deadline = Date.now() + 3000;
      let alive = true;
      while (alive && Date.now() < deadline) {
        const ps = spawn('pgrep', ['-f', `sleep ${s}`]);
        alive = (await once(ps, 'exit'))[0] === 0;
        if (alive) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(alive, false);
    } finally {
      await cleanup();
      await killByEnvMarker('BENCHGYM_SANDBOX', marker);
    }
  });

  test('close() ends the executor and what it runs; later calls are refused', async () => {
    const { ex, cleanup } = await localExecutor();
    const pid = ex.info!.pid;
    const pending = expectGymError(ex.exec(`sleep ${uniqueSleep()}`), 'SANDBOX_UNAVAILABLE', /closed/);
    await new Promise((r) => setTimeout(r, 100));
    await ex.close();
    await pending;
    await expectGymError(ex.stat('.'), 'SANDBOX_UNAVAILABLE');
    assert.throws(() => process.kill(pid, 0), /ESRCH/);
    await cleanup();
  });

  test(
    "a command running as the executor's own uid cannot open the executor's channel",
    { skip: process.getuid?.() !== 0 ? 'needs root, to start the executor as another uid' : false },
    async () => {
      const root = await tempDir('benchgym-executor-uid-');
      await fs.chown(root, 65534, 65534);
      const ex = await startExecutorProcess({
        binary: await executorBinary(),
        root,
        wrapper: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'],
      });
      try {
        const pid = ex.info!.pid;
        const r = await ex.exec(
          `id -u; ls /proc/${pid}/fd/; echo '{"id":1,"ok":true,"result":{}}' > /proc/${pid}/fd/1; cat /proc/${pid}/fd/0; echo done`,
        );
        const lines = r.stdout.trim().split('\n');
        assert.equal(lines[0], '65534', 'the command runs as the executor does');
        assert.equal(lines.at(-1), 'done');
        // Not dumpable: its /proc/<pid>/fd is root's, even for a process of its own uid.
        assert.equal((r.stderr.match(/Permission denied/g) ?? []).length, 3, r.stderr);
        assert.equal((await ex.exec('echo fine')).stdout, 'fine\n');
        assert.equal(ex.closedReason, null);
      } finally {
        await ex.close();
        await fs.rm(root, { recursive: true, force: true });
      }
    },
  );

  test('the executor answers malformed frames with BAD_FRAME and goes on', async () => {
    const root = await tempDir('benchgym-executor-raw-');
    const child = spawn(await executorBinary(), ['--root', root], { stdio: ['pipe', 'pipe', 'inherit'] });
    const frames: { id: number | null; ok?: boolean; error?: { code: string } }[] = [];
    let buf = '';
    child.stdout.on('data', (b: Buffer) => {
      buf += b.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) frames.push(JSON.parse(l));
    });
    child.stdin.write('not json at all\n');
    child.stdin.write('{"op":"ping"}\n');
    child.stdin.write('{"id":5,"op":"no-such-op"}\n');
    child.stdin.write('{"id":6,"op":"exec"}\n');
    child.stdin.write('{"id":7,"op":"read","path":1}\n');
    child.stdin.write('\n\n{"id":8,"op":"ping"}\n');
    const deadline = Date.now() + 5000;
    while (frames.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.stdin.end();
    await once(child, 'exit');
    const byId = (id: number | null) => frames.filter((f) => f.id === id);
    assert.deepEqual(
      byId(null).map((f) => f.error?.code),
      ['BAD_FRAME', 'BAD_FRAME'],
    );
    assert.equal(byId(5)[0]?.error?.code, 'BAD_FRAME');
    assert.equal(byId(6)[0]?.error?.code, 'INVALID_ARGUMENT');
    assert.equal(byId(7)[0]?.error?.code, 'BAD_FRAME', 'a field of the wrong type is answered by id');
    assert.equal(byId(8)[0]?.ok, true);
    assert.equal(child.exitCode, 0, 'stdin closed: a clean exit');
    await fs.rm(root, { recursive: true, force: true });
  });

  test('a frame from the executor that is not the protocol ends the channel', async () => {
    const { client, lines, reply } = fakeChannel();
    const call = client.call('stat', { path: 'x' });
    reply('{"id":1,"ok":true,"result":{"type":"file","size":1,"mode":420,"mtimeMs":1}}\n');
    assert.equal((await call).type, 'file');
    assert.deepEqual(JSON.parse(lines[0]!), { id: 1, op: 'stat', path: 'x' });
    const next = client.read('y');
    reply('garbage\n');
    await expectGymError(next, 'SANDBOX_UNAVAILABLE', /not the protocol/);
    await expectGymError(client.read('z'), 'SANDBOX_UNAVAILABLE', /not the protocol/);
  });

  test('a result of the wrong shape ends the channel', async () => {
    const { client, reply } = fakeChannel();
    const call = client.call('read', { path: 'x' });
    reply('{"id":1,"ok":true,"result":{"data":42}}\n');
    await expectGymError(call, 'SANDBOX_UNAVAILABLE', /malformed result/);
  });

  test('frames split anywhere, or several in one chunk, are read; error frames map to GymError codes', async () => {
    const { client, reply } = fakeChannel();
    const a = client.stat('a');
    const b = client.read('b');
    const c = client.remove('c');
    const frames =
      '{"id":1,"ok":false,"error":{"code":"FILE_NOT_FOUND","message":"no such file"}}\n' +
      '{"id":2,"ok":false,"error":{"code":"PATH_OUTSIDE_WORKSPACE","message":"out"}}\n' +
      '{"id":3,"ok":false,"error":{"code":"IO_ERROR","message":"disk"}}\n';
    for (let i = 0; i < frames.length; i += 7) reply(frames.slice(i, i + 7));
    assert.equal(await a, null);
    await expectGymError(b, 'PATH_OUTSIDE_WORKSPACE');
    const err = await expectGymError(c, 'SANDBOX_UNAVAILABLE', /disk/);
    assert.equal(err.details?.executorCode, 'IO_ERROR');
  });

  test('the stream closing rejects what is pending, never a hang', async () => {
    const { client, end } = fakeChannel();
    const call = client.exec('sleep 100');
    end();
    await expectGymError(call, 'SANDBOX_UNAVAILABLE', /closed its output/);
  });

  test('a hung executor fails the call after the call timeout', async () => {
    const toExecutor = new PassThrough();
    const client = new ExecutorClient({ input: toExecutor, output: new PassThrough() }, { callTimeoutMs: 200 });
    await expectGymError(client.read('x'), 'SANDBOX_UNAVAILABLE', /did not answer a read in 200 ms/);
  });

  test('connecting to something that is not an executor fails with the reason', async () => {
    const root = await tempDir('benchgym-executor-wrong-');
    await expectGymError(startExecutorProcess({ binary: '/bin/false', root }), 'SANDBOX_UNAVAILABLE', /exited with code 1/);
    await expectGymError(startExecutorProcess({ binary: '/no/such/executor', root }), 'SANDBOX_UNAVAILABLE', /could not be started|exited/);
    await expectGymError(
      startExecutorProcess({ binary: 'cat', root, wrapper: ['sh', '-c', 'exec cat', 'sh'] }),
      'SANDBOX_UNAVAILABLE',
      /not the protocol/,
    );
    await expectGymError(
      startExecutorProcess({ binary: 'sleep', root, wrapper: ['sh', '-c', 'exec sleep 100', 'sh'], connectTimeoutMs: 300 }),
      'SANDBOX_UNAVAILABLE',
      /did not answer a ping/,
    );
    await expectGymError(
      startExecutorProcess({ binary: await executorBinary(), root: '/no/such/root' }),
      'SANDBOX_UNAVAILABLE',
      /no such file|exited/,
    );
    await fs.rm(root, { recursive: true, force: true });
  });
});
