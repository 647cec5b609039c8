import path from 'node:path';
import type { Gym } from '../episode/gym.ts';
import { DockerSandboxFactory } from '../sandbox/docker/index.ts';
import { bubblewrapAvailable, DEFAULT_LOCAL_LIMITS, localExecutorBinary } from '../sandbox/local/index.ts';

const gib = (bytes: number) => `${+(bytes / 1024 ** 3).toFixed(1)} GiB`;
const kib = (bytes: number) => `${Math.round(bytes / 1024)} KiB`;

/** What `--isolation` and the cache directory were, for the local backend's description. */
export interface IsolationInputs {
  isolation: 'auto' | 'bwrap' | 'none';
  /** Where the local executor is built (the gym's cache directory). */
  cacheDir: string;
}

/** 'on', or 'missing' when no sandbox can start for want of the executor (creating one says why). */
function executorState(binary: Promise<string>): Promise<string> {
  return binary.then(
    () => 'on',
    () => 'missing (no sandbox can start: see the error of the first one)',
  );
}

/**
 * One line on the isolation the gym's episodes get, for `benchgym serve`'s banner: the backend,
 * bubblewrap or not, the in-sandbox executor, the network, the limits. Says plainly when commands
 * can reach the network (local backend without bubblewrap).
 */
export async function describeIsolation(gym: Gym, inputs: IsolationInputs): Promise<string> {
  const factory = gym.sandboxes;
  if (factory instanceof DockerSandboxFactory) {
    const l = factory.limits;
    const executor = await executorState(factory.executorBinaryPath());
    return `isolation: docker (one hardened container per episode; bubblewrap n/a), executor ${executor}, network none, limits: memory ${gib(l.memoryBytes)}, ${l.nanoCpus / 1e9} CPU, ${l.pids} pids, workspace ${gib(l.workspaceBytes)}, command timeout ${l.defaultTimeoutMs / 1000} s, output ${kib(l.maxOutputBytes)}`;
  }
  if (factory.backend !== 'local') return `isolation: ${factory.backend}`;
  const bwrap = inputs.isolation === 'bwrap' || (inputs.isolation === 'auto' && (await bubblewrapAvailable()));
  const executor = await executorState(localExecutorBinary(path.resolve(inputs.cacheDir)));
  const l = DEFAULT_LOCAL_LIMITS;
  const sandbox = bwrap
    ? 'bubblewrap (own mount, pid and network namespaces)'
    : inputs.isolation === 'none'
      ? 'no bubblewrap (--isolation none)'
      : 'no bubblewrap (not available here)';
  const network = bwrap ? 'network none' : "network: the host's (commands can reach it)";
  return `isolation: local, ${sandbox}, executor ${executor}, ${network}, limits: memory ${gib(l.memoryBytes)} and ${l.pids} pids (cgroup, where writable), CPU ${l.cpuSeconds} s, disk ${gib(l.diskBytes)}, command timeout ${l.defaultTimeoutMs / 1000} s, output ${kib(l.maxOutputBytes)}`;
}
