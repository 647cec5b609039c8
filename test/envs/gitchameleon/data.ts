import { existsSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../src/tasks/registry.ts';

/** The shared GitChameleon data, read in place (never copied into the repository). */
export const GITCHAMELEON_DIR =
  process.env.BENCHGYM_GITCHAMELEON_DATA ?? path.resolve(PROJECT_ROOT, '..', 'shared', 'datasets', 'gitchameleon');
export const V1_DIR = path.join(GITCHAMELEON_DIR, 'v1');
export const V2_DIR = path.join(GITCHAMELEON_DIR, 'v2');
export const REFERENCE_DIR = path.join(GITCHAMELEON_DIR, 'reference', 'v2_self_debug');
export const REFERENCE_FILES = [
  'gpt_4o_t0_eval_results.jsonl',
  'gpt_4o_mini_t0_eval_results.jsonl',
  'Llama-3.3-70B-Instruct-Turbo_t0_eval_results.jsonl',
];

/** node:test's `skip` option: false when the data is here, else the reason, printed with the skip. */
export const SKIP_WITHOUT_DATA: string | false =
  existsSync(path.join(V2_DIR, 'dataset.jsonl')) && existsSync(path.join(V1_DIR, 'combined_dataset.jsonl'))
    ? false
    : `GitChameleon data not found at ${GITCHAMELEON_DIR} (set BENCHGYM_GITCHAMELEON_DATA to its directory)`;

/**
 * v2 problems with light, pure-Python pins that install in seconds on the Pythons this
 * project tests with, one per Python version the v2 data uses, whose published verdicts
 * differ between models: tqdm 4.28 (3.7), sympy 1.13 (3.9), jinja2 3.1 and 2.11 and
 * flask 3.0 (3.10). Heavy libraries (torch, spacy, gradio...) stay out of default runs.
 */
export const LIGHT_V2 = ['323', '187', '203', '156', '155', '146'];
