import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { baseImageName } from '../../../src/env/images.ts';
import { GymError } from '../../../src/errors.ts';
import type { KubernetesSandboxFactory } from '../../../src/sandbox/kubernetes/index.ts';
import type { Sandbox } from '../../../src/sandbox/types.ts';
import { kubernetesSkipReason, loadIntoCluster, testFactory } from './skip.ts';

const IMAGE = baseImageName('python', '3.11');

describe('kubernetes sandbox: a pod per episode', async () => {
  const skip = await kubernetesSkipReason();
  if (skip) {
    test(`skipped: ${skip}`, { skip }, () => {});
    return;
  }
  let factory: KubernetesSandboxFactory;
  let sb: Sandbox;
  before(async () => {
    factory = testFactory();
    await loadIntoCluster(IMAGE);
    sb = await factory.create({ seed: {}, env: { image: IMAGE, vars: { GREETING: 'hi' } } });
  });
  after(async () => factory?.close());

  test('exec: exit code, stdout, stderr, env, workspace cwd, stdin', async () => {
    const r = await sb.exec('echo "$GREETING $(pwd)"; echo err >&2; cat; exit 3', { stdin: 'in\n' });
    assert.equal(r.exitCode, 3);
    assert.equal(r.stdout, 'hi /workspace\nin\n');
    assert.equal(r.stderr, 'err\n');
    assert.equal(r.timedOut, false);
  });

  test('a timeout ends the command and its setsid child in about the time given', async () => {
    const t0 = Date.now();
    const r = await sb.exec("echo before; trap '' TERM; (setsid sleep 777.5 &); sleep 1000", { timeoutMs: 2000 });
    assert.equal(r.timedOut, true);
    assert.match(r.stdout, /before/);
    assert.ok(Date.now() - t0 < 8000, `took ${Date.now() - t0} ms`);
    const left = await sb.exec("ps -eo args | grep -c '^sleep 777.5' || true");
    assert.equal(left.stdout.trim(), '0');
  });

  test('output is capped while drained', async () => {
    const r = await sb.exec('head -c 5000000 /dev/zero | tr "\\0" a', { maxOutputBytes: 1000 });
    assert.equal(r.totalBytes.stdout, 5_000_000);
    assert.ok(r.stdout.length < 3000);
  });

  test('files: write, read, stat, list, remove, binary-safe, outside refused', async () => {
    const bin = Buffer.from([0, 1, 2, 255, 10, 13]);
    await sb.writeFile('d/e/bin.dat', bin);
    assert.deepEqual(await sb.readFile('d/e/bin.dat'), bin);
    assert.deepEqual(await sb.stat('d/e/bin.dat'), { type: 'file', size: 6 });
    const listed = await sb.list('d', { depth: 2 });
    assert.deepEqual(
      listed.entries.map((e) => e.path),
      ['d/e', 'd/e/bin.dat'],
    );
    await sb.remove('d');
    assert.equal(await sb.stat('d'), null);
    await assert.rejects(sb.readFile('../etc/passwd'), (e: unknown) => e instanceof GymError && e.code === 'PATH_OUTSIDE_WORKSPACE');
  });

  test('baseline and diff', async () => {
    await sb.writeFile('a.txt', 'one\n');
    await sb.commitBaseline();
    await sb.writeFile('a.txt', 'two\n');
    assert.match(await sb.diff(), /-one\n\+two/);
  });

  test('hardened: read-only root, no capabilities, no token, no network', async () => {
    const r = await sb.exec(
      'touch /x 2>&1; grep CapEff /proc/self/status; ls /var/run/secrets 2>&1; cat /proc/net/dev | tail -n +3 | cut -d: -f1',
    );
    assert.match(r.stdout, /Read-only file system/);
    assert.match(r.stdout, /CapEff:\s+0000000000000000/);
    assert.match(r.stdout, /No such file/);
    assert.deepEqual(
      r.stdout
        .trim()
        .split('\n')
        .slice(-1)
        .map((s) => s.trim()),
      ['lo'],
    );
  });

  test('a pod whose image is not on the node fails the start with SANDBOX_UNAVAILABLE naming the event', async () => {
    const t0 = Date.now();
    await assert.rejects(
      factory.create({ seed: {}, env: { image: 'benchgym.local/no-such-image:0' } }),
      (e: unknown) => e instanceof GymError && e.code === 'SANDBOX_UNAVAILABLE' && /ErrImageNeverPull/.test(e.message),
    );
    assert.ok(Date.now() - t0 < 30_000);
  });

  test('destroy deletes the pod', async () => {
    const other = await factory.create({ seed: {}, env: { image: IMAGE } });
    await other.destroy();
    await assert.rejects(other.exec('true'), (e: unknown) => e instanceof GymError && e.code === 'SANDBOX_UNAVAILABLE');
  });
});
