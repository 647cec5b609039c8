import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describeUnless, dockerSkipReason } from '../docker/skip.ts';
import { loadKubeConfig } from '../../../src/sandbox/kubernetes/client.ts';
import { KubernetesSandboxFactory, type KubernetesSandboxOptions } from '../../../src/sandbox/kubernetes/index.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The test cluster's kubeconfig: $BENCHGYM_KUBECONFIG, else where docker/cluster/up.sh writes it. */
export function testKubeconfig(): string {
  return process.env.BENCHGYM_KUBECONFIG ?? path.join(process.env.BENCHGYM_CLUSTER_DIR ?? '/tmp/benchgym-cluster', 'kubeconfig');
}

/** Why the kubernetes backend cannot be tested here, or null (the images are built by Docker, so it must answer too). */
export async function kubernetesSkipReason(): Promise<string | null> {
  const file = testKubeconfig();
  if (!existsSync(file)) return `no cluster kubeconfig at ${file} (run docker/cluster/up.sh, or set BENCHGYM_KUBECONFIG)`;
  try {
    const { CoreV1Api } = await import('@kubernetes/client-node');
    await loadKubeConfig(file).makeApiClient(CoreV1Api).listNamespace();
  } catch (err) {
    return `the cluster of ${file} does not answer: ${(err as Error).message}`;
  }
  return dockerSkipReason();
}

/** Copies an image from the local Docker engine into the project cluster's containerd. */
export async function loadIntoCluster(image: string): Promise<void> {
  await promisify(execFile)(path.join(ROOT, 'docker/cluster/load-image.sh'), [image], { maxBuffer: 16 * 1024 * 1024 });
}

/** A factory on the test cluster with a fresh server id, images loaded with load-image.sh. */
export function testFactory(opts: KubernetesSandboxOptions = {}): KubernetesSandboxFactory {
  return new KubernetesSandboxFactory({
    kubeconfig: testKubeconfig(),
    namespace: 'benchgym-test',
    serverId: `test-${randomBytes(4).toString('hex')}`,
    loadImage: loadIntoCluster,
    ...opts,
  });
}

/** A describe block for the kubernetes backend: one skipped test naming the reason when there is no cluster here. */
export function describeKubernetes(name: string, body: () => void | Promise<void>): void {
  describeUnless(kubernetesSkipReason, name, body);
}
