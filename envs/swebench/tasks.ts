import type { Task, TaskInput } from '../../src/tasks/schema.ts';
import { TaskSchema } from '../../src/tasks/schema.ts';
import type { SweInstance } from './dataset.ts';
import { specFor, type RepoSpec } from './specs.ts';
import { buildConfigSections } from '../../src/scoring/java_build.ts';

export interface RepoOptions {
  /** Local mirrors, searched before GitHub. */
  reposDir?: string;
  /** Clone from GitHub when there is no mirror (default true). */
  allowNetwork?: boolean;
  /** More specs (repository → version → spec), consulted before the built-in table. */
  specs?: Record<string, Record<string, RepoSpec>>;
}

/** The SWE-agent-style task text: the issue, the repository, what is expected. */
export function promptOf(inst: SweInstance, withHints: boolean): string {
  return [
    `<issue>\n${inst.problemStatement.trim()}\n</issue>`,
    ...(withHints && inst.hints.trim() ? [`<hints>\n${inst.hints.trim()}\n</hints>`] : []),
    `The repository ${inst.repo} is checked out in the workspace at the commit the issue was reported against. ` +
      'Edit the source code so that the issue is resolved. Tests that check the fix are hidden and will be added when you submit; ' +
      'the existing tests must keep passing. You may run tests with run_tests (test classes or methods, e.g. ' +
      '`module:com.example.FooTest#testBar`) and read compiler errors with view_error_log. Submit when done.',
  ].join('\n\n');
}

/** One instance as a task: the repository at its base commit, the test patch held back, its spec's env. */
export function instanceTask(suite: string, inst: SweInstance, repos: RepoOptions = {}): Task {
  const spec = specFor(inst.repo, inst.version, inst.instanceId, repos.specs);
  // Tests the sandboxes cannot run here leave the lists (a class listed whole keeps its other methods).
  const notRun = spec.language === 'java' && spec.build === 'maven' ? (spec.notRunHere ?? []) : [];
  const failToPass = inst.failToPass.filter((t) => !notRun.includes(t));
  const passToPass = inst.passToPass.filter((t) => !notRun.includes(t));
  const tests = [...failToPass, ...passToPass.filter((t) => !failToPass.includes(t))];
  const common = {
    id: inst.instanceId,
    suite,
    title: inst.problemStatement.split('\n')[0]!.slice(0, 120),
    kind: 'repo-patch' as const,
    prompt: promptOf(inst, false),
    promptVariants: (inst.hints.trim() ? { 'with-hints': promptOf(inst, true) } : {}) as Record<string, string>,
    workspace: {
      type: 'git' as const,
      repo: inst.repo,
      commit: inst.baseCommit,
      ...(repos.reposDir ? { reposDir: repos.reposDir } : {}),
      allowNetwork: repos.allowNetwork ?? true,
      edits: spec.edits,
    },
    solution: { patch: inst.patch },
    ...(spec.memoryMb || spec.pids
      ? { resources: { ...(spec.memoryMb ? { memoryMb: spec.memoryMb } : {}), ...(spec.pids ? { pids: spec.pids } : {}) } }
      : {}),
    metadata: {
      repo: inst.repo,
      base_commit: inst.baseCommit,
      version: inst.version,
      schema: inst.schema,
      ...(inst.createdAt ? { created_at: inst.createdAt } : {}),
      ...(inst.environmentSetupCommit ? { environment_setup_commit: inst.environmentSetupCommit } : {}),
      spec: spec.known ? 'table' : 'default',
      ...(spec.note ? { spec_note: spec.note } : {}),
    },
  };
  let input: TaskInput;
  if (spec.language === 'java') {
    // The gold's build changes (a version bump the test patch's poms name, say) are the task's:
    // laid down after the start state's build configuration is restored.
    const buildPatch = buildConfigSections(inst.patch);
    const runner = (selected: string[]) => ({
      type: spec.build,
      tests: selected,
      args: spec.args,
      ...(notRun.length ? { exclude: notRun } : {}),
    });
    input = {
      ...common,
      language: 'java',
      // The env is warmed by running the instance's own tests, not the project's whole suite.
      env: {
        kind: 'java',
        jdk: spec.jdk,
        build: spec.build,
        args: spec.args,
        ...(spec.build === 'maven' ? { warmTests: tests } : {}),
        ...(spec.unavailable ? { unavailable: spec.unavailable } : {}),
        ...(spec.warmArgs?.length ? { warmArgs: spec.warmArgs } : {}),
      },
      tests: {
        visible: { runner: runner([]), timeoutMs: spec.timeoutMs },
        hidden: { runner: runner(tests), patch: inst.testPatch, ...(buildPatch ? { buildPatch } : {}), timeoutMs: spec.timeoutMs },
        testFiles: spec.testFiles,
        failToPass,
        passToPass,
      },
    };
  } else {
    input = {
      ...common,
      language: 'python',
      env: { kind: 'python', version: spec.python, requirements: spec.requirements },
      tests: {
        visible: { runner: { type: 'pytest', args: spec.pytestArgs }, timeoutMs: spec.timeoutMs },
        hidden: { runner: { type: 'pytest', args: [...spec.pytestArgs, ...tests] }, patch: inst.testPatch, timeoutMs: spec.timeoutMs },
        testFiles: spec.testFiles,
        failToPass: inst.failToPass,
        passToPass: inst.passToPass,
      },
    };
  }
  return TaskSchema.parse(input);
}
