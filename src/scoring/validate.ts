import type { Gym } from '../episode/gym.ts';
import { OOM_KILLED_NOTE } from '../sandbox/memory_limit.ts';
import { toGymError } from '../errors.ts';
import { workerPool } from '../pool.ts';
import type { Task } from '../tasks/schema.ts';
import { goldPatch } from './gold.ts';
import type { Verdict } from './verdict.ts';
import type { ScoringMode } from './mode.ts';

export interface TaskValidation {
  taskId: string;
  /** valid: gold passes and the start state fails; unavailable: the env cannot exist here. */
  status: 'valid' | 'invalid' | 'unavailable' | 'error';
  reasons: string[];
  startState?: Pick<Verdict, 'status' | 'reward' | 'notes' | 'error'>;
  /** The start state under the other scoring mode (a task must fail in both); absent when the suite's scorer ignores the mode. */
  startStateOtherMode?: Pick<Verdict, 'status' | 'reward' | 'notes' | 'error'> & { scoring: ScoringMode };
  gold?: Pick<Verdict, 'status' | 'reward' | 'notes' | 'error'>;
  durationMs: number;
}

const brief = (v: Verdict) => ({ status: v.status, reward: v.reward, notes: v.notes, ...(v.error ? { error: v.error } : {}) });

/**
 * A task is valid when its reference solution scores 1 and its untouched start state scores 0,
 * in the gym's scoring mode and, for the start state, in the other mode too: a start state
 * that passes either way (a check that cannot fail, or a stub the benchmark's own harness
 * counts as a pass) means a pass cannot tell a solution from none.
 */
export async function validateTask(gym: Gym, task: Task): Promise<TaskValidation> {
  const started = Date.now();
  const reasons: string[] = [];
  try {
    const start = await gym.score(task, '');
    const otherMode: ScoringMode = gym.scoring === 'strict' ? 'faithful' : 'strict';
    // A scorer that ignores the mode would only repeat the first run (a whole Maven build for SWE-bench).
    const sameInBoth = gym.registry.scoringModeIndependent(task.suite);
    const startOther = start.status !== 'error' && start.reward === 0 && !sameInBoth ? await gym.score(task, '', { scoring: otherMode }) : undefined;
    const gold = await gym.score(task, await goldPatch(task, gym.sandboxes));
    const other = startOther && startOther.status !== 'error' ? { startStateOtherMode: { ...brief(startOther), scoring: otherMode } } : {};
    for (const [label, v] of [['start state', start], ['gold', gold]] as const) {
      if (v.status === 'error') {
        const unavailable = v.error?.code === 'ENV_UNAVAILABLE';
        return { taskId: task.id, status: unavailable ? 'unavailable' : 'error', reasons: [`${label}: ${v.error?.code}: ${v.error?.message}`], startState: brief(start), gold: brief(gold), durationMs: Date.now() - started };
      }
    }
    // The reference killed by the sandbox's memory limit: the machine's failure, not the task's.
    const goldOom = gold.reward !== 1 ? gold.notes.find((n) => n.startsWith(`${OOM_KILLED_NOTE}:`)) : undefined;
    if (goldOom) return { taskId: task.id, status: 'error', reasons: [`gold: ${goldOom}: an infrastructure reason (give the task's sandbox more memory), not an invalid task`], startState: brief(start), gold: brief(gold), durationMs: Date.now() - started };
    if (gold.reward !== 1) reasons.push(`the gold solution fails: ${gold.tests.filter((t) => t.status !== 'passed' && t.status !== 'skipped').map((t) => t.name).slice(0, 10).join(', ') || gold.notes.join('; ')}`);
    if (start.reward !== 0) reasons.push(`the untouched start state already passes the hidden tests (${gym.scoring} scoring): a pass cannot tell a solution from none`);
    else if (startOther?.reward === 1) reasons.push(`the untouched start state passes the hidden tests under ${otherMode} scoring${otherMode === 'faithful' ? " (the benchmark's own harness)" : ''}: a pass cannot tell a solution from none`);
    return { taskId: task.id, status: reasons.length ? 'invalid' : 'valid', reasons, startState: brief(start), ...other, gold: brief(gold), durationMs: Date.now() - started };
  } catch (err) {
    const e = toGymError(err);
    return { taskId: task.id, status: e.code === 'ENV_UNAVAILABLE' ? 'unavailable' : 'error', reasons: [`${e.code}: ${e.message}`], durationMs: Date.now() - started };
  }
}

/** Validates tasks with bounded concurrency, in input order. */
export async function validateTasks(gym: Gym, tasks: Task[], concurrency = 2, onDone?: (v: TaskValidation) => void): Promise<TaskValidation[]> {
  const results: TaskValidation[] = new Array(tasks.length);
  await workerPool(tasks, concurrency, async (task, i) => {
    results[i] = await validateTask(gym, task);
    onDone?.(results[i]!);
  });
  return results;
}
