import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { GymError } from '../../../src/errors.ts';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { registryAuth, registryName } from '../../../src/sandbox/kubernetes/registry.ts';
import { sandboxEnv } from '../../../src/env/types.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { seedOf } from '../../../src/tasks/seed.ts';
import { BUILTIN_SUITES } from '../../../bin/builtins.ts';
import { dockerClient } from '../../../src/sandbox/docker/client.ts';
import { pythonTask } from '../../helpers.ts';
import { kubernetesSkipReason, testFactory } from './skip.ts';

test('env images are renamed into the registry prefix (no cluster needed)', () => {
  assert.equal(registryName('benchgym/inst-abc:1', 'reg.example:5000/team'), 'reg.example:5000/team/inst-abc:1');
  assert.equal(registryName('plain', 'reg.example/'), 'reg.example/plain:latest');
});

function exampleTask(id: string) {
  const registry = new SuiteRegistry(BUILTIN_SUITES);
  registry.enable('examples');
  return registry.task('examples', id);
}

/** The project cluster's registry (docker/cluster/registry.sh): $BENCHGYM_TEST_REGISTRY, else 127.0.0.1:15000. */
async function registrySkipReason(address: string): Promise<string | null> {
  const skip = await kubernetesSkipReason();
  if (skip) return skip;
  try {
    const res = await fetch(`http://${address}/v2/`, { signal: AbortSignal.timeout(3000) });
    return res.ok ? null : `the registry at ${address} answered ${res.status}`;
  } catch (err) {
    return `no registry at ${address} (docker/cluster/registry.sh starts one; or set BENCHGYM_TEST_REGISTRY): ${(err as Error).message}`;
  }
}

test('--registry: the env image is pushed to the registry and the node pulls it from there', async (t) => {
  const address = process.env.BENCHGYM_TEST_REGISTRY ?? '127.0.0.1:15000';
  const skip = await registrySkipReason(address);
  if (skip) return t.skip(skip);
  // An image of its own (a file no other task has) under a prefix of its own: the node cannot
  // have it, so the pod runs only if it was pulled. (Pulling an image the node already holds
  // under another name, same config, made containerd 1.6's CRI forget the imported name.)
  const token = randomBytes(4).toString('hex');
  const prefix = `${address}/benchgym-test-${token}`;
  const task = pythonTask({ files: { [`pulled-${token}.txt`]: token } });
  const factory = testFactory({ registry: prefix, loadImage: async () => assert.fail('with a registry, nothing is loaded by hand') });
  let local: string | undefined;
  try {
    const env = await factory.prepare(task);
    assert.ok(env.image?.startsWith(`${prefix}/`), `prepared image ${env.image}`);
    local = env.image;
    const sb = await factory.create({ seed: seedOf(task), env: sandboxEnv(env) });
    const r = await sb.exec('cat pulled-*.txt');
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout, token);
    const pod = await factory.core.readNamespacedPod({ name: sb.id, namespace: factory.namespace });
    assert.equal(pod.spec?.containers[0]?.image, env.image);
    assert.equal(pod.spec?.containers[0]?.imagePullPolicy, 'IfNotPresent');
    await sb.destroy();
  } finally {
    await factory.close();
    if (local)
      await dockerClient()
        .getImage(local)
        .remove()
        .catch(() => {});
  }
});

test('--registry that does not answer: prepare fails with SANDBOX_UNAVAILABLE naming the push target', async (t) => {
  const skip = await kubernetesSkipReason();
  if (skip) return t.skip(skip);
  const factory = testFactory({ registry: '127.0.0.1:1/benchgym' });
  try {
    const task = await exampleTask('roman-numerals');
    await assert.rejects(
      factory.prepare(task),
      (e: unknown) =>
        e instanceof GymError && e.code === 'SANDBOX_UNAVAILABLE' && /could not push .* to 127\.0\.0\.1:1\/benchgym\//.test(e.message),
    );
    const tagged = (await dockerClient().listImages()).flatMap((i) => i.RepoTags ?? []).filter((t) => t.startsWith('127.0.0.1:1/'));
    assert.deepEqual(tagged, [], 'the failed push left its tag behind');
  } finally {
    await factory.close();
  }
});

test('push credentials: the auths entry docker login wrote for the host, else none (no cluster needed)', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-dockercfg-'));
  try {
    assert.deepEqual(await registryAuth('reg.example:5000/team', dir), {}, 'no config.json');
    const auth = Buffer.from('alice:s3:cr3t').toString('base64');
    await fs.writeFile(
      path.join(dir, 'config.json'),
      JSON.stringify({ auths: { 'reg.example:5000': { auth }, 'https://tok.example/v1/': { identitytoken: 'tkn' } } }),
    );
    assert.deepEqual(await registryAuth('reg.example:5000/team', dir), {
      username: 'alice',
      password: 's3:cr3t',
      serveraddress: 'reg.example:5000',
    });
    assert.deepEqual(await registryAuth('tok.example/x', dir), { identitytoken: 'tkn', serveraddress: 'tok.example' });
    assert.deepEqual(await registryAuth('other.example/x', dir), {});
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
