import { GymError } from '../errors.ts';

export interface SessionLimits {
  /** A session with no request for this long (and none running) is closed. */
  idleMs: number;
  /** Sessions open at once; a new one past this is refused with CAPACITY. */
  max: number;
  /**
   * New sessions per second in the long run (a token bucket): a flood of
   * initialize requests costs the server CPU every other episode needs.
   */
  newPerSecond?: number;
  /** New sessions allowed at once before the rate applies (a runner starting its agents together). */
  burst?: number;
}

/** 30 minutes, as an episode's idle TTL; 512 sessions hold about 80 MB; 20 new a second after a burst of 64. */
export const SESSION_DEFAULTS: Required<SessionLimits> = { idleMs: 30 * 60_000, max: 512, newPerSecond: 20, burst: 64 };

interface Entry<T> {
  value: T;
  lastActiveAt: number;
  busy: number;
}

/**
 * The MCP sessions of one endpoint: clients that never close theirs would otherwise keep
 * an McpServer each forever. Idle ones are closed by a sweep; past `max`, `reserve` refuses.
 */
export class SessionTable<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly sweeper: NodeJS.Timeout;
  private pending = 0;
  private tokens: number;
  private refilledAt = Date.now();

  constructor(
    readonly limits: SessionLimits,
    private readonly closeOne: (value: T) => Promise<void> | void,
    private readonly what = 'MCP sessions',
  ) {
    this.tokens = this.burst;
    this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.min(30_000, Math.ceil(limits.idleMs / 2)))).unref();
  }

  get size(): number {
    return this.entries.size;
  }

  private get burst(): number {
    return this.limits.burst ?? SESSION_DEFAULTS.burst;
  }

  /** Why a new session would be refused now (the rate, then the cap), or undefined; takes nothing. */
  refusal(now = Date.now()): GymError | undefined {
    const rate = this.limits.newPerSecond ?? SESSION_DEFAULTS.newPerSecond;
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) / 1000) * rate);
    this.refilledAt = Math.max(this.refilledAt, now);
    if (this.tokens < 1) {
      return new GymError(
        'CAPACITY',
        `too many new ${this.what}: at most ${rate} a second after a burst ` +
          `of ${this.burst}; retry in ${Math.ceil(((1 - this.tokens) / rate) * 1000)} ms`,
        {
          newPerSecond: rate,
          burst: this.burst,
        },
      );
    }
    if (this.entries.size + this.pending >= this.limits.max) {
      return new GymError(
        'CAPACITY',
        `${this.entries.size} ${this.what} are open, the most this server allows ` +
          `(${this.limits.max}); close one (an MCP client's close(), or DELETE with its Mcp-Session-Id) ` +
          `or wait for idle ones to expire after ${Math.round(this.limits.idleMs / 1000)} s`,
        { sessions: this.entries.size, limit: this.limits.max, idleMs: this.limits.idleMs },
      );
    }
    return undefined;
  }

  /** Room for one more session, or CAPACITY; call the returned function when it is added or given up. */
  reserve(now = Date.now()): () => void {
    const refused = this.refusal(now);
    if (refused) throw refused;
    this.tokens -= 1;
    this.pending++;
    let released = false;
    return () => {
      if (!released) this.pending--;
      released = true;
    };
  }

  add(id: string, value: T): void {
    this.entries.set(id, { value, lastActiveAt: Date.now(), busy: 0 });
  }

  get(id: string): T | undefined {
    return this.entries.get(id)?.value;
  }

  delete(id: string): void {
    this.entries.delete(id);
  }

  /** Marks a request of the session as running; the returned function marks it done. */
  begin(id: string): () => void {
    const entry = this.entries.get(id);
    if (!entry) return () => {};
    entry.busy++;
    entry.lastActiveAt = Date.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      entry.busy--;
      entry.lastActiveAt = Date.now();
    };
  }

  /** Closes sessions idle past the limit; a session with a request running is never idle. */
  sweep(now = Date.now()): void {
    for (const [id, entry] of this.entries) {
      if (entry.busy > 0 || now - entry.lastActiveAt < this.limits.idleMs) continue;
      this.entries.delete(id);
      void Promise.resolve()
        .then(() => this.closeOne(entry.value))
        .catch(() => {});
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(
      all.map((e) =>
        Promise.resolve()
          .then(() => this.closeOne(e.value))
          .catch(() => {}),
      ),
    );
  }
}
