import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isGymTrajectoryPath } from '../episode/trajectory.ts';
import { GymError } from '../errors.ts';
import { readManifest, RESULTS_FILE, type RunManifest } from '../runner/manifest.ts';
import { readResults, type ResultRecord } from '../runner/results.ts';
import { toAtif, type RunFacts } from './convert.ts';
import { AgentRecord, gymRecords, readJsonLines, type AgentRecordT, type GymRecords } from './records.ts';
import type { AtifTrajectory } from './types.ts';

/**
 * Exports trajectories to ATIF: every attempt of a run directory (`benchgym run`'s), or the
 * gym's episode files of a server (`<data-dir>/trajectories`). Reading only: the run and the
 * gym's files are left as they are.
 */

/** The file name of an attempt's ATIF trajectory: `<task>__<sample>__<attempt>.json`. */
export function atifFileName(task: string, sample: number, attempt: number): string {
  return `${task.replace(/[^A-Za-z0-9._@+-]/g, '_')}__${sample}__${attempt}.json`;
}

/** A gym trajectory file's records, or undefined with the reason when it cannot be read. */
async function readGym(file: string | null | undefined): Promise<{ gym?: GymRecords; note?: string }> {
  if (!file)
    return {
      note: "the run kept no gym trajectory for this attempt (an episode on a server): the observations are the agent's records of them",
    };
  if (!isGymTrajectoryPath(file))
    return { note: `the gym trajectory path '${path.basename(file)}' is not a trajectory file; it was not read` };
  try {
    return { gym: gymRecords(await readJsonLines(file)) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      note:
        `the gym trajectory ${file} could not be read (${code ?? (err as Error).message}): ` +
        "the observations are the agent's records of them",
    };
  }
}

/** One attempt of a run as ATIF: its result line, its records in the pair's trajectory, and the gym's file of its episode. */
export async function atifOfAttempt(
  runDir: string,
  manifest: Pick<RunManifest, 'runId' | 'agent' | 'model'>,
  result: ResultRecord,
): Promise<AtifTrajectory> {
  const notes: string[] = [];
  const pairFile = path.resolve(runDir, result.trajectory);
  let agent: AgentRecordT[] = [];
  // A path a result line names is read only inside its run directory.
  const rel = path.relative(path.resolve(runDir), pairFile);
  if (rel.startsWith('..') || path.isAbsolute(rel)) {
    notes.push(`the result's trajectory '${result.trajectory}' lies outside the run directory; it was not read`);
  } else {
    try {
      const { records } = await readJsonLines(pairFile);
      agent = records.flatMap((r) => {
        const parsed = AgentRecord.safeParse(r);
        return parsed.success && parsed.data.attempt === result.attempt ? [parsed.data] : [];
      });
    } catch (err) {
      notes.push(
        `the agent's trajectory ${result.trajectory} could not be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
  }
  const { gym, note } = await readGym(result.gymTrajectory);
  if (note) notes.push(note);
  const run: RunFacts = { runId: manifest.runId, agent: manifest.agent, model: manifest.model, result };
  return toAtif({ gym, agent, run, notes });
}

/** A gym trajectory file (an episode of `benchgym serve`, or of a run) as ATIF. */
export async function atifOfGymFile(file: string): Promise<AtifTrajectory> {
  const gym = gymRecords(await readJsonLines(file));
  if (!gym.header) throw new GymError('INVALID_ARGUMENT', `${file} is not a gym trajectory: its first record is not an episode header`);
  return toAtif({ gym });
}

async function writeJson(file: string, value: unknown): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, `${JSON.stringify(value, null, 2)}\n`);
}

export interface ExportReport {
  written: string[];
  /** Why something was left out or is partial, one line each. */
  notes: string[];
}

/** Every attempt of the run in `runDir` (retried infrastructure failures too) to `<outDir>/<task>__<sample>__<attempt>.json`. */
export async function exportRun(runDir: string, outDir: string): Promise<ExportReport> {
  const manifest = await readManifest(runDir);
  if (!manifest)
    throw new GymError('INVALID_ARGUMENT', `${runDir} is not a run directory (no run.json): give the directory benchgym run wrote`);
  const { records, tornTail } = await readResults(path.join(runDir, RESULTS_FILE));
  const report: ExportReport = {
    written: [],
    notes: tornTail ? ['the last line of results.jsonl is cut short (the run was killed while writing it) and was left out'] : [],
  };
  for (const result of records) {
    const trajectory = await atifOfAttempt(runDir, manifest, result);
    const file = path.join(outDir, atifFileName(result.task, result.sample, result.attempt));
    await writeJson(file, trajectory);
    report.written.push(file);
    if (trajectory.notes) report.notes.push(`${path.basename(file)}: ${trajectory.notes.replace(/\n/g, '; ')}`);
  }
  return report;
}

/** A gym trajectory file, or every `ep-*.jsonl` of a directory (`<data-dir>/trajectories`), to `<outDir>/<episode_id>.json`. */
export async function exportGymTrajectories(input: string, outDir: string): Promise<ExportReport> {
  const st = await fs.stat(input);
  const files = st.isDirectory()
    ? (await fs.readdir(input))
        .filter((f) => /^ep-[A-Za-z0-9_-]+\.jsonl$/.test(f))
        .sort()
        .map((f) => path.join(input, f))
    : [input];
  const report: ExportReport = { written: [], notes: [] };
  for (const file of files) {
    let trajectory: AtifTrajectory;
    try {
      trajectory = await atifOfGymFile(file);
    } catch (err) {
      report.notes.push(`${path.basename(file)}: ${(err as Error).message}`);
      continue;
    }
    const out = path.join(outDir, `${path.basename(file, '.jsonl')}.json`);
    await writeJson(out, trajectory);
    report.written.push(out);
  }
  if (!files.length) report.notes.push(`${input} holds no episode trajectory (ep-*.jsonl)`);
  return report;
}
