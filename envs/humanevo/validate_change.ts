import { promises as fs } from 'node:fs';
import path from 'node:path';
import { sandboxEnv, type PreparedEnv } from '../../src/env/types.ts';
import { runTests } from '../../src/scoring/runners.ts';
import type { RunnerSpec } from '../../src/tasks/schema.ts';
import { briefOf, isTestPath, stubFunction } from './functions.ts';
import { exportTree, gitIn, overlay, type Change } from './history.ts';
import { BUILT_FORMAT, type BuiltTaskRecord } from './record.ts';
import type { BuildOptions } from './build_options.ts';
import type { BuildReport, RejectReason, Rejection } from './build_report.ts';
import type { Candidate } from './candidates.ts';
import { testInFiles } from './runner_specs.ts';

/** Each test's outcome in one run, by test id. */
export type TestStatus = Map<string, 'passed' | 'failed' | 'error' | 'skipped'>;

/** What a run reported nothing for: the command and the end of its output (for the rejection's detail). */
const silentRuns = new WeakMap<TestStatus, string>();

function slug(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
}

interface ChangeContext {
  repo: string;
  change: Change;
  files: { status: 'A' | 'M' | 'D'; path: string }[];
  tests: string[];
  viable: Candidate[];
  workDir: string;
  env: PreparedEnv;
  runner: RunnerSpec;
  reject: (r: Rejection) => void;
  report: BuildReport;
  /** Results by tree id: a change's parent is usually the previous change, whose tree was run already. */
  runs: Map<string, TestStatus>;
}

async function runTree(opts: BuildOptions, ctx: ChangeContext, commit: string, dir: string): Promise<TestStatus> {
  // The same tree gives other results in another env (a change's parent is run in the change's era).
  const selection = ctx.runner.type === 'pytest' ? ctx.runner.args : ctx.runner.type === 'maven' ? ctx.runner.tests : [];
  const tree = `${ctx.env.key}:${(await gitIn(ctx.repo, ['rev-parse', `${commit}^{tree}`])).trim()}:${selection.join(' ')}`;
  const known = ctx.runs.get(tree);
  if (known) return known;
  const result = await runSuite(opts, ctx, dir);
  ctx.runs.set(tree, result);
  return result;
}

async function runSuite(opts: BuildOptions, ctx: ChangeContext, dir: string): Promise<TestStatus> {
  const sandbox = await opts.sandboxes.create({ seed: { dir }, env: sandboxEnv(ctx.env), labels: { 'benchgym.role': 'build-tasks' } });
  try {
    const run = await runTests(sandbox, ctx.env, ctx.runner, { timeoutMs: opts.testTimeoutMs ?? 600_000, signal: opts.signal });
    ctx.report.testRuns++;
    const status: TestStatus = new Map(run.tests.map((t) => [t.name, t.status]));
    if (!status.size) {
      // Maven's first [ERROR] lines say what failed (a plugin on this JDK, a compile error); else the end of the output.
      const lines = run.log.trim().split('\n');
      const errors = lines.filter((l) => /^\[ERROR\]\s*\S/.test(l)).slice(0, 3);
      silentRuns.set(
        status,
        `${run.command.slice(0, 300)} (exit ${run.exec.exitCode}): ${(errors.length ? errors : lines.slice(-6)).join(' | ').slice(0, 800)}`,
      );
    }
    return status;
  } finally {
    await sandbox.destroy().catch(() => {});
  }
}

/**
 * Fail-to-pass / pass-to-pass as the paper validates them: the suite at the parent, at the
 * change, and at the change with each candidate stubbed.
 */
export async function validateChange(
  opts: BuildOptions,
  ctx: ChangeContext,
): Promise<Omit<BuiltTaskRecord, 'repo' | 'repo_path' | 'latest_commit'>[]> {
  const { repo, change, lang } = { ...ctx, lang: opts.language };
  const dir = (name: string) => path.join(ctx.workDir, `${change.commit.slice(0, 12)}-${name}`);
  const original = dir('change');
  const parent = dir('parent');
  await exportTree(repo, change.commit, original);
  await exportTree(repo, change.parent, parent);
  try {
    const before = await runTree(opts, ctx, change.parent, parent);
    const after = await runTree(opts, ctx, change.commit, original);
    const changeTests = [...after.keys()].filter((id) => testInFiles(lang, id, ctx.tests));
    const rejectAll = (reason: RejectReason, detail: string) => {
      for (const c of ctx.viable) ctx.reject({ commit: change.commit, function: c.fn.qualname, file: c.file, reason, detail });
      return [];
    };
    if (!after.size)
      return rejectAll('no-test-results', `the test suite reported no results at the change: ${silentRuns.get(after) ?? ''}`);
    const broken = [...before].filter(([id, s]) => s === 'passed' && after.has(id) && after.get(id) !== 'passed').map(([id]) => id);
    if (broken.length)
      return rejectAll(
        'breaks-passing-tests',
        `${broken.length} test(s) passing before the change fail after it: ${broken.slice(0, 5).join(', ')}`,
      );
    const changePassing = changeTests.filter((id) => after.get(id) === 'passed');
    if (!changePassing.length)
      return rejectAll('change-tests-fail', `none of the change's ${changeTests.length} test(s) pass with the original code`);
    const passToPass = [...before]
      .filter(([id, s]) => s === 'passed' && after.get(id) === 'passed')
      .map(([id]) => id)
      .sort();
    const out: Omit<BuiltTaskRecord, 'repo' | 'repo_path' | 'latest_commit'>[] = [];
    for (const c of ctx.viable) {
      const stubbed = dir(`stub-${slug(c.fn.qualname)}`);
      await fs.cp(original, stubbed, { recursive: true });
      await overlay(stubbed, { [c.file]: stubFunction(lang, c.source, c.fn) });
      let withStub: TestStatus;
      try {
        withStub = await runSuite(opts, ctx, stubbed);
      } finally {
        await fs.rm(stubbed, { recursive: true, force: true });
      }
      // A test of the change that the stub makes fail (or that vanishes: a collection or compile error).
      const failToPass = changePassing.filter((id) => withStub.get(id) !== 'passed' && withStub.get(id) !== 'skipped').sort();
      if (!failToPass.length) {
        ctx.reject({
          commit: change.commit,
          function: c.fn.qualname,
          file: c.file,
          reason: 'no-fail-to-pass',
          detail: `all ${changePassing.length} passing test(s) of the change still pass with the function stubbed`,
        });
        continue;
      }
      const docstring = c.fn.docstring!.trim();
      out.push({
        format: BUILT_FORMAT,
        instance_id: slug(`${change.commit.slice(0, 10)}-${c.fn.qualname}`),
        language: lang,
        commit: change.commit,
        base_commit: change.parent,
        date: change.date,
        subject: change.subject,
        merge: change.merge,
        target: { file: c.file, qualname: c.fn.qualname, name: c.fn.name, cls: c.fn.cls, lines: c.fn.lines },
        signature: c.fn.signature,
        docstring_detailed: docstring,
        docstring_brief: briefOf(docstring),
        dependency_level: c.fn.dependency,
        references: { project: c.fn.projectRefs, class: c.fn.classRefs },
        test_files: ctx.tests,
        production_files: ctx.files.filter((f) => !isTestPath(lang, f.path)),
        fail_to_pass: failToPass,
        // The change's other tests that pass either way guard against breaking what works.
        pass_to_pass: [...new Set([...passToPass, ...changePassing.filter((id) => !failToPass.includes(id))])].sort(),
        env: opts.env,
        test_runner: ctx.runner,
        test_timeout_ms: opts.testTimeoutMs ?? 600_000,
      });
    }
    return out;
  } finally {
    await fs.rm(original, { recursive: true, force: true });
    await fs.rm(parent, { recursive: true, force: true });
  }
}
