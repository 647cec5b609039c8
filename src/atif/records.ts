import { promises as fs } from 'node:fs';
import { z } from 'zod';

/**
 * The trajectory records an export reads, checked at the edge: the gym's episode file
 * (`<data-dir>/trajectories/<episode_id>.jsonl`, src/episode/trajectory.ts) and a run's
 * per-pair file (`RUN_DIR/trajectories/<task>__<sample>.jsonl`, src/runner/attempt.ts). Keys
 * not named here are carried along; a line that is not a record is skipped and said.
 */

const ErrorShape = z.looseObject({ code: z.string(), message: z.string() });

export const GymHeader = z.looseObject({
  type: z.literal('episode'),
  episodeId: z.string(),
  suite: z.string().optional(),
  taskId: z.string().optional(),
  prompt: z.string().optional(),
  promptVariant: z.string().optional(),
  context: z.string().optional(),
  sandbox: z.string().optional(),
  forkedFrom: z.string().optional(),
  atStep: z.number().optional(),
  startedAt: z.string().optional(),
});

export const GymStep = z.looseObject({
  type: z.literal('step'),
  step: z.number().int(),
  tool: z.string(),
  args: z.unknown(),
  ok: z.boolean(),
  observation: z.string().optional(),
  error: ErrorShape.optional(),
  startedAt: z.string(),
  durationMs: z.number(),
});

export const GymVerdict = z.looseObject({
  type: z.literal('verdict'),
  verdict: z.looseObject({
    reward: z.number(),
    status: z.string(),
    tests: z.array(z.looseObject({ name: z.string(), status: z.string() })).default([]),
    notes: z.array(z.string()).default([]),
    error: ErrorShape.optional(),
    durationMs: z.number().optional(),
  }),
});

export const GymEnd = z.looseObject({
  type: z.literal('end'),
  state: z.string(),
  at: z.string().optional(),
  infraError: ErrorShape.optional(),
});

/** An episode's records as the gym wrote them. */
export interface GymRecords {
  header?: z.infer<typeof GymHeader>;
  steps: z.infer<typeof GymStep>[];
  verdict?: z.infer<typeof GymVerdict>['verdict'];
  end?: z.infer<typeof GymEnd>;
  /** Lines that were not records (a torn last line, a foreign line). */
  skipped: string[];
}

/** The runner's records of one attempt (agent events, model calls, the result). */
export const AgentRecord = z.looseObject({ type: z.string(), attempt: z.number().int().optional(), at: z.string().optional() });
export type AgentRecordT = z.infer<typeof AgentRecord>;

const at = z.string().optional();
export const PromptRecord = z.looseObject({ type: z.literal('prompt'), at, system: z.string().optional(), user: z.string().optional() });
export const ModelCallRecord = z.looseObject({
  type: z.literal('model_call'),
  model: z.string().optional(),
  promptTokens: z.number().optional(),
  completionTokens: z.number().optional(),
  costUsd: z.number().optional(),
  durationMs: z.number().optional(),
});
export const AssistantRecord = z.looseObject({
  type: z.literal('assistant'),
  content: z.string().nullable().optional(),
  toolCalls: z.array(z.looseObject({ id: z.string().optional(), name: z.string(), arguments: z.string().optional() })).default([]),
  finishReason: z.string().nullable().optional(),
});
/** A single-shot answer or a feedback round: the model's text, no tool calls. */
export const AnswerRecord = z.looseObject({ type: z.enum(['answer', 'round']), answer: z.string(), round: z.number().optional() });
export const ToolRecord = z.looseObject({
  type: z.literal('tool'),
  name: z.string(),
  ok: z.boolean().optional(),
  observation: z.string().optional(),
  error: z.string().optional(),
  code: z.string().optional(),
});
export const SubmittedRecord = z.looseObject({
  type: z.literal('submitted'),
  reward: z.number().optional(),
  status: z.string().optional(),
});
export const AttemptRecord = z.looseObject({
  type: z.literal('attempt'),
  attempt: z.number().int(),
  runId: z.string().optional(),
  episodeId: z.string().nullable().optional(),
  gymTrajectory: z.string().nullable().optional(),
  startedAt: z.string().optional(),
});

/** The JSON objects of a JSON-lines file; lines that are not objects are returned apart. */
export async function readJsonLines(file: string): Promise<{ records: Record<string, unknown>[]; skipped: string[] }> {
  const text = await fs.readFile(file, 'utf8');
  const records: Record<string, unknown>[] = [];
  const skipped: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const value = JSON.parse(line) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) records.push(value as Record<string, unknown>);
      else skipped.push(line.slice(0, 200));
    } catch {
      skipped.push(line.slice(0, 200));
    }
  }
  return { records, skipped };
}

/** An episode's gym trajectory, each record checked by its type; other types (terminal records) are left out. */
export function gymRecords(lines: { records: Record<string, unknown>[]; skipped: string[] }): GymRecords {
  const out: GymRecords = { steps: [], skipped: [...lines.skipped] };
  for (const r of lines.records) {
    const schema =
      r.type === 'episode'
        ? GymHeader
        : r.type === 'step'
          ? GymStep
          : r.type === 'verdict'
            ? GymVerdict
            : r.type === 'end'
              ? GymEnd
              : undefined;
    if (!schema) continue;
    const parsed = schema.safeParse(r);
    if (!parsed.success) {
      out.skipped.push(JSON.stringify(r).slice(0, 200));
      continue;
    }
    const v = parsed.data;
    if (v.type === 'episode') out.header ??= v as GymRecords['header'];
    else if (v.type === 'step') out.steps.push(v as GymRecords['steps'][number]);
    else if (v.type === 'verdict') out.verdict = (v as z.infer<typeof GymVerdict>).verdict;
    else out.end = v as GymRecords['end'];
  }
  return out;
}
