/**
 * The suite contract: everything the core knows of a benchmark. A suite (`envs/<name>/`)
 * implements it in full and is registered by the composition root (`bin/builtins.ts`); the core
 * never imports a suite. Adding a suite is writing one of these (docs/ARCHITECTURE.md#adding-a-suite).
 */
import type { z } from 'zod';
import { GymError } from '../errors.ts';
import type { CliCommand } from '../cli/command.ts';
import type { ReplayAdapter } from '../replay/adapter.ts';
import type { ReportSection } from '../runner/report/section.ts';
import type { ScoreDeps, ScoreOptions } from '../scoring/scorer.ts';
import type { Verdict } from '../scoring/verdict.ts';
import type { EpisodeTool } from '../tools/types.ts';
import type { Task } from './schema.ts';

export interface Suite {
  id: string;
  description: string;
  /**
   * What the suite's tasks carry in `task.metadata`. Every loaded task is checked against it
   * (a renamed key fails at load, naming the key), and the suite's own code reads metadata only
   * through it (`suiteMetadata`). Loose objects: keys not named are kept as they are.
   */
  metadata: z.ZodType<Record<string, unknown>>;
  /** Metadata keys agents never see (listings, start_episode, the agent's task): e.g. names the reference solution uses. */
  privateMetadata?: readonly string[];
  /** Reads the suite's tasks; `dataset` is the path given with `--suite ID=PATH`, if any. */
  load(dataset?: string): Promise<Task[]>;
  /** Host paths holding hidden tests or solutions: sandboxes hide them from agents. */
  privatePaths(dataset?: string): string[];
  /**
   * A task the listing does not hold: the same task with options in its id (`<id>+human-label`,
   * say). Undefined when the id means nothing to the suite.
   */
  resolveTask?(taskId: string, dataset?: string): Promise<Task | undefined>;
  /** The suite's own scorer, when the generic `scorePatch` is not how its benchmark scores (SWE-bench). */
  score?(task: Task, patch: string, deps: ScoreDeps, opts: ScoreOptions): Promise<Verdict>;
  /**
   * True when `score` reaches the same verdict on the untouched start state (the empty patch)
   * in both scoring modes: its checks are the benchmark harness's own plus tamper checks it
   * runs in either mode, and the modes differ only in what they make of files a diff carries
   * (SWE-bench: strict refuses what faithful removes). `validate` then scores the untouched
   * start state once, not once per mode (for a Maven repository that is one whole build less
   * per task).
   */
  scoringModeIndependent?: boolean;
  /**
   * Maps work done in another start state (`task.contexts[context]`) onto the task's own
   * start state, as a patch to score; null to score the diff against the context's state.
   */
  contextPatch?(task: Task, context: string, work: ContextWork): Promise<{ patch: string; note?: string } | null>;
  /** Episode tools only this suite's episodes offer (version-correct library docs, retrieval). */
  tools?: readonly EpisodeTool[];
  /** How `benchgym score --suite <id>` replays a file of published model outputs. */
  replay?: ReplayAdapter;
  /**
   * Facts the runner records in each result of this suite's tasks besides the verdict, from the
   * episode's final diff (which names of the reference the sample's code uses, for a metric).
   * Keys must not be a result's own (task, sample, status, ...).
   */
  annotateResult?(task: Task, outcome: { diff: string | undefined }): Record<string, unknown> | undefined;
  /** Sections the report adds for runs of this suite (a benchmark's own tables). */
  reportSections?: readonly ReportSection[];
  /** Commands the CLI adds for this suite (a task builder, say). */
  commands?: readonly CliCommand[];
}

/** What an episode in another context leaves: its diff, and its files. */
export interface ContextWork {
  diff: string;
  /** A workspace file's text, or null when it does not exist. */
  read(rel: string): Promise<string | null>;
}

/**
 * A task's metadata read through its suite's schema: typed, and a clear TASK_INVALID naming the
 * key when the task does not carry what the suite expects.
 *
 * @example
 * const { importName } = suiteMetadata(MySuiteMetadata, episode.task);
 */
export function suiteMetadata<S extends z.ZodType>(schema: S, task: Pick<Task, 'id' | 'suite' | 'metadata'>): z.infer<S> {
  const parsed = schema.safeParse(task.metadata);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `metadata.${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
  throw new GymError('TASK_INVALID', `task '${task.id}' of suite '${task.suite}' has invalid metadata: ${issues}`);
}
