import { existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { GymError } from '../../src/errors.ts';

/** The two published forms of the benchmark, told apart by their files. */
export type DatasetForm = 'v1' | 'v2';

export const V1_FILE = 'combined_dataset.jsonl';
export const V2_FILES = {
  problems: 'dataset.jsonl',
  visible: 'visible_tests.jsonl',
  hidden: 'hidden_tests.jsonl',
  solutions: 'ground_truth_solutions.jsonl',
} as const;

/** v1 or v2 by the files present; anything else is SUITE_NOT_FOUND with what was looked for. */
export function detectForm(dir: string): DatasetForm {
  if (Object.values(V2_FILES).every((f) => existsSync(path.join(dir, f)))) return 'v2';
  if (existsSync(path.join(dir, V1_FILE))) return 'v1';
  const sub = ['v2', 'v1'].filter((d) => existsSync(path.join(dir, d)));
  throw new GymError(
    'SUITE_NOT_FOUND',
    `${dir} is not a GitChameleon dataset: expected ${Object.values(V2_FILES).join(', ')} (v2) ` +
      `or ${V1_FILE} (v1)${sub.length ? `; try ${sub.map((d) => path.join(dir, d)).join(' or ')}` : ''}`,
  );
}

const flag = z
  .union([z.number(), z.string(), z.boolean()])
  .transform((v) => v === true || v === 1 || v === '1' || v === 'True' || v === 'true');
const text = z.string().default('');

/** A v2 problem (dataset.jsonl). Cells vary in type across rows (functional: 1 or "1"). */
export const V2Row = z.looseObject({
  example_id: z.union([z.string(), z.number()]).transform(String),
  python_version: z.string().regex(/^3\.\d+$/),
  library: z.string().min(1),
  version: z.union([z.string(), z.number()]).transform(String),
  problem: z.string(),
  starting_code: z.string(),
  solution: text,
  test: text,
  additional_dependencies: z.unknown().optional(),
  /** Installed with the additional dependencies by the v2 harness (create_venvs.py), on some rows. */
  extra_dependencies: z.unknown().optional(),
  type_of_change: text,
  name_of_class_or_func: text,
  functional: flag.optional(),
  webdev: flag.optional(),
  api_calls: z.array(z.string()).default([]),
  release_date: text,
  /** Links to the library's documentation pages (not the documentation itself). */
  docs: z.array(z.string()).default([]),
});
export type V2Row = z.infer<typeof V2Row>;

/** A test file row (visible_tests.jsonl, hidden_tests.jsonl). */
export const TestFileRow = z.looseObject({
  example_id: z.union([z.string(), z.number()]).transform(String),
  path: z.string().min(1),
  test_file: z.string(),
});

/** A reference solution row (ground_truth_solutions.jsonl): the whole file. */
export const SolutionRow = z.looseObject({
  example_id: z.union([z.string(), z.number()]).transform(String),
  answer: z.string(),
});

/** A v1 problem (combined_dataset.jsonl); code cells may hold literal "\n" escapes. */
export const V1Row = z.looseObject({
  idx: z.union([z.number(), z.string()]).transform(String),
  library: z.string().min(1),
  version: z.union([z.string(), z.number()]).transform(String),
  name_of_class_or_func: text,
  type_of_change: text,
  problem: z.string(),
  starting_code: z.string(),
  solution: text,
  test: z.string().min(1),
  additional_dependencies: z.unknown().optional(),
  release_date: text,
});
export type V1Row = z.infer<typeof V1Row>;

export { readJsonl, readJsonlRows, type JsonlOptions } from '../../src/tasks/jsonl.ts';

/** Keyed by example_id; a second row for one id is an error (the data would be ambiguous). */
export function byExampleId<T extends { example_id: string }>(rows: T[], file: string): Map<string, T> {
  const map = new Map<string, T>();
  for (const row of rows) {
    if (map.has(row.example_id)) throw new GymError('TASK_INVALID', `${file}: example_id ${row.example_id} appears twice`);
    map.set(row.example_id, row);
  }
  return map;
}

/** The four-digit year in a release date written any of the ways the data does ("2021-06", "22/06/2021", "03-18-2023"). */
export function releaseYear(date: string): number | undefined {
  const m = /(?:^|\D)((?:19|20)\d\d)(?:\D|$)/.exec(date);
  return m ? Number(m[1]) : undefined;
}

/** Labels as written, with the stray newlines and spaces of the v1 cells removed. */
export function cleanLabel(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
