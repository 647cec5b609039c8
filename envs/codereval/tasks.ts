import { GymError } from '../../src/errors.ts';
import { TaskSchema, type EnvSpec, type Task, type TaskInput } from '../../src/tasks/schema.ts';
import { describeIssues } from '../../src/validation.ts';
import { STANDALONE_LEVELS, type AllRow, type Level } from './dataset.ts';
import { HARNESS_REQUIREMENTS } from './platform.ts';
import { functionBlock, joinLayout, replaceTarget, splitLayout, stubOf } from './pysource.ts';
import { shellQuote } from '../../src/shell_quote.ts';
import type { ProjectFiles, ProjectPlan } from './project_tasks.ts';

/** The platform's time limit for one test file (seconds). */
export const TEST_TIMEOUT_S = 30;
/** Where the scorer and the platform's test live in a sandbox (reset before scoring). */
export const HARNESS_DIR = '.codereval';
/** A raw completion, used verbatim instead of the function in the source file (replays write it). */
export const CANDIDATE_FILE = '.codereval-candidate.py';
/** The environment variable that names a loaded CoderEval image. */
export const IMAGE_OPTION = 'BENCHGYM_CODEREVAL_IMAGE';
/** The environment variable that names the interpreter inside that image (default `python`). */
export const IMAGE_PYTHON_OPTION = 'BENCHGYM_CODEREVAL_PYTHON';

/** What an episode of a task can vary: the docstring in the workspace, and whether the platform's test is visible. */
export interface TaskOptions {
  docstring: 'raw' | 'human-label';
  visibleTest: 'none' | 'platform';
}
export const DEFAULT_OPTIONS: TaskOptions = { docstring: 'raw', visibleTest: 'none' };
/** Task id suffixes that select options: `<_id>+human-label`, `<_id>+platform-test`, or both. */
export const OPTION_SUFFIXES = { 'human-label': 'human-label', 'platform-test': 'platform-test' } as const;

export function taskIdWith(id: string, o: TaskOptions): string {
  return id + (o.docstring === 'human-label' ? '+human-label' : '') + (o.visibleTest === 'platform' ? '+platform-test' : '');
}

/** `<_id>[+human-label][+platform-test]` → the base id and the options; undefined when a suffix is unknown. */
export function parseTaskId(id: string): { base: string; options: TaskOptions } | undefined {
  const [base, ...suffixes] = id.split('+');
  const options: TaskOptions = { ...DEFAULT_OPTIONS };
  for (const s of suffixes) {
    if (s === 'human-label') options.docstring = 'human-label';
    else if (s === 'platform-test') options.visibleTest = 'platform';
    else return undefined;
  }
  if (new Set(suffixes).size !== suffixes.length) return undefined;
  return { base: base!, options };
}

/** The sibling platform tests of a task, at their paths beside its test. */
function siblingFiles(s: TaskSource, testPath: string): Record<string, string> {
  const dir = testPath.includes('/') ? testPath.slice(0, testPath.lastIndexOf('/') + 1) : '';
  return Object.fromEntries(Object.entries(s.siblingTests ?? {}).map(([key, text]) => [dir + key.slice(key.lastIndexOf('/') + 1), text]));
}

/** Everything a task is made from, read once per dataset. */
export interface TaskSource {
  id: string;
  row: AllRow;
  level?: Level;
  oracleContext?: Record<string, string[]>;
  prompts: { raw?: string; humanLabel?: string };
  humanLabel?: string;
  testKey: string;
  testSource: string;
  /** The target as a dotted path from its module (`Symbol.pretty`, pysource's targetPath): where the platform replaced it. */
  target: string;
  /** Why the test cannot run on a plain interpreter (empty: it can). */
  needs: string[];
  /** Does the test file define the target function (the scorer replaces it there)? */
  testHasFunction: boolean;
  /** A loaded CoderEval image, when one was named. */
  image?: string;
  /** The interpreter inside that image (default `python`). */
  imagePython?: string;
  scorer: string;
  /** A task of a project level: where it sits in its project, or why it cannot run there (project_tasks.ts). */
  project?: ProjectPlan;
  /**
   * Other platform test files beside this one that its test imports by module name (federation's
   * host-meta test patches the webfinger test's module): by their platform path. They hold other
   * tasks' references, so they join the hidden tests only.
   */
  siblingTests?: Record<string, string>;
}

/** A task's start state inside its project (materialised by the loader): the workspace and the file's versions. */
export interface ProjectStart {
  dir: string;
  files: ProjectFiles;
  /** The commit the workspace was taken at, and the task's file there. */
  commit: string;
  file: string;
}

/** Can the task run on the plain interpreter here: a standalone level whose test needs only the standard library. */
export function runnableHere(s: Pick<TaskSource, 'level' | 'needs' | 'testHasFunction'>): boolean {
  return s.testHasFunction && s.level !== undefined && STANDALONE_LEVELS.has(s.level) && s.needs.length === 0;
}

function envOf(s: TaskSource): EnvSpec {
  if (runnableHere(s)) return { kind: 'python', version: '3.11', requirements: HARNESS_REQUIREMENTS };
  if (s.testHasFunction && s.project && 'placement' in s.project && !s.image) return s.project.placement.env;
  if (!s.testHasFunction) {
    // The platform put the candidate into the project itself; its test file only calls it.
    // benchgym's scorer replaces the function in the test file, so it cannot score this task.
    return {
      kind: 'image',
      option: IMAGE_OPTION,
      about:
        `CoderEval task ${s.id} cannot be scored by benchgym: its platform test file does not ` +
        `define ${s.row.metadata.function_name} (the platform replaced it inside the project), even with CoderEval's image`,
      command: 'python',
      unsupported: true,
    };
  }
  const notLaidOut = s.project && 'unavailable' in s.project ? `, and its project cannot be laid out here: ${s.project.unavailable}` : '';
  const why = !s.level
    ? 'its runnable level is unknown (no official record)'
    : STANDALONE_LEVELS.has(s.level)
      ? `its test file ${s.needs.join(' and ')}${notLaidOut}`
      : `a ${s.level} task runs inside its project${notLaidOut}`;
  return {
    kind: 'image',
    ...(s.image ? { image: s.image } : {}),
    option: IMAGE_OPTION,
    about:
      `CoderEval task ${s.id} needs CoderEval's Docker image (projects ` +
      `and their environments under /home/travis/builds/repos/): ${why}`,
    command: s.imagePython ?? 'python',
  };
}

function note(file: string, name: string, o: TaskOptions, testFile: string, project?: string): string {
  return [
    '',
    project
      ? `This workspace is the project ${project} (one commit, no history). The function \`${name}\` in \`${file}\` ` +
        `has only its signature and docstring; the rest of the project is as it was. Implement it there.`
      : `In this workspace the function \`${name}\` in \`${file}\` has only its signature ` +
        `and docstring; the rest of the file is the project's. Implement it there.`,
    `Scoring takes the function \`${name}\` from that file (from its \`def\` line to its end), ` +
      `puts it in place of the original in the platform's test file and runs it (${TEST_TIMEOUT_S} ` +
      `s); the exit code decides. Code outside the function is not part of the answer.`,
    o.visibleTest === 'platform'
      ? `run_tests runs that test (\`${testFile}\`) with your current function.`
      : 'There are no visible tests: write and run your own checks with run_command.',
    'submit scores the function.',
  ].join('\n');
}

/** A CoderEval task with the given options (see OPTION_SUFFIXES). */
export function buildTask(suite: string, s: TaskSource, o: TaskOptions = DEFAULT_OPTIONS, start?: ProjectStart): Task {
  const m = s.row.metadata;
  const env = envOf(s);
  const placement = env.kind === 'python' && s.project && 'placement' in s.project ? s.project.placement : undefined;
  if (placement && !start) throw new GymError('INTERNAL', `task ${s.id}: its project workspace was not laid out`);
  const file = start ? start.file : m['lsp-path'];
  const name = m.function_name;
  const target = s.target;
  const label = s.humanLabel ?? m.human_label;
  if (o.docstring === 'human-label' && !label) throw new GymError('TASK_INVALID', `task ${s.id} has no human-labelled docstring`);
  const stub = stubOf(m.ground_truth, o.docstring === 'human-label' ? label : undefined, m.docstring);
  const fill = (code: string) => m['lsp-context'].split('<PLACEHOLDER>').join(code);
  const prefix = placeholderIndent(m['lsp-context']);
  // The reference is the function as the platform's test file has it (the code the platform
  // verified), in the real file's place; CoderEval-ALL's ground_truth when the test has none.
  const gt = splitLayout(m.ground_truth, prefix);
  const platformVersion = functionBlock(s.testSource, target);
  const gold = platformVersion ? joinLayout(gt.decorators, platformVersion, prefix) : m.ground_truth;
  const testName = s.testKey.slice(s.testKey.lastIndexOf('/') + 1);
  // Inside its project the test goes at its own path (its siblings import each other), else into the harness folder.
  const testPath = placement ? placement.testPath : `${HARNESS_DIR}/${testName}`;
  const python = env.kind === 'image' ? env.command : 'python';
  const setenv = Object.entries(placement?.environment ?? {})
    .map(([k, v]) => ` --setenv ${shellQuote(`${k}=${v}`)}`)
    .join('');
  const root = placement ? ` --root-alias ${shellQuote(placement.rootAlias)}${setenv}` : '';
  const command =
    `${python} ${HARNESS_DIR}/scorer.py --test ${shellQuote(testPath)} --name ${target} ` +
    `--source ${shellQuote(file)} --candidate ${CANDIDATE_FILE} --timeout ${TEST_TIMEOUT_S}${root}`;
  const timeoutMs = (TEST_TIMEOUT_S + 60) * 1000;
  let visible: TaskInput['tests']['visible'];
  if (o.visibleTest === 'platform') {
    // The platform's test holds the original function: the agent's copy has the stub instead.
    const masked = replaceTarget(s.testSource, target, start ? start.files.stubBlock : splitLayout(stub, prefix).block);
    if (masked === undefined) throw new GymError('TASK_INVALID', `task ${s.id}: no function ${target} in its test file to mask`);
    visible = { runner: { type: 'script', command }, files: { [`${HARNESS_DIR}/scorer.py`]: s.scorer, [testPath]: masked }, timeoutMs };
  }
  const officialPrompt = { raw: s.prompts.raw ?? s.row.prompt, 'human-label': s.prompts.humanLabel ?? s.prompts.raw ?? s.row.prompt };
  const episodeNote = note(file, target, o, testPath, placement && start ? `${placement.repo} at ${start.commit.slice(0, 12)}` : undefined);
  const input: TaskInput = {
    id: taskIdWith(s.id, o),
    suite,
    title: `${m['lsp-repo']}: ${name} (${s.level ?? 'level unknown'})`,
    language: 'python',
    kind: 'function',
    prompt: officialPrompt[o.docstring] + episodeNote,
    promptVariants: {
      raw: officialPrompt.raw + episodeNote,
      'human-label': officialPrompt['human-label'] + episodeNote,
      'completion-raw': officialPrompt.raw,
      'completion-human-label': officialPrompt['human-label'],
    },
    env,
    workspace: start ? { type: 'dir', path: start.dir } : { type: 'files', files: { [file]: fill(stub) } },
    tests: {
      ...(visible ? { visible } : {}),
      hidden: {
        runner: { type: 'script', command },
        files: { [`${HARNESS_DIR}/scorer.py`]: s.scorer, [testPath]: s.testSource, ...siblingFiles(s, testPath) },
        timeoutMs,
      },
      // The scorer runs the test file in place (the platform's name for it) and puts its text back: reset before scoring.
      testFiles: placement ? [`${HARNESS_DIR}/**`, testPath] : [`${HARNESS_DIR}/**`],
    },
    solution: { files: { [file]: start ? start.files.gold : fill(gold) } },
    metadata: {
      codereval_id: s.id,
      project: m['lsp-repo'],
      filePath: file,
      name,
      target,
      level: s.level ?? 'unknown',
      standalone: s.level ? STANDALONE_LEVELS.has(s.level) : 'unknown',
      runnableHere: runnableHere(s) || Boolean(placement),
      ...(placement && start ? { repo: placement.repo, commit: start.commit } : {}),
      testHasFunction: s.testHasFunction,
      ...(s.needs.length ? { platformNeeds: s.needs } : {}),
      docstring: o.docstring,
      visibleTest: o.visibleTest,
      options: Object.keys(OPTION_SUFFIXES).map((x) => `+${x}`),
      ...(s.oracleContext ? { oracle_context: s.oracleContext } : {}),
    },
  };
  const parsed = TaskSchema.safeParse(input);
  if (!parsed.success) throw new GymError('TASK_INVALID', `task ${s.id}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** The indentation <PLACEHOLDER> sits at (the function's, in the file: spaces or tabs). */
function placeholderIndent(context: string): string {
  const at = context.indexOf('<PLACEHOLDER>');
  return context.slice(context.lastIndexOf('\n', at) + 1, at);
}
