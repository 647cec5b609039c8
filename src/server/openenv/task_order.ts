import { createHash, randomInt } from 'node:crypto';

/**
 * The order in which an OpenEnv session's resets without a task_id take a suite's tasks: the
 * ids sorted by SHA-256 of `<seed>:<id>`. The same seed gives the same order on every server
 * and run, and a task added to the suite leaves the others' relative order as it was.
 */
export function seededOrder(ids: readonly string[], seed: number): string[] {
  const key = (id: string) => createHash('sha256').update(`${seed}:${id}`).digest('hex');
  return [...new Set(ids)]
    .map((id) => ({ id, k: key(id) }))
    .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
    .map((e) => e.id);
}

/** A session's walk through one suite's seeded order; the seed is the client's, or drawn when it gave none. */
export class TaskCursor {
  private index = 0;

  private constructor(
    readonly suite: string,
    readonly seed: number,
    private readonly order: string[],
  ) {}

  static start(suite: string, ids: readonly string[], seed: number = randomInt(0, 2 ** 31)): TaskCursor {
    return new TaskCursor(suite, seed, seededOrder(ids, seed));
  }

  /** The next task and its place in the order (0-based); past the end the order starts again. */
  next(): { taskId: string; index: number } {
    const index = this.index++;
    return { taskId: this.order[index % this.order.length]!, index };
  }
}
