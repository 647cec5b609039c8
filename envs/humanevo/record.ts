import { z } from 'zod';
import { readJsonl } from '../../src/tasks/jsonl.ts';
import { EnvSpec, RunnerSpec } from '../../src/tasks/schema.ts';
import { EraEnvDerivation } from './era_env.ts';

export const BUILT_FORMAT = 'benchgym-humanevo/1';

export const DependencyLevelSchema = z.enum(['standalone', 'intra-class', 'inter-class']);

/**
 * One task mined by `benchgym build-tasks`: a function a change added, validated by
 * execution. It names commits, never carries code: the repository is read at load time.
 */
export const BuiltTaskRecord = z.object({
  format: z.literal(BUILT_FORMAT),
  instance_id: z
    .string()
    .min(1)
    .regex(/^[A-Za-z0-9._\/@+-]+$/, 'letters, digits and ._/@+- only'),
  /** A display name (`owner/name` when known, else the folder's name). */
  repo: z.string().min(1),
  /** The local repository (bare or not) the task is read from. */
  repo_path: z.string().min(1),
  language: z.enum(['python', 'java']),
  /** The change (a merge of a pull request or a plain commit) that added the function. */
  commit: z.string().regex(/^[0-9a-f]{40}$/),
  /** Its first parent: the repository as the developer saw it; history is cut here. */
  base_commit: z.string().regex(/^[0-9a-f]{40}$/),
  /** The newest commit the builder saw: the evolving-ignored context. */
  latest_commit: z.string().regex(/^[0-9a-f]{40}$/),
  date: z.string(),
  /** The project's version at the change (HumanEvo's Version field), when known. */
  version: z.string().optional(),
  subject: z.string().default(''),
  merge: z.boolean().default(false),
  target: z.object({
    file: z.string().min(1),
    qualname: z.string().min(1),
    name: z.string().min(1),
    cls: z.string().nullable(),
    lines: z.tuple([z.number().int().positive(), z.number().int().positive()]),
  }),
  signature: z.string(),
  docstring_detailed: z.string(),
  docstring_brief: z.string(),
  dependency_level: DependencyLevelSchema,
  references: z.object({ project: z.array(z.string()), class: z.array(z.string()) }).default({ project: [], class: [] }),
  /** The change's test files (held back as hidden tests) and its other files (part of the start state). */
  test_files: z.array(z.string()).min(1),
  production_files: z.array(z.object({ status: z.enum(['A', 'M', 'D']), path: z.string() })),
  /** Empty only for adapted HumanEvo records that name none: every hidden test must then pass. */
  fail_to_pass: z.array(z.string()),
  pass_to_pass: z.array(z.string()),
  env: EnvSpec,
  /** How `build-tasks` derived the env of the change's era (the Python and why, the runner, the cut-off), when it did. */
  env_derivation: EraEnvDerivation.optional(),
  test_runner: RunnerSpec,
  test_timeout_ms: z.number().int().positive().default(600_000),
});
export type BuiltTaskRecord = z.infer<typeof BuiltTaskRecord>;
export type BuiltTaskInput = z.input<typeof BuiltTaskRecord>;

/**
 * A record of HumanEvo's own data (the paper's Figure 2), for users who have the data and
 * the repositories: the fields the release names, read loosely (the release spells some of
 * them in more than one way).
 */
export const HumanEvoRecord = z.looseObject({
  instance_id: z.union([z.string(), z.number()]).transform(String),
  repo: z.string().min(1),
  version: z.union([z.string(), z.number()]).transform(String).optional(),
  base_commit: z.string().min(7),
  brief_docstring: z.string().optional(),
  detailed_docstring: z.string().optional(),
  dependency_level: z.string().optional(),
  /** The change that added the function (when given; else the base commit's child on the first-parent line). */
  commit: z.string().optional(),
  file_path: z.string().optional(),
  function_name: z.string().optional(),
  language: z.enum(['python', 'java', 'Python', 'Java']).optional(),
  test_patch: z.string().optional(),
  FAIL_TO_PASS: z.union([z.array(z.string()), z.string()]).optional(),
  PASS_TO_PASS: z.union([z.array(z.string()), z.string()]).optional(),
});
export type HumanEvoRecord = z.infer<typeof HumanEvoRecord>;

/** Reads a JSON Lines file with a schema; errors name the line and the field. */
export function readRecords<T extends z.ZodTypeAny>(file: string, schema: T): Promise<z.infer<T>[]> {
  return readJsonl(file, schema);
}

/** Normalises HumanEvo's dependency labels (`Standalone`, `intra_class`, `Inter-Class` ...). */
export function normalizeLevel(label: string | undefined): z.infer<typeof DependencyLevelSchema> | undefined {
  if (!label) return undefined;
  const l = label.toLowerCase().replace(/[_\s]+/g, '-');
  if (l.startsWith('stand')) return 'standalone';
  if (l.startsWith('intra')) return 'intra-class';
  if (l.startsWith('inter')) return 'inter-class';
  return undefined;
}
