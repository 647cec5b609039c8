import type { SandboxFactory } from '../sandbox/types.ts';

/**
 * One line on the isolation a gym's episodes get, for `benchgym serve`'s banner: the backend
 * says it (SandboxFactory.describe: bubblewrap or not, the executor, the network, the limits);
 * a backend that says nothing is named.
 */
export async function describeIsolation(factory: SandboxFactory): Promise<string> {
  return factory.describe ? factory.describe() : `isolation: ${factory.backend}`;
}
