import { promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../errors.ts';
import { MANIFEST_FILE, readManifest, RESULTS_FILE, type RunManifest } from '../runner/manifest.ts';
import { pairKey, readResults, trajectoryName, type ResultRecord } from '../runner/results.ts';
import { runId } from '../protocol/viewer_links.ts';

/** One (task, sample) as the run table shows it: a flat row, cheap to sort and filter. */
export interface ResultRow {
  task: string;
  sample: number;
  /** 'running': a pair with a trajectory and no final result yet (a run being written). */
  status: 'passed' | 'failed' | 'error' | 'running';
  reward: number;
  stopReason: string;
  steps: number;
  tokens: number;
  /** null when the run has no pricing (the page shows "n/a"). */
  costUsd: number | null;
  durationMs: number;
  attempts: number;
  failToPass: { passed: number; failed: number } | null;
  passToPass: { passed: number; failed: number } | null;
  tests: { passed: number; failed: number; error: number; skipped: number } | null;
  /** `CODE: message` of an infrastructure failure. */
  infraError: string | null;
  agentError: string | null;
  metadata: Record<string, string | number | boolean>;
}

/** A run directory as the viewer holds it. */
export interface ViewedRun {
  id: string;
  dir: string;
  manifest: RunManifest;
  rows: ResultRow[];
  /** Every result line of each pair (retried attempts first), by pairKey. */
  attempts: Map<string, ResultRecord[]>;
  /** Pairs under way: their trajectory file (relative to the run directory), by pairKey. */
  running: Map<string, string>;
  /** (task, sample) pairs the run covers: tasks × samples. */
  expected: number;
  /** Metadata keys with their values and how many rows have each. */
  facets: Record<string, { value: string; count: number }[]>;
  /** Changes whenever results.jsonl or run.json does (for caches). */
  version: string;
}

export interface RunSummary {
  id: string;
  suite: string;
  agent: string;
  model: string;
  started: string;
  results: number;
  expected: number;
  passed: number;
  failed: number;
  errors: number;
  running: number;
  /** Passed over every pair with a result (an infrastructure failure did not pass), or null. */
  passRate: number | null;
  /** Passed over the scored pairs (infrastructure failures left out), or null: the figure beside the headline. */
  scoredPassRate: number | null;
  costUsd: number | null;
  tokens: number;
  complete: boolean;
}

const TRAJECTORIES = 'trajectories';

/** Facet values kept per key: a key with more (a task id in disguise) is not worth a menu. */
const MAX_FACET_VALUES = 500;

/**
 * The run directories a `benchgym view` serves. A path that holds run.json is a run; any
 * other directory is searched one level down for runs (`benchgym view runs/`).
 */
export async function discoverRuns(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const abs = path.resolve(p);
    const stat = await fs.stat(abs).catch(() => null);
    if (!stat?.isDirectory())
      throw new GymError('INVALID_ARGUMENT', `${p} is not a directory (give run directories, or a directory holding them)`);
    if (await exists(path.join(abs, MANIFEST_FILE))) {
      out.push(abs);
      continue;
    }
    const children = (await fs.readdir(abs, { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => path.join(abs, d.name))
      .sort();
    const runs: string[] = [];
    for (const c of children) if (await exists(path.join(c, MANIFEST_FILE))) runs.push(c);
    if (!runs.length) throw new GymError('INVALID_ARGUMENT', `${p} is not a run directory (no ${MANIFEST_FILE}) and holds none`);
    out.push(...runs);
  }
  return [...new Set(out)];
}

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(
    () => true,
    () => false,
  );
}

/** Run directories by id, each read when asked for and read again when its files change. */
export class RunStore {
  private readonly dirs = new Map<string, string>();
  private readonly cache = new Map<string, ViewedRun>();

  constructor(dirs: string[]) {
    for (const dir of dirs) {
      let id = runId(dir);
      for (let n = 2; this.dirs.has(id); n++) id = `${runId(dir)}-${n}`;
      this.dirs.set(id, dir);
    }
  }

  ids(): string[] {
    return [...this.dirs.keys()];
  }

  /** The run, read again if its files changed since the last read. */
  async get(id: string): Promise<ViewedRun> {
    const dir = this.dirs.get(id);
    if (!dir) throw new GymError('INVALID_ARGUMENT', `no run '${id}' in this viewer (runs: ${this.ids().join(', ') || 'none'})`);
    const version = await versionOf(dir);
    const cached = this.cache.get(id);
    if (cached && cached.version === version) return cached;
    const run = await loadViewedRun(id, dir, version);
    this.cache.set(id, run);
    return run;
  }

  async list(): Promise<RunSummary[]> {
    const out: RunSummary[] = [];
    for (const id of this.ids()) out.push(summarize(await this.get(id)));
    return out;
  }
}

async function versionOf(dir: string): Promise<string> {
  const [m, r, t] = await Promise.all([MANIFEST_FILE, RESULTS_FILE, TRAJECTORIES].map((f) => fs.stat(path.join(dir, f)).catch(() => null)));
  // A new trajectory file (a pair started) changes the directory's mtime.
  return `${m?.mtimeMs ?? 0}:${r?.size ?? 0}:${r?.mtimeMs ?? 0}:${t?.mtimeMs ?? 0}`;
}

export async function loadViewedRun(id: string, dir: string, version = ''): Promise<ViewedRun> {
  const manifest = await readManifest(dir);
  if (!manifest) throw new GymError('INVALID_ARGUMENT', `${dir} is not a run directory (no ${MANIFEST_FILE})`);
  const { records } = await readResults(path.join(dir, RESULTS_FILE));
  const attempts = new Map<string, ResultRecord[]>();
  const finals = new Map<string, ResultRecord>();
  for (const r of records) {
    const key = pairKey(r.task, r.sample);
    const list = attempts.get(key);
    if (list) list.push(r);
    else attempts.set(key, [r]);
    if (r.final) finals.set(key, r);
  }
  const priced = Boolean(manifest.options?.pricing);
  const rows = [...finals.values()].map((r) => rowOf(r, attempts.get(pairKey(r.task, r.sample))!.length, priced));
  const samples = typeof manifest.options?.samples === 'number' ? manifest.options.samples : 1;
  const running = await runningPairs(dir, manifest, samples, finals);
  for (const key of running.keys()) {
    const [task, sample] = key.split('\u0000') as [string, string];
    const earlier = attempts.get(key) ?? [];
    rows.push({
      task,
      sample: Number(sample),
      status: 'running',
      reward: 0,
      stopReason: '',
      steps: 0,
      tokens: 0,
      costUsd: priced ? 0 : null,
      durationMs: 0,
      attempts: earlier.length + 1,
      failToPass: null,
      passToPass: null,
      tests: null,
      infraError: null,
      agentError: null,
      metadata: earlier[0]?.metadata ?? {},
    });
  }
  return {
    id,
    dir,
    manifest,
    rows,
    attempts,
    running,
    expected: (manifest.taskIds?.length ?? 0) * samples,
    facets: facetsOf(rows),
    version,
  };
}

/** Pairs whose trajectory file exists but whose final result is not written yet. */
async function runningPairs(
  dir: string,
  manifest: RunManifest,
  samples: number,
  finals: Map<string, ResultRecord>,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let names: Set<string>;
  try {
    names = new Set(await fs.readdir(path.join(dir, TRAJECTORIES)));
  } catch {
    return out;
  }
  if (finals.size >= names.size) return out;
  for (const task of manifest.taskIds ?? []) {
    for (let sample = 0; sample < samples; sample++) {
      const key = pairKey(task, sample);
      const name = trajectoryName(task, sample);
      if (!finals.has(key) && names.has(name)) out.set(key, path.join(TRAJECTORIES, name));
    }
  }
  return out;
}

function rowOf(r: ResultRecord, attempts: number, priced: boolean): ResultRow {
  const v = r.verdict;
  return {
    task: r.task,
    sample: r.sample,
    status: r.status,
    reward: r.reward ?? 0,
    stopReason: r.stopReason ?? '',
    steps: r.steps ?? 0,
    tokens: r.tokens?.total ?? 0,
    costUsd: priced ? (r.costUsd ?? 0) : null,
    durationMs: r.durations?.totalMs ?? 0,
    attempts,
    failToPass: v?.failToPass ?? null,
    passToPass: v?.passToPass ?? null,
    tests: v?.tests ?? null,
    infraError: r.infraError ? `${r.infraError.code}: ${r.infraError.message}` : null,
    agentError: r.agentError ?? null,
    metadata: r.metadata ?? {},
  };
}

function facetsOf(rows: ResultRow[]): ViewedRun['facets'] {
  const counts = new Map<string, Map<string, number>>();
  for (const row of rows) {
    for (const [key, value] of Object.entries(row.metadata)) {
      let values = counts.get(key);
      if (!values) counts.set(key, (values = new Map()));
      const v = String(value);
      values.set(v, (values.get(v) ?? 0) + 1);
    }
  }
  const out: [string, ViewedRun['facets'][string]][] = [];
  for (const key of [...counts.keys()].sort()) {
    const values = counts.get(key)!;
    if (values.size > MAX_FACET_VALUES) continue;
    out.push([
      key,
      [...values].map(([value, count]) => ({ value, count })).sort((a, b) => a.value.localeCompare(b.value, undefined, { numeric: true })),
    ]);
  }
  // Entries, not assignments: a metadata key `__proto__` stays a key.
  return Object.fromEntries(out);
}

export function summarize(run: ViewedRun): RunSummary {
  let passed = 0;
  let failed = 0;
  let errors = 0;
  let running = 0;
  let cost = 0;
  let tokens = 0;
  for (const r of run.rows) {
    if (r.status === 'passed') passed++;
    else if (r.status === 'failed') failed++;
    else if (r.status === 'running') running++;
    else errors++;
    cost += r.costUsd ?? 0;
    tokens += r.tokens;
  }
  const m = run.manifest;
  return {
    id: run.id,
    suite: m.suite,
    agent: m.agent,
    model: m.model,
    started: m.started,
    results: run.rows.length - running,
    expected: run.expected,
    passed,
    failed,
    errors,
    running,
    passRate: passed + failed + errors ? passed / (passed + failed + errors) : null,
    scoredPassRate: passed + failed ? passed / (passed + failed) : null,
    costUsd: m.options?.pricing ? cost : null,
    tokens,
    complete: run.rows.length - running >= run.expected,
  };
}
