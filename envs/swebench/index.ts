import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../../src/errors.ts';
import type { Suite } from '../../src/tasks/suite.ts';
import { SwebenchMetadata } from './metadata.ts';
import { replayAdapter } from './replay.ts';
import { reconstructCommand } from './reconstruct.ts';
import { readInstances } from './dataset.ts';
import { scoreSwebench } from './scorer.ts';
import { instanceTask, type RepoOptions } from './tasks.ts';

export { readInstances, type SweInstance } from './dataset.ts';
export { scoreSwebench, decideSwebench, covers } from './scorer.ts';
export { instanceTask, promptOf } from './tasks.ts';
export { specFor, SPECS, INSTANCE_SPECS, type RepoSpec, type JavaSpec, type PythonSpec } from './specs.ts';

export const SWEBENCH_SUITE = 'swe-bench-java';

/**
 * The files of a dataset path: a JSON / JSONL file, or every `*.json` / `*.jsonl` file of a
 * directory (Multi-SWE-bench ships one file per repository).
 */
export async function datasetFiles(dataset: string): Promise<string[]> {
  const root = path.resolve(dataset);
  if (!existsSync(root)) throw new GymError('SUITE_NOT_FOUND', `SWE-bench dataset ${root} does not exist`);
  if (!(await fs.stat(root)).isDirectory()) return [root];
  const files = (await fs.readdir(root))
    .filter((f) => /\.jsonl?$/.test(f))
    .sort()
    .map((f) => path.join(root, f));
  if (!files.length) throw new GymError('SUITE_NOT_FOUND', `no .json or .jsonl files in ${root}`);
  return files;
}

/**
 * SWE-bench-java (and any SWE-bench or Multi-SWE-bench file): each instance an episode on its
 * repository at the base commit, scored by `scoreSwebench`. The dataset is read in place.
 */
export function swebenchSuite(opts: RepoOptions & { id?: string } = {}): Suite {
  const id = opts.id ?? SWEBENCH_SUITE;
  return {
    id,
    description:
      'SWE-bench-java / Multi-SWE-bench: resolve a GitHub issue in a real repository; scored by FAIL_TO_PASS and PASS_TO_PASS tests',
    metadata: SwebenchMetadata,
    async load(dataset) {
      if (!dataset) throw new GymError('INVALID_ARGUMENT', `suite '${id}' needs a dataset: --suite ${id}=FILE.jsonl (or --dataset)`);
      const tasks = [];
      for (const file of await datasetFiles(dataset))
        for (const inst of await readInstances(file)) tasks.push(instanceTask(id, inst, opts));
      return tasks;
    },
    // The dataset holds the gold and test patches (its whole folder is private); the mirrors
    // hold the future (the fixing commits): sandboxes must not reach either.
    privatePaths: (dataset) => [
      ...(dataset ? [/\.jsonl?$/.test(dataset) ? path.dirname(path.resolve(dataset)) : path.resolve(dataset)] : []),
      ...(opts.reposDir ? [path.resolve(opts.reposDir)] : []),
    ],
    score: (task, patch, deps, scoreOpts) => scoreSwebench(task, patch, deps, scoreOpts),
    // The harness's steps and the build guard run in both modes (strict refuses what faithful removes from a diff):
    // the empty patch gets one verdict either way.
    scoringModeIndependent: true,
    // all_preds.jsonl (instance_id, model_patch) → results.json and logs/<instance_id>/, as the harness writes them.
    replay: replayAdapter,
    // Instances whose records cannot be had, rebuilt from the repository's history.
    commands: [reconstructCommand],
  };
}
