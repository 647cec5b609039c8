import path from 'node:path';
import { PROJECT_ROOT } from '../../../src/tasks/registry.ts';

/**
 * The shared SWE-bench-java data (the gson instances, the Multi-SWE-bench records), read in place
 * (never copied into the repository): `$BENCHGYM_SWEBENCH_JAVA_DATA`, else `shared/datasets/swe-bench-java`
 * in the checkout's parent directory (a git worktree elsewhere sets the variable).
 */
export const SWEBENCH_JAVA_DIR =
  process.env.BENCHGYM_SWEBENCH_JAVA_DATA ?? path.resolve(PROJECT_ROOT, '..', 'shared', 'datasets', 'swe-bench-java');
