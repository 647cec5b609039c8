/**
 * `benchgym score`'s check of the instances it resolves: a FAIL_TO_PASS test that already passes
 * on the untouched start state cannot fail, so a resolution there says nothing of the candidate.
 * The start state is read from `benchgym validate`'s results when given (`--validated FILE`),
 * else scored once per task (the empty patch, in the replay's mode); a resolution on such a task
 * carries a CANNOT_FAIL note naming the tests, which the replay reports apart.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { GymError, toGymError } from '../errors.ts';
import { NOTE_CODES } from '../scoring/note_codes.ts';
import type { ReplayVerdict } from '../scoring/compare.ts';
import { alreadyPassing } from '../scoring/validate.ts';
import type { Verdict } from '../scoring/verdict.ts';
import type { Task } from '../tasks/schema.ts';

/** The note's code (the replay's causes read it: src/scoring/note_codes.ts). */
export const CANNOT_FAIL = NOTE_CODES.cannotFail;

/** What a start state's verdict says of a task's FAIL_TO_PASS tests. */
type StartVerdict = Pick<Verdict, 'status' | 'reward' | 'failToPass' | 'error'>;

/** One line of `benchgym validate --out`, as far as this check reads it. */
const ValidatedLine = z.looseObject({
  taskId: z.string().min(1),
  context: z.string().optional(),
  status: z.string(),
  startState: z
    .looseObject({
      status: z.enum(['passed', 'failed', 'error']),
      reward: z.union([z.literal(0), z.literal(1)]),
      failToPass: z.object({ passed: z.array(z.string()), failed: z.array(z.string()) }).optional(),
    })
    .optional(),
});

/** The start states `benchgym validate --out FILE` recorded, by task (its own start state; a later line wins). */
export function readValidated(file: string): Map<string, StartVerdict> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new GymError('INVALID_ARGUMENT', `--validated: cannot read ${file}: ${toGymError(err).message}`);
  }
  const out = new Map<string, StartVerdict>();
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new GymError('INVALID_ARGUMENT', `--validated: ${file} line ${i + 1} is not JSON (expected benchgym validate --out lines)`);
    }
    const r = ValidatedLine.safeParse(parsed);
    if (!r.success)
      throw new GymError(
        'INVALID_ARGUMENT',
        `--validated: ${file} line ${i + 1}: ${r.error.issues.map((x) => `${x.path.join('.') || 'line'}: ${x.message}`).join('; ')}`,
      );
    if (r.data.context || !r.data.startState) return;
    out.set(r.data.taskId, r.data.startState);
  });
  return out;
}

/** The CANNOT_FAIL note of a task whose start state passes FAIL_TO_PASS tests (or passes whole), else undefined. */
export function cannotFailNote(start: StartVerdict, source: string): string | undefined {
  if (start.status === 'error') return undefined;
  const passing = alreadyPassing(start);
  if (passing) return `${CANNOT_FAIL}: ${passing} (${source}): a resolution says nothing of the candidate`;
  if (start.reward === 1)
    return (
      `${CANNOT_FAIL}: the untouched start state already passes the hidden ` +
      `tests (${source}): a resolution says nothing of the candidate`
    );
  return undefined;
}

/**
 * Wraps a replay's scorer: each passing verdict is checked against its task's start state
 * (`validated`, else `scoreStart` once per task) and carries a CANNOT_FAIL note when that state
 * passes a FAIL_TO_PASS test. A start state that cannot be scored leaves a note saying so.
 */
export function withStartStateCheck(
  score: (task: Task, patch: string) => Promise<ReplayVerdict>,
  scoreStart: (task: Task) => Promise<Verdict>,
  validated?: ReadonlyMap<string, StartVerdict>,
): (task: Task, patch: string) => Promise<ReplayVerdict> {
  const starts = new Map<string, Promise<Verdict>>();
  return async (task, patch) => {
    const v = await score(task, patch);
    if (v.reward !== 1) return v;
    const known = validated?.get(task.id);
    if (known) {
      const note = cannotFailNote(known, 'as benchgym validate recorded it');
      return note ? { ...v, notes: [...v.notes, note] } : v;
    }
    if (!starts.has(task.id)) starts.set(task.id, scoreStart(task));
    const start = await starts.get(task.id)!.catch((err: unknown) => ({
      status: 'error' as const,
      reward: 0 as const,
      error: { code: toGymError(err).code, message: toGymError(err).message },
    }));
    if (start.status === 'error')
      return {
        ...v,
        notes: [
          ...v.notes,
          `START_STATE_UNCHECKED: the untouched start state could not be scored ` +
            `(${start.error?.code}): whether FAIL_TO_PASS can fail is not known`,
        ],
      };
    const note = cannotFailNote(start, 'the untouched start state scored by this replay');
    return note ? { ...v, notes: [...v.notes, note] } : v;
  };
}
