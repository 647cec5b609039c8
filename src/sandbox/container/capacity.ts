import { GymError } from '../../errors.ts';
import type { WarmPool } from './pool.ts';

/**
 * How many containers one factory may have alive at once (episodes, scorers and the warm
 * pool together): a request past the bound evicts a pooled container first, then waits for
 * a slot, then fails with CAPACITY.
 */
export class ContainerCapacity {
  private inUse = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly max: number,
    private readonly waitMs: number,
    private readonly pool: WarmPool,
  ) {}

  get slotsInUse(): number {
    return this.inUse;
  }

  async acquire(): Promise<void> {
    const deadline = Date.now() + this.waitMs;
    while (this.inUse + this.pool.size >= this.max) {
      if (this.pool.size > 0) {
        await this.pool.evictOne();
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new GymError('CAPACITY', `all ${this.max} containers this server may run are in use; try again later`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    this.inUse++;
  }

  release(): void {
    this.inUse = Math.max(0, this.inUse - 1);
    this.waiters.shift()?.();
  }
}
