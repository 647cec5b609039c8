import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DockerSandboxFactory, type DockerSandbox } from '../../../src/sandbox/docker/index.ts';
import { dockerExec } from '../../../src/sandbox/docker/exec.ts';
import { sandboxEnv } from '../../../src/env/types.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { seedOf } from '../../../src/tasks/seed.ts';
import type { SandboxCreateOptions } from '../../../src/sandbox/types.ts';
import { expectGymError, tempDir } from '../../helpers.ts';
import { describeDocker } from './skip.ts';
import { BUILTIN_SUITES } from '../../../bin/builtins.ts';

/** Within `ms`, or a rejection naming what hung. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms))]);
}

/** The Docker backend's in-sandbox executor: one per container, its channel its own, its death a clear error. */
describeDocker('docker sandbox: the in-sandbox executor', async () => {
  let factory: DockerSandboxFactory;
  let create: SandboxCreateOptions;
  const sandboxes: DockerSandbox[] = [];
  const fresh = async () => {
    const sb = (await factory.create(create)) as DockerSandbox;
    sandboxes.push(sb);
    return sb;
  };

  before(async () => {
    factory = new DockerSandboxFactory({ serverId: `test-executor-${randomBytes(4).toString('hex')}`, poolSize: 0, executor: 'auto' });
    const registry = new SuiteRegistry(BUILTIN_SUITES);
    registry.enable('examples');
    const task = await registry.task('examples', 'roman-numerals');
    create = { seed: seedOf(task), env: sandboxEnv(await factory.prepare(task)) };
  });
  after(async () => {
    await Promise.all(sandboxes.map((s) => s.destroy()));
    await factory.close();
  });

  test('runs as an exec of its own, never PID 1, with the workspace as its root', async () => {
    const sb = await fresh();
    assert.ok(sb.executor, 'the sandbox has an executor');
    const pid = sb.executor.info!.pid;
    assert.notEqual(pid, 1);
    assert.equal(sb.executor.info!.root, '/workspace');
    const ps = await sb.exec(`cat /proc/1/comm; cat /proc/${pid}/comm`);
    assert.equal(ps.stdout, 'docker-init\nbenchgym-execut\n');
    assert.match((await sb.exec('ls')).stdout, /roman\.py/, 'the start state is laid out');
  });

  test('killing the executor mid-command: SANDBOX_UNAVAILABLE for the pending call and every later one, never a hang', { timeout: 60_000 }, async () => {
    const sb = await fresh();
    const pid = sb.executor!.info!.pid;
    const pending = sb.exec('sleep 30; echo done', { timeoutMs: 60_000 });
    pending.catch(() => {}); // it may reject before the kill's exec returns: handled below
    await new Promise((r) => setTimeout(r, 300));
    const killed = await dockerExec(sb.transport.container, { cmd: ['kill', '-9', String(pid)], maxOutputBytes: 4096, timeoutMs: 10_000 });
    assert.equal(killed.exitCode, 0, killed.stderr.text());
    await expectGymError(within(pending, 10_000, 'the pending command'), 'SANDBOX_UNAVAILABLE', /executor/);
    await expectGymError(within(sb.exec('true'), 5000, 'a later command'), 'SANDBOX_UNAVAILABLE', /executor/);
    await expectGymError(within(sb.readFile('roman.py'), 5000, 'a later read'), 'SANDBOX_UNAVAILABLE', /executor/);
    await expectGymError(within(sb.writeFile('x.txt', 'x'), 5000, 'a later write'), 'SANDBOX_UNAVAILABLE', /executor/);
  });

  test("a command cannot read or write the executor's channel (/proc/<pid>/fd/0 and 1)", async () => {
    const sb = await fresh();
    const pid = sb.executor!.info!.pid;
    const forged = JSON.stringify({ id: 1, ok: true, result: { forged: true } });
    const script = [
      `for fd in 0 1; do`,
      `  if (printf '%s\\n' '${forged}' > /proc/${pid}/fd/$fd) 2>/dev/null; then echo "wrote $fd"; fi`,
      `  if timeout 2 head -c 1 /proc/${pid}/fd/$fd >/dev/null 2>&1; then echo "read $fd"; fi`,
      `done`,
      // The fd numbers may be listed (the directory is root's); what they lead to may not be.
      `readlink /proc/${pid}/fd/0 /proc/${pid}/fd/1 /proc/${pid}/fd/3 /proc/${pid}/fd/4 2>/dev/null && echo "followed"`,
      `echo checked`,
    ].join('\n');
    const r = await sb.exec(script);
    assert.equal(r.stdout, 'checked\n', `the channel was reachable: ${r.stdout}${r.stderr}`);
    assert.equal((await sb.exec('echo still-fine')).stdout, 'still-fine\n', 'the executor is unharmed');
    assert.deepEqual(sb.executor!.unroutedErrors, []);
  });

  test("what a running command double-forked is not another command's leftover; it goes when its command ends", { timeout: 60_000 }, async () => {
    const sb = await fresh();
    const sleeps = async () => (await sb.exec('ps -eo args')).stdout.split('\n').filter((l) => /^sleep 21\d\d/.test(l)).map((l) => l.trim());
    const running = sb.exec('(sleep 2107 >/dev/null 2>&1 &); sleep 3', { timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 800));
    await sb.exec('true');
    assert.deepEqual(await sleeps(), ['sleep 2107'], 'killed while its command still ran');
    assert.equal((await running).exitCode, 0);
    assert.deepEqual(await sleeps(), [], 'outlived its command');
  });

  test('20 concurrent commands on one sandbox, each with its own output', { timeout: 120_000 }, async () => {
    const sb = await fresh();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => sb.exec(`sleep 0.$((RANDOM % 5)); echo out-${i}; echo err-${i} >&2; exit ${i % 3}`)));
    results.forEach((r, i) => {
      assert.equal(r.stdout, `out-${i}\n`);
      assert.equal(r.stderr, `err-${i}\n`);
      assert.equal(r.exitCode, i % 3);
    });
    assert.equal((await sb.exec('echo after')).stdout, 'after\n');
  });

  test('a pooled container is handed over with its executor already running', async () => {
    const pooled = new DockerSandboxFactory({ serverId: `test-executor-pool-${randomBytes(4).toString('hex')}`, poolSize: 1, executor: 'auto' });
    try {
      await pooled.warm(create.env!.image!);
      const sb = (await pooled.create(create)) as DockerSandbox;
      assert.ok(sb.executor?.info, 'the executor was connected before the hand-over');
      let execs = 0;
      const original = sb.transport.container.exec.bind(sb.transport.container);
      sb.transport.container.exec = ((...args: Parameters<typeof original>) => {
        execs++;
        return original(...args);
      }) as typeof sb.transport.container.exec;
      assert.match((await sb.exec('ls')).stdout, /roman\.py/);
      assert.equal((await sb.readFile('roman.py')).length > 0, true);
      assert.equal(execs, 0, 'no docker exec after the hand-over');
      await sb.destroy();
    } finally {
      await pooled.close();
    }
  });

  test('without a Go toolchain the backend says so once and runs without the executor', async () => {
    const saved = process.env.BENCHGYM_GO;
    const said: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      said.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
    process.env.BENCHGYM_GO = '/nonexistent/go';
    // A cache with no binary in it: the build is tried, and fails.
    const noGo = new DockerSandboxFactory({ serverId: `test-executor-nogo-${randomBytes(4).toString('hex')}`, poolSize: 0, executor: 'auto', images: { cacheDir: await tempDir('benchgym-nogo-') } });
    try {
      const a = (await noGo.create(create)) as DockerSandbox;
      const b = (await noGo.create(create)) as DockerSandbox;
      assert.equal(a.executor, null);
      assert.equal(b.executor, null);
      assert.equal((await a.exec('echo fallback')).stdout, 'fallback\n');
      assert.equal(said.filter((l) => /without its in-sandbox executor/.test(l)).length, 1, said.join(''));
      assert.match(said.join(''), /Go toolchain/);
    } finally {
      process.stderr.write = write;
      if (saved === undefined) delete process.env.BENCHGYM_GO;
      else process.env.BENCHGYM_GO = saved;
      await noGo.close();
    }
  });

  test("executor: 'off' keeps one docker exec per operation", async () => {
    const off = new DockerSandboxFactory({ serverId: `test-executor-off-${randomBytes(4).toString('hex')}`, poolSize: 0, executor: 'off' });
    try {
      const sb = (await off.create(create)) as DockerSandbox;
      assert.equal(sb.executor, null);
      await sb.writeFile('a/b.txt', 'hi\n');
      assert.equal((await sb.readFile('a/b.txt')).toString(), 'hi\n');
      assert.equal((await sb.exec('cat a/b.txt')).stdout, 'hi\n');
      await sb.destroy();
    } finally {
      await off.close();
    }
  });
});
