import { appendFileSync, existsSync, promises as fs } from 'node:fs';
import { z } from 'zod';
import { GymError } from '../../errors.ts';
import { passRateLine } from '../../runner/pass_rate.ts';
import { validateTasks, type TaskValidation } from '../../scoring/validate.ts';
import type { Task } from '../../tasks/schema.ts';
import type { CliCommand } from '../command.ts';
import type { Composition } from '../composition.ts';
import { gymFlags, gymFlagsUsage, gymFrom } from '../gym_options.ts';
import { intFlag, parseFlags } from '../options.ts';
import { unreachableIndexLines } from '../package_index.ts';

const usage = (root: Composition) => `benchgym validate: for every task of a suite, the gold solution passes and the start state fails
(exit 1 when a task is invalid or scoring fails, or when nothing could be checked: every task's env
unavailable here; tasks whose env cannot exist here are listed apart, and an unreachable package index is named).
The summary's rate is valid tasks over those valid, invalid or failing to score (an error is not shown valid),
with the rate over the checked ones beside it; tasks unavailable here are in neither.

Usage:
  benchgym validate --suite ID[=PATH] [--dataset PATH] [--tasks a,b] [--concurrency N] [--json]
                    [--context NAME] [--out FILE.jsonl [--revalidate]]

Options:
  --dataset PATH     the suite's dataset (the same as --suite ID=PATH)
  --tasks a,b        only these task ids
  --concurrency N    tasks validated at once (default 2)
  --json             the results as JSON on stdout (progress stays on stderr)
  --context NAME     validate another start state the tasks offer (HumanEvo: ignored): the untouched
                     state and the reference solution written into it are each submitted from an
                     episode there; tasks without it are listed and skipped
  --out FILE.jsonl   each task's result appended as it is known, so a stopped run loses nothing;
                     a task FILE already holds a verdict for (valid, invalid, unavailable) in the
                     same context is not validated again (errors are retried)
  --revalidate       with --out: validate every task again
${gymFlagsUsage(root)}

Example:
  benchgym validate --suite examples --tasks roman-numerals
`;

export function validateCommand(root: Composition): CliCommand {
  return {
    name: 'validate',
    summary: 'gold passes, start state fails, for every task',
    usage: usage(root),
    async run(args) {
      const { values } = parseFlags(args, {
        ...gymFlags(root),
        dataset: { type: 'string' },
        tasks: { type: 'string' },
        concurrency: { type: 'string' },
        json: { type: 'boolean' },
        out: { type: 'string' },
        revalidate: { type: 'boolean' },
        context: { type: 'string' },
      });
      if (values.revalidate && !values.out)
        throw new GymError('INVALID_ARGUMENT', '--revalidate needs --out FILE.jsonl (the results to validate again)');
      if (!values.suite?.length) throw new GymError('INVALID_ARGUMENT', 'missing --suite (e.g. --suite examples)');
      if (values.dataset) values.suite = [`${values.suite[0]!.split('=')[0]}=${values.dataset}`];
      const gym = await gymFrom(values, root);
      try {
        const suite = gym.registry.suiteIds()[0]!;
        let list = await gym.registry.tasks(suite);
        if (values.tasks) {
          const wanted = values.tasks
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean);
          const unknown = wanted.filter((id) => !list.some((t) => t.id === id));
          if (unknown.length)
            throw new GymError('TASK_NOT_FOUND', `no task ${unknown.map((u) => `'${u}'`).join(', ')} in suite '${suite}'`);
          list = list.filter((t) => wanted.includes(t.id));
        }
        const context = values.context;
        const withoutContext = context
          ? list.filter((t) => t.defaultContext !== context && !Object.hasOwn(t.contexts, context)).map((t) => t.id)
          : [];
        if (context && withoutContext.length === list.length)
          throw new GymError(
            'INVALID_ARGUMENT',
            `--context: no task ${values.tasks ? 'asked for ' : ''}offers a '${context}' start state (${list.length} task${list.length === 1 ? '' : 's'}: ${[...new Set(list.flatMap((t) => [t.defaultContext, ...Object.keys(t.contexts)]))].join(', ')})`,
          );
        if (withoutContext.length) {
          process.stderr.write(
            `benchgym validate: ${withoutContext.length} of ${list.length} tasks have no '${context}' start state, skipped: ${withoutContext.slice(0, 20).join(', ')}${withoutContext.length > 20 ? ', ...' : ''}\n`,
          );
          list = list.filter((t) => !withoutContext.includes(t.id));
        }
        const concurrency = intFlag(values.concurrency, 'concurrency', 2, 1, 64);
        const progress = (v: TaskValidation, resumed = false) =>
          // Progress on stderr in both modes: a long --json run shows how far it is.
          process.stderr.write(
            `${v.status.padEnd(11)} ${v.taskId}${v.context ? ` [${v.context}]` : ''} (${(v.durationMs / 1000).toFixed(1)} s${resumed ? `, resumed from ${values.out}` : ''})${v.reasons.length ? `: ${v.reasons.join('; ')}` : ''}\n`,
          );
        const saved = values.out && existsSync(values.out) ? await fs.readFile(values.out, 'utf8') : '';
        const earlier = values.revalidate ? new Map<string, TaskValidation>() : readValidations(saved);
        // A result counts for the start state it was validated in (no context: the task's own).
        const earlierOf = (t: Task) => earlier.get(savedKey(t.id, context && context !== t.defaultContext ? context : undefined));
        const kept = new Map(list.filter((t) => earlierOf(t) && earlierOf(t)!.status !== 'error').map((t) => [t.id, earlierOf(t)!]));
        for (const v of kept.values()) progress(v, true);
        // A line a stopped run left unfinished must not swallow the next one.
        if (values.out && saved && !saved.endsWith('\n')) appendFileSync(values.out, '\n');
        const fresh = await validateTasks(
          gym,
          list.filter((t) => !kept.has(t.id)),
          concurrency,
          (v) => {
            progress(v);
            if (values.out) appendFileSync(values.out, JSON.stringify(v) + '\n');
          },
          context ? { context } : {},
        );
        const byId = new Map([...kept, ...fresh.map((v) => [v.taskId, v] as const)]);
        const results = list.map((t) => byId.get(t.id)!);
        const by = (s: TaskValidation['status']) => results.filter((r) => r.status === s);
        const checked = by('valid').length + by('invalid').length;
        const nothingChecked = results.length > 0 && checked === 0;
        const network = unreachableIndexLines([...by('unavailable'), ...by('error')].map((r) => r.reasons));
        if (values.json)
          process.stdout.write(
            JSON.stringify(
              { suite, ...(context ? { context, withoutContext } : {}), checked, nothingChecked, unreachableIndex: network, results },
              null,
              2,
            ) + '\n',
          );
        else {
          // A task whose scoring failed is one not shown valid: in the denominator, the rate over the checked ones beside it.
          const counts = { passed: by('valid').length, failed: by('invalid').length, errors: by('error').length };
          const headline = `${passRateLine(counts, { verb: 'valid', scored: 'checked' })}; ${counts.failed} invalid, ${by('unavailable').length} unavailable here (of ${results.length})`;
          const without = withoutContext.length ? `; ${withoutContext.length} without a '${context}' start state` : '';
          process.stdout.write(`\n${suite}${context ? ` [${context}]` : ''}: ${headline}${without}\n`);
          for (const r of by('unavailable')) process.stdout.write(`  ENV_UNAVAILABLE ${r.taskId}: ${r.reasons.join('; ')}\n`);
        }
        for (const line of network) process.stderr.write(`benchgym validate: ${line}\n`);
        if (nothingChecked) {
          const why = by('error').length
            ? `${by('unavailable').length} unavailable here, ${by('error').length} failed to score`
            : "every task's env is unavailable here";
          process.stderr.write(
            `benchgym validate: nothing was checked: ${why} (of ${results.length} task${results.length > 1 ? 's' : ''})\n`,
          );
          return 1;
        }
        return by('invalid').length + by('error').length > 0 ? 1 : 0;
      } finally {
        await gym.close();
      }
    },
  };
}

const SavedValidation = z
  .object({
    taskId: z.string(),
    context: z.string().optional(),
    status: z.enum(['valid', 'invalid', 'unavailable', 'error']),
    reasons: z.array(z.string()),
    durationMs: z.number(),
  })
  .passthrough();

const savedKey = (taskId: string, context: string | undefined) => `${context ?? ''}\u0000${taskId}`;

/** The results an earlier `--out` run wrote, by context and task (a later line wins; a torn or foreign line is skipped). */
function readValidations(text: string): Map<string, TaskValidation> {
  const out = new Map<string, TaskValidation>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const parsed = SavedValidation.safeParse(JSON.parse(line));
      if (parsed.success) out.set(savedKey(parsed.data.taskId, parsed.data.context), parsed.data as TaskValidation);
    } catch {
      // A line cut short by a stopped run: that task is validated again.
    }
  }
  return out;
}
