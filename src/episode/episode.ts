import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PreparedEnv } from '../env/types.ts';
import type { Sandbox } from '../sandbox/types.ts';
import type { TestRun } from '../scoring/runners.ts';
import type { Verdict } from '../scoring/verdict.ts';
import type { Task } from '../tasks/schema.ts';
import type { Trajectory } from './trajectory.ts';

/** What the Gym does for an episode that tools cannot do alone. */
export interface EpisodeLifecycle {
  submit(episode: Episode, ctx: { signal: AbortSignal; progress(p: number, total?: number, message?: string): void }): Promise<Verdict>;
  end(episode: Episode): Promise<void>;
  fork(episode: Episode): Promise<Episode>;
}

/** A sandbox failure met by a tool call after the agent's code could run in the sandbox. */
export interface SandboxFailure {
  code: string;
  message: string;
  /** The tool call that met it, and its step. */
  tool: string;
  step: number;
}

export type EpisodeState = 'running' | 'submitted' | 'ended' | 'expired';

export interface EpisodeBudgets {
  maxSteps: number;
  /** Epoch milliseconds after which only submit / get_diff / end_episode are allowed. */
  deadline: number;
}

/**
 * One task being worked on: its sandbox, budgets, edit history and trajectory. Tools read
 * and change it; the Gym owns its life cycle.
 */
export class Episode {
  state: EpisodeState = 'running';
  steps = 0;
  readonly createdAt = Date.now();
  lastActiveAt = Date.now();
  /** Earlier contents per file, newest last (null: the file did not exist). */
  readonly editHistory = new Map<string, (Buffer | null)[]>();
  lastTestRun?: TestRun & { at: string };
  verdict?: Verdict;
  finalDiff?: string;
  /** A tool that runs code the agent can shape (EpisodeTool.runsCode) was called: the sandbox's failures may be its doing from then on. */
  codeRan = false;
  /**
   * The first SANDBOX_UNAVAILABLE of a tool call once the agent's code could run (the runner counts it against the agent when it recurs).
   */
  sandboxFailure?: SandboxFailure;
  /** The start state the episode runs in (the task's own, `task.defaultContext`, unless another was chosen). */
  context: string;
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * The episode's capability: only who started (or forked) it learns it. A private field, so no JSON or inspect of the episode shows it.
   */
  readonly #key = randomBytes(24).toString('base64url');

  constructor(
    readonly id: string,
    readonly task: Task,
    readonly sandbox: Sandbox,
    readonly env: PreparedEnv,
    readonly budgets: EpisodeBudgets,
    readonly trajectory: Trajectory,
    readonly prompt: string,
    readonly lifecycle: EpisodeLifecycle,
  ) {
    this.context = task.defaultContext;
  }

  get sandboxFacts(): { backend: string; workdir: string; isolation: string } {
    return { backend: this.sandbox.backend, workdir: this.sandbox.workdir, isolation: this.sandbox.isolation };
  }

  /** The unguessable key of the episode's own endpoints (`/episodes/<id>/<key>/...`); never logged or recorded. */
  get key(): string {
    return this.#key;
  }

  /** Whether `given` is this episode's key, compared in constant time. */
  keyMatches(given: string): boolean {
    return digestsEqual(given, this.#key);
  }

  /** Calls run one at a time, so an edit never interleaves with a test run. */
  serialize<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => {});
    return next;
  }

  /** Remembers a file's content before a change, for undo_edit. */
  rememberBefore(rel: string, content: Buffer | null): void {
    const stack = this.editHistory.get(rel) ?? [];
    stack.push(content);
    if (stack.length > 50) stack.shift();
    this.editHistory.set(rel, stack);
  }
}

/** Compares two strings in time that depends on neither (their SHA-256 digests have one length). */
export function digestsEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
