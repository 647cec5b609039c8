import { parseAgentOptions } from '../agent/options.ts';
import type { AgentDefinition } from '../agent/types.ts';
import { GymError } from '../errors.ts';
import { ownValue } from '../own.ts';
import type { Task } from '../tasks/schema.ts';
import type { AgentUnderTest } from './runner.ts';

/**
 * The task's reference solution in the replay agent's options (goldFiles, else
 * goldPatch), as written in `context` when the task has one of its own there.
 */
export function goldOptions(task: Task, context?: string): { goldFiles: Record<string, string> } | { goldPatch: string } {
  const solution = (context ? ownValue(task.contexts, context)?.solution : undefined) ?? task.solution;
  const files = solution?.files;
  if (files && Object.keys(files).length) return { goldFiles: files };
  if (solution?.patch) return { goldPatch: solution.patch };
  throw new GymError('TASK_INVALID', `task '${task.id}' has no reference solution (--gold needs one)`);
}

/**
 * An agent of the table the composition root registered, with validated options; with `gold`, each episode's agent also gets the
 * task's reference solution (the replay agent submits it).
 */
export function agentUnderTest(
  registry: Readonly<Record<string, AgentDefinition>>,
  name: string,
  options: Record<string, unknown>,
  gold: boolean,
): AgentUnderTest {
  const def = ownValue(registry, name);
  if (!def) throw new GymError('INVALID_ARGUMENT', `unknown agent '${name}' (known: ${Object.keys(registry).join(', ')})`);
  if (gold && name !== 'replay')
    throw new GymError('INVALID_ARGUMENT', `--gold hands the reference solution to the replay agent; it does not apply to '${name}'`);
  const parsed = parseAgentOptions(def, options);
  if (!parsed.ok) throw new GymError('INVALID_ARGUMENT', `invalid --agent-options for '${name}': ${parsed.message}`);
  return {
    name,
    create: (task: Task, context?: string) =>
      def.create(gold ? def.options.parse({ ...options, ...goldOptions(task, context) }) : parsed.options),
  };
}
