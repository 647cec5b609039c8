import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { GymError } from '../../src/errors.ts';
import { describeIssues } from '../../src/validation.ts';
import { readJsonl as readSharedJsonl } from '../../src/tasks/jsonl.ts';

/** The files of a CoderEval (Python) dataset directory, relative to it. */
export const FILES = {
  all: 'CoderEval-ALL.jsonl',
  tests: 'tests/savealltests.txt',
  raw: 'input4models/CEPythonRaw.jsonl',
  humanLabel: 'input4models/CEPythonHumanLabel.jsonl',
  /** The official record file (github.com/CoderEval/CoderEval), when the user has it. */
  records: 'CoderEval4Python.json',
  /** Published outputs; their rows are official records too (with `level`). */
  reference: 'reference/official/GenerateResultPython',
};

/** The six runnable levels of the paper (§3.2.3), from the most to the least self-contained. */
export const LEVELS = ['self_contained', 'slib_runnable', 'plib_runnable', 'class_runnable', 'file_runnable', 'project_runnable'] as const;
export type Level = (typeof LEVELS)[number];
/** The paper's RQ1 split: standalone functions use only built-ins and the standard library. */
export const STANDALONE_LEVELS: ReadonlySet<string> = new Set(['self_contained', 'slib_runnable']);

/** One line of CoderEval-ALL.jsonl (the LLMCodingHallucination release of the 230 tasks). */
export const AllRow = z.looseObject({
  prompt: z.string(),
  metadata: z.looseObject({
    task_id: z.string().regex(/^[^/]+\/[0-9a-f]{24}$/, '"<owner>---<repo>/<_id>"'),
    ground_truth: z.string().min(1),
    function_name: z.string().min(1),
    docstring: z.string(),
    human_label: z.string().optional(),
    signature: z.string(),
    'lsp-context': z.string().includes('<PLACEHOLDER>'),
    'lsp-path': z.string().min(1),
    'lsp-repo': z.string().min(1),
  }),
});
export type AllRow = z.infer<typeof AllRow>;

/** One line of input4models/*.jsonl: the official prompt. */
export const PromptRow = z.looseObject({
  question_id: z.string(),
  input: z.string(),
  signature: z.string().optional(),
  docstring: z.string().optional(),
});
export type PromptRow = z.infer<typeof PromptRow>;

/**
 * An official record (CoderEval4Python.json `RECORDS`, or a row of the published
 * `*_out.jsonl`, which repeats the record's fields): only what the suite reads.
 */
export const OfficialRecord = z.looseObject({
  _id: z.string(),
  name: z.string().optional(),
  project: z.string().optional(),
  file_path: z.string().optional(),
  level: z.enum(LEVELS).optional(),
  oracle_context: z.unknown().optional(),
  human_label: z.string().optional(),
});
export type OfficialRecord = z.infer<typeof OfficialRecord>;

export async function readText(file: string, what: string): Promise<string> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new GymError('SUITE_NOT_FOUND', `cannot read ${what} ${file}: ${(err as Error).message}`);
  }
}

/**
 * The rows of one of the dataset's JSON Lines files (the shared reader); a
 * file that cannot be read is named as `what`, a bad row by its path and line.
 */
export function readJsonl<T extends z.ZodType>(file: string, schema: T, what = path.basename(file)): Promise<z.infer<T>[]> {
  return readSharedJsonl(file, schema, { what });
}

/** The official records by _id: CoderEval4Python.json when present, else the rows of the published outputs. */
export async function readOfficialRecords(root: string): Promise<{ records: Map<string, OfficialRecord>; source: string[] }> {
  const records = new Map<string, OfficialRecord>();
  const source: string[] = [];
  const json = path.join(root, FILES.records);
  if (existsSync(json)) {
    const parsed = z.object({ RECORDS: z.array(OfficialRecord) }).safeParse(JSON.parse(await readText(json, 'the record file')));
    if (!parsed.success) throw new GymError('TASK_INVALID', `${FILES.records}: ${describeIssues(parsed.error)}`);
    for (const r of parsed.data.RECORDS) records.set(r._id, r);
    source.push(FILES.records);
  }
  const ref = path.join(root, FILES.reference);
  const outs: string[] = [];
  for (const model of (await fs.readdir(ref).catch(() => [] as string[])).sort()) {
    for (const f of (await fs.readdir(path.join(ref, model)).catch(() => [] as string[])).sort())
      if (f.endsWith('_out.jsonl')) outs.push(path.join(FILES.reference, model, f));
  }
  for (const rel of outs) {
    let added = false;
    for (const r of await readJsonl(path.join(root, rel), OfficialRecord, rel)) {
      const had = records.get(r._id);
      if (!had) {
        records.set(r._id, r);
        added = true;
      } else if (!had.level && r.level) {
        records.set(r._id, { ...had, level: r.level });
        added = true;
      }
    }
    if (added) source.push(rel);
  }
  return { records, source };
}

/**
 * oracle_context as the record stores it — a JSON object (or its text) with `apis`, `classes`
 * and `vars`, each a list or the text of a Python list (`"['a', 'b']"`) — by the paper's
 * token categories (§3.2.2): APIInvocation, TypeReference, VarReference. Empty categories are
 * left out; undefined when there is nothing.
 */
export const ORACLE_CATEGORIES: Record<string, string> = { apis: 'APIInvocation', classes: 'TypeReference', vars: 'VarReference' };

export function oracleContextOf(raw: unknown): Record<string, string[]> | undefined {
  let value = raw;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out: Record<string, string[]> = {};
  for (const [key, category] of Object.entries(ORACLE_CATEGORIES)) {
    const tokens = pythonList((value as Record<string, unknown>)[key]);
    if (tokens.length) out[category] = [...new Set(tokens)];
  }
  return Object.keys(out).length ? out : undefined;
}

/** A list of names from a JSON array or the text of a Python list of strings. */
export function pythonList(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim());
  if (typeof v !== 'string') return [];
  return [...v.matchAll(/'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"/g)].map((m) => (m[1] ?? m[2] ?? '').trim()).filter(Boolean);
}

/** savealltests.txt: blocks separated by a line of dashes, each headed by its original absolute path. */
export function splitTestBlocks(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of text.split(/^-{20,}\n/m)) {
    if (!part.trim()) continue;
    const nl = part.indexOf('\n');
    const key = (nl < 0 ? part : part.slice(0, nl)).trim();
    if (out.has(key)) throw new GymError('TASK_INVALID', `${FILES.tests}: the block ${key} appears twice`);
    out.set(key, nl < 0 ? '' : part.slice(nl + 1));
  }
  return out;
}

export const REPOS = '/home/travis/builds/repos';

/**
 * The test block of a task: `standalone/<file path with - for />-<name>.py` for the tasks the
 * platform runs alone, else `<owner---repo>/.../<file path without .py>_<name>_passk_validte.py`
 * (some projects sit under src/; one file was renamed since: then the one block of that name).
 */
export function testBlockKey(blocks: Map<string, string>, t: { project: string; filePath: string; name: string }): string | undefined {
  const base = t.filePath.replace(/\.py$/, '');
  const standalone = `${REPOS}/standalone/${base.replace(/\//g, '-')}-${t.name}.py`;
  if (blocks.has(standalone)) return standalone;
  const prefix = `${REPOS}/${t.project.replace('/', '---')}/`;
  const keys = [...blocks.keys()].filter((k) => k.startsWith(prefix));
  const exact = keys.filter((k) => k.endsWith(`/${base}_${t.name}_passk_validte.py`));
  if (exact.length === 1) return exact[0];
  const byName = keys.filter((k) => k.endsWith(`_${t.name}_passk_validte.py`));
  return byName.length === 1 ? byName[0] : undefined;
}
