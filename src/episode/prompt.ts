import { GymError } from '../errors.ts';
import { ownValue } from '../own.ts';
import type { Task } from '../tasks/schema.ts';

/** The start state an episode asked for: the task's own, or one of its other contexts. */
export function contextFor(task: Task, name?: string): { name: string; workspace?: Task['workspace'] } {
  if (!name || name === task.defaultContext) return { name: task.defaultContext };
  const ctx = ownValue(task.contexts, name);
  if (!ctx)
    throw new GymError(
      'INVALID_ARGUMENT',
      `invalid 'context': '${name}' (this task has ${[task.defaultContext, ...Object.keys(task.contexts)].join(', ')})`,
    );
  return { name, workspace: ctx.workspace };
}

/** The problem statement an episode starts with: the task's (or its context's) prompt, or the variant asked for. */
export function promptFor(task: Task, variant?: string, context?: string): string {
  const ctx = context && context !== task.defaultContext ? ownValue(task.contexts, context) : undefined;
  const prompt = ctx?.prompt ?? task.prompt;
  const variants = { ...task.promptVariants, ...ctx?.promptVariants };
  if (!variant || variant === 'default') return prompt;
  const text = ownValue(variants, variant);
  if (text === undefined) {
    const known = ['default', ...Object.keys(variants)];
    throw new GymError('INVALID_ARGUMENT', `invalid 'prompt_variant': '${variant}' (this task has ${known.join(', ')})`);
  }
  return text;
}
