import { randomBytes } from 'node:crypto';
import { DockerSandboxFactory } from '../../src/sandbox/docker/index.ts';
import { sandboxConformance } from './conformance.ts';
import { dockerSkipReason } from './docker/skip.ts';
import { kubernetesSkipReason, testFactory as kubernetesTestFactory } from './kubernetes/skip.ts';

// The built-in backends; a test can run the same suite over another (test/sandbox/backend.test.ts).
sandboxConformance({ name: 'local', onHost: true, skip: async () => null, factory: () => undefined });
sandboxConformance({
  name: 'docker',
  skip: dockerSkipReason,
  factory: () => new DockerSandboxFactory({ serverId: `test-${randomBytes(4).toString('hex')}`, poolSize: 0 }),
});
sandboxConformance({ name: 'kubernetes', skip: kubernetesSkipReason, factory: () => kubernetesTestFactory() });
