import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { GymError } from '../../src/errors.ts';
import type { SandboxFactory } from '../../src/sandbox/types.ts';
import { describeIssues } from '../../src/validation.ts';
import { repoFolderName } from './builder.ts';
import type { BuildReport, RejectReason } from './build_report.ts';
import { BuildTarget, runBuild } from './build_run.ts';
import type { BuiltTaskRecord } from './record.ts';

/** A `--repos FILE`: a JSON array of build targets. */
export const BuildTargetList = z.array(BuildTarget).min(1, 'at least one repository');

/** Reads and checks a `--repos FILE`; errors name the entry and its field. */
export async function readTargets(file: string): Promise<BuildTarget[]> {
  let raw: unknown;
  try {
    raw = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (err) {
    throw new GymError('INVALID_ARGUMENT', `--repos: ${file} is not a JSON file (${err instanceof Error ? err.message : String(err)})`);
  }
  const parsed = BuildTargetList.safeParse(raw);
  if (!parsed.success) throw new GymError('INVALID_ARGUMENT', `--repos: ${file}: ${describeIssues(parsed.error)}`);
  const names = new Map<string, number>();
  for (const [i, t] of parsed.data.entries()) {
    if (!existsSync(t.repo)) throw new GymError('INVALID_ARGUMENT', `--repos: ${file}: [${i}].repo: ${t.repo} does not exist`);
    const file_ = targetFileName(t);
    if (names.has(file_))
      throw new GymError(
        'INVALID_ARGUMENT',
        `--repos: ${file}: [${i}] and [${names.get(file_)}] would both write ${file_} (give them different names)`,
      );
    names.set(file_, i);
  }
  return parsed.data;
}

/** The display name of a target: its `name`, else its folder's. */
export function targetName(t: BuildTarget): string {
  return t.name ?? repoFolderName(t.repo);
}

/** The task file of a target in the output folder: `owner__name.jsonl`. */
export function targetFileName(t: BuildTarget): string {
  return `${targetName(t).replace(/\//g, '__')}.jsonl`;
}

export interface RepoBuild {
  name: string;
  /** Its task file (a suite's dataset alone, or with the others as the folder). */
  out: string;
  status: 'pending' | 'running' | 'done' | 'error' | 'cancelled';
  report?: Omit<BuildReport, 'rejections'>;
  error?: { code: string; message: string };
}

/** What `build-tasks --repos` writes to `<out-dir>/build-report.json`, after every repository that ends. */
export interface ManyReport {
  repos: RepoBuild[];
  jobs: number;
  validated: number;
  walked: number;
  changes: number;
  rejected: Partial<Record<RejectReason, number>>;
  durationMs: number;
}

export interface BuildManyOptions {
  outDir: string;
  /** Repositories built at once (each runs one test run at a time). */
  jobs: number;
  resume?: boolean;
  sandboxes: SandboxFactory;
  signal?: AbortSignal;
  /** Progress lines, each prefixed with its repository's name. */
  progress?: (message: string) => void;
  onTask?: (repo: string, record: BuiltTaskRecord) => void;
}

export const MANY_REPORT = 'build-report.json';

/**
 * Mines several repositories, `jobs` of them at a time: each into its own task file in
 * `outDir` (resumable from its own journal), so the folder grows as tasks validate and is a
 * task set for `--suite humanevo=DIR`. A repository that fails (a bad revision, an env that
 * ends its build) is reported with its error; the others go on.
 */
export async function buildMany(targets: BuildTarget[], opts: BuildManyOptions): Promise<ManyReport> {
  const started = Date.now();
  const outDir = path.resolve(opts.outDir);
  await fs.mkdir(outDir, { recursive: true });
  const builds: RepoBuild[] = targets.map((t) => ({ name: targetName(t), out: path.join(outDir, targetFileName(t)), status: 'pending' }));
  const jobs = Math.max(1, Math.min(opts.jobs, targets.length));
  const report = (): ManyReport => {
    const done = builds.flatMap((b) => (b.report ? [b.report] : []));
    const rejected = Object.create(null) as ManyReport['rejected'];
    for (const r of done)
      for (const [k, v] of Object.entries(r.rejected)) rejected[k as RejectReason] = (rejected[k as RejectReason] ?? 0) + (v ?? 0);
    return {
      repos: builds,
      jobs,
      validated: sum(done, 'validated'),
      walked: sum(done, 'walked'),
      changes: sum(done, 'changes'),
      rejected,
      durationMs: Date.now() - started,
    };
  };
  // Written whole each time (a reader never sees half of it).
  let writing = Promise.resolve();
  const save = () =>
    (writing = writing.then(async () => {
      const file = path.join(outDir, MANY_REPORT);
      await fs.writeFile(`${file}.tmp`, JSON.stringify(report(), null, 2) + '\n');
      await fs.rename(`${file}.tmp`, file);
    }));
  await save();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < targets.length && !opts.signal?.aborted) {
      const i = next++;
      const build = builds[i]!;
      build.status = 'running';
      await save();
      try {
        const { rejections: _, ...rest } = await runBuild(targets[i]!, {
          out: build.out,
          resume: opts.resume,
          sandboxes: opts.sandboxes,
          signal: opts.signal,
          progress: (m) => opts.progress?.(`${build.name} ${m}`),
          onTask: (record) => opts.onTask?.(build.name, record),
        });
        build.report = rest;
        build.status = 'done';
      } catch (err) {
        const e = err instanceof GymError ? err : new GymError('INTERNAL', err instanceof Error ? err.message : String(err));
        build.status = e.code === 'CANCELLED' ? 'cancelled' : 'error';
        build.error = { code: e.code, message: e.message };
        opts.progress?.(`${build.name} ${build.status}: ${e.code}: ${e.message.slice(0, 300)}`);
      }
      await save();
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  for (const b of builds) if (b.status === 'pending') b.status = 'cancelled';
  await save();
  return report();
}

function sum(reports: Omit<BuildReport, 'rejections'>[], key: 'validated' | 'walked' | 'changes'): number {
  return reports.reduce((n, r) => n + r[key], 0);
}
