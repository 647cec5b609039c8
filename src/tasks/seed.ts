import type { SandboxCreateOptions } from '../sandbox/types.ts';
import type { Task } from './schema.ts';

/** The start state of a task as a sandbox seed. */
export function seedOf(task: Task): SandboxCreateOptions['seed'] {
  return task.workspace.type === 'dir' ? { dir: task.workspace.path } : { files: task.workspace.files };
}
