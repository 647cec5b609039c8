/** Options of a worker pool. */
export interface WorkerPoolOptions {
  /** Once aborted, no worker takes another item; the pool resolves when the items in flight end. */
  signal?: AbortSignal;
}

/**
 * Runs `work` over `items` with `concurrency` workers taking items in input order. The first
 * error stops the workers from taking more; it is thrown once the items in flight have ended.
 * An abort stops the taking too, without an error: the caller tells from its signal.
 *
 * @example
 * await workerPool(tasks, 4, async (task, i) => { results[i] = await validateTask(gym, task); });
 */
export async function workerPool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
  opts: WorkerPoolOptions = {},
): Promise<void> {
  let next = 0;
  let failed: { err: unknown } | undefined;
  const worker = async () => {
    while (!failed && !opts.signal?.aborted && next < items.length) {
      const index = next++;
      try {
        await work(items[index]!, index);
      } catch (err) {
        failed ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, concurrency), items.length) }, worker));
  if (failed) throw failed.err;
}
