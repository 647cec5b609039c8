import { z } from 'zod';
import { GymError } from '../../src/errors.ts';
import { describeIssues } from '../../src/validation.ts';
import { readJsonlRows } from '../../src/tasks/jsonl.ts';

/** One instance, whichever schema it came in: what the adapter and the scorer need. */
export interface SweInstance {
  instanceId: string;
  /** `owner/name`. */
  repo: string;
  baseCommit: string;
  /** The gold patch (the fixing pull request without its tests). */
  patch: string;
  testPatch: string;
  problemStatement: string;
  hints: string;
  /** Test ids: `Class`, `Class#method`, `module:Class[#method]`. */
  failToPass: string[];
  passToPass: string[];
  version: string;
  environmentSetupCommit?: string;
  createdAt?: string;
  /** Which schema the row was read with. */
  schema: 'swe-bench' | 'multi-swe-bench';
}

/** A JSON list, or a string holding one (SWE-bench stores FAIL_TO_PASS as a JSON string). */
const TestList = z.preprocess(
  (v) => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v || '[]');
    } catch {
      return v;
    }
  },
  z.array(z.string(), { error: 'expected a JSON list of test ids' }),
);

/** The SWE-bench schema (SWE-bench, SWE-bench-java, SWE-bench Multilingual). */
export const SweBenchRow = z.object({
  instance_id: z.string().min(1),
  repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, "'owner/name'"),
  base_commit: z.string().regex(/^[0-9a-f]{40}$/, 'a full commit hash'),
  patch: z.string(),
  test_patch: z.string().min(1),
  problem_statement: z.string().min(1),
  hints_text: z.string().nullish(),
  FAIL_TO_PASS: TestList,
  PASS_TO_PASS: TestList.default([]),
  version: z.union([z.string(), z.number()]).nullish(),
  environment_setup_commit: z.string().nullish(),
  created_at: z.string().nullish(),
});

/** The Multi-SWE-bench record schema. */
export const MultiSweBenchRow = z.object({
  org: z.string().min(1),
  repo: z.string().min(1),
  number: z.number().int(),
  title: z.string().nullish(),
  body: z.string().nullish(),
  base: z.object({ sha: z.string().regex(/^[0-9a-f]{40}$/, 'a full commit hash'), ref: z.string().nullish(), label: z.string().nullish() }),
  resolved_issues: z.array(z.object({ number: z.number().nullish(), title: z.string().nullish(), body: z.string().nullish() })).default([]),
  fix_patch: z.string(),
  test_patch: z.string().min(1),
  f2p_tests: z.record(z.string(), z.unknown()).default({}),
  p2p_tests: z.record(z.string(), z.unknown()).default({}),
  s2p_tests: z.record(z.string(), z.unknown()).default({}),
  n2p_tests: z.record(z.string(), z.unknown()).default({}),
  instance_id: z.string().nullish(),
});

export function fromSweBench(row: z.infer<typeof SweBenchRow>): SweInstance {
  return {
    instanceId: row.instance_id,
    repo: row.repo,
    baseCommit: row.base_commit,
    patch: row.patch,
    testPatch: row.test_patch,
    problemStatement: row.problem_statement,
    hints: row.hints_text ?? '',
    failToPass: row.FAIL_TO_PASS,
    passToPass: row.PASS_TO_PASS,
    version: row.version == null ? '' : String(row.version),
    ...(row.environment_setup_commit ? { environmentSetupCommit: row.environment_setup_commit } : {}),
    ...(row.created_at ? { createdAt: row.created_at } : {}),
    schema: 'swe-bench',
  };
}

/**
 * A Multi-SWE-bench record as an instance: the issue text is the resolved issues' titles and
 * bodies (the pull request's own text when it resolves none), fail-to-pass are `f2p_tests`
 * plus the tests that did not exist before the fix (`s2p`, `n2p`: they fail at the base, as
 * Multi-SWE-bench counts them), pass-to-pass are `p2p_tests`.
 */
export function fromMultiSweBench(row: z.infer<typeof MultiSweBenchRow>): SweInstance {
  const issues = row.resolved_issues.filter((i) => i.title || i.body);
  const statement = issues.length
    ? issues.map((i) => `${i.title ?? ''}\n${i.body ?? ''}`.trim()).join('\n\n')
    : `${row.title ?? ''}\n${row.body ?? ''}`.trim();
  return {
    instanceId: row.instance_id ?? `${row.org}__${row.repo}-${row.number}`,
    repo: `${row.org}/${row.repo}`,
    baseCommit: row.base.sha,
    patch: row.fix_patch,
    testPatch: row.test_patch,
    problemStatement: statement || `pull request #${row.number}`,
    hints: '',
    failToPass: [...new Set([...Object.keys(row.f2p_tests), ...Object.keys(row.s2p_tests), ...Object.keys(row.n2p_tests)])],
    passToPass: Object.keys(row.p2p_tests),
    version: '',
    schema: 'multi-swe-bench',
  };
}

/** Reads a JSON array or JSON Lines file of SWE-bench or Multi-SWE-bench rows (told apart per row). */
export async function readInstances(file: string): Promise<SweInstance[]> {
  // One reader for every dataset file: a JSON array (SWE-bench's own) or JSON Lines.
  const rows = (await readJsonlRows(file, z.unknown(), { arrays: true, what: 'the SWE-bench dataset' })).map(({ row, line }) => ({
    line,
    value: row,
  }));
  const out: SweInstance[] = [];
  const seen = new Set<string>();
  for (const { line, value } of rows) {
    const isMulti = typeof value === 'object' && value !== null && 'fix_patch' in value;
    const result = isMulti ? MultiSweBenchRow.safeParse(value) : SweBenchRow.safeParse(value);
    if (!result.success)
      throw new GymError(
        'TASK_INVALID',
        `${file}:${line}: invalid ${isMulti ? 'Multi-SWE-bench' : 'SWE-bench'} row: ${describeIssues(result.error)}`,
      );
    const inst = isMulti
      ? fromMultiSweBench(result.data as z.infer<typeof MultiSweBenchRow>)
      : fromSweBench(result.data as z.infer<typeof SweBenchRow>);
    if (seen.has(inst.instanceId)) throw new GymError('TASK_INVALID', `${file}:${line}: instance ${inst.instanceId} appears twice`);
    if (!inst.failToPass.length)
      throw new GymError('TASK_INVALID', `${file}:${line}: instance ${inst.instanceId} has no fail-to-pass tests`);
    seen.add(inst.instanceId);
    out.push(inst);
  }
  return out;
}
