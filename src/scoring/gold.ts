import { GymError } from '../errors.ts';
import type { SandboxFactory } from '../sandbox/types.ts';
import type { Task } from '../tasks/schema.ts';
import { seedOf } from '../tasks/seed.ts';
import { sandboxEnv } from '../env/types.ts';

/** The reference solution as a patch against the start state. */
export async function goldPatch(task: Task, sandboxes: SandboxFactory): Promise<string> {
  if (task.solution?.patch) return task.solution.patch;
  const files = task.solution?.files;
  if (!files || !Object.keys(files).length) throw new GymError('TASK_INVALID', `task '${task.id}' has no reference solution`);
  const env = await sandboxes.prepare(task);
  const sandbox = await sandboxes.create({ seed: seedOf(task, env), env: sandboxEnv(env) });
  try {
    await sandbox.commitBaseline();
    for (const [rel, content] of Object.entries(files)) await sandbox.writeFile(rel, content);
    return await sandbox.diff();
  } finally {
    await sandbox.destroy();
  }
}
