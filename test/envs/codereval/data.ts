import { existsSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../src/tasks/registry.ts';

/** The shared CoderEval data, read in place (never copied into the repository). */
export const CODEREVAL_DIR = process.env.BENCHGYM_CODEREVAL_DATA ?? path.resolve(PROJECT_ROOT, '..', 'shared', 'datasets', 'codereval');
export const CHATGPT_DIR = path.join(CODEREVAL_DIR, 'reference', 'official', 'GenerateResultPython', 'ChatGPT');

/** node:test's `skip` option: false when the data is here, else the reason, printed with the skip. */
export const SKIP_WITHOUT_DATA: string | false =
  existsSync(path.join(CODEREVAL_DIR, 'CoderEval-ALL.jsonl')) && existsSync(path.join(CODEREVAL_DIR, 'tests', 'savealltests.txt'))
    ? false
    : `CoderEval data not found at ${CODEREVAL_DIR} (set BENCHGYM_CODEREVAL_DATA to its directory)`;

/**
 * A handful of runnable tasks for default runs: a method (cachetools' setdefault), a
 * standalone function whose real file imports what the test file lacks (is_none_string), a
 * conftest.py function (base_config), and a self_contained task whose published samples
 * pass and fail (int_to_string).
 */
export const SMALL = ['62b8d22a48ba5a41d1c3f47e', '62ece4982e6aefcf4aabbd63', '62b86729b4d922cb0e688c2f', '62ece4982e6aefcf4aabbd68'];
