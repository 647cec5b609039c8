import { promises as fs } from 'node:fs';
import path from 'node:path';
import { exportGymTrajectories, exportRun, type ExportReport } from '../../atif/export.ts';
import { MANIFEST_FILE } from '../../runner/manifest.ts';
import { GymError } from '../../errors.ts';
import type { CliCommand } from '../command.ts';
import { parseFlags } from '../options.ts';

const FORMATS = ['atif'] as const;

const USAGE = `benchgym export-trajectories: trajectories in an interchange format (ATIF, Harbor's Agent Trajectory
Interchange Format: what Harbor, NeMo Gym and SkyRL read)

Usage:
  benchgym export-trajectories RUN_DIR [--format atif] [--out DIR]
  benchgym export-trajectories DATA_DIR/trajectories | EPISODE.jsonl [--format atif] [--out DIR]

A run directory (benchgym run's) gives one file per attempt, <task>__<sample>__<attempt>.json: the agent's
prompt and model turns with their tool calls, each call's observation and timing from the gym's record,
the model's token counts, and the verdict's reward in final_metrics.extra. A server's trajectories
(benchgym serve --data-dir DATA_DIR) give one file per episode, <episode_id>.json.

Options:
  --format atif      the format (default atif; the only one so far)
  --out DIR          where the files go (default: RUN_DIR/atif for a run, ./atif otherwise)

Example:
  benchgym export-trajectories runs/gpt-4o --format atif
`;

async function isRunDir(p: string): Promise<boolean> {
  return fs
    .access(path.join(p, MANIFEST_FILE))
    .then(() => true)
    .catch(() => false);
}

export const exportTrajectoriesCommand: CliCommand = {
  name: 'export-trajectories',
  summary: 'export run or server trajectories to ATIF (Harbor, NeMo Gym, SkyRL)',
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parseFlags(args, { format: { type: 'string' }, out: { type: 'string' } });
    const format = values.format ?? 'atif';
    if (!(FORMATS as readonly string[]).includes(format))
      throw new GymError('INVALID_ARGUMENT', `--format: '${format}' is not a format this version writes (${FORMATS.join(', ')})`);
    if (positionals.length !== 1)
      throw new GymError(
        'INVALID_ARGUMENT',
        'give one run directory, trajectories directory or episode file: benchgym export-trajectories RUN_DIR --format atif',
      );
    const input = positionals[0]!;
    const st = await fs.stat(input).catch(() => null);
    if (!st) throw new GymError('INVALID_ARGUMENT', `${input}: no such file or directory`);
    let report: ExportReport;
    if (st.isDirectory() && (await isRunDir(input))) report = await exportRun(input, values.out ?? path.join(input, 'atif'));
    else report = await exportGymTrajectories(input, values.out ?? 'atif');
    for (const note of report.notes) process.stderr.write(`note: ${note}\n`);
    process.stdout.write(
      `${report.written.length} ATIF trajectories written${report.written.length ? ` to ${path.dirname(report.written[0]!)}` : ''}\n`,
    );
    return report.written.length ? 0 : 1;
  },
};
