import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { CliCommand } from '../../src/cli/command.ts';
import { parseFlags } from '../../src/cli/options.ts';
import { PythonEnvBuilder } from '../../src/env/python.ts';
import { defaultDataDir } from '../../src/project.ts';
import { GymError } from '../../src/errors.ts';
import { locateMirror } from '../../src/repo/index.ts';
import { ProjectsTable } from './commits.ts';
import { AllRow, FILES, readJsonl } from './dataset.ts';
import { PROJECTS_FILE } from './find_commits.ts';
import { deriveProjectEnv, PROJECT_ENVS_FILE, projectEnvSpec, projectEnvTable, type ProjectEnvEntry } from './project_envs.ts';
import { ownValue } from '../../src/own.ts';

const USAGE = `benchgym codereval-envs: each CoderEval project's env at its commit (projects.json): the Python and the
dependencies the project declares there, constrained to what PyPI held at the commit's date. Derives the table
(project-envs.json; needs uv and the projects' clones) and, with --build, builds the venvs (pip only), printing the
time and disk each took.

Usage:
  benchgym codereval-envs --dataset DIR [--projects FILE] [--mirrors DIR] [--uv PATH] [--project owner/name]... [--out FILE]
                          [--build] [--cache-dir DIR] [--json]

Options:
  --dataset DIR    a CoderEval Python directory (the tasks' file paths)
  --projects FILE  the commits table (default: the suite's projects.json, from codereval-commits)
  --mirrors DIR    clones of the projects (as for codereval-commits); needed to derive entries
  --uv PATH        uv, to resolve at the cut-off (default: uv on PATH); needed to derive entries
  --project N      only this dataset project (repeatable); default: every project of projects.json
  --out FILE       the table written (default: the suite's project-envs.json); entries of other projects are kept
  --derive         derive entries again even where the table has them
  --state S        platform (default): the commit of the platform's copy (platformCommit); dataset: the commit of
                   the dataset's file text (commit)
  --build          build each project's venv from the table (pip install into the cache)
  --cache-dir DIR  where venvs go (default: $BENCHGYM_CACHE or the data dir)
  --json           the per-project results as JSON

Example:
  benchgym codereval-envs --dataset DATASET --mirrors MIRRORS --uv uv --project zimeon/ocfl-py --build
`;

/** Kilobytes a directory takes (`du -sk`). */
function diskKb(dir: string): Promise<number> {
  return new Promise((resolve) => execFile('du', ['-sk', dir], (err, stdout) => resolve(err ? 0 : Number(String(stdout).split('\t')[0]))));
}

export interface EnvResult {
  project: string;
  python?: string;
  requirements?: number;
  constraints?: number;
  derived?: boolean;
  built?: boolean;
  seconds?: number;
  diskMb?: number;
  error?: string;
}

export async function buildEnvsCmd(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    dataset: { type: 'string' },
    projects: { type: 'string' },
    mirrors: { type: 'string' },
    uv: { type: 'string' },
    project: { type: 'string', multiple: true },
    out: { type: 'string' },
    derive: { type: 'boolean' },
    state: { type: 'string' },
    build: { type: 'boolean' },
    'cache-dir': { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (!values.dataset) throw new GymError('INVALID_ARGUMENT', 'missing --dataset DIR (a CoderEval Python directory)');
  const which = values.state ?? 'platform';
  if (which !== 'platform' && which !== 'dataset')
    throw new GymError('INVALID_ARGUMENT', `invalid --state: '${which}' (platform or dataset)`);
  const projects = ProjectsTable.parse(
    JSON.parse(await fs.readFile(values.projects ? path.resolve(values.projects) : PROJECTS_FILE, 'utf8')),
  );
  const rows = await readJsonl(path.join(path.resolve(values.dataset), FILES.all), AllRow, FILES.all);
  const pathsOf = new Map<string, string[]>();
  for (const r of rows) pathsOf.set(r.metadata['lsp-repo'], [...(pathsOf.get(r.metadata['lsp-repo']) ?? []), r.metadata['lsp-path']]);
  const out = path.resolve(values.out ?? PROJECT_ENVS_FILE);
  const table = projectEnvTable(out);
  const wanted = values.project?.length ? values.project : Object.keys(projects.projects).sort();
  const results: EnvResult[] = [];
  const builder = new PythonEnvBuilder(path.resolve(values['cache-dir'] ?? process.env.BENCHGYM_CACHE ?? defaultDataDir()));
  for (const project of wanted) {
    const state = ownValue(projects.projects, project);
    const result: EnvResult = { project };
    results.push(result);
    if (!state) {
      result.error = `${project} has no commit in projects.json`;
      continue;
    }
    // The platform's copy is what its tests run against (neo4j's was a year past the dataset's text).
    const commit = which === 'platform' ? (state.platformCommit ?? state.commit) : state.commit;
    const date = which === 'platform' ? (state.platformDate ?? state.date) : state.date;
    let entry: ProjectEnvEntry | undefined = table.get(project);
    if (!entry || values.derive || entry.commit !== commit) {
      if (!values.mirrors) {
        result.error = 'no entry in the table, and no --mirrors to derive one from';
        continue;
      }
      const repoDir = await locateMirror(state.repo, path.resolve(values.mirrors));
      if (!repoDir) {
        result.error = `no clone of ${state.repo} in the mirrors dir`;
        continue;
      }
      try {
        entry = await deriveProjectEnv({
          project,
          repo: state.repo,
          repoDir,
          commit,
          date,
          taskPaths: pathsOf.get(project) ?? [],
          uv: values.uv ?? 'uv',
        });
      } catch (err) {
        result.error = (err as Error).message.split('\n').slice(0, 3).join(' ').slice(0, 600);
        process.stderr.write(`${project}: ${result.error}\n`);
        continue;
      }
      table.set(project, entry);
      result.derived = true;
      await fs.writeFile(
        out,
        '[\n' +
          [...table.values()]
            .sort((a, b) => a.project.localeCompare(b.project))
            .map((e) => JSON.stringify(e))
            .join(',\n') +
          '\n]\n',
      );
    }
    Object.assign(result, { python: entry.python, requirements: entry.requirements.length, constraints: entry.constraints.length });
    process.stderr.write(
      `${project}: Python ${entry.python} (${entry.pythonFrom}), ${entry.requirements.length} requirement(s) from ${entry.sources.join(', ') || 'nothing'}, ${entry.constraints.length} pins before ${entry.cutoff}\n`,
    );
    if (values.build) {
      const started = Date.now();
      try {
        const env = await builder.prepare(projectEnvSpec(entry));
        result.built = true;
        result.seconds = Math.round((Date.now() - started) / 100) / 10;
        result.diskMb = Math.round((await diskKb(env.vars.VIRTUAL_ENV ?? path.dirname(path.dirname(env.command)))) / 102.4) / 10;
        process.stderr.write(`  built in ${result.seconds} s, ${result.diskMb} MB\n`);
      } catch (err) {
        result.built = false;
        result.seconds = Math.round((Date.now() - started) / 100) / 10;
        const e = err as Partial<GymError> & Error;
        result.error = `${e.code ?? 'ERROR'}: ${String(e.details?.reason ?? e.message.split('\n')[0]).slice(0, 400)}`;
        process.stderr.write(`  build failed after ${result.seconds} s: ${result.error}\n`);
      }
    }
  }
  if (values.json) process.stdout.write(JSON.stringify(results, null, 2) + '\n');
  return results.some((r) => r.error) ? 1 : 0;
}

export const buildEnvsCommand: CliCommand = {
  name: 'codereval-envs',
  summary: "derive and build each CoderEval project's env at its commit, constrained to its era",
  usage: USAGE,
  run: buildEnvsCmd,
};
