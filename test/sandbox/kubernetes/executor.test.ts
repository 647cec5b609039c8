import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, Exec } from '@kubernetes/client-node';
import { baseImageName } from '../../../src/env/images.ts';
import { GymError } from '../../../src/errors.ts';
import { EXECUTOR_BINARY_NAME, executorSourceHash } from '../../../src/sandbox/executor/build.ts';
import type { KubernetesSandbox, KubernetesSandboxFactory } from '../../../src/sandbox/kubernetes/index.ts';
import { expectGymError, tempDir } from '../../helpers.ts';
import { kubernetesSkipReason, loadIntoCluster, testFactory } from './skip.ts';

const IMAGE = baseImageName('python', '3.11');

/** API execs opened while `run` runs (every exec of the backend goes through Exec.prototype.exec). */
async function apiExecsDuring(run: () => Promise<unknown>): Promise<{ count: number; commands: string[] }> {
  const original = Exec.prototype.exec;
  const commands: string[] = [];
  Exec.prototype.exec = function (this: Exec, ...args: Parameters<Exec['exec']>) {
    commands.push([args[3]].flat().join(' ').slice(0, 120));
    return original.apply(this, args);
  } as Exec['exec'];
  try {
    await run();
  } finally {
    Exec.prototype.exec = original;
  }
  return { count: commands.length, commands };
}

/** Within `ms`, or a rejection naming what hung. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms))]);
}

async function lostError(p: Promise<unknown>, what: string): Promise<GymError> {
  try {
    await within(p, 20_000, what);
  } catch (err) {
    assert.ok(err instanceof GymError, `${what}: a GymError, got ${err}`);
    assert.equal(err.code, 'SANDBOX_UNAVAILABLE', `${what}: ${err.message}`);
    assert.equal(err.details?.sandboxLost, true, `${what}: sandboxLost in ${JSON.stringify(err.details)}`);
    return err;
  }
  assert.fail(`${what} should have failed`);
}

/** The kubernetes backend's in-sandbox executor where it differs from Docker's (the rest: conformance_containers.cases.ts). */
describe('kubernetes sandbox: the in-sandbox executor', async () => {
  const skip = await kubernetesSkipReason();
  if (skip) {
    test(`skipped: ${skip}`, { skip }, () => {});
    return;
  }
  let factory: KubernetesSandboxFactory;
  const create = { seed: {}, env: { image: IMAGE, vars: { GREETING: 'hi' } } };
  const fresh = async () => (await factory.create(create)) as KubernetesSandbox;
  before(async () => {
    factory = testFactory();
    await loadIntoCluster(IMAGE);
  });
  after(async () => factory?.close());

  test(
    'runs as an exec of its own (not PID 1) from its own emptyDir; ' + 'every operation after the start is a frame, not an API exec',
    async () => {
      const sb = await fresh();
      assert.ok(sb.executor?.info, 'the sandbox has a connected executor');
      assert.notEqual(sb.executor.info.pid, 1);
      assert.equal(sb.executor.info.root, '/workspace');
      const seen = await apiExecsDuring(async () => {
        assert.equal(
          (await sb.exec('echo "$GREETING $(pwd)"; cat /proc/1/cmdline | tr "\\0" " "')).stdout,
          'hi /workspace\nsh -c sleep infinity & wait ',
        );
        assert.equal(await sb.exec('pwd', { cwd: 'sub' }).catch((e: GymError) => e.code), 'NOT_A_DIRECTORY');
        await sb.writeFile('sub/a.txt', 'one\n');
        assert.equal((await sb.exec('pwd', { cwd: 'sub' })).stdout, '/workspace/sub\n');
        assert.equal((await sb.readFile('sub/a.txt')).toString(), 'one\n');
        assert.deepEqual(await sb.stat('sub/a.txt'), { type: 'file', size: 4 });
        assert.deepEqual(
          (await sb.list('sub')).entries.map((e) => e.path),
          ['sub/a.txt'],
        );
        await sb.commitBaseline();
        await sb.writeFile('sub/a.txt', 'two\n');
        assert.match(await sb.diff(), /-one\n\+two/);
        await sb.remove('sub');
        assert.equal(await sb.stat('sub'), null);
      });
      assert.equal(seen.count, 0, `API execs: ${seen.commands.join(' | ')}`);
      const mount = await sb.exec('grep " /.benchgym-executor " /proc/mounts; stat -c %a /.benchgym-executor/benchgym-executor');
      assert.match(mount.stdout, /^tmpfs \/\.benchgym-executor tmpfs rw,(?!.*noexec)/);
      assert.match(mount.stdout, /\n555\n$/);
    },
  );

  test('a timeout is enforced inside the pod: the command and its setsid child end, with no API exec', { timeout: 60_000 }, async () => {
    const sb = await fresh();
    let r: Awaited<ReturnType<KubernetesSandbox['exec']>> | undefined;
    const t0 = Date.now();
    const seen = await apiExecsDuring(async () => {
      r = await sb.exec("echo before; trap '' TERM; (setsid sleep 777.5 &); sleep 1000", { timeoutMs: 2000 });
    });
    assert.equal(r!.timedOut, true);
    assert.match(r!.stdout, /before/);
    assert.ok(Date.now() - t0 < 8000, `took ${Date.now() - t0} ms`);
    assert.equal(seen.count, 0, `API execs: ${seen.commands.join(' | ')}`);
    assert.equal((await sb.exec("ps -eo args | grep -c '^sleep 777.5' || true")).stdout.trim(), '0');
  });

  test(
    'what a command left behind with a cleared environment is killed after it, by the sweep the executor runs',
    { timeout: 60_000 },
    async () => {
      const sb = await fresh();
      await sb.exec('(setsid env -i sleep 778 >/dev/null 2>&1 &); echo started');
      assert.equal((await sb.exec("ps -eo args | grep -c '^sleep 778' || true")).stdout.trim(), '0', 'the leftover outlived its command');
    },
  );

  test('the leftover sweep sees through a process name with ") " in it', { timeout: 60_000 }, async () => {
    const sb = await fresh();
    // A leftover whose name would shift the fields of /proc/N/stat for a naive reader.
    // The command waits until env has become it, so the sweep after it reads the new name.
    await sb.exec(
      `cp /bin/sleep '/tmp/x) 1 y'; (setsid env -i '/tmp/x) 1 y' 779 >/dev/null 2>&1 &); ` +
        `until ps -eo args | grep -q '^/tmp/x) 1 y 779'; do sleep 0.05; done`,
    );
    assert.equal((await sb.exec("ps -eo args | grep -c '^/tmp/x) 1 y 779' || true")).stdout.trim(), '0');
    // The pod's main process was not taken for the leftover: the sandbox still runs commands.
    assert.equal((await sb.exec('echo alive')).stdout, 'alive\n');
  });

  test('the pod deleted: SANDBOX_UNAVAILABLE with sandboxLost', { timeout: 90_000 }, async () => {
    const sb = await fresh();
    const pending = sb.exec('sleep 60', { timeoutMs: 120_000 });
    pending.catch(() => {});
    await new Promise((r) => setTimeout(r, 300));
    await factory.core.deleteNamespacedPod({ name: sb.transport.ref.pod, namespace: sb.transport.ref.namespace, gracePeriodSeconds: 0 });
    await lostError(pending, 'the pending command');
    await lostError(sb.exec('true'), 'a later command');
  });

  test('OOM: the command is killed, the episode told why', { timeout: 120_000 }, async () => {
    const small = testFactory({ limits: { memoryBytes: 160 * 1024 ** 2 } });
    try {
      const sb = (await small.create(create)) as KubernetesSandbox;
      assert.ok(sb.executor);
      const r = await sb.exec('python3 -c "b = bytearray(400 * 1024 * 1024)"', { timeoutMs: 60_000 }).catch((e: unknown) => e);
      if (r instanceof GymError) {
        // The OOM killer took the executor (or the pod's init): the sandbox is lost, and says so.
        assert.equal(r.code, 'SANDBOX_UNAVAILABLE');
        assert.equal(r.details?.sandboxLost, true);
      } else {
        // It took the command: a SIGKILL, the sandbox alive.
        assert.ok(r && typeof r === 'object' && 'exitCode' in r);
        assert.notEqual((r as { exitCode: number | null }).exitCode, 0);
        assert.equal((await sb.exec('echo alive')).stdout, 'alive\n');
      }
    } finally {
      await small.close();
    }
  });

  test(
    'an executor that cannot run in the pod: the sandbox does not start (SANDBOX_UNAVAILABLE naming it), its pod deleted',
    { timeout: 120_000 },
    async () => {
      // A cache whose "binary" is not a program: found, copied, and refused by the pod.
      const cacheDir = await tempDir('benchgym-kexec-');
      const dir = path.join(cacheDir, 'executor', await executorSourceHash());
      await fs.mkdir(dir, { recursive: true });
      await fs.writeFile(path.join(dir, EXECUTOR_BINARY_NAME), 'not an executable\n', { mode: 0o755 });
      const broken = testFactory({ images: { cacheDir } });
      try {
        await expectGymError(broken.create(create), 'SANDBOX_UNAVAILABLE', /in-sandbox executor did not start in pod benchgym-/);
        assert.equal(broken.stats().live, 0);
        const selector = `benchgym.instance=${broken.instanceId}`;
        const left = await broken.core.listNamespacedPod({ namespace: broken.namespace, labelSelector: selector });
        const running = left.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata?.name);
        assert.deepEqual(running, [], 'the pod is deleted');
      } finally {
        await broken.close();
      }
    },
  );

  test('the pods are gone after close', async () => {
    const f = testFactory();
    const sb = (await f.create(create)) as KubernetesSandbox;
    await f.close();
    const core = f.kc.makeApiClient(CoreV1Api);
    const pod = await core.readNamespacedPod({ name: sb.transport.ref.pod, namespace: sb.transport.ref.namespace }).catch(() => null);
    assert.ok(!pod || pod.metadata?.deletionTimestamp, 'the pod is deleted');
  });
});
