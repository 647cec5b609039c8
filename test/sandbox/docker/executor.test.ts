import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DockerSandboxFactory, type DockerSandbox } from '../../../src/sandbox/docker/index.ts';
import { sandboxEnv } from '../../../src/env/types.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { seedOf } from '../../../src/tasks/seed.ts';
import type { SandboxCreateOptions } from '../../../src/sandbox/types.ts';
import { describeDocker } from './skip.ts';
import { BUILTIN_SUITES } from '../../../bin/builtins.ts';

/** The Docker backend's in-sandbox executor where it differs from the pod's (the rest: conformance_containers.cases.ts). */
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
    factory = new DockerSandboxFactory({ serverId: `test-executor-${randomBytes(4).toString('hex')}`, poolSize: 0 });
    const registry = new SuiteRegistry(BUILTIN_SUITES);
    registry.enable('examples');
    const task = await registry.task('examples', 'roman-numerals');
    create = { seed: seedOf(task), env: sandboxEnv(await factory.prepare(task)) };
  });
  after(async () => {
    await Promise.all(sandboxes.map((s) => s.destroy()));
    await factory.close();
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

  test('a pooled container is handed over with its executor already running', async () => {
    const pooled = new DockerSandboxFactory({
      serverId: `test-executor-pool-${randomBytes(4).toString('hex')}`,
      poolSize: 1,
    });
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
});
