import path from 'node:path';
import { isGymTrajectoryPath } from '../episode/trajectory.ts';
import type { IndexedLine, LineIndex } from './line_index.ts';

/**
 * One entry of a transcript as the page draws it. Built from the agent's trajectory (prompt,
 * model messages, rounds) and the gym's (each tool call with its full arguments and
 * observation); every string in it is shown as text, never as markup.
 */
export type TranscriptItem =
  | { kind: 'attempt'; time?: string; attempt: number; episodeId?: string }
  | { kind: 'episode'; time?: string; episodeId?: string; suite?: string; task?: string; sandbox?: string }
  | { kind: 'prompt'; time?: string; system?: string; user?: string; extra?: Record<string, unknown> }
  | { kind: 'assistant'; time?: string; content: string | null; toolCalls: { name: string; arguments: string }[] }
  | { kind: 'answer'; time?: string; text: string; files: string[]; problem?: string }
  | {
      kind: 'tool';
      time?: string;
      step?: number;
      tool: string;
      args: unknown;
      ok: boolean;
      observation?: string;
      error?: string;
      durationMs?: number;
    }
  | { kind: 'result'; time?: string; attempt?: number; status: string; reward?: number; stopReason?: string; infraError?: string }
  | { kind: 'end'; time?: string; state: string; infraError?: string }
  | { kind: 'event'; time?: string; type: string; fields: Record<string, unknown> };

/** The verdict of an episode as the transcript shows it: counts, the tests that failed with their messages, the final diff. */
export interface TranscriptVerdict {
  status: string;
  reward: number;
  tests: { passed: number; failed: number; error: number; skipped: number };
  /** Failed and errored tests with their messages (the first MAX_FAILING). */
  failing: { name: string; status: string; message?: string }[];
  failingTotal: number;
  failToPass?: { passed: string[]; failed: string[] };
  passToPass?: { passed: number; failed: string[] };
  notes: string[];
  error?: string;
  timedOut?: boolean;
  exitCode?: number | null;
  diff?: string;
}

export interface TranscriptPage {
  /** Entries in the whole transcript so far. */
  total: number;
  from: number;
  items: TranscriptItem[];
  /** The last attempt's verdict, once scored. */
  verdict: TranscriptVerdict | null;
  /** True once nothing more will be appended (a result line, or the episode's end). */
  done: boolean;
}

/** Where a (task, sample)'s records are: the runner's trajectory, and the gym's trajectory of each attempt. */
export interface TranscriptFiles {
  agent?: string;
  /** Gym trajectories known from elsewhere (the result lines), by attempt. */
  gym?: Map<number, string>;
}

const MAX_FAILING = 200;
/** Records the page does not draw (token counts are in the table; the gym's header repeats the attempt's). */
const HIDDEN_AGENT_TYPES = new Set(['model_call']);

interface Ref {
  file: string;
  line: IndexedLine;
  source: 'agent' | 'gym';
  time: string;
  order: number;
}

/** A page of a transcript: the plan (which lines, in which order) comes from the line index; only the page's lines are read. */
export async function transcriptPage(index: LineIndex, files: TranscriptFiles, from: number, limit: number): Promise<TranscriptPage> {
  const { refs, verdictRef, done } = await plan(index, files);
  const slice = refs.slice(from, from + limit);
  const byFile = new Map<string, Ref[]>();
  for (const r of slice) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r]);
  const records = new Map<Ref, Record<string, unknown>>();
  for (const [file, rs] of byFile) {
    const recs = await index.read(
      file,
      rs.map((r) => r.line),
    );
    rs.forEach((r, i) => records.set(r, recs[i]!));
  }
  const items = slice.map((r) => normalize(records.get(r)!, r.source, r.time));
  let verdict: TranscriptVerdict | null = null;
  if (verdictRef) {
    const [rec] = await index.read(verdictRef.file, [verdictRef.line]);
    verdict = rec ? verdictOf(rec) : null;
  }
  return { total: refs.length, from, items, verdict, done };
}

async function plan(index: LineIndex, files: TranscriptFiles): Promise<{ refs: Ref[]; verdictRef?: Ref; done: boolean }> {
  const agentLines = files.agent ? await index.lines(files.agent) : [];
  const gymFiles = new Map(files.gym ?? []);
  for (const l of agentLines)
    if (l.type === 'attempt' && l.gymTrajectory && l.attempt !== undefined && isGymTrajectoryPath(l.gymTrajectory))
      gymFiles.set(l.attempt, l.gymTrajectory);
  const refs: Ref[] = [];
  let order = 0;
  let verdictRef: Ref | undefined;
  let gymDone = false;
  const withGym = new Set<number>();
  const lastAttempt = Math.max(0, ...gymFiles.keys());
  for (const [attempt, file] of [...gymFiles].sort((a, b) => a[0] - b[0])) {
    const lines = await index.lines(file);
    if (!lines.length) continue;
    withGym.add(attempt);
    let time = '';
    for (const line of lines) {
      time = line.time ?? time;
      const ref: Ref = { file, line, source: 'gym', time, order: order++ };
      if (line.type === 'verdict') {
        if (attempt === lastAttempt) verdictRef = ref;
        continue;
      }
      // The submit step is written after its verdict: done once both are there, or at the end.
      if (attempt === lastAttempt && (line.type === 'end' || (verdictRef && line.type === 'step'))) gymDone = true;
      // The runner's attempt line says what the gym's header would.
      if (line.type === 'episode' && agentLines.length) continue;
      refs.push(ref);
    }
  }
  let time = '';
  let resultSeen = false;
  for (const line of agentLines) {
    time = line.time ?? time;
    if (HIDDEN_AGENT_TYPES.has(line.type)) continue;
    // The gym's record of a tool call is the whole one (the agent's observation is cut for the model).
    if (line.type === 'tool' && line.attempt !== undefined && withGym.has(line.attempt)) continue;
    if (line.type === 'result') resultSeen = true;
    refs.push({ file: files.agent!, line, source: 'agent', time, order: order++ });
  }
  // Stable: by time, then the gym's records before the agent's at the same instant (a step before the agent's note of it).
  refs.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : a.order - b.order));
  const done = agentLines.length ? resultSeen : gymDone;
  return { refs, verdictRef, done };
}

/** Only a gym trajectory is read from a path a record names, so a run directory cannot make the viewer show any other file. */
export { isGymTrajectoryPath };

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function errorText(e: unknown): string | undefined {
  if (typeof e === 'string') return e;
  if (e && typeof e === 'object') {
    const o = e as Record<string, unknown>;
    const code = str(o.code);
    const message = str(o.message);
    if (code || message) return [code, message].filter(Boolean).join(': ');
    return JSON.stringify(e);
  }
  return undefined;
}

export function normalize(r: Record<string, unknown>, source: 'agent' | 'gym', time: string): TranscriptItem {
  const t = time || undefined;
  switch (r.type) {
    case 'attempt':
      return { kind: 'attempt', time: t, attempt: num(r.attempt) ?? 1, episodeId: str(r.episodeId) };
    case 'episode':
      return { kind: 'episode', time: t, episodeId: str(r.episodeId), suite: str(r.suite), task: str(r.taskId), sandbox: str(r.sandbox) };
    case 'prompt': {
      const { type: _t, system, user, at: _a, attempt: _n, ...extra } = r;
      return {
        kind: 'prompt',
        time: t,
        system: str(system),
        user: typeof user === 'string' ? user : user === undefined ? undefined : JSON.stringify(user, null, 2),
        extra,
      };
    }
    case 'assistant': {
      const calls = Array.isArray(r.toolCalls) ? r.toolCalls : [];
      return {
        kind: 'assistant',
        time: t,
        content: str(r.content) ?? null,
        toolCalls: calls.map((c) => {
          const o = (c ?? {}) as Record<string, unknown>;
          return { name: str(o.name) ?? '?', arguments: typeof o.arguments === 'string' ? o.arguments : JSON.stringify(o.arguments ?? {}) };
        }),
      };
    }
    case 'answer':
    case 'round':
      if (typeof r.answer === 'string') {
        return {
          kind: 'answer',
          time: t,
          text: r.answer,
          files: Array.isArray(r.files) ? r.files.map(String) : [],
          ...(str(r.problem) ? { problem: str(r.problem) } : {}),
        };
      }
      break;
    case 'step':
      return {
        kind: 'tool',
        time: t,
        step: num(r.step),
        tool: str(r.tool) ?? '?',
        args: r.args,
        ok: r.ok !== false,
        observation: str(r.observation),
        error: errorText(r.error),
        durationMs: num(r.durationMs),
      };
    case 'tool':
      return {
        kind: 'tool',
        time: t,
        tool: str(r.name) ?? '?',
        args: r.args,
        ok: r.ok !== false,
        observation: str(r.observation),
        error: errorText(r.error) ?? (str(r.code) ? str(r.code) : undefined),
      };
    case 'result':
      return {
        kind: 'result',
        time: t,
        attempt: num(r.attempt),
        status: str(r.status) ?? '?',
        reward: num(r.reward),
        stopReason: str(r.stopReason),
        infraError: errorText(r.infraError),
      };
    case 'end':
      if (source === 'gym') return { kind: 'end', time: t, state: str(r.state) ?? 'ended', infraError: errorText(r.infraError) };
      break;
  }
  const { type, at: _a, ...fields } = r;
  return { kind: 'event', time: t, type: str(type) ?? 'event', fields };
}

export function verdictOf(rec: Record<string, unknown>): TranscriptVerdict {
  const v = (rec.verdict ?? {}) as Record<string, unknown>;
  const tests = Array.isArray(v.tests) ? (v.tests as Record<string, unknown>[]) : [];
  const counts = { passed: 0, failed: 0, error: 0, skipped: 0 };
  const failing: TranscriptVerdict['failing'] = [];
  let failingTotal = 0;
  for (const test of tests) {
    const status = str(test.status) ?? 'error';
    if (Object.hasOwn(counts, status)) counts[status as keyof typeof counts]++;
    if (status === 'failed' || status === 'error') {
      failingTotal++;
      if (failing.length < MAX_FAILING)
        failing.push({ name: str(test.name) ?? '?', status, ...(str(test.message) ? { message: str(test.message) } : {}) });
    }
  }
  const list = (o: unknown): { passed: string[]; failed: string[] } | undefined => {
    if (!o || typeof o !== 'object') return undefined;
    const x = o as Record<string, unknown>;
    return { passed: Array.isArray(x.passed) ? x.passed.map(String) : [], failed: Array.isArray(x.failed) ? x.failed.map(String) : [] };
  };
  const f2p = list(v.failToPass);
  const p2p = list(v.passToPass);
  return {
    status: str(v.status) ?? '?',
    reward: num(v.reward) ?? 0,
    tests: counts,
    failing,
    failingTotal,
    ...(f2p ? { failToPass: f2p } : {}),
    ...(p2p ? { passToPass: { passed: p2p.passed.length, failed: p2p.failed } } : {}),
    notes: Array.isArray(v.notes) ? v.notes.map(String) : [],
    ...(v.error ? { error: errorText(v.error) } : {}),
    ...(typeof v.timedOut === 'boolean' ? { timedOut: v.timedOut } : {}),
    ...(v.exitCode !== undefined ? { exitCode: num(v.exitCode) ?? null } : {}),
    ...(typeof rec.diff === 'string' ? { diff: rec.diff } : {}),
  };
}
