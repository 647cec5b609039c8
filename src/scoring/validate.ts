import type { Gym } from '../episode/gym.ts';
import { OOM_KILLED_NOTE } from '../sandbox/memory_limit.ts';
import { ENV_INCOMPLETE_NOTE } from './env_incomplete.ts';
import { FAILED_AFTER_CANDIDATE_NOTE } from './after_candidate.ts';
import { GymError, toGymError } from '../errors.ts';
import { workerPool } from '../pool.ts';
import { ownValue } from '../own.ts';
import type { Task } from '../tasks/schema.ts';
import { goldPatch } from './gold.ts';
import type { Verdict } from './verdict.ts';
import type { ScoringMode } from './mode.ts';

export interface TaskValidation {
  taskId: string;
  /** valid: gold passes and the start state fails; unavailable: the env cannot exist here. */
  status: 'valid' | 'invalid' | 'unavailable' | 'error';
  reasons: string[];
  /** The start state validated, when not the task's own (`task.contexts`): both runs went through an episode in it. */
  context?: string;
  startState?: Pick<Verdict, 'status' | 'reward' | 'notes' | 'error' | 'failToPass'>;
  /** The start state under the other scoring mode (a task must fail in both); absent when the suite's scorer ignores the mode. */
  startStateOtherMode?: Pick<Verdict, 'status' | 'reward' | 'notes' | 'error'> & { scoring: ScoringMode };
  gold?: Pick<Verdict, 'status' | 'reward' | 'notes' | 'error'>;
  durationMs: number;
}

export interface ValidateOptions {
  /**
   * Validate one of the task's other start states (HumanEvo's `ignored`): the untouched
   * context and the reference solution written into it are each submitted from an episode in
   * that context, so they are scored as an agent's work there is (the suite's contextPatch).
   */
  context?: string;
}

const brief = (v: Verdict) => ({
  status: v.status,
  reward: v.reward,
  notes: v.notes,
  ...(v.error ? { error: v.error } : {}),
  ...(v.failToPass ? { failToPass: v.failToPass } : {}),
});

/**
 * The reason a start state's verdict makes a task invalid although its reward is 0: FAIL_TO_PASS
 * tests that already pass there (SWE-bench's validation defines them as failing before the fix
 * and passing after it; one that passes before cannot fail, whatever its neighbours do).
 */
export function alreadyPassing(start: Pick<Verdict, 'failToPass'>): string | undefined {
  const passing = start.failToPass?.passed ?? [];
  if (!passing.length) return undefined;
  const list = passing.slice(0, 10).join(', ') + (passing.length > 10 ? `, and ${passing.length - 10} more` : '');
  return (
    `${passing.length} FAIL_TO_PASS test(s) already pass on the untouched start state ` +
    `(they cannot fail: FAIL_TO_PASS fail before the fix and pass after it): ${list}`
  );
}

const QUIET = { signal: new AbortController().signal, progress: () => {} };

/** How one validation scores: the start state (in a mode) and the reference solution. */
interface Runs {
  start(scoring?: ScoringMode): Promise<Verdict>;
  gold(): Promise<Verdict>;
}

/** The task's own start state: the empty patch and the gold patch, scored directly. */
function ownStartState(gym: Gym, task: Task): Runs {
  return {
    start: (scoring) => gym.score(task, '', scoring ? { scoring } : {}),
    gold: async () => gym.score(task, await goldPatch(task, gym.sandboxes)),
  };
}

/** Another start state: each run is an episode in it, submitted untouched or with the solution written in. */
function otherStartState(gym: Gym, task: Task, context: string): Runs {
  const submitted = async (solution: Task['solution'] | undefined, scoring?: ScoringMode): Promise<Verdict> => {
    const episode = await gym.startEpisode({ suite: task.suite, taskId: task.id, context });
    try {
      const files = solution?.files ?? {};
      for (const [rel, content] of Object.entries(files)) await episode.sandbox.writeFile(rel, content);
      if (!Object.keys(files).length && solution?.patch) {
        const applied = await episode.sandbox.applyPatch(solution.patch);
        if (!applied.ok)
          throw new GymError(
            'PATCH_APPLY_FAILED',
            `the reference patch does not apply in the '${context}' start state: ${applied.refused ?? applied.log.slice(0, 2000)}`,
          );
      }
      return await gym.submit(episode, QUIET, scoring ? { scoring } : {});
    } finally {
      await gym.endEpisode(episode).catch(() => {});
    }
  };
  return {
    start: (scoring) => submitted(undefined, scoring),
    gold: () => {
      // The reference as it is written in that start state, when the suite gives one (the target moved since, say).
      const solution = ownValue(task.contexts, context)?.solution ?? task.solution;
      if (!solution || (!Object.keys(solution.files ?? {}).length && !solution.patch))
        throw new GymError('TASK_INVALID', `task '${task.id}' has no reference solution`);
      return submitted(solution);
    },
  };
}

/**
 * A task is valid when its reference solution scores 1 and its untouched start state scores 0,
 * with none of its FAIL_TO_PASS tests passing there, in the gym's scoring mode and, for the
 * start state, in the other mode too: a start state
 * that passes either way (a check that cannot fail, or a stub the benchmark's own harness
 * counts as a pass) means a pass cannot tell a solution from none. With `context`, the same
 * in that start state of the task.
 */
export async function validateTask(gym: Gym, task: Task, opts: ValidateOptions = {}): Promise<TaskValidation> {
  const started = Date.now();
  const reasons: string[] = [];
  const context = opts.context && opts.context !== task.defaultContext ? opts.context : undefined;
  const tag = context ? { context } : {};
  try {
    if (context && !ownValue(task.contexts, context))
      throw new GymError(
        'INVALID_ARGUMENT',
        `task '${task.id}' has no '${context}' start state (it has ${[task.defaultContext, ...Object.keys(task.contexts)].join(', ')})`,
      );
    const runs = context ? otherStartState(gym, task, context) : ownStartState(gym, task);
    const start = await runs.start();
    const otherMode: ScoringMode = gym.scoring === 'strict' ? 'faithful' : 'strict';
    // A scorer that ignores the mode would only repeat the first run (a whole Maven build for SWE-bench).
    const sameInBoth = gym.registry.scoringModeIndependent(task.suite);
    const startOther = start.status !== 'error' && start.reward === 0 && !sameInBoth ? await runs.start(otherMode) : undefined;
    const gold = await runs.gold();
    const other = startOther && startOther.status !== 'error' ? { startStateOtherMode: { ...brief(startOther), scoring: otherMode } } : {};
    for (const [label, v] of [
      ['start state', start],
      ['gold', gold],
    ] as const) {
      if (v.status === 'error') {
        const unavailable = v.error?.code === 'ENV_UNAVAILABLE';
        return {
          taskId: task.id,
          ...tag,
          status: unavailable ? 'unavailable' : 'error',
          reasons: [`${label}: ${v.error?.code}: ${v.error?.message}`],
          startState: brief(start),
          gold: brief(gold),
          durationMs: Date.now() - started,
        };
      }
    }
    // The harness failed twice once the code ran (strict counts that against a
    // candidate): for the reference or the start state it proves nothing of the task.
    for (const [label, v] of [
      ['gold', gold],
      ['start state', start],
    ] as const) {
      const twice = v.notes.find((n) => n.startsWith(`${FAILED_AFTER_CANDIDATE_NOTE}:`));
      if (!twice) continue;
      const reasons = [`${label}: ${twice}: an infrastructure reason, not an invalid task`];
      return {
        taskId: task.id,
        ...tag,
        status: 'error',
        reasons,
        startState: brief(start),
        gold: brief(gold),
        durationMs: Date.now() - started,
      };
    }
    // The reference killed by the sandbox's memory limit: the machine's failure, not the task's.
    const goldOom = gold.reward !== 1 ? gold.notes.find((n) => n.startsWith(`${OOM_KILLED_NOTE}:`)) : undefined;
    if (goldOom)
      return {
        taskId: task.id,
        ...tag,
        status: 'error',
        reasons: [`gold: ${goldOom}: an infrastructure reason (give the task's sandbox more memory), not an invalid task`],
        startState: brief(start),
        gold: brief(gold),
        durationMs: Date.now() - started,
      };
    // The env lacks what the gold or the untouched start state needs: the env's failure, not the task's.
    for (const [label, v] of [
      ['gold', gold],
      ['start state', start],
    ] as const) {
      const incomplete = v.notes.find((n) => n.startsWith(`${ENV_INCOMPLETE_NOTE}:`));
      if (incomplete)
        return {
          taskId: task.id,
          ...tag,
          status: 'error',
          reasons: [`${label}: ${incomplete}: an infrastructure reason (the env's warm-up did not resolve it), not an invalid task`],
          startState: brief(start),
          gold: brief(gold),
          durationMs: Date.now() - started,
        };
    }
    if (gold.reward !== 1)
      reasons.push(
        `the gold solution fails: ${
          gold.tests
            .filter((t) => t.status !== 'passed' && t.status !== 'skipped')
            .map((t) => t.name)
            .slice(0, 10)
            .join(', ') || gold.notes.join('; ')
        }`,
      );
    if (start.reward !== 0)
      reasons.push(
        `the untouched start state already passes the hidden tests (${gym.scoring} scoring): a pass cannot tell a solution from none`,
      );
    else if (alreadyPassing(start)) reasons.push(alreadyPassing(start)!);
    else if (startOther?.reward === 1)
      reasons.push(
        `the untouched start state passes the hidden tests under ${otherMode} ` +
          `scoring${otherMode === 'faithful' ? " (the benchmark's own harness)" : ''}: a pass cannot tell a solution from none`,
      );
    return {
      taskId: task.id,
      ...tag,
      status: reasons.length ? 'invalid' : 'valid',
      reasons,
      startState: brief(start),
      ...other,
      gold: brief(gold),
      durationMs: Date.now() - started,
    };
  } catch (err) {
    const e = toGymError(err);
    return {
      taskId: task.id,
      ...tag,
      status: e.code === 'ENV_UNAVAILABLE' ? 'unavailable' : 'error',
      reasons: [`${e.code}: ${e.message}`],
      durationMs: Date.now() - started,
    };
  }
}

/** Validates tasks with bounded concurrency, in input order. */
export async function validateTasks(
  gym: Gym,
  tasks: Task[],
  concurrency = 2,
  onDone?: (v: TaskValidation) => void,
  opts: ValidateOptions = {},
): Promise<TaskValidation[]> {
  const results: TaskValidation[] = new Array(tasks.length);
  await workerPool(tasks, concurrency, async (task, i) => {
    results[i] = await validateTask(gym, task, opts);
    onDone?.(results[i]!);
  });
  return results;
}
