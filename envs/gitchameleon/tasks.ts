import { GymError } from '../../src/errors.ts';
import { TaskSchema, type Task, type TaskInput } from '../../src/tasks/schema.ts';
import { describeIssues } from '../../src/validation.ts';
import { cleanLabel, releaseYear, type V1Row, type V2Row } from './dataset.ts';
import type { DocsEntry } from './docs.ts';
import { envSpecOf, importNameOf, isHeavy, remappedVersion } from './env.ts';
import {
  chatPrompt,
  completionPrompt,
  docsPrompt,
  episodeNote,
  instructPrompt,
  V2_CHAT_SYSTEM_PROMPT,
  type PromptFields,
} from './prompts.ts';

/** Docker memory for heavy problems (torch, tensorflow...): torch 15's reference needs more than 2 GiB. */
export const HEAVY_MEMORY_MB = 4096;

/**
 * The time limit of one hidden pytest run: 120 s, the limit the v2 authors' published
 * results were produced with (their rows cut at 120 s, e.g. problem 312 for GPT-4o; the
 * harness's constants.py says 240 s today). A run cut by it fails, as there.
 */
export const V2_TIMEOUT_MS = 120_000;
/** The v1 harness's time limit for one script (evaluate.py `run_script`). */
export const V1_TIMEOUT_MS = 30_000;

/** Where a v1 problem's assertion test is written for scoring: only in the scorer's sandbox, never the episode's. */
export const V1_HIDDEN_DIR = '.gitchameleon';

/** The file a problem's solution goes in, named as the v2 harness names it. */
export function solutionFile(id: string): string {
  return `sample_${id}.py`;
}

/** Does a test file define tests pytest collects, or only assert at import time? */
export function definesTests(source: string): boolean {
  return /^\s*(async\s+)?def\s+test/m.test(source) || /^\s*class\s+\w+\s*\([^)]*TestCase\s*\)/m.test(source);
}

/** Test paths in the data are relative to the authors' repository (`dataset/...`); in the workspace they sit at the root. */
function workspacePath(p: string, what: string): string {
  const rel = p.replace(/^\.?\/?dataset\//, '');
  if (!rel || rel.startsWith('/') || rel.split('/').includes('..')) throw new GymError('TASK_INVALID', `${what}: unsafe path '${p}'`);
  return rel;
}

function prompts(
  fields: PromptFields,
  note: string,
  docs?: DocsEntry,
  chat?: { python: string; problem: string },
): { prompt: string; promptVariants: Record<string, string> } {
  const variants: Record<string, string> = { instruct: instructPrompt(fields), completion: completionPrompt(fields) };
  // The v2 authors' chat form: `chat-system` is the system message, `chat` the user message.
  if (chat) Object.assign(variants, { chat: chatPrompt({ ...fields, ...chat }), 'chat-system': V2_CHAT_SYSTEM_PROMPT });
  if (docs) {
    variants['instruct-with-docs'] = docsPrompt(fields, docs.docs);
    variants['with-docs'] = docsPrompt(fields, docs.docs) + note;
  }
  return { prompt: instructPrompt(fields) + note, promptVariants: variants };
}

function parseTask(input: TaskInput, where: string): Task {
  const parsed = TaskSchema.safeParse(input);
  if (!parsed.success) throw new GymError('TASK_INVALID', `${where}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

function title(library: string, version: string, problem: string): string {
  const first = cleanLabel(problem);
  return `${library}==${version}: ${first.length > 90 ? `${first.slice(0, 87)}...` : first}`;
}

/** Docs of a row count only if they were rendered for the same pins. */
function docsFor(docs: DocsEntry | undefined, library: string, version: string, python: string): DocsEntry | undefined {
  return docs && docs.library === library && docs.version === version && docs.python === python ? docs : undefined;
}

/**
 * A v2 problem as a task, the way the v2 harness evaluates it: the candidate is the whole
 * file `sample_<id>.py`; the hidden pytest file decides (return code 0); the visible test
 * is what the model may see and run for feedback.
 */
export function v2Task(
  suite: string,
  row: V2Row,
  files: { visible: { path: string; test_file: string }; hidden: { path: string; test_file: string }; solution: string },
  docs?: DocsEntry,
): Task {
  const id = row.example_id;
  const file = solutionFile(id);
  const visiblePath = workspacePath(files.visible.path, `visible test of ${id}`);
  const hiddenPath = workspacePath(files.hidden.path, `hidden test of ${id}`);
  if (visiblePath === file || hiddenPath === file || visiblePath === hiddenPath)
    throw new GymError('TASK_INVALID', `problem ${id}: test paths collide with ${file}`);
  const env = envSpecOf('v2', { ...row, additional_dependencies: [row.additional_dependencies, row.extra_dependencies] });
  const fields: PromptFields = { library: row.library, version: row.version, problem: row.problem.trim(), startingCode: row.starting_code };
  const note = episodeNote({ file, visibleTest: visiblePath, timeoutS: V2_TIMEOUT_MS / 1000 });
  const importName = importNameOf(row.library);
  return parseTask(
    {
      id,
      suite,
      title: title(row.library, row.version, row.problem),
      language: 'python',
      kind: 'function',
      // The chat form shows the problem as written (the paper's prompt trims it).
      ...prompts(fields, note, docsFor(docs, row.library, row.version, row.python_version), {
        python: row.python_version,
        problem: row.problem,
      }),
      env,
      workspace: { type: 'files', files: { [file]: row.starting_code, [visiblePath]: files.visible.test_file } },
      tests: {
        // Most visible files only assert at import time: pytest would collect nothing from
        // them, so they run as scripts, as the v2 harness runs its visible check.
        visible: definesTests(files.visible.test_file)
          ? { runner: { type: 'pytest', args: [visiblePath] }, timeoutMs: V2_TIMEOUT_MS }
          : { runner: { type: 'script', command: `python ${visiblePath}` }, timeoutMs: V2_TIMEOUT_MS },
        // The v2 harness passes a problem iff pytest returns 0 (a file whose tests all skip passes).
        hidden: {
          runner: { type: 'pytest', args: [hiddenPath] },
          files: { [hiddenPath]: files.hidden.test_file },
          timeoutMs: V2_TIMEOUT_MS,
          passWhen: 'exit-code',
        },
        testFiles: [`${visiblePath.split('/')[0]}/**`, `${hiddenPath.split('/')[0]}/**`],
      },
      solution: { files: { [file]: files.solution } },
      // torch and the like: their reference runs need more than a container's default 2 GiB.
      resources: isHeavy(env) ? { memoryMb: HEAVY_MEMORY_MB } : {},
      metadata: {
        form: 'v2',
        library: row.library,
        version: row.version,
        installedVersion: row.version,
        pythonVersion: row.python_version,
        typeOfChange: cleanLabel(row.type_of_change),
        releaseDate: row.release_date,
        releaseYear: releaseYear(row.release_date),
        nameOfClassOrFunc: row.name_of_class_or_func,
        functional: row.functional ?? false,
        webdev: row.webdev ?? false,
        heavy: isHeavy(env),
        importName,
        docUrls: row.docs,
        hasDocs: Boolean(docsFor(docs, row.library, row.version, row.python_version)),
      },
    },
    `problem ${id}`,
  );
}

/** The authors' unescaping of v1 cells: literal backslash-n becomes a newline. */
export function unescapeV1(cell: string): string {
  return cell.replaceAll('\\n', '\n');
}

/**
 * A v1 problem as a task, the way the paper evaluates it (Appendix A.3): the candidate
 * script, a newline and the assertion test are run as one script with the env's python;
 * exit code 0 passes. The test is added only in the scorer's sandbox, so an episode's
 * workspace never holds it; v1 problems have no visible test.
 */
export function v1Task(suite: string, row: V1Row, docs?: DocsEntry): Task {
  const id = row.idx;
  const file = solutionFile(id);
  const env = envSpecOf('v1', row);
  const installed = remappedVersion('v1', row.library, row.version);
  const starter = unescapeV1(row.starting_code);
  const hidden = `${V1_HIDDEN_DIR}/test_${id}.py`;
  const script = `${V1_HIDDEN_DIR}/run_${id}.py`;
  const fields: PromptFields = { library: row.library, version: installed, problem: row.problem.trim(), startingCode: starter };
  const note = episodeNote({ file, timeoutS: V1_TIMEOUT_MS / 1000 });
  return parseTask(
    {
      id,
      suite,
      title: title(row.library, installed, row.problem),
      language: 'python',
      kind: 'function',
      ...prompts(fields, note, docsFor(docs, row.library, installed, env.version)),
      env,
      workspace: { type: 'files', files: { [file]: starter } },
      tests: {
        hidden: {
          runner: { type: 'script', command: `{ cat ${file} && printf '\\n' && cat ${hidden}; } > ${script} && python ${script}` },
          files: { [hidden]: unescapeV1(row.test) },
          timeoutMs: V1_TIMEOUT_MS,
        },
        testFiles: [`${V1_HIDDEN_DIR}/**`],
      },
      // "complete_code = starter_code + expected_output + test" (A.3): the solution continues the starter code.
      solution: { files: { [file]: starter + unescapeV1(row.solution) } },
      // torch and the like: their reference runs need more than a container's default 2 GiB.
      resources: isHeavy(env) ? { memoryMb: HEAVY_MEMORY_MB } : {},
      metadata: {
        form: 'v1',
        library: row.library,
        version: row.version,
        installedVersion: installed,
        pythonVersion: env.version,
        typeOfChange: cleanLabel(row.type_of_change),
        releaseDate: row.release_date,
        releaseYear: releaseYear(row.release_date),
        nameOfClassOrFunc: row.name_of_class_or_func,
        heavy: isHeavy(env),
        importName: importNameOf(row.library),
        hasDocs: Boolean(docsFor(docs, row.library, installed, env.version)),
      },
    },
    `problem ${id}`,
  );
}
