import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GymError } from '../../src/errors.ts';
import type { Suite } from '../../src/tasks/suite.ts';
import { CODEREVAL_PRIVATE_METADATA, CoderEvalMetadata } from './metadata.ts';
import { annotateCoderEvalResult } from './metrics.ts';
import { coderevalReportSections } from './report.ts';
import { replayAdapter } from './replay.ts';
import type { Task } from '../../src/tasks/schema.ts';
import {
  AllRow,
  FILES,
  oracleContextOf,
  PromptRow,
  readJsonl,
  readOfficialRecords,
  readText,
  splitTestBlocks,
  testBlockKey,
} from './dataset.ts';
import { buildEnvsCommand } from './build_envs.ts';
import { findCommitsCommand } from './find_commits.ts';
import { platformNeeds } from './platform.ts';
import { findFunctions, targetPath, withoutCommentLines } from './pysource.ts';
import {
  buildTask,
  DEFAULT_OPTIONS,
  IMAGE_OPTION,
  IMAGE_PYTHON_OPTION,
  parseTaskId,
  type ProjectStart,
  type TaskOptions,
  type TaskSource,
} from './tasks.ts';
import { ProjectsTable } from './commits.ts';
import { PROJECTS_FILE } from './find_commits.ts';
import { projectEnvTable } from './project_envs.ts';
import { planProjectTask, projectCacheDir, runsInProject, projectStartState, type ProjectSourceOptions } from './project_tasks.ts';

/** The scoring procedure run in every scoring sandbox (scorer.py, next to this file). */
export const SCORER_SOURCE = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'scorer.py'), 'utf8');

export interface LoadedCoderEval {
  tasks: Task[];
  sources: Map<string, TaskSource>;
  /** Which files gave the official records (levels, oracle_context). */
  recordSources: string[];
  /** A task with options (`<_id>+human-label`, `+platform-test`). */
  variant(id: string, options: TaskOptions): Promise<Task>;
}

/** Where the suite finds the projects and keeps their checkouts (project-level tasks). */
export interface CoderEvalProjectOptions extends ProjectSourceOptions {
  /** The tables (default: the suite's projects.json and project-envs.json). */
  projectsFile?: string;
  envsFile?: string;
  /** Leave project-level tasks ENV_UNAVAILABLE without laying out any project (false: lay them out). */
  noProjects?: boolean;
}

/**
 * The platform test files in the same folder as `testKey` that its test imports by module name
 * (`patch("diaspora_retrieve_and_parse_diaspora_webfinger_passk_validte.XRD.parse_xrd")`): they sat
 * beside it in the platform's copy of the project. Commented-out lines do not count.
 */
export function siblingTestsOf(blocks: Map<string, string>, testKey: string, testSource: string): Record<string, string> | undefined {
  const dir = testKey.slice(0, testKey.lastIndexOf('/') + 1);
  const own = testKey.slice(dir.length).replace(/\.py$/, '');
  const code = withoutCommentLines(testSource);
  const names = new Set([...code.matchAll(/\b(\w+_passk_validte)\b/g)].map((m) => m[1]!).filter((n) => n !== own));
  const found = [...names].map((n) => `${dir}${n}.py`).filter((k) => blocks.has(k));
  return found.length ? Object.fromEntries(found.map((k) => [k, blocks.get(k)!])) : undefined;
}

function readProjects(file: string | URL): ProjectsTable | undefined {
  try {
    return ProjectsTable.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return undefined;
  }
}

/** Reads a CoderEval (Python) dataset directory in place into tasks (default options). */
export async function loadCoderEval(
  dir: string,
  suite = 'codereval',
  opts: { image?: string; imagePython?: string; projects?: CoderEvalProjectOptions } = {},
): Promise<LoadedCoderEval> {
  const root = path.resolve(dir);
  const file = (f: string) => path.join(root, f);
  const [rows, raw, human, blocksText, official] = await Promise.all([
    readJsonl(file(FILES.all), AllRow, FILES.all),
    readJsonl(file(FILES.raw), PromptRow, FILES.raw).catch(() => [] as PromptRow[]),
    readJsonl(file(FILES.humanLabel), PromptRow, FILES.humanLabel).catch(() => [] as PromptRow[]),
    readText(file(FILES.tests), 'the platform test files'),
    readOfficialRecords(root),
  ]);
  const blocks = splitTestBlocks(blocksText);
  const rawById = new Map(raw.map((p) => [p.question_id, p.input]));
  const humanById = new Map(human.map((p) => [p.question_id, p.input]));
  const sources = new Map<string, TaskSource>();
  const po: CoderEvalProjectOptions = { ...opts.projects };
  // A named CoderEval image runs project-level tasks as the platform did: no project is laid out then.
  if (opts.image) po.noProjects = true;
  const projects = po.noProjects ? undefined : readProjects(po.projectsFile ?? PROJECTS_FILE);
  const envs = po.noProjects ? new Map() : projectEnvTable(po.envsFile);
  for (const row of rows) {
    const m = row.metadata;
    const id = m.task_id.slice(m.task_id.lastIndexOf('/') + 1);
    if (sources.has(id)) throw new GymError('TASK_INVALID', `${FILES.all}: task ${id} appears twice`);
    const record = official.records.get(id);
    const testKey = testBlockKey(blocks, {
      project: record?.project ?? m['lsp-repo'],
      filePath: record?.file_path ?? m['lsp-path'],
      name: m.function_name,
    });
    if (!testKey)
      throw new GymError(
        'TASK_INVALID',
        `task ${id} (${m['lsp-repo']} ${m['lsp-path']} ${m.function_name}): no test file in ${FILES.tests}`,
      );
    const testSource = blocks.get(testKey)!;
    const level = record?.level;
    const needs = platformNeeds(testSource);
    const siblingTests = siblingTestsOf(blocks, testKey, testSource);
    const inProject = runsInProject(level, needs);
    sources.set(id, {
      ...(inProject
        ? {
            project: po.noProjects
              ? { unavailable: 'projects are not laid out (noProjects)' }
              : planProjectTask({ id, project: m['lsp-repo'], lspPath: m['lsp-path'], testKey }, projects, envs),
          }
        : {}),
      id,
      row,
      level: record?.level,
      oracleContext: oracleContextOf(record?.oracle_context),
      prompts: { raw: rawById.get(id), humanLabel: humanById.get(id) },
      humanLabel: record?.human_label ?? m.human_label,
      testKey,
      testSource,
      target: targetPath(m['lsp-context'], m.function_name),
      needs,
      testHasFunction: findFunctions(testSource, m.function_name).length > 0,
      ...(siblingTests ? { siblingTests } : {}),
      image: opts.image,
      imagePython: opts.imagePython,
      scorer: SCORER_SOURCE,
    });
  }
  // Project-level tasks: their workspace is laid out (once, cached) before the task is made.
  const starts = new Map<string, Promise<ProjectStart | undefined>>();
  const startOf = (s: TaskSource, o: TaskOptions) => {
    const key = `${s.id}:${o.docstring}`;
    let p = starts.get(key);
    if (!p) {
      p = projectStart(s, o, po);
      starts.set(key, p);
    }
    return p;
  };
  const make = async (s: TaskSource, o: TaskOptions) => buildTask(suite, s, o, await startOf(s, o));
  const tasks: Task[] = [];
  for (const s of sources.values()) tasks.push(await make(s, DEFAULT_OPTIONS));
  return {
    tasks,
    sources,
    recordSources: official.source,
    variant: async (id, options) => {
      const s = sources.get(id);
      if (!s) throw new GymError('TASK_NOT_FOUND', `no task '${id}' in suite '${suite}'`);
      return make(s, options);
    },
  };
}

/**
 * The start state of a project-level task (project_tasks.ts), or undefined when it has none;
 * a project that cannot be laid out here turns the task's plan into the reason.
 */
async function projectStart(s: TaskSource, o: TaskOptions, po: ProjectSourceOptions): Promise<ProjectStart | undefined> {
  const plan = s.project;
  if (!plan || !('placement' in plan) || !s.testHasFunction) return undefined;
  const p = plan.placement;
  const m = s.row.metadata;
  try {
    return await projectStartState(
      {
        label: `${s.id}-${o.docstring}`,
        placement: p,
        target: s.target,
        platformTest: s.testSource,
        docstring: o.docstring === 'human-label' ? (s.humanLabel ?? m.human_label) : undefined,
        fallback: m.docstring,
      },
      po,
    );
  } catch (err) {
    s.project = { unavailable: (err as Error).message.split('\n')[0]!.slice(0, 500) };
    return undefined;
  }
}

/**
 * The CoderEval suite: `--suite codereval=PATH`, PATH a CoderEval Python directory
 * (CoderEval-ALL.jsonl, tests/savealltests.txt, input4models/, and the official records:
 * CoderEval4Python.json or the published reference outputs). Tasks of the other levels run
 * in CoderEval's Docker image, named by $BENCHGYM_CODEREVAL_IMAGE (Docker sandbox only).
 */
export function coderevalSuite(opts: { id?: string; image?: string; reposDir?: string; projects?: CoderEvalProjectOptions } = {}): Suite {
  const id = opts.id ?? 'codereval';
  const loaded = new Map<string, Promise<LoadedCoderEval>>();
  const load = (dataset?: string) => {
    if (!dataset)
      throw new GymError(
        'INVALID_ARGUMENT',
        `suite '${id}' needs its dataset: --suite ${id}=PATH, PATH a CoderEval directory (CoderEval-ALL.jsonl, tests/savealltests.txt)`,
      );
    const key = path.resolve(dataset);
    let p = loaded.get(key);
    if (!p) {
      const reposDir = opts.projects?.reposDir ?? opts.reposDir ?? (process.env.BENCHGYM_REPOS_DIR || undefined);
      p = loadCoderEval(key, id, {
        image: opts.image ?? (process.env[IMAGE_OPTION] || undefined),
        imagePython: process.env[IMAGE_PYTHON_OPTION] || undefined,
        projects: { ...opts.projects, ...(reposDir ? { reposDir } : {}) },
      });
      loaded.set(key, p);
      p.catch(() => loaded.delete(key));
    }
    return p;
  };
  return {
    id,
    description:
      "CoderEval (Python): 230 functions inside 43 real projects, graded by the platform's tests; " +
      "six runnable levels (standalone ones run here, the others need CoderEval's Docker image)",
    metadata: CoderEvalMetadata,
    privateMetadata: CODEREVAL_PRIVATE_METADATA,
    load: async (dataset) => (await load(dataset)).tasks,
    // The projects' checkouts hold every task's answer.
    privatePaths: (dataset) => [...(dataset ? [path.resolve(dataset)] : []), path.resolve(opts.projects?.cacheDir ?? projectCacheDir())],
    // Acc@k (§4.3) counts the oracle_context tokens each sample's code uses.
    annotateResult: annotateCoderEvalResult,
    reportSections: coderevalReportSections,
    // Each task's project state in its project's history, and the project's env there (issue 16).
    commands: [findCommitsCommand, buildEnvsCommand],
    // The published *_out.jsonl files: each generate_results sample scored, agreement with is_pass.
    replay: replayAdapter,
    resolveTask: async (taskId, dataset) => {
      const parsed = parseTaskId(taskId);
      if (!parsed || parsed.base === taskId) return undefined;
      const l = await load(dataset);
      return l.sources.has(parsed.base) ? l.variant(parsed.base, parsed.options) : undefined;
    },
  };
}
