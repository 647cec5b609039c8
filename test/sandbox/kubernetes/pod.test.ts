import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  EXECUTOR_DIR_BYTES,
  HOSTS_CONFIGMAP,
  podManifest,
  TERMINAL_CONTAINER,
  terminalContainer,
} from '../../../src/sandbox/kubernetes/pod.ts';
import { DEFAULT_KUBERNETES_LIMITS } from '../../../src/sandbox/kubernetes/limits.ts';

test('the pod manifest is hardened and limited (no cluster needed)', () => {
  const pod = podManifest({
    name: 'p',
    image: 'img:1',
    labels: { 'benchgym.server': 's' },
    limits: DEFAULT_KUBERNETES_LIMITS,
    memoryBytes: 1024,
    pullPolicy: 'Never',
    runtimeClassName: 'gvisor',
    user: { uid: 65534, gid: 65534 },
  });
  const spec = pod.spec!;
  const c = spec.containers[0]!;
  assert.equal(spec.automountServiceAccountToken, false);
  assert.equal(spec.enableServiceLinks, false);
  assert.equal(spec.runtimeClassName, 'gvisor');
  assert.equal(spec.restartPolicy, 'Never');
  assert.equal(spec.activeDeadlineSeconds, DEFAULT_KUBERNETES_LIMITS.activeDeadlineSeconds);
  assert.equal(c.imagePullPolicy, 'Never');
  // Root with the two capabilities the executor needs to run commands as the sandbox uid, which can signal neither it nor PID 1.
  assert.deepEqual(c.securityContext, {
    runAsUser: 0,
    runAsGroup: 0,
    runAsNonRoot: false,
    allowPrivilegeEscalation: false,
    privileged: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'], add: ['SETUID', 'SETGID'] },
  });
  // The workspace's root is the commands' (git refuses a work tree of another owner): an init container with CAP_CHOWN alone.
  const init = spec.initContainers!;
  assert.equal(init.length, 1);
  assert.deepEqual(init[0]!.command, ['chown', '65534:65534', '/workspace']);
  assert.deepEqual(init[0]!.securityContext!.capabilities, { drop: ['ALL'], add: ['CHOWN'] });
  assert.deepEqual(init[0]!.volumeMounts, [{ name: 'workspace', mountPath: '/workspace' }]);
  assert.equal(c.resources!.limits!.memory, '1024');
  assert.equal(c.resources!.limits!.cpu, '1000m');
  assert.equal(c.resources!.limits!['ephemeral-storage'], String(DEFAULT_KUBERNETES_LIMITS.ephemeralBytes));
  assert.deepEqual(
    spec.volumes!.map((v) => [v.name, v.emptyDir?.medium, v.emptyDir?.sizeLimit]),
    [
      ['workspace', 'Memory', String(DEFAULT_KUBERNETES_LIMITS.workspaceBytes)],
      ['tmp', 'Memory', String(DEFAULT_KUBERNETES_LIMITS.tmpBytes)],
      ['hosts', undefined, undefined],
      ['terminal-tmp', 'Memory', String(DEFAULT_KUBERNETES_LIMITS.tmpBytes)],
      // The executor's binary: every pod has it now (the executor is required).
      ['executor', 'Memory', String(EXECUTOR_DIR_BYTES)],
    ],
  );
  // /etc/hosts is the read-only ConfigMap's, not the kubelet's writable file from the node disk.
  assert.deepEqual(spec.volumes!.find((v) => v.name === 'hosts')!.configMap, { name: HOSTS_CONFIGMAP });
  assert.deepEqual(
    c.volumeMounts!.find((m) => m.mountPath === '/etc/hosts'),
    { name: 'hosts', mountPath: '/etc/hosts', subPath: 'hosts', readOnly: true },
  );
  assert.deepEqual(pod.metadata!.labels, { 'benchgym.server': 's', 'benchgym.sandbox': 'true' });
  assert.equal(
    podManifest({
      name: 'p',
      image: 'i',
      labels: {},
      limits: DEFAULT_KUBERNETES_LIMITS,
      memoryBytes: 1,
      pullPolicy: 'IfNotPresent',
      user: { uid: 65534, gid: 65534 },
    }).spec!.runtimeClassName,
    undefined,
  );
});

test(
  'the terminal container runs as the sandbox uid without capabilities, ' + 'on the workspace and a /tmp of its own (no cluster needed)',
  () => {
    const c = terminalContainer('img:1', { uid: 65534, gid: 65534 });
    assert.equal(c.name, TERMINAL_CONTAINER);
    assert.equal(c.image, 'img:1');
    assert.deepEqual(c.securityContext, {
      runAsUser: 65534,
      runAsGroup: 65534,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    // Not the commands' /tmp: their HOME's dotfiles (.inputrc, .gitconfig) never reach a person's shell.
    assert.deepEqual(c.volumeMounts, [
      { name: 'workspace', mountPath: '/workspace' },
      { name: 'terminal-tmp', mountPath: '/tmp' },
    ]);
    // Its own pid namespace: no target container.
    assert.equal(c.targetContainerName, undefined);
  },
);
