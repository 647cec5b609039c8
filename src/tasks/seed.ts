import { GymError } from '../errors.ts';
import type { PreparedEnv } from '../env/types.ts';
import type { SandboxCreateOptions } from '../sandbox/types.ts';
import type { Task } from './schema.ts';

/**
 * The start state of a task as a sandbox seed. A `git` workspace is materialised by
 * `prepare()` (a cached checkout), so its seed is the prepared env's `seedDir`; the Docker
 * backend keeps the start state in the instance image and needs no seed.
 */
export function seedOf(task: Task, env?: PreparedEnv): SandboxCreateOptions['seed'] {
  if (task.workspace.type === 'dir') return { dir: task.workspace.path };
  if (task.workspace.type === 'files') return { files: task.workspace.files };
  if (env?.seedDir) return { dir: env.seedDir };
  if (env?.image) return { files: {} };
  throw new GymError('INTERNAL', `task '${task.id}' has a git workspace: prepare() it before laying out a sandbox`);
}
