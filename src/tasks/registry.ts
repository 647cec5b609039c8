import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GymError } from '../errors.ts';
import type { Task } from './schema.ts';
import { loadDirectorySuite } from './dirSuite.ts';
import { gitchameleonSuite } from '../../envs/gitchameleon/index.ts';
import { coderevalSuite } from '../../envs/codereval/index.ts';
import { swebenchSuite } from '../../envs/swebench/index.ts';
import type { ScoreDeps, ScoreOptions } from '../scoring/scorer.ts';
import type { Verdict } from '../scoring/verdict.ts';
import { humanevoSuite } from '../../envs/humanevo/index.ts';

/** How a suite is found and read. Adapters (envs/<name>) provide one of these. */
export interface SuiteDefinition {
  id: string;
  description: string;
  /** Reads the suite's tasks; `dataset` is the path given with `--suite ID=PATH`, if any. */
  load(dataset?: string): Promise<Task[]>;
  /** Host paths holding hidden tests or solutions: sandboxes hide them from agents. */
  privatePaths(dataset?: string): string[];
  /**
   * A task the listing does not hold: the same task with options in its id (CoderEval's
   * `<id>+human-label`, say). Undefined when the id means nothing to the suite.
   */
  resolveTask?(taskId: string, dataset?: string): Promise<Task | undefined>;
  /** The suite's own scorer, when the generic `scorePatch` is not how its benchmark scores (SWE-bench). */
  score?(task: Task, patch: string, deps: ScoreDeps, opts: ScoreOptions): Promise<Verdict>;
  /**
   * Maps work done in another start state (`task.contexts[context]`) onto the task's own
   * start state, as a patch to score; null to score the diff against the context's state.
   */
  contextPatch?(task: Task, context: string, work: ContextWork): Promise<{ patch: string; note?: string } | null>;
}

/** What an episode in another context leaves: its diff, and its files. */
export interface ContextWork {
  diff: string;
  /** A workspace file's text, or null when it does not exist. */
  read(rel: string): Promise<string | null>;
}

export interface SuiteInfo {
  id: string;
  description: string;
  dataset?: string;
  taskCount: number;
}

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const EXAMPLES_DIR = path.join(PROJECT_ROOT, 'envs', 'examples');

/** A suite of directories in the examples layout, at a fixed path or at the given dataset path. */
export function directorySuite(id: string, description: string, defaultRoot?: string): SuiteDefinition {
  const rootOf = (dataset?: string) => {
    const root = dataset ?? defaultRoot;
    if (!root) throw new GymError('INVALID_ARGUMENT', `suite '${id}' needs a path: --suite ${id}=PATH`);
    return path.resolve(root);
  };
  return {
    id,
    description,
    load: (dataset) => loadDirectorySuite(rootOf(dataset), id),
    privatePaths: (dataset) => [rootOf(dataset)],
  };
}

/** Options of the built-in suites that read repositories (`--repos-dir`). */
export interface BuiltinSuiteOptions {
  reposDir?: string;
}

/** The built-in suites, with repository options for those that check out repositories. */
export function builtinSuites(opts: BuiltinSuiteOptions = {}): SuiteDefinition[] {
  return [
    directorySuite('examples', 'benchgym\'s own small example suite (Python functions, a pinned package, a repo fix, Maven)', EXAMPLES_DIR),
    gitchameleonSuite(),
    coderevalSuite(),
    swebenchSuite({ ...(opts.reposDir ? { reposDir: path.resolve(opts.reposDir) } : {}) }),
    humanevoSuite({ ...(opts.reposDir ? { reposDir: path.resolve(opts.reposDir) } : {}) }),
  ];
}

export const BUILTIN_SUITES: SuiteDefinition[] = builtinSuites();

/** Loads suites by id, once each, and finds tasks in them. */
export class SuiteRegistry {
  private readonly definitions = new Map<string, SuiteDefinition>();
  private readonly enabled = new Map<string, string | undefined>();
  private readonly loaded = new Map<string, Promise<Task[]>>();

  constructor(definitions: SuiteDefinition[] = BUILTIN_SUITES) {
    for (const def of definitions) this.definitions.set(def.id, def);
  }

  /** Enables a suite: `examples`, `gitchameleon=/data/gc`, or `mine=/path/to/directory-suite`. */
  enable(spec: string): void {
    const eq = spec.indexOf('=');
    const id = eq < 0 ? spec : spec.slice(0, eq);
    const dataset = eq < 0 ? undefined : path.resolve(spec.slice(eq + 1));
    if (!this.definitions.has(id)) {
      if (!dataset) throw new GymError('SUITE_NOT_FOUND', `unknown suite '${id}' (known: ${[...this.definitions.keys()].join(', ')}); give a directory suite as ${id}=PATH`);
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

  private definition(id: string): SuiteDefinition {
    const def = this.definitions.get(id);
    if (!def || !this.enabled.has(id)) {
      throw new GymError('SUITE_NOT_FOUND', `suite '${id}' is not served (served: ${this.suiteIds().join(', ') || 'none'})`);
    }
    return def;
  }

  /** The suite's own scorer, if it has one (else the generic scorePatch applies). */
  scorerOf(suiteId: string): SuiteDefinition['score'] {
    const def = this.definitions.get(suiteId);
    return def?.score?.bind(def);
  }

  async tasks(suiteId: string): Promise<Task[]> {
    const def = this.definition(suiteId);
    let pending = this.loaded.get(suiteId);
    if (!pending) {
      pending = def.load(this.enabled.get(suiteId));
      this.loaded.set(suiteId, pending);
      pending.catch(() => this.loaded.delete(suiteId));
    }
    return pending;
  }

  async task(suiteId: string, taskId: string): Promise<Task> {
    const tasks = await this.tasks(suiteId);
    const task = tasks.find((t) => t.id === taskId) ?? (await this.definition(suiteId).resolveTask?.(taskId, this.enabled.get(suiteId)));
    if (!task) {
      const near = tasks.map((t) => t.id).filter((id) => id.includes(taskId) || taskId.includes(id)).slice(0, 5);
      throw new GymError('TASK_NOT_FOUND', `no task '${taskId}' in suite '${suiteId}'${near.length ? ` (did you mean ${near.join(', ')}?)` : ''}`);
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

  /** The suite's mapping of work in another context onto the task's start state (see SuiteDefinition.contextPatch). */
  async contextPatch(task: Task, context: string, work: ContextWork): Promise<{ patch: string; note?: string } | null> {
    const def = this.definitions.get(task.suite);
    return def?.contextPatch ? def.contextPatch(task, context, work) : null;
  }

  /** Every host path a sandbox must hide: where hidden tests and solutions live. */
  privatePaths(): string[] {
    return this.suiteIds().flatMap((id) => this.definition(id).privatePaths(this.enabled.get(id)));
  }
}
