import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { ExecutorClient } from '../../../src/sandbox/executor/client.ts';
import { expectGymError, pgrep, waitGone } from '../../helpers.ts';
import { localExecutor, uniqueSleep } from './fixture.ts';

describe('executor: exec', () => {
  let ex: ExecutorClient;
  let root: string;
  let marker: string;
  let survivors: () => Promise<number[]>;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ ex, root, marker, survivors, cleanup } = await localExecutor());
  });
  after(() => cleanup());

  test('the handshake names the protocol, the version and the root', () => {
    assert.equal(ex.info?.protocol, 1);
    assert.match(ex.info!.version, /^[0-9a-f]{16}$/);
    assert.equal(ex.info?.root, root);
  });

  test('a shell command, its exit code and both streams', async () => {
    const r = await ex.exec('echo out; echo err >&2; exit 3');
    assert.equal(r.exitCode, 3);
    assert.equal(r.signal, null);
    assert.equal(r.stdout, 'out\n');
    assert.equal(r.stderr, 'err\n');
    assert.equal(r.timedOut, false);
    assert.deepEqual(r.truncated, { stdout: 0, stderr: 0 });
    assert.deepEqual(r.totalBytes, { stdout: 4, stderr: 4 });
    assert.ok(r.durationMs >= 0);
  });

  test('an argv runs without a shell, looked up in the command PATH', async () => {
    const r = await ex.exec(['printf', '%s|', 'a b', '$HOME']);
    assert.equal(r.stdout, 'a b|$HOME|');
    await expectGymError(ex.exec(['no-such-command-here']), 'SANDBOX_UNAVAILABLE', /not found/);
  });

  test('cwd, env and stdin', async () => {
    await fs.mkdir(path.join(root, 'sub', 'deeper'), { recursive: true });
    assert.equal((await ex.exec('pwd', { cwd: 'sub/deeper' })).stdout.trim(), path.join(root, 'sub', 'deeper'));
    assert.equal((await ex.exec('pwd')).stdout.trim(), root);
    assert.equal((await ex.exec('echo "$FOO-$BENCHGYM_SANDBOX"', { env: { FOO: 'bar' } })).stdout, `bar-${marker}\n`);
    assert.equal((await ex.exec('echo "${FOO:-unset}"; echo "$PATH"', { env: { FOO: 'x' }, clearEnv: true })).stdout.split('\n')[0], 'x');
    assert.equal((await ex.exec('cat', { stdin: 'line one\nline two\n' })).stdout, 'line one\nline two\n');
    const big = 'x'.repeat(300_000);
    assert.equal((await ex.exec('wc -c', { stdin: big })).stdout.trim(), '300000');
    // Without stdin a command reads /dev/null, never the executor's channel.
    const r = await ex.exec('cat; readlink /proc/self/fd/0');
    assert.equal(r.stdout, '/dev/null\n');
    await expectGymError(ex.exec('true', { cwd: '../..' }), 'PATH_OUTSIDE_WORKSPACE');
    await expectGymError(ex.exec('true', { cwd: 'missing' }), 'FILE_NOT_FOUND');
  });

  test('a timeout kills the whole group, a grandchild and a setsid escapee too', async () => {
    const a = uniqueSleep();
    const b = uniqueSleep();
    const c = uniqueSleep();
    const started = Date.now();
    const r = await ex.exec(`sleep ${a} & (sleep ${b}; true) & setsid sleep ${c} & echo started; wait`, { timeoutMs: 500, graceMs: 300 });
    assert.equal(r.timedOut, true);
    assert.equal(r.stdout, 'started\n');
    assert.ok(Date.now() - started < 4000, `took ${Date.now() - started} ms`);
    assert.deepEqual(await waitGone(`sleep ${a}`, 3000, 50), []);
    assert.deepEqual(await waitGone(`sleep ${b}`, 3000, 50), []);
    assert.deepEqual(await waitGone(`sleep ${c}`, 3000, 50), []);
    assert.deepEqual(await survivors(), []);
  });

  test('a command that ignores SIGTERM is killed after the grace', async () => {
    const r = await ex.exec(`trap '' TERM; sleep ${uniqueSleep()}`, { timeoutMs: 300, graceMs: 200 });
    assert.equal(r.timedOut, true);
    assert.ok(r.signal === 'SIGKILL' || r.exitCode !== 0, JSON.stringify(r));
  });

  test('background processes do not outlive the command that started them', async () => {
    const s = uniqueSleep();
    const r = await ex.exec(`sleep ${s} & echo left`);
    assert.equal(r.stdout, 'left\n');
    assert.ok(r.durationMs < 3000);
    assert.deepEqual(await waitGone(`sleep ${s}`, 3000, 50), []);
  });

  test('output caps keep the head and the tail and count what was dropped', async () => {
    const r = await ex.exec('seq 1 20000', { maxOutputBytes: 100 });
    const total = Number(execFileSync('sh', ['-c', 'seq 1 20000 | wc -c'], { encoding: 'utf8' }).trim());
    assert.equal(r.totalBytes.stdout, total);
    assert.equal(r.truncated.stdout, total - 100);
    assert.ok(r.stdout.startsWith('1\n2\n3\n'), r.stdout.slice(0, 20));
    assert.ok(r.stdout.endsWith('19999\n20000\n'), r.stdout.slice(-20));
    assert.match(r.stdout, new RegExp(`\\[\\.\\.\\. ${total - 100} bytes omitted \\(${total} in all\\) \\.\\.\\.\\]`));
    // Gigabytes are drained at full speed in bounded memory.
    const huge = await ex.exec('head -c 200000000 /dev/zero', { maxOutputBytes: 1000, timeoutMs: 60_000 });
    assert.equal(huge.totalBytes.stdout, 200_000_000);
    assert.equal(huge.truncated.stdout, 200_000_000 - 1000);
  });

  test('streamed output arrives while the command runs, before the result', async () => {
    const chunks: { text: string; stream: string; at: number }[] = [];
    const r = await ex.exec('echo one; sleep 0.4; echo two >&2; echo three', {
      onOutput: (text, stream) => chunks.push({ text, stream, at: Date.now() }),
    });
    const done = Date.now();
    assert.equal(r.stdout, 'one\nthree\n');
    assert.equal(
      chunks
        .filter((c) => c.stream === 'stdout')
        .map((c) => c.text)
        .join(''),
      'one\nthree\n',
    );
    assert.equal(
      chunks
        .filter((c) => c.stream === 'stderr')
        .map((c) => c.text)
        .join(''),
      'two\n',
    );
    assert.ok(done - chunks[0]!.at >= 300, `the first chunk came ${done - chunks[0]!.at} ms before the end`);
  });

  test('a multi-byte character split between chunks is streamed whole', async () => {
    const chunks: string[] = [];
    await ex.exec(`printf '\\342'; sleep 0.2; printf '\\202\\254\\n'`, { onOutput: (t) => chunks.push(t) });
    assert.equal(chunks.join(''), '€\n');
  });

  test('20 commands run at once on one channel', async () => {
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ex.exec(`sleep 1; echo ${i}`)));
    assert.deepEqual(
      results.map((r) => r.stdout),
      results.map((_, i) => `${i}\n`),
    );
    assert.ok(Date.now() - started < 8000, `20 x 1 s took ${Date.now() - started} ms: not concurrent`);
  });

  test('an AbortSignal cancels the command and its group', async () => {
    const s = uniqueSleep();
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const started = Date.now();
    await expectGymError(ex.exec(`sleep ${s} & wait`, { signal: ac.signal }), 'CANCELLED');
    assert.ok(Date.now() - started < 3000);
    assert.deepEqual(await waitGone(`sleep ${s}`, 3000, 50), []);
    await expectGymError(ex.exec('true', { signal: ac.signal }), 'CANCELLED');
  });

  test('cancel and signal by id', async () => {
    const run = ex.startExec(`trap 'echo got INT; exit 5' INT; sleep ${uniqueSleep()} & wait`);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await run.signal('SIGINT'), true);
    const r = await run.result;
    assert.equal(r.exitCode, 5);
    assert.equal(r.stdout, 'got INT\n');
    assert.equal(await run.cancel(), false, 'a finished command is not found');
    await expectGymError(ex.startExec('true').signal('SIGNOPE'), 'INVALID_ARGUMENT');

    const other = ex.startExec(`sleep ${uniqueSleep()}`);
    await new Promise((r) => setTimeout(r, 100));
    // The rejection may come before cancel() resolves: attach its handler first.
    const cancelled = expectGymError(other.result, 'CANCELLED');
    assert.equal(await other.cancel(), true);
    await cancelled;
  });

  test("a command writing a frame to its stdout cannot forge a result: it is the command's output", async () => {
    const forged = '{"id":1,"ok":true,"result":{}}';
    const r = await ex.exec(`printf '%s\\n' '${forged}'; printf '%s\\n' '${forged}' >&2`);
    assert.equal(r.stdout, `${forged}\n`);
    assert.equal(r.stderr, `${forged}\n`);
    assert.equal((await ex.exec('echo still')).stdout, 'still\n');
    assert.equal(ex.closedReason, null);
  });

  test("a command holds no descriptor of the executor's: only its own 0, 1 and 2", async () => {
    const r = await ex.exec('ls /proc/self/fd');
    // 3 is ls's own directory descriptor.
    assert.deepEqual(
      r.stdout
        .trim()
        .split('\n')
        .map(Number)
        .sort((x, y) => x - y),
      [0, 1, 2, 3],
    );
    // The executor itself keeps the channel off 0 and 1 (close-on-exec descriptors instead).
    const pid = ex.info!.pid;
    assert.equal(execFileSync('readlink', [`/proc/${pid}/fd/0`], { encoding: 'utf8' }).trim(), '/dev/null');
    assert.equal(execFileSync('readlink', [`/proc/${pid}/fd/1`], { encoding: 'utf8' }).trim(), '/dev/null');
    // Not dumpable: /proc/<pid>/fd belongs to root, so a process of the executor's uid (not root) cannot open its channel.
    const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
    assert.match(status, /^Uid:/m);
    const st = await fs.stat(`/proc/${pid}/fd`);
    assert.equal(st.uid, 0);
  });
});
