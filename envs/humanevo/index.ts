import { existsSync, promises as fs, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { GymError } from '../../src/errors.ts';
import { suiteMetadata, type ContextWork, type Suite } from '../../src/tasks/suite.ts';
import { HumanEvoMetadata } from './metadata.ts';
import { humanevoReportSections } from './report.ts';
import { buildTasksCommand } from './build_tasks.ts';
import { retrieveContextTool } from './tools/retrieve_context.ts';
import { TaskSchema, type Task, type TaskInput } from '../../src/tasks/schema.ts';
import { describeIssues } from '../../src/validation.ts';
import { functionSource } from './functions.ts';
import { fileAt } from './history.ts';
import { adaptHumanEvoRecords, isHumanEvoRecord } from './humanevo_format.ts';
import { STATIC_CONTEXTS, staticContextPrompt, taskPrompt, type Docstrings } from './prompts.ts';
import { BUILT_FORMAT, BuiltTaskRecord, readRecords } from './record.ts';
import { findFunction, materialise, workspaceCacheDir } from './workspace.ts';
import { unifiedDiff } from './transplant.ts';
import { ownValue } from '../../src/own.ts';

export const AWARE = 'aware';
export const IGNORED = 'ignored';

/** Test globs reset before scoring, besides the change's own test files. */
function testGlobs(language: 'python' | 'java'): string[] {
  return language === 'python' ? ['tests/**', 'test/**', '**/test_*.py', '**/*_test.py', '**/conftest.py'] : ['src/test/**'];
}

/** Docstrings supplied by a file (`instance_id`, `brief`, `detailed`): they replace the repository's in the prompts. */
export const DocstringRow = z.object({
  instance_id: z.string().min(1),
  brief: z.string().min(1).optional(),
  detailed: z.string().min(1).optional(),
});

/** The docstrings file beside a task file: `<FILE>.docstrings.jsonl`, or $BENCHGYM_HUMANEVO_DOCSTRINGS. */
export function docstringsFileFor(dataset: string): string | undefined {
  const explicit = process.env.BENCHGYM_HUMANEVO_DOCSTRINGS;
  if (explicit) return explicit;
  const beside = dataset.replace(/\.jsonl$/, '') + '.docstrings.jsonl';
  return existsSync(beside) ? beside : undefined;
}

async function readDocstrings(file: string | undefined): Promise<Map<string, z.infer<typeof DocstringRow>>> {
  if (!file) return new Map();
  return new Map((await readRecords(file, DocstringRow)).map((r) => [r.instance_id, r]));
}

async function promptsFor(
  rec: BuiltTaskRecord,
  docs: Docstrings,
  workspace: string,
  context: 'aware' | 'ignored',
): Promise<{ prompt: string; promptVariants: Record<string, string> }> {
  const detailed = taskPrompt(rec, docs.detailed, context);
  const variants: Record<string, string> = { detailed, brief: taskPrompt(rec, docs.brief, context) };
  for (const kind of STATIC_CONTEXTS) variants[kind] = await staticContextPrompt(detailed, rec, workspace, kind);
  return { prompt: detailed, promptVariants: variants };
}

/** One mined record as a task with its two start states (aware, the task's own; ignored, selectable). */
export async function recordTask(
  suite: string,
  rec: BuiltTaskRecord,
  override?: z.infer<typeof DocstringRow>,
  cacheDir = workspaceCacheDir(),
): Promise<Task> {
  const where = await materialise(rec, cacheDir);
  const docs: Docstrings = {
    detailed: override?.detailed ?? rec.docstring_detailed,
    brief: override?.brief ?? rec.docstring_brief,
    source: override ? 'file' : 'repository',
  };
  const hidden: Record<string, string> = {};
  for (const t of rec.test_files) {
    const content = await fileAt(rec.repo_path, rec.commit, t);
    if (content !== undefined) hidden[t] = content;
  }
  const solution = await fileAt(rec.repo_path, rec.commit, rec.target.file);
  const aware = await promptsFor(rec, docs, where.aware, 'aware');
  const contexts: TaskInput['contexts'] = {};
  const moved = where.ignoredTarget && where.ignoredTarget.file !== rec.target.file ? where.ignoredTarget.file : undefined;
  if (where.ignored) {
    // The target where it is at the newest commit (its file then, or where it has moved since).
    const there: BuiltTaskRecord = where.ignoredTarget
      ? { ...rec, target: { ...rec.target, file: where.ignoredTarget.file, lines: where.ignoredTarget.lines } }
      : rec;
    contexts[IGNORED] = {
      description:
        `evolving-ignored: the repository at its newest commit ${rec.latest_commit.slice(0, 12)}, ` +
        `target stubbed${moved ? ` (in ${moved}, where it has moved)` : ''}, no history`,
      workspace: { type: 'dir', path: where.ignored },
      ...(await promptsFor(there, docs, where.ignored, 'ignored')),
      ...(where.ignoredTarget ? { solution: { files: { [where.ignoredTarget.file]: where.ignoredTarget.solution } } } : {}),
    };
  }
  const input: TaskInput = {
    id: rec.instance_id,
    suite,
    title: `${rec.repo}: ${rec.target.qualname} (${rec.commit.slice(0, 10)}, ${rec.dependency_level})`,
    language: rec.language,
    kind: 'function',
    ...aware,
    env: rec.env,
    workspace: { type: 'dir', path: where.aware },
    contexts,
    defaultContext: AWARE,
    tests: {
      visible: { runner: rec.test_runner, timeoutMs: rec.test_timeout_ms },
      hidden: { runner: rec.test_runner, files: hidden, timeoutMs: rec.test_timeout_ms },
      testFiles: [...new Set([...rec.test_files, ...testGlobs(rec.language)])],
      failToPass: rec.fail_to_pass,
      passToPass: rec.pass_to_pass,
    },
    ...(solution !== undefined ? { solution: { files: { [rec.target.file]: solution } } } : {}),
    metadata: {
      repo: rec.repo,
      commit: rec.commit,
      baseCommit: rec.base_commit,
      latestCommit: rec.latest_commit,
      date: rec.date,
      year: Number(rec.date.slice(0, 4)),
      dependencyLevel: rec.dependency_level,
      targetFile: rec.target.file,
      targetSymbol: rec.target.qualname,
      ...(moved ? { ignoredTargetFile: moved } : {}),
      signature: rec.signature,
      docstring: docs.detailed,
      docstringBrief: docs.brief,
      docstringSource: docs.source,
      contexts: [AWARE, ...(where.ignored ? [IGNORED] : [])].join(','),
      ...(rec.version ? { version: rec.version } : {}),
    },
  };
  const parsed = TaskSchema.safeParse(input);
  if (!parsed.success) throw new GymError('TASK_INVALID', `${rec.instance_id}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/**
 * Reads a task file: records written by `benchgym build-tasks`, or HumanEvo's own (adapted on
 * the way); or a folder of them (`build-tasks --repos ... --out-dir DIR`: every `*.jsonl` but
 * the journals and docstring files), their ids unique across the folder.
 */
export async function loadHumanEvo(file: string, suite = 'humanevo', opts: { reposDir?: string; cacheDir?: string } = {}): Promise<Task[]> {
  const files = taskFilesOf(path.resolve(file));
  const ids = new Map<string, string>();
  const tasks: Task[] = [];
  for (const f of files) {
    const raw = await readRecords(f, z.looseObject({}));
    if (!raw.length) {
      if (files.length > 1) continue; // a repository of the folder that gave no task (yet)
      throw new GymError('TASK_INVALID', `${f} holds no task records`);
    }
    const built = raw.every((r) => r.format === BUILT_FORMAT);
    const records = built
      ? raw.map((r, i) => parseBuilt(r, `${f}:${i + 1}`))
      : raw.every(isHumanEvoRecord)
        ? await adaptHumanEvoRecords(raw, { reposDir: opts.reposDir ?? process.env.BENCHGYM_REPOS_DIR })
        : null;
    if (!records)
      throw new GymError(
        'TASK_INVALID',
        `${f}: records must all be build-tasks output (format '${BUILT_FORMAT}') ` +
          `or all HumanEvo records (instance_id, repo, base_commit, ...)`,
      );
    const docstrings = await readDocstrings(docstringsFileFor(f));
    for (const rec of records) {
      const seen = ids.get(rec.instance_id);
      if (seen !== undefined)
        throw new GymError('TASK_INVALID', `${f}: instance_id ${rec.instance_id} appears twice${seen === f ? '' : ` (also in ${seen})`}`);
      ids.set(rec.instance_id, f);
      tasks.push(await recordTask(suite, rec, docstrings.get(rec.instance_id), opts.cacheDir));
    }
  }
  if (!tasks.length) throw new GymError('TASK_INVALID', `${file} holds no task records`);
  return tasks;
}

/** The task files of a dataset: the file itself, or a folder's `*.jsonl` (not journals or docstring files), sorted. */
export function taskFilesOf(dataset: string): string[] {
  if (!existsSync(dataset) || !statSync(dataset).isDirectory()) return [dataset];
  const files = readdirSync(dataset)
    .filter((n) => n.endsWith('.jsonl') && !n.endsWith('.progress.jsonl') && !n.endsWith('.docstrings.jsonl'))
    .sort()
    .map((n) => path.join(dataset, n));
  if (!files.length)
    throw new GymError('TASK_INVALID', `${dataset} is a folder with no task files (*.jsonl, as build-tasks --repos writes)`);
  return files;
}

function parseBuilt(raw: unknown, where: string): BuiltTaskRecord {
  const parsed = BuiltTaskRecord.safeParse(raw);
  if (!parsed.success) throw new GymError('TASK_INVALID', `${where}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/**
 * Work done in the evolving-ignored context, scored where the function was written: the
 * target function as the agent left it in the newest version of its file is carried into
 * the aware start state in place of the stub (the paper evaluates every generation in the
 * repository at the change, whichever context the model saw).
 */
export async function transplantTarget(task: Task, work: ContextWork): Promise<{ patch: string; note: string }> {
  const { targetFile: file, targetSymbol: symbol, ignoredTargetFile } = suiteMetadata(HumanEvoMetadata, task);
  // Where the episode's version of the target is: its file at the newest commit (it may have moved since).
  const theirFile = ignoredTargetFile ?? file;
  const start =
    task.workspace.type === 'dir'
      ? await fs.readFile(path.join(task.workspace.path, file), 'utf8')
      : task.workspace.type === 'files'
        ? ownValue(task.workspace.files, file)
        : undefined;
  if (start === undefined) throw new GymError('TASK_INVALID', `${task.id}: ${file} is not in the start state`);
  const edited = await work.read(theirFile);
  const theirs = edited === null ? undefined : await findFunction(task.language, theirFile, edited, symbol);
  const stub = await findFunction(task.language, file, start, symbol);
  if (!stub) throw new GymError('TASK_INVALID', `${task.id}: ${symbol} is not in ${file} of the start state`);
  if (!theirs || edited === null)
    return { patch: '', note: `context ignored: ${symbol} was not found in the episode's ${theirFile}; the stub was scored` };
  const lines = start.split('\n');
  const replaced = [...lines.slice(0, stub.lines[0] - 1), functionSource(edited, theirs), ...lines.slice(stub.lines[1])].join('\n');
  return {
    patch: await unifiedDiff(file, start, replaced),
    note:
      `context ignored: ${symbol} carried from the episode's ${theirFile} ` +
      `into the aware start state${theirFile !== file ? ` (${file})` : ''}`,
  };
}

/**
 * The HumanEvo suite: `--suite humanevo=FILE.jsonl`, FILE written by `benchgym build-tasks`
 * (or HumanEvo's own records, with their repositories under `--repos-dir` or $BENCHGYM_REPOS_DIR).
 */
export function humanevoSuite(opts: { id?: string; reposDir?: string; cacheDir?: string } = {}): Suite {
  const id = opts.id ?? 'humanevo';
  const need = (dataset?: string): string => {
    if (!dataset)
      throw new GymError(
        'INVALID_ARGUMENT',
        `suite '${id}' needs a task file: --suite ${id}=FILE.jsonl, or a folder of them (from benchgym build-tasks)`,
      );
    return dataset;
  };
  return {
    id,
    description:
      'HumanEvo: functions mined from git histories, each seen as the ' +
      'developer saw the repository (aware) or at its newest version (ignored)',
    metadata: HumanEvoMetadata,
    load: (dataset) => loadHumanEvo(need(dataset), id, { reposDir: opts.reposDir, cacheDir: opts.cacheDir }),
    // The task file, the repositories (their later history holds the answers) and the materialised workspaces.
    privatePaths: (dataset) =>
      dataset ? [path.resolve(dataset), ...repoPathsOf(dataset, opts.reposDir), opts.cacheDir ?? workspaceCacheDir()] : [],
    contextPatch: async (task, context, work) => (context === IGNORED ? transplantTarget(task, work) : null),
    // The paper's retrieval-augmented setting (§4.3.1): similar code of the repository as the model saw it.
    tools: [retrieveContextTool],
    // The paper's Tables 2, 4, 5 and 6: aware vs ignored, by dependency level and docstring style.
    reportSections: humanevoReportSections,
    // §3: tasks mined from a repository's history, validated by execution.
    commands: [buildTasksCommand],
  };
}

/** The repositories a task file names (read synchronously: privatePaths is synchronous). */
function repoPathsOf(dataset: string, reposDir?: string): string[] {
  try {
    const text = taskFilesOf(path.resolve(dataset))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const out = new Set<string>();
    for (const line of text.split('\n')) {
      const m = /"repo_path"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(line);
      if (m) out.add(JSON.parse(`"${m[1]}"`) as string);
    }
    for (const dir of [reposDir, process.env.BENCHGYM_REPOS_DIR]) if (dir) out.add(path.resolve(dir));
    return [...out];
  } catch {
    return [];
  }
}

export { buildTasks } from './builder.ts';
export type { BuildOptions } from './build_options.ts';
export type { BuildReport } from './build_report.ts';
