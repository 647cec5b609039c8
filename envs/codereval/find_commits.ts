import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import type { CliCommand } from '../../src/cli/command.ts';
import { parseFlags } from '../../src/cli/options.ts';
import { GymError } from '../../src/errors.ts';
import { checkRepoName, locateMirror } from '../../src/repo/index.ts';
import { expectedFile, matchTask, platformSource, projectCommit, ProjectsTable, type TaskFile, type TaskMatch } from './commits.ts';
import { AllRow, FILES, readJsonl, readOfficialRecords, REPOS, splitTestBlocks, STANDALONE_LEVELS, testBlockKey } from './dataset.ts';
import { ownValue } from '../../src/own.ts';

/**
 * Where a dataset project's history is on GitHub now, when its own name has none or a stale
 * copy: the repositories tried, in order (the first with a clone is used). Each says why.
 */
export const PROJECT_REPOS: Record<string, { repos: string[]; why: string }> = {
  'ansible-security/ansible_collections.ibm.qradar': {
    repos: ['ansible-collections/ibm.qradar'],
    why: 'the collection moved to ansible-collections',
  },
  'bastikr/boolean': { repos: ['bastikr/boolean.py'], why: 'renamed on GitHub' },
  'cpburnz/python-sql-parameters': {
    repos: ['cpburnz/python-sqlparams', 'cpburnz/python-sql-parameters'],
    why: "renamed python-sqlparams; the old name's copy stops in 2020",
  },
  'mozilla/relman-auto-nag': {
    repos: ['mozilla/bugbot', 'mozilla/relman-auto-nag'],
    why: "renamed bugbot; the old name's copy stops in 2021",
  },
  // mwatts15/rdflib is a fork whose copy stops in 2019; the file's later versions are upstream's.
  'mwatts15/rdflib': {
    repos: ['RDFLib/rdflib', 'mwatts15/rdflib'],
    why: 'the fork stops in 2019; upstream RDFLib/rdflib has the file as the dataset has it',
  },
  // witten/borgmatic (and its old name witten/atticmatic) stopped in 2020,
  // when development moved; borgmatic-collective/borgmatic carries on.
  'witten/borgmatic': { repos: ['borgmatic-collective/borgmatic', 'witten/borgmatic'], why: 'the GitHub copy under witten stops in 2020' },
  'witten/atticmatic': {
    repos: ['borgmatic-collective/borgmatic', 'witten/atticmatic', 'witten/borgmatic'],
    why: "atticmatic is borgmatic's old name; one history",
  },
  // pexip/os-zope (pexip's Debian packaging of zope.interface) is gone; its src/ is upstream's.
  'pexip/os-zope': {
    repos: ['zopefoundation/zope.interface'],
    why: 'pexip/os-zope is not on GitHub any more; its sources are zope.interface upstream',
  },
};

/** The table shipped with the suite (`benchgym codereval-commits` re-derives it). */
export const PROJECTS_FILE = new URL('./projects.json', import.meta.url);

export interface FindReport {
  table: ProjectsTable;
  /** Every task id of the dataset → its dataset project. */
  taskProjects: Map<string, string>;
  /** Per dataset project: tasks, exact, nearest, not found; and the same for non-standalone tasks. */
  summary: Record<
    string,
    {
      tasks: number;
      exact: number;
      nearest: number;
      notFound: number;
      nonStandalone: { tasks: number; exact: number; nearest: number; notFound: number };
    }
  >;
}

/**
 * Places every task of a CoderEval dataset in its project's history, from local clones
 * (`mirrors`, laid out as `owner/name`, `owner+name`, ... see `locateMirror`). `repos` names
 * a clone for a project directly (`owner/name` → path).
 */
export async function findCommits(opts: {
  dataset: string;
  mirrors?: string;
  repos?: Record<string, string>;
  only?: Set<string>;
  progress?: (line: string) => void;
}): Promise<FindReport> {
  const root = path.resolve(opts.dataset);
  const rows = await readJsonl(path.join(root, FILES.all), AllRow, FILES.all);
  const { records } = await readOfficialRecords(root);
  // The platform's test files sit beside the project's files in its copy: their paths show its layout.
  const blocks = existsSync(path.join(root, FILES.tests))
    ? splitTestBlocks(await fs.readFile(path.join(root, FILES.tests), 'utf8'))
    : new Map<string, string>();
  const byProject = new Map<string, { task: TaskFile; standalone: boolean }[]>();
  const taskProjects = new Map<string, string>();
  for (const row of rows) {
    const m = row.metadata;
    const id = m.task_id.slice(m.task_id.lastIndexOf('/') + 1);
    const project = m['lsp-repo'];
    taskProjects.set(id, project);
    if (opts.only && !opts.only.has(project)) continue;
    const level = records.get(id)?.level;
    const list = byProject.get(project) ?? [];
    const layoutPath = platformLayoutPath(blocks, project, m['lsp-path'], m.function_name);
    list.push({
      task: {
        id,
        project,
        path: m['lsp-path'],
        expected: expectedFile(m['lsp-context'], m.ground_truth),
        ...(layoutPath && layoutPath !== m['lsp-path'] ? { layoutPath } : {}),
        ...(layoutPath
          ? {
              platformText: platformSource(blocks.get(testBlockKey(blocks, { project, filePath: m['lsp-path'], name: m.function_name })!)!),
            }
          : {}),
      },
      standalone: level !== undefined && STANDALONE_LEVELS.has(level),
    });
    byProject.set(project, list);
  }
  const table: ProjectsTable = {
    generatedBy: 'benchgym codereval-commits --dataset DATASET --mirrors MIRRORS',
    projects: {},
    tasks: {},
    notFound: {},
  };
  const summary: FindReport['summary'] = {};
  for (const [project, tasks] of [...byProject.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const s = { tasks: 0, exact: 0, nearest: 0, notFound: 0, nonStandalone: { tasks: 0, exact: 0, nearest: 0, notFound: 0 } };
    summary[project] = s;
    const count = (standalone: boolean, key: 'tasks' | 'exact' | 'nearest' | 'notFound') => {
      s[key]++;
      if (!standalone) s.nonStandalone[key]++;
    };
    for (const t of tasks) count(t.standalone, 'tasks');
    const names = ownValue(PROJECT_REPOS, project)?.repos ?? [project];
    let clone: { repo: string; dir: string } | undefined;
    for (const name of names) {
      const given = ownValue(opts.repos, name);
      const dir = given ?? (opts.mirrors ? await locateMirror(name, opts.mirrors).catch(() => null) : null);
      if (dir) {
        clone = { repo: name, dir };
        break;
      }
    }
    if (!clone) {
      for (const t of tasks) {
        table.notFound[t.task.id] = { project, reason: `no clone of ${names.join(' or ')}${opts.mirrors ? ` in the mirrors dir` : ''}` };
        count(t.standalone, 'notFound');
      }
      opts.progress?.(`${project}: no clone (${names.join(', ')})`);
      continue;
    }
    const matched: {
      id: string;
      commit: string;
      date: string;
      path: string;
      blob: string;
      match: Omit<TaskMatch, 'atProjectCommit'>;
      standalone: boolean;
      platform?: { path: string; commit: string; date: string; blob: string };
    }[] = [];
    for (const t of tasks) {
      const r = await matchTask(clone.dir, clone.repo, t.task);
      if ('reason' in r) {
        table.notFound[t.task.id] = { project, reason: r.reason };
        count(t.standalone, 'notFound');
        continue;
      }
      matched.push({
        id: t.task.id,
        commit: r.match.commit,
        date: r.match.date,
        path: r.match.path ?? t.task.path,
        blob: r.blob,
        match: r.match,
        standalone: t.standalone,
        platform: r.platform,
      });
      count(t.standalone, r.match.match);
    }
    if (!matched.length) continue;
    const state = await projectCommit(clone.dir, matched);
    const withPlatform = matched.filter((m) => m.platform).map((m) => ({ id: m.id, ...m.platform! }));
    const plat = withPlatform.length ? await projectCommit(clone.dir, withPlatform) : undefined;
    table.projects[project] = {
      repo: clone.repo,
      commit: state.commit,
      date: state.date,
      tasks: tasks.length,
      atCommit: state.at.size,
      ...(plat ? { platformCommit: plat.commit, platformDate: plat.date, atPlatformCommit: plat.at.size } : {}),
    };
    for (const m of matched)
      table.tasks[m.id] = {
        ...m.match,
        atProjectCommit: state.at.has(m.id),
        ...(plat && m.platform ? { atPlatformCommit: plat.at.has(m.id) } : {}),
      };
    opts.progress?.(
      `${project} (${clone.repo}): ${s.tasks} task(s), ${s.exact} exact, ${s.nearest} ` +
        `nearest, ${s.notFound} not found; project commit ${state.commit.slice(0, 12)} ` +
        `(${state.date.slice(0, 10)}) holds ${state.at.size}` +
        `${plat ? `; platform copy ${plat.commit.slice(0, 12)} (${plat.date.slice(0, 10)}) holds ${plat.at.size}` : ''}`,
    );
  }
  return { table, summary, taskProjects };
}

/** The task file's path in the platform's copy of the project: its test file's path without `_<name>_passk_validte`. */
export function platformLayoutPath(blocks: Map<string, string>, project: string, filePath: string, name: string): string | undefined {
  const key = testBlockKey(blocks, { project, filePath, name });
  const prefix = `${REPOS}/${project.replace('/', '---')}/`;
  const suffix = `_${name}_passk_validte.py`;
  if (!key?.startsWith(prefix) || !key.endsWith(suffix)) return undefined;
  return key.slice(prefix.length, -suffix.length) + '.py';
}

const USAGE = `benchgym codereval-commits: finds each CoderEval task's project state: the commit whose version of the
task's file is the dataset's file with the ground truth in place (compared modulo line endings and trailing
whitespace; else the nearest version by line diff, recorded as such), and per project the commit where most of
its tasks' files are in that state. Writes the table (task ids, projects, commit hashes; no benchmark text).

Usage:
  benchgym codereval-commits --dataset DIR (--mirrors DIR | --repo owner/name=PATH...) [--project owner/name]...
                             [--out FILE] [--json]

Options:
  --dataset DIR      a CoderEval Python directory (CoderEval-ALL.jsonl)
  --mirrors DIR      clones of the projects, as DIR/owner/name, DIR/owner+name, ... (bare or not), e.g. made with
                     git clone https://github.com/owner/name DIR/owner/name
  --repo N=PATH      the clone of one project (repeatable)
  --project N        only this dataset project (repeatable)
  --out FILE         where the table goes (default: print it)
  --json             print the per-project summary as JSON

Example:
  benchgym codereval-commits --dataset DATASET --mirrors MIRRORS --out projects.json
`;

export async function findCommitsCmd(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    dataset: { type: 'string' },
    mirrors: { type: 'string' },
    repo: { type: 'string', multiple: true },
    project: { type: 'string', multiple: true },
    out: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (!values.dataset) throw new GymError('INVALID_ARGUMENT', 'missing --dataset DIR (a CoderEval Python directory)');
  const repos: Record<string, string> = {};
  for (const r of values.repo ?? []) {
    const eq = r.indexOf('=');
    if (eq < 0) throw new GymError('INVALID_ARGUMENT', `invalid --repo: '${r}' (owner/name=PATH)`);
    checkRepoName(r.slice(0, eq));
    repos[r.slice(0, eq)] = path.resolve(r.slice(eq + 1));
  }
  if (!values.mirrors && !Object.keys(repos).length)
    throw new GymError('INVALID_ARGUMENT', 'missing --mirrors DIR or --repo owner/name=PATH (where the projects are cloned)');
  const report = await findCommits({
    dataset: values.dataset,
    mirrors: values.mirrors ? path.resolve(values.mirrors) : undefined,
    repos,
    only: values.project?.length ? new Set(values.project) : undefined,
    progress: (l) => process.stderr.write(`${l}\n`),
  });
  // With --project, the other projects' rows of an existing --out table are kept.
  if (values.out && values.project?.length && existsSync(path.resolve(values.out))) {
    const old = ProjectsTable.parse(JSON.parse(await fs.readFile(path.resolve(values.out), 'utf8')));
    const redone = new Set(values.project);
    const keep = <T>(rows: Record<string, T>, projectOf: (id: string, r: T) => string | undefined): Record<string, T> =>
      Object.fromEntries(Object.entries(rows).filter(([id, r]) => !redone.has(projectOf(id, r) ?? '')));
    const projectOfTask = (id: string) => report.taskProjects.get(id);
    report.table = {
      ...report.table,
      projects: { ...keep(old.projects, (id) => id), ...report.table.projects },
      tasks: { ...keep(old.tasks, (id) => projectOfTask(id)), ...report.table.tasks },
      notFound: { ...keep(old.notFound, (_id, r) => r.project), ...report.table.notFound },
    };
  }
  const text = JSON.stringify(report.table, null, 2) + '\n';
  if (values.out) await fs.writeFile(path.resolve(values.out), text);
  if (values.json) process.stdout.write(JSON.stringify(report.summary, null, 2) + '\n');
  else if (!values.out) process.stdout.write(text);
  const total = Object.values(report.summary).reduce(
    (a, s) => ({ exact: a.exact + s.exact, nearest: a.nearest + s.nearest, notFound: a.notFound + s.notFound }),
    { exact: 0, nearest: 0, notFound: 0 },
  );
  process.stderr.write(
    `${total.exact} exact, ${total.nearest} nearest, ${total.notFound} not found${values.out ? ` -> ${values.out}` : ''}\n`,
  );
  return total.exact + total.nearest > 0 ? 0 : 1;
}

export const findCommitsCommand: CliCommand = {
  name: 'codereval-commits',
  summary: "find each CoderEval task's commit in its project's history, by content",
  usage: USAGE,
  run: findCommitsCmd,
};
