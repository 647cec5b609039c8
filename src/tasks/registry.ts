import { existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { GymError } from '../errors.ts';
import type { EpisodeTool } from '../tools/types.ts';
import { loadDirectorySuite } from './directory_suite.ts';
import { publicTaskInfo, type Task } from './schema.ts';
import type { ContextWork, Suite } from './suite.ts';

export type { ContextWork, Suite } from './suite.ts';

export interface SuiteInfo {
  id: string;
  description: string;
  dataset?: string;
  taskCount: number;
}

export { PROJECT_ROOT } from '../project.ts';

/** What a directory suite's tasks carry in metadata: whatever their task.json says. */
const AnyMetadata = z.record(z.string(), z.unknown());

/**
 * A suite of directories in the examples layout (docs/ARCHITECTURE.md#directory-suites), at a
 * fixed path or at the dataset path given with `--suite ID=PATH`.
 */
export function directorySuite(id: string, description: string, defaultRoot?: string, extra: Pick<Suite, 'tools'> = {}): Suite {
  const rootOf = (dataset?: string) => {
    const root = dataset ?? defaultRoot;
    if (!root) throw new GymError('INVALID_ARGUMENT', `suite '${id}' needs a path: --suite ${id}=PATH`);
    return path.resolve(root);
  };
  return {
    id,
    description,
    metadata: AnyMetadata,
    load: (dataset) => loadDirectorySuite(rootOf(dataset), id),
    privatePaths: (dataset) => [rootOf(dataset)],
    ...extra,
  };
}

/** Loads suites by id, once each, and finds tasks in them. */
export class SuiteRegistry {
  private readonly definitions = new Map<string, Suite>();
  private readonly enabled = new Map<string, string | undefined>();
  private readonly loaded = new Map<string, Promise<Task[]>>();

  /** The suites this registry knows (the composition root's); `enable` chooses which are served. */
  constructor(definitions: readonly Suite[]) {
    for (const def of definitions) {
      if (this.definitions.has(def.id)) throw new GymError('INVALID_ARGUMENT', `two suites are registered as '${def.id}'`);
      this.definitions.set(def.id, def);
    }
  }

  /** Enables a suite: `examples`, `mysuite=/data/set`, or `mine=/path/to/directory-suite`. */
  enable(spec: string): void {
    const eq = spec.indexOf('=');
    const id = eq < 0 ? spec : spec.slice(0, eq);
    const dataset = eq < 0 ? undefined : path.resolve(spec.slice(eq + 1));
    if (!this.definitions.has(id)) {
      if (!dataset)
        throw new GymError(
          'SUITE_NOT_FOUND',
          `unknown suite '${id}' (known: ${[...this.definitions.keys()].join(', ')}); give a directory suite as ${id}=PATH`,
        );
      if (!existsSync(dataset)) throw new GymError('SUITE_NOT_FOUND', `suite path ${dataset} does not exist`);
      this.definitions.set(id, directorySuite(id, `directory suite at ${dataset}`));
    }
    this.enabled.set(id, dataset);
    this.loaded.delete(id);
  }

  /** The suite tools use when none is named: the first one enabled. */
  defaultSuite(): string {
    const first = this.suiteIds()[0];
    if (!first) throw new GymError('SUITE_NOT_FOUND', 'this server serves no suite');
    return first;
  }

  suiteIds(): string[] {
    return [...this.enabled.keys()];
  }

  /** The Suite object of a known suite id (served or not), or undefined. */
  suite(id: string): Suite | undefined {
    return this.definitions.get(id);
  }

  /** The served suites' objects, in the order they were enabled. */
  servedSuites(): Suite[] {
    return this.suiteIds().map((id) => this.definition(id));
  }

  /** The episode tools a suite adds to the core ones (none for an unknown id). */
  toolsOf(suiteId: string): readonly EpisodeTool[] {
    return this.definitions.get(suiteId)?.tools ?? [];
  }

  /** What agents may see of a task: publicTaskInfo without the suite's private metadata keys. */
  publicTaskInfo(task: Task): Record<string, unknown> {
    return publicTaskInfo(task, this.definitions.get(task.suite)?.privateMetadata ?? []);
  }

  private definition(id: string): Suite {
    const def = this.definitions.get(id);
    if (!def || !this.enabled.has(id)) {
      throw new GymError('SUITE_NOT_FOUND', `suite '${id}' is not served (served: ${this.suiteIds().join(', ') || 'none'})`);
    }
    return def;
  }

  /** The suite's own scorer, if it has one (else the generic scorePatch applies). */
  scorerOf(suiteId: string): Suite['score'] {
    const def = this.definitions.get(suiteId);
    return def?.score?.bind(def);
  }

  /** Whether the suite's scorer gives the untouched start state one verdict in both scoring modes (Suite.scoringModeIndependent). */
  scoringModeIndependent(suiteId: string): boolean {
    return this.definitions.get(suiteId)?.scoringModeIndependent === true;
  }

  async tasks(suiteId: string): Promise<Task[]> {
    const def = this.definition(suiteId);
    let pending = this.loaded.get(suiteId);
    if (!pending) {
      pending = def.load(this.enabled.get(suiteId)).then((tasks) => checkMetadata(def, tasks));
      this.loaded.set(suiteId, pending);
      pending.catch(() => this.loaded.delete(suiteId));
    }
    return pending;
  }

  async task(suiteId: string, taskId: string): Promise<Task> {
    const tasks = await this.tasks(suiteId);
    const def = this.definition(suiteId);
    const resolved = tasks.find((t) => t.id === taskId) ?? (await def.resolveTask?.(taskId, this.enabled.get(suiteId)));
    const task = resolved && checkMetadata(def, [resolved])[0];
    if (!task) {
      const near = tasks
        .map((t) => t.id)
        .filter((id) => id.includes(taskId) || taskId.includes(id))
        .slice(0, 5);
      throw new GymError(
        'TASK_NOT_FOUND',
        `no task '${taskId}' in suite '${suiteId}'${near.length ? ` (did you mean ${near.join(', ')}?)` : ''}`,
      );
    }
    return task;
  }

  async list(): Promise<SuiteInfo[]> {
    return Promise.all(
      this.suiteIds().map(async (id) => {
        const def = this.definition(id);
        const dataset = this.enabled.get(id);
        return { id, description: def.description, ...(dataset ? { dataset } : {}), taskCount: (await this.tasks(id)).length };
      }),
    );
  }

  /** The suite's mapping of work in another context onto the task's start state (see Suite.contextPatch). */
  async contextPatch(task: Task, context: string, work: ContextWork): Promise<{ patch: string; note?: string } | null> {
    const def = this.definitions.get(task.suite);
    return def?.contextPatch ? def.contextPatch(task, context, work) : null;
  }

  /** Every host path a sandbox must hide: where hidden tests and solutions live. */
  privatePaths(): string[] {
    return this.suiteIds().flatMap((id) => this.definition(id).privatePaths(this.enabled.get(id)));
  }
}

/** A suite's tasks, each checked against the suite's metadata schema: a renamed key fails here, named. */
function checkMetadata(suite: Suite, tasks: Task[]): Task[] {
  for (const task of tasks) {
    const parsed = suite.metadata.safeParse(task.metadata);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `metadata.${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      throw new GymError(
        'TASK_INVALID',
        `task '${task.id}' of suite '${suite.id}' does not carry the metadata the suite declares: ${issues}`,
      );
    }
  }
  return tasks;
}
