import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { GymError } from '../errors.ts';
import { ownValue } from '../own.ts';

/** The options that decide what a run measures: a resumed run must have the same ones. */
export interface RunIdentity {
  dataset: string | null;
  samples: number;
  /** The --tasks selection (null: the whole suite). */
  tasks: string[] | null;
  maxSteps: number | null;
  timeLimitMs: number | null;
  baseURL: string | null;
  temperature: number | null;
  maxTokens: number | null;
  pricing: { prompt: number; completion: number } | null;
  /** Whatever else the caller adds (agent options, --gold, the sandbox backend). */
  [key: string]: unknown;
}

/** DIR/run.json: written when a run starts, read back by --resume and by reports. */
export interface RunManifest {
  version: 1;
  runId: string;
  suite: string;
  agent: string;
  model: string;
  options: RunIdentity;
  /** The task ids the run covers, in order. */
  taskIds: string[];
  started: string;
  /** When the run was resumed (each --resume). */
  resumed: string[];
  /** Settings that may change between resumes without changing the results. */
  settings: { concurrency: number; retries: number };
  host: string;
  node: string;
}

export const MANIFEST_FILE = 'run.json';
export const RESULTS_FILE = 'results.jsonl';

export async function readManifest(dir: string): Promise<RunManifest | undefined> {
  const file = path.join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return JSON.parse(text) as RunManifest;
  } catch (err) {
    throw new GymError('INVALID_ARGUMENT', `${file} is not valid JSON: ${(err as Error).message}`);
  }
}

/** Written to a temporary file and renamed, so a kill never leaves half a manifest. */
export async function writeManifest(dir: string, manifest: RunManifest): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, MANIFEST_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n');
  await fs.rename(tmp, file);
}

export function newManifest(fields: Pick<RunManifest, 'suite' | 'agent' | 'model' | 'options' | 'taskIds' | 'settings'>): RunManifest {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return {
    version: 1,
    runId: `run-${stamp}-${randomBytes(3).toString('hex')}`,
    ...fields,
    started: new Date().toISOString(),
    resumed: [],
    host: os.hostname(),
    node: process.version,
  };
}

/** The differences that make a resume measure something else, as `field: was → now` lines. */
export function identityDifferences(
  before: Pick<RunManifest, 'suite' | 'agent' | 'model' | 'options'>,
  now: Pick<RunManifest, 'suite' | 'agent' | 'model' | 'options'>,
): string[] {
  const out: string[] = [];
  for (const key of ['suite', 'agent', 'model'] as const) {
    if (before[key] !== now[key]) out.push(`${key}: ${show(before[key])} → ${show(now[key])}`);
  }
  const keys = new Set([...Object.keys(before.options ?? {}), ...Object.keys(now.options ?? {})]);
  for (const key of [...keys].sort()) {
    const a = canonical(ownValue(before.options, key) ?? null);
    const b = canonical(ownValue(now.options, key) ?? null);
    if (a !== b) out.push(`${key}: ${a} → ${b}`);
  }
  return out;
}

function show(v: unknown): string {
  return JSON.stringify(v ?? null);
}

/** JSON with object keys sorted, for comparing option values. */
export function canonical(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, sortKeys(v)]),
    );
  }
  return value;
}
