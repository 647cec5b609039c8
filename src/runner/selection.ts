import { createHash } from 'node:crypto';
import type { Gym } from '../episode/gym.ts';
import { GymError } from '../errors.ts';
import type { Task } from '../tasks/schema.ts';

/**
 * The tasks a run covers: every task of the suite, or those listed (in the suite's order, then the listed ids the listing does not hold).
 */
export async function selectTasks(gym: Gym, suite: string, ids?: string[]): Promise<Task[]> {
  const all = await gym.registry.tasks(suite);
  if (!ids?.length) return all;
  // Ids the listing does not hold may name a task with options (Suite.resolveTask).
  const extra = await Promise.all(
    ids.filter((id) => !all.some((t) => t.id === id)).map((id) => gym.registry.task(suite, id).catch(() => id)),
  );
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
  const has = (t: Task) => t.defaultContext === context || Object.hasOwn(t.contexts, context);
  const missing = tasks.filter((t) => !has(t));
  if (listed && missing.length)
    throw new GymError(
      'INVALID_ARGUMENT',
      `invalid --context '${context}': task${missing.length > 1 ? 's' : ''} ` +
        `${missing.map((t) => `'${t.id}'`).join(', ')} do${missing.length > 1 ? '' : 'es'} not offer it`,
    );
  const kept = tasks.filter(has);
  if (!kept.length) throw new GymError('INVALID_ARGUMENT', `invalid --context '${context}': no task of the suite offers it`);
  return kept;
}

/** How a run narrows its tasks after `--tasks` / `--context`: a seeded shuffle, then the first `limit`. */
export interface TaskSampling {
  limit?: number;
  /** Any string: the same seed gives the same order on every machine and every resume. */
  shuffle?: string;
}

/**
 * The tasks a run samples: with `shuffle`, ordered by a hash of the seed and each task id (so a
 * seed always picks the same tasks, and adding a task to the suite never reorders the others);
 * then the first `limit` of them.
 *
 * @example
 * sampleTasks(tasks, { shuffle: '7', limit: 20 }); // the same 20 tasks every time
 */
export function sampleTasks(tasks: Task[], sampling: TaskSampling = {}): Task[] {
  const { limit, shuffle } = sampling;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1))
    throw new GymError('INVALID_ARGUMENT', `limit must be a whole number >= 1 (got ${limit})`);
  let out = tasks;
  if (shuffle !== undefined) {
    const rank = new Map(tasks.map((t) => [t.id, createHash('sha256').update(`${shuffle}\u0000${t.id}`).digest('hex')]));
    out = [...tasks].sort((a, b) => (rank.get(a.id)! < rank.get(b.id)! ? -1 : rank.get(a.id)! > rank.get(b.id)! ? 1 : 0));
  }
  return limit !== undefined ? out.slice(0, limit) : out;
}
