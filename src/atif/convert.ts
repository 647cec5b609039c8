import { VERSION } from '../version.ts';
import {
  AnswerRecord,
  AssistantRecord,
  ModelCallRecord,
  PromptRecord,
  SubmittedRecord,
  ToolRecord,
  type AgentRecordT,
  type GymRecords,
} from './records.ts';
import { ATIF_VERSION, type AtifMetrics, type AtifObservationResult, type AtifStep, type AtifTrajectory } from './types.ts';

/** A run's facts about one attempt: its results.jsonl line and run.json, as far as ATIF needs them. */
export interface RunFacts {
  runId: string;
  agent: string;
  model: string;
  result?: {
    suite?: string;
    task: string;
    sample: number;
    attempt: number;
    final: boolean;
    episodeId?: string | null;
    status: string;
    reward: number;
    infra: boolean;
    infraError?: { code: string; message: string; source?: string };
    verdict?: Record<string, unknown> | null;
    stopReason?: string;
    tokens?: { prompt: number; completion: number };
    costUsd?: number;
    metadata?: Record<string, unknown>;
  };
}

/** What one ATIF trajectory is made of: the gym's records of the episode, and for a run, the agent's records of the attempt. */
export interface AtifSources {
  gym?: GymRecords;
  /** The runner's records of this attempt, in the order written. */
  agent?: AgentRecordT[];
  run?: RunFacts;
  /** Said in the trajectory's notes (a gym file that could not be read, ...). */
  notes?: string[];
}

/** Long strings in agent events are cut: the events are context, the steps hold the substance. */
const EVENT_FIELD_CHARS = 2000;
/** Agent records that become steps (the rest go to `extra.agent_events`). */
const STEP_TYPES = new Set(['prompt', 'model_call', 'assistant', 'answer', 'round', 'tool', 'attempt', 'result']);

type Draft = Omit<AtifStep, 'step_id'>;

function argumentsOf(raw: unknown): { args: Record<string, unknown>; raw?: string } {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) return { args: raw as Record<string, unknown> };
  if (typeof raw === 'string') {
    try {
      const parsed = JSON.parse(raw) as unknown;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return { args: parsed as Record<string, unknown> };
    } catch {
      // Not JSON: kept as the model sent it.
    }
    return { args: {}, raw };
  }
  return { args: {} };
}

function cutStrings(value: unknown): unknown {
  if (typeof value === 'string') return value.length > EVENT_FIELD_CHARS ? `${value.slice(0, EVENT_FIELD_CHARS)} [... cut]` : value;
  if (Array.isArray(value)) return value.map(cutStrings);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutStrings(v)]));
  return value;
}

/** The result of a call as the gym recorded it: the text the model got (or the error it got), with the step's timing. */
function gymResult(step: GymRecords['steps'][number], callId: string): AtifObservationResult {
  return {
    source_call_id: callId,
    content: step.ok ? (step.observation ?? '') : `Error ${step.error?.code ?? 'UNKNOWN'}: ${step.error?.message ?? ''}`,
    extra: {
      ok: step.ok,
      step: step.step,
      started_at: step.startedAt,
      duration_ms: step.durationMs,
      ...(step.error ? { error: step.error } : {}),
    },
  };
}

/**
 * One ATIF trajectory of an episode: for a run attempt, the agent's prompt and model turns
 * (with their tool calls and token metrics) merged with the gym's record of each call (what
 * the model got back, when, for how long); for an episode of `benchgym serve`, the gym's
 * record alone. Calls the agent's program made without a model turn (a harness writing the
 * answer's files, an automatic submit) are agent steps with `llm_call_count: 0`.
 * The verdict's reward is in `final_metrics.extra` (null when the harness failed).
 */
export function toAtif(src: AtifSources): AtifTrajectory {
  const { gym, agent = [], run } = src;
  const header = gym?.header;
  const notes = [...(src.notes ?? [])];
  const drafts: Draft[] = [];
  const queue = [...(gym?.steps ?? [])];
  const fromRun = Boolean(run);

  // The agent's own records of its calls, in order: they answer calls the gym never saw (an unknown tool, arguments that are not JSON).
  const toolRecords = agent.map((r) => ToolRecord.safeParse(r)).flatMap((p) => (p.success ? [p.data] : []));
  const submitted = agent.map((r) => SubmittedRecord.safeParse(r)).find((p) => p.success)?.data;
  const harnessStep = (step: GymRecords['steps'][number]): Draft => {
    const id = `step-${step.step}`;
    return {
      source: 'agent',
      timestamp: step.startedAt,
      message: '',
      ...(fromRun ? { llm_call_count: 0 } : {}),
      tool_calls: [{ tool_call_id: id, function_name: step.tool, arguments: argumentsOf(step.args).args }],
      observation: { results: [gymResult(step, id)] },
    };
  };
  const flushBefore = (time: string | undefined) => {
    while (queue.length && (time === undefined || queue[0]!.startedAt < time)) drafts.push(harnessStep(queue.shift()!));
  };

  const prompt = agent.map((r) => PromptRecord.safeParse(r)).find((p) => p.success)?.data;
  if (prompt?.system) drafts.push({ source: 'system', timestamp: prompt.at, message: prompt.system });
  const task = header?.taskId ?? run?.result?.task;
  const suite = header?.suite ?? run?.result?.suite;
  const user = prompt?.user ?? header?.prompt;
  if (user === undefined)
    notes.push("the task's prompt was not recorded (a trajectory written before benchgym kept it in the episode header)");
  drafts.push({ source: 'user', timestamp: prompt?.at ?? header?.startedAt, message: user ?? `the task ${suite ?? '?'}/${task ?? '?'}` });

  let metrics: { model?: string; m: AtifMetrics } | undefined;
  const events: Record<string, unknown>[] = [];
  let callCount = 0;
  for (const record of agent) {
    if (!STEP_TYPES.has(record.type) && record.type !== 'submitted') events.push(cutStrings(record) as Record<string, unknown>);
    if (record.type === 'model_call') {
      const m = ModelCallRecord.safeParse(record);
      if (m.success) {
        metrics = {
          model: m.data.model,
          m: {
            ...(m.data.promptTokens !== undefined ? { prompt_tokens: m.data.promptTokens } : {}),
            ...(m.data.completionTokens !== undefined ? { completion_tokens: m.data.completionTokens } : {}),
            ...(m.data.costUsd !== undefined ? { cost_usd: m.data.costUsd } : {}),
            ...(m.data.durationMs !== undefined ? { extra: { duration_ms: m.data.durationMs } } : {}),
          },
        };
      }
      continue;
    }
    const turn = (message: string, extra?: Record<string, unknown>): Draft => ({
      source: 'agent',
      timestamp: record.at,
      ...(metrics?.model ? { model_name: metrics.model } : {}),
      message,
      llm_call_count: 1,
      ...(metrics && Object.keys(metrics.m).length ? { metrics: metrics.m } : {}),
      ...(extra ? { extra } : {}),
    });
    const answer = AnswerRecord.safeParse(record);
    if (answer.success) {
      flushBefore(record.at);
      drafts.push(turn(answer.data.answer, answer.data.round !== undefined ? { round: answer.data.round } : undefined));
      metrics = undefined;
      continue;
    }
    const assistant = AssistantRecord.safeParse(record);
    if (!assistant.success) continue;
    flushBefore(record.at);
    const draft = turn(
      assistant.data.content ?? '',
      assistant.data.finishReason ? { finish_reason: assistant.data.finishReason } : undefined,
    );
    metrics = undefined;
    const calls = assistant.data.toolCalls.map((c) => {
      const { args, raw } = argumentsOf(c.arguments);
      return {
        tool_call_id: c.id ?? `call-${++callCount}`,
        function_name: c.name,
        arguments: args,
        ...(raw !== undefined ? { extra: { raw_arguments: raw } } : {}),
      };
    });
    const results: AtifObservationResult[] = calls.map((call) => {
      const head = queue[0];
      const own = toolRecords[0]?.name === call.function_name ? toolRecords[0] : undefined;
      if (head && head.tool === call.function_name) {
        queue.shift();
        if (own) toolRecords.shift();
        return gymResult(head, call.tool_call_id);
      }
      if (own) {
        toolRecords.shift();
        const text =
          own.ok === false ? `Error${own.code ? ` ${own.code}` : ''}: ${own.error ?? 'the call failed'}` : (own.observation ?? '');
        return { source_call_id: call.tool_call_id, content: text, extra: { ok: own.ok ?? true, recorded_by: 'agent' } };
      }
      if (call.function_name === 'submit' && submitted) {
        return {
          source_call_id: call.tool_call_id,
          content: `Verdict: ${submitted.status ?? '?'} (reward ${submitted.reward ?? '?'})`,
          extra: { recorded_by: 'agent' },
        };
      }
      return { source_call_id: call.tool_call_id, content: 'no result was recorded for this call', extra: { recorded_by: 'none' } };
    });
    if (calls.length) {
      draft.tool_calls = calls;
      draft.observation = { results };
    }
    drafts.push(draft);
  }
  flushBefore(undefined);

  const steps: AtifStep[] = drafts.map((d, i) => ({ step_id: i + 1, ...withoutUndefined(d) }));
  if (gym?.skipped.length) notes.push(`${gym.skipped.length} line(s) of the gym's trajectory were not records and were left out`);
  if (header?.forkedFrom)
    notes.push(`a fork of ${header.forkedFrom} at its step ${header.atStep ?? '?'}: the steps before are in that episode's trajectory`);

  const verdict = gym?.verdict;
  const result = run?.result;
  const status = result?.status ?? verdict?.status ?? (gym?.end ? gym.end.state : 'unscored');
  // An infrastructure failure judged no answer: no reward, rather than a wrong one.
  const reward = result ? (result.infra ? null : result.reward) : verdict ? (verdict.status === 'error' ? null : verdict.reward) : null;
  const modelTotals = agent.map((r) => ModelCallRecord.safeParse(r)).flatMap((p) => (p.success ? [p.data] : []));
  const sum = (f: (m: (typeof modelTotals)[number]) => number | undefined) => modelTotals.reduce((a, m) => a + (f(m) ?? 0), 0);
  const episodeId = result?.episodeId ?? header?.episodeId;

  return {
    schema_version: ATIF_VERSION,
    session_id: run?.runId ?? episodeId ?? 'unknown',
    trajectory_id: run && result ? `${run.runId}/${result.task}/${result.sample}/${result.attempt}` : (episodeId ?? 'unknown'),
    agent: run
      ? { name: run.agent, version: VERSION, model_name: run.model, extra: { harness: `benchgym ${VERSION}` } }
      : {
          name: 'unknown',
          version: 'unknown',
          extra: {
            harness: `benchgym ${VERSION}`,
            note: 'an episode of benchgym serve: the gym records the tool calls, not the agent that made them',
          },
        },
    steps,
    ...(notes.length ? { notes: notes.join('\n') } : {}),
    final_metrics: {
      ...(run
        ? {
            total_prompt_tokens: result?.tokens?.prompt ?? sum((m) => m.promptTokens),
            total_completion_tokens: result?.tokens?.completion ?? sum((m) => m.completionTokens),
          }
        : {}),
      ...(run ? { total_cost_usd: result?.costUsd ?? sum((m) => m.costUsd) } : {}),
      total_steps: steps.length,
      extra: {
        reward,
        status,
        ...(result
          ? {
              infra: result.infra,
              ...(result.infraError ? { infra_error: result.infraError } : {}),
              ...(result.stopReason ? { stop_reason: result.stopReason } : {}),
            }
          : {}),
        ...(verdict ? { verdict: verdictSummary(verdict) } : result?.verdict ? { verdict: result.verdict } : {}),
      },
    },
    extra: {
      benchgym: withoutUndefined({
        version: VERSION,
        suite,
        task_id: task,
        episode_id: episodeId ?? undefined,
        run_id: run?.runId,
        sample: result?.sample,
        attempt: result?.attempt,
        final: result?.final,
        context: header?.context ?? (result?.metadata?.context as string | undefined),
        prompt_variant: header?.promptVariant ?? (result?.metadata?.promptVariant as string | undefined),
        sandbox: header?.sandbox,
        started_at: header?.startedAt,
        ended: gym?.end ? withoutUndefined({ state: gym.end.state, at: gym.end.at, infra_error: gym.end.infraError }) : undefined,
      }),
      ...(events.length ? { agent_events: events } : {}),
    },
  };
}

function verdictSummary(v: NonNullable<GymRecords['verdict']>): Record<string, unknown> {
  const tests: Record<string, number> = { passed: 0, failed: 0, error: 0, skipped: 0 };
  for (const t of v.tests) tests[t.status] = (tests[t.status] ?? 0) + 1;
  return withoutUndefined({ reward: v.reward, status: v.status, tests, notes: v.notes, error: v.error, duration_ms: v.durationMs });
}

function withoutUndefined<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
