import type Docker from 'dockerode';
import type { ExecutorClient } from '../executor/client.ts';

/** What a pool keeps: a started sandbox, with its executor when it has one (a dead one is never handed out). */
export interface Pooled {
  executor?: ExecutorClient | null;
}

export interface PooledContainer extends Pooled {
  container: Docker.Container;
  volume: string;
  /** Its executor, already running: an episode taken from the pool starts without another exec. */
  executor?: ExecutorClient | null;
}

/**
 * Started containers (or pods: any Pooled) kept ready per hot image, so starting an episode is
 * taking one. Refilled in the background after each take; bounded by the factory's container budget.
 */
export class WarmPool<T extends Pooled = PooledContainer> {
  private readonly ready = new Map<string, T[]>();
  private readonly filling = new Map<string, Promise<void>>();
  private closed = false;

  constructor(
    readonly perImage: number,
    private readonly start: (image: string) => Promise<T>,
    private readonly remove: (c: T) => Promise<void>,
  ) {}

  get size(): number {
    let n = 0;
    for (const list of this.ready.values()) n += list.length;
    return n;
  }

  /** A ready container, skipping (and removing) any whose executor has died while it waited. */
  take(image: string): T | undefined {
    const list = this.ready.get(image);
    for (let c = list?.shift(); c; c = list?.shift()) {
      if (!c.executor?.closedReason) return c;
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
            list.push(await this.start(image));
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
    await Promise.all([...this.filling.values()]);
    const all = [...this.ready.values()].flatMap((l) => l.splice(0));
    await Promise.all(all.map((c) => this.remove(c)));
  }
}
