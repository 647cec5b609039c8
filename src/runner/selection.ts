import type { Gym } from '../episode/gym.ts';
import { GymError } from '../errors.ts';
import type { Task } from '../tasks/schema.ts';

/** The tasks a run covers: every task of the suite, or those listed (in the suite's order, then the listed ids the listing does not hold). */
export async function selectTasks(gym: Gym, suite: string, ids?: string[]): Promise<Task[]> {
  const all = await gym.registry.tasks(suite);
  if (!ids?.length) return all;
  // Ids the listing does not hold may name a task with options (Suite.resolveTask).
  const extra = await Promise.all(ids.filter((id) => !all.some((t) => t.id === id)).map((id) => gym.registry.task(suite, id).catch(() => id)));
  const unknown = extra.filter((t): t is string => typeof t === 'string');
  if (unknown.length) throw new GymError('TASK_NOT_FOUND', `no task ${unknown.map((u) => `'${u}'`).join(', ')} in suite '${suite}'`);
  return [...all.filter((t) => ids.includes(t.id)), ...(extra as Task[])];
}

/**
 * The tasks that offer the start state a run asks for: a task without it (one whose `contexts`
 * lack it, say a function gone at the newest commit) is left out of a whole-suite run, and
 * named in an error when the run lists it.
 */
export function offering(tasks: Task[], context: string | undefined, listed: boolean): Task[] {
  if (!context) return tasks;
  const has = (t: Task) => t.defaultContext === context || context in t.contexts;
  const missing = tasks.filter((t) => !has(t));
  if (listed && missing.length) throw new GymError('INVALID_ARGUMENT', `invalid --context '${context}': task${missing.length > 1 ? 's' : ''} ${missing.map((t) => `'${t.id}'`).join(', ')} do${missing.length > 1 ? '' : 'es'} not offer it`);
  const kept = tasks.filter(has);
  if (!kept.length) throw new GymError('INVALID_ARGUMENT', `invalid --context '${context}': no task of the suite offers it`);
  return kept;
}
