import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HOSTS_CONFIGMAP, podManifest } from '../../../src/sandbox/kubernetes/pod.ts';
import { DEFAULT_KUBERNETES_LIMITS } from '../../../src/sandbox/kubernetes/limits.ts';

test('the pod manifest is hardened and limited (no cluster needed)', () => {
  const pod = podManifest({ name: 'p', image: 'img:1', labels: { 'benchgym.server': 's' }, limits: DEFAULT_KUBERNETES_LIMITS, memoryBytes: 1024, pullPolicy: 'Never', runtimeClassName: 'gvisor' });
  const spec = pod.spec!;
  const c = spec.containers[0]!;
  assert.equal(spec.automountServiceAccountToken, false);
  assert.equal(spec.enableServiceLinks, false);
  assert.equal(spec.runtimeClassName, 'gvisor');
  assert.equal(spec.restartPolicy, 'Never');
  assert.equal(spec.activeDeadlineSeconds, DEFAULT_KUBERNETES_LIMITS.activeDeadlineSeconds);
  assert.equal(c.imagePullPolicy, 'Never');
  assert.deepEqual(c.securityContext, { allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
  assert.equal(c.resources!.limits!.memory, '1024');
  assert.equal(c.resources!.limits!.cpu, '1000m');
  assert.equal(c.resources!.limits!['ephemeral-storage'], String(DEFAULT_KUBERNETES_LIMITS.ephemeralBytes));
  assert.deepEqual(spec.volumes!.map((v) => [v.name, v.emptyDir?.medium, v.emptyDir?.sizeLimit]), [
    ['workspace', 'Memory', String(DEFAULT_KUBERNETES_LIMITS.workspaceBytes)],
    ['tmp', 'Memory', String(DEFAULT_KUBERNETES_LIMITS.tmpBytes)],
    ['hosts', undefined, undefined],
  ]);
  // /etc/hosts is the read-only ConfigMap's, not the kubelet's writable file from the node disk.
  assert.deepEqual(spec.volumes!.find((v) => v.name === 'hosts')!.configMap, { name: HOSTS_CONFIGMAP });
  assert.deepEqual(c.volumeMounts!.find((m) => m.mountPath === '/etc/hosts'), { name: 'hosts', mountPath: '/etc/hosts', subPath: 'hosts', readOnly: true });
  assert.deepEqual(pod.metadata!.labels, { 'benchgym.server': 's', 'benchgym.sandbox': 'true' });
  assert.equal(podManifest({ name: 'p', image: 'i', labels: {}, limits: DEFAULT_KUBERNETES_LIMITS, memoryBytes: 1, pullPolicy: 'IfNotPresent' }).spec!.runtimeClassName, undefined);
});
