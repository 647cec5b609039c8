import { existsSync } from 'node:fs';
import path from 'node:path';
import { GymError } from '../../src/errors.ts';
import type { Suite } from '../../src/tasks/suite.ts';
import type { Task } from '../../src/tasks/schema.ts';
import {
  byExampleId,
  detectForm,
  readJsonl,
  SolutionRow,
  TestFileRow,
  V1_FILE,
  V1Row,
  V2_FILES,
  V2Row,
  type DatasetForm,
} from './dataset.ts';
import { defaultDocsFile, docSymbolCandidates, readDocsStore } from './docs.ts';
import { importNameOf } from './env.ts';
import { GitChameleonMetadata } from './metadata.ts';
import { viewDocsTool } from '../../src/tools/view_docs.ts';
import { replayAdapter } from './replay.ts';
import { v1Task, v2Task } from './tasks.ts';

export interface GitChameleonOptions {
  /** The suite id (default `gitchameleon`). */
  id?: string;
  /** The docs store for the `with-docs` prompt variants (default: `defaultDocsFile(form, cacheDir)`). */
  docsFile?: string;
  /** The suite's own cache folder (`--cache-dir`/gitchameleon), where the docs store is by default. */
  cacheDir?: string;
}

export interface LoadedGitChameleon {
  form: DatasetForm;
  tasks: Task[];
  /** Per task id: where the documentation of its `name_of_class_or_func` may be found (for renderDocs). */
  docSymbols: Map<string, string[]>;
}

/** Reads a GitChameleon dataset directory (v1 or v2, by its files) into tasks. Reads only; never copies the data. */
export async function loadGitChameleon(
  dir: string,
  suite = 'gitchameleon',
  opts: { docsFile?: string; cacheDir?: string } = {},
): Promise<LoadedGitChameleon> {
  const root = path.resolve(dir);
  const form = detectForm(root);
  const docs = await readDocsStore(opts.docsFile ?? defaultDocsFile(form, opts.cacheDir), form);
  const docSymbols = new Map<string, string[]>();
  const tasks: Task[] = [];
  if (form === 'v2') {
    const file = (f: string) => path.join(root, f);
    const [rows, visible, hidden, solutions] = await Promise.all([
      readJsonl(file(V2_FILES.problems), V2Row),
      readJsonl(file(V2_FILES.visible), TestFileRow),
      readJsonl(file(V2_FILES.hidden), TestFileRow),
      readJsonl(file(V2_FILES.solutions), SolutionRow),
    ]);
    const visibleById = byExampleId(visible, V2_FILES.visible);
    const hiddenById = byExampleId(hidden, V2_FILES.hidden);
    const solutionById = byExampleId(solutions, V2_FILES.solutions);
    byExampleId(rows, V2_FILES.problems);
    // The v2 harness keys venvs by (Python, library, version, additional_dependencies) and
    // builds each from the first problem with that key, extra_dependencies included; the
    // later problems share that venv whatever their own extra_dependencies say (the librosa
    // 0.8.0 rows differ in their joblib pin, and only the first one's can be installed).
    const firstOfKey = new Map<string, V2Row>();
    for (const row of rows) {
      const key = JSON.stringify([row.python_version, row.library, row.version, row.additional_dependencies ?? '']);
      if (!firstOfKey.has(key)) firstOfKey.set(key, row);
    }
    // hidden_tests.jsonl also holds a test for an example_id with no problem row; it is not a task.
    for (const original of rows) {
      const row = {
        ...original,
        extra_dependencies: firstOfKey.get(
          JSON.stringify([original.python_version, original.library, original.version, original.additional_dependencies ?? '']),
        )!.extra_dependencies,
      };
      const v = visibleById.get(row.example_id);
      const h = hiddenById.get(row.example_id);
      const s = solutionById.get(row.example_id);
      if (!v || !h || !s) {
        throw new GymError(
          'TASK_INVALID',
          `problem ${row.example_id} has ` +
            `no ${[!v && 'visible test', !h && 'hidden test', !s && 'reference solution'].filter(Boolean).join(', ')}`,
        );
      }
      tasks.push(v2Task(suite, row, { visible: v, hidden: h, solution: s.answer }, docs.get(row.example_id)));
      docSymbols.set(row.example_id, docSymbolCandidates(row.name_of_class_or_func, importNameOf(row.library), row.api_calls));
    }
  } else {
    const rows = await readJsonl(path.join(root, V1_FILE), V1Row);
    const seen = new Set<string>();
    for (const row of rows) {
      if (seen.has(row.idx)) throw new GymError('TASK_INVALID', `${V1_FILE}: idx ${row.idx} appears twice`);
      seen.add(row.idx);
      tasks.push(v1Task(suite, row, docs.get(row.idx)));
      docSymbols.set(row.idx, docSymbolCandidates(row.name_of_class_or_func, importNameOf(row.library)));
    }
  }
  return { form, tasks, docSymbols };
}

/** Host paths that hold hidden tests, solutions or published answers: the dataset, and its siblings in the shared layout. */
function privatePathsOf(dataset: string): string[] {
  const root = path.resolve(dataset);
  const parent = path.dirname(root);
  const shared = ['v1', 'v2', 'reference'].filter((d) => existsSync(path.join(parent, d)));
  // v1 and v2 share problems, and reference/ holds models' answers: all of it is private.
  return shared.length >= 2 ? [root, parent] : [root];
}

/**
 * The GitChameleon suite: `--suite gitchameleon=PATH` with PATH a v2 directory
 * (dataset.jsonl, visible_tests.jsonl, hidden_tests.jsonl, ground_truth_solutions.jsonl)
 * or a v1 directory (combined_dataset.jsonl).
 */
export function gitchameleonSuite(opts: GitChameleonOptions = {}): Suite {
  const id = opts.id ?? 'gitchameleon';
  const need = (dataset?: string): string => {
    if (!dataset)
      throw new GymError('INVALID_ARGUMENT', `suite '${id}' needs its dataset: --suite ${id}=PATH, PATH a GitChameleon v2 or v1 directory`);
    return dataset;
  };
  return {
    id,
    description:
      'GitChameleon: Python problems that must be solved for one pinned library ' +
      'version (v2: 328 problems, hidden pytest files; v1: 116, assertion scripts)',
    metadata: GitChameleonMetadata,
    load: async (dataset) => (await loadGitChameleon(need(dataset), id, { docsFile: opts.docsFile, cacheDir: opts.cacheDir })).tasks,
    privatePaths: (dataset) => (dataset ? privatePathsOf(dataset) : []),
    // The paper's setting is a model that can read the pinned version's documentation.
    tools: [viewDocsTool],
    // The authors' published model outputs, scored as submissions and compared with their verdicts.
    replay: replayAdapter,
  };
}

export { candidateCode, extractCode, authorsSanitize, EXTRACTION_MODES, type ExtractionMode } from './extract.ts';
export { renderDocs, writeDocsStore, defaultDocsFile } from './docs.ts';
