import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { GymError } from '../../src/errors.ts';
import type { SandboxFactory } from '../../src/sandbox/types.ts';
import type { EnvSpec, RunnerSpec } from '../../src/tasks/schema.ts';
import { buildTasks } from './builder.ts';
import type { BuildReport, ChangeOutcome, Rejection } from './build_report.ts';
import { defaultRunner } from './runner_specs.ts';
import type { BuiltTaskRecord } from './record.ts';

/**
 * One repository to mine: what `build-tasks --repo ...` takes as flags, and each entry of a
 * `--repos FILE` list (the same names, camelCase in the file).
 */
export const BuildTarget = z
  .object({
    /** A git repository, bare or not. */
    repo: z.string().min(1),
    language: z.enum(['python', 'java']),
    /** Display name, `owner/name` (default: the folder's name). */
    name: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)?$/, 'a name such as owner/repo')
      .optional(),
    from: z.string().min(1).optional(),
    to: z.string().min(1).optional(),
    limit: z.number().int().min(1).optional(),
    /** `era` (default for Python): each change in the env of its era; `3.X`: one env for all. */
    python: z
      .string()
      .regex(/^(era|3\.\d+)$/, "'era' or a version such as 3.11")
      .optional(),
    requirements: z.array(z.string().min(1)).optional(),
    jdk: z.string().regex(/^\d+$/, 'a JDK release such as 17').optional(),
    testArgs: z.array(z.string()).optional(),
    testTimeoutS: z
      .number()
      .int()
      .min(1)
      .max(24 * 3600)
      .optional(),
    /** `suite` (default): every change validated with the whole suite; `change`: with its own test files only. */
    testScope: z.enum(['suite', 'change']).optional(),
  })
  .strict()
  .refine((t) => t.language === 'python' || (t.python === undefined && t.requirements === undefined), {
    message: 'python and requirements are for Python repositories',
    path: ['python'],
  });
export type BuildTarget = z.infer<typeof BuildTarget>;

/** The builder's env, era env and runner for a target. */
export function targetEnv(t: BuildTarget): { env: EnvSpec; era: boolean; runner: RunnerSpec } {
  const era = t.language === 'python' && (t.python ?? 'era') === 'era';
  const env: EnvSpec =
    t.language === 'python'
      ? { kind: 'python', version: era ? '3.11' : t.python!, requirements: t.requirements ?? [] }
      : { kind: 'java', jdk: t.jdk ?? '17', build: 'maven', args: [] };
  const runner = defaultRunner(t.language, t.testArgs ?? []);
  return { env, era, runner };
}

export interface RunBuildOptions {
  /** The task file, written as tasks validate; its journal is `<out>.progress.jsonl`. */
  out: string;
  /** Go on with a stopped build of the same file (its journal); else both files start empty. */
  resume?: boolean;
  sandboxes: SandboxFactory;
  signal?: AbortSignal;
  progress?: (message: string) => void;
  onTask?: (record: BuiltTaskRecord) => void;
  onReject?: (r: Rejection) => void;
}

/**
 * Mines one target into its task file: tasks are appended as they validate, a journal line
 * per walked change after its tasks, so a killed build resumes where it stopped.
 */
export async function runBuild(target: BuildTarget, opts: RunBuildOptions): Promise<BuildReport> {
  const out = path.resolve(opts.out);
  await fs.mkdir(path.dirname(out), { recursive: true });
  const journal = journalOf(out);
  const done = opts.resume ? await readJournal(out, journal) : new Map<string, ChangeOutcome>();
  if (!opts.resume) {
    await fs.writeFile(out, '');
    await fs.writeFile(journal, '');
  }
  const { env, era, runner } = targetEnv(target);
  return buildTasks({
    repo: target.repo,
    language: target.language,
    from: target.from,
    to: target.to,
    limit: target.limit,
    repoName: target.name,
    env,
    ...(era ? { eraEnv: { requirements: target.requirements ?? [] } } : {}),
    runner,
    testTimeoutMs: (target.testTimeoutS ?? 600) * 1000,
    ...(target.testScope ? { testScope: target.testScope } : {}),
    sandboxes: opts.sandboxes,
    signal: opts.signal,
    done,
    onChange: (outcome) => fs.appendFile(journal, JSON.stringify(outcome) + '\n'),
    progress: opts.progress,
    onTask: async (record) => {
      await fs.appendFile(out, JSON.stringify(record) + '\n');
      opts.onTask?.(record);
    },
    onReject: opts.onReject,
  });
}

/** The journal of a task file: one line per walked change. */
export function journalOf(out: string): string {
  return `${out}.progress.jsonl`;
}

const JournalLine = z.object({
  commit: z.string(),
  rejections: z.array(
    z
      .object({
        commit: z.string(),
        reason: z.string(),
        function: z.string().optional(),
        file: z.string().optional(),
        detail: z.string().optional(),
      })
      .passthrough(),
  ),
  tasks: z.array(z.string()),
  candidates: z.number(),
  testRuns: z.number(),
  durationMs: z.number().optional(),
});

/**
 * A stopped build's journal: the changes it walked to the end. Tasks in the task file whose
 * change is not in the journal (the build stopped while it was being walked) are dropped,
 * since that change is walked again; a torn last line is ignored.
 */
export async function readJournal(out: string, journal: string): Promise<Map<string, ChangeOutcome>> {
  const done = new Map<string, ChangeOutcome>();
  const lines = existsSync(journal) ? (await fs.readFile(journal, 'utf8')).split('\n').filter(Boolean) : [];
  for (const [i, line] of lines.entries()) {
    let parsed: z.infer<typeof JournalLine>;
    try {
      parsed = JournalLine.parse(JSON.parse(line));
    } catch (err) {
      if (i === lines.length - 1) break; // written when the build was killed
      throw new GymError(
        'INVALID_ARGUMENT',
        `--resume: ${journal}:${i + 1} is not a build-tasks journal ` +
          `line (${err instanceof Error ? err.message.slice(0, 200) : String(err)})`,
      );
    }
    done.set(parsed.commit, parsed as ChangeOutcome);
  }
  const kept = new Set([...done.values()].flatMap((o) => o.tasks));
  const tasks = existsSync(out) ? (await fs.readFile(out, 'utf8')).split('\n').filter(Boolean) : [];
  const keep = tasks.filter((l) => {
    try {
      return kept.has((JSON.parse(l) as { instance_id?: string }).instance_id ?? '');
    } catch {
      return false;
    }
  });
  await fs.writeFile(out, keep.map((l) => l + '\n').join(''));
  // The journal without a torn last line, so that appends start on a line of their own.
  await fs.writeFile(journal, [...done.values()].map((o) => JSON.stringify(o) + '\n').join(''));
  return done;
}
