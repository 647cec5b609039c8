import type { ExecutorClient } from '../executor/client.ts';

/** What a pool keeps: a started sandbox with its executor (one whose executor died is never handed out). */
export interface Pooled {
  executor: ExecutorClient;
}

/** How long a started container may wait in the pool unused before it is removed. */
export const DEFAULT_POOL_IDLE_MS = 10 * 60_000;

/**
 * Started containers (or pods: any Pooled) kept ready per hot image, so starting an episode is
 * taking one. Refilled in the background after each take; bounded by the factory's container budget.
 * A container unused for `idleMs` is removed (a batch run over many images, each used once, would
 * otherwise keep one per image until the budget evicts it); the image's next take starts fresh.
 */
export class WarmPool<T extends Pooled = Pooled> {
  private readonly ready = new Map<string, T[]>();
  private readonly filling = new Map<string, Promise<void>>();
  private readonly since = new WeakMap<T, number>();
  private sweeper?: NodeJS.Timeout;
  private closed = false;

  constructor(
    readonly perImage: number,
    private readonly start: (image: string) => Promise<T>,
    private readonly remove: (c: T) => Promise<void>,
    readonly idleMs = DEFAULT_POOL_IDLE_MS,
  ) {}

  get size(): number {
    let n = 0;
    for (const list of this.ready.values()) n += list.length;
    return n;
  }

  /** Images whose pool is being topped up now. */
  get refilling(): number {
    return this.filling.size;
  }

  /** A ready container, skipping (and removing) any whose executor has died while it waited. */
  take(image: string): T | undefined {
    const list = this.ready.get(image);
    for (let c = list?.shift(); c; c = list?.shift()) {
      if (!c.executor.closedReason) return c;
      void this.remove(c);
    }
    return undefined;
  }

  /** Tops the image's pool up to `perImage` in the background. */
  refill(image: string): Promise<void> {
    if (this.perImage <= 0 || this.closed) return Promise.resolve();
    let p = this.filling.get(image);
    if (!p) {
      p = (async () => {
        const list = this.ready.get(image) ?? [];
        this.ready.set(image, list);
        while (!this.closed && list.length < this.perImage) {
          try {
            const c = await this.start(image);
            this.since.set(c, Date.now());
            list.push(c);
            this.sweepLater();
          } catch {
            break;
          }
        }
        if (this.closed) await Promise.all(list.splice(0).map((c) => this.remove(c)));
      })().finally(() => this.filling.delete(image));
      this.filling.set(image, p);
    }
    return p;
  }

  /** Removes the containers that have waited longer than `idleMs`; returns how many. */
  async sweep(now = Date.now()): Promise<number> {
    const stale: T[] = [];
    // In place: a refill in progress holds the same list.
    for (const list of this.ready.values()) {
      for (let i = list.length - 1; i >= 0; i--)
        if (now - (this.since.get(list[i]!) ?? now) >= this.idleMs) stale.push(...list.splice(i, 1));
    }
    await Promise.all(stale.map((c) => this.remove(c)));
    return stale.length;
  }

  /** One unref'd timer while anything waits: it never keeps the process alive. */
  private sweepLater(): void {
    if (this.sweeper || this.closed) return;
    this.sweeper = setTimeout(
      () => {
        this.sweeper = undefined;
        void this.sweep().finally(() => {
          if (this.size > 0) this.sweepLater();
        });
      },
      Math.max(1000, Math.min(this.idleMs / 2, 60_000)),
    );
    this.sweeper.unref();
  }

  /** Waits until the image's pool is full (tests, benchmarks, warm-up). */
  async warm(image: string): Promise<void> {
    await this.refill(image);
  }

  async evictOne(): Promise<void> {
    for (const list of this.ready.values()) {
      const c = list.shift();
      if (c) return this.remove(c);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.sweeper);
    await Promise.all([...this.filling.values()]);
    const all = [...this.ready.values()].flatMap((l) => l.splice(0));
    await Promise.all(all.map((c) => this.remove(c)));
  }
}
