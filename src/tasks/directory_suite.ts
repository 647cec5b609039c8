import { promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../errors.ts';
import { describeIssues } from '../validation.ts';
import { TaskSchema, type Task } from './schema.ts';
import { readFileTree } from './files.ts';

/**
 * Loads a suite laid out as directories: `<root>/tasks/<id>/task.json` with `workspace/`
 * (start state), `hidden/` (hidden test files) and `solution/` (gold overlay).
 */
export async function loadDirectorySuite(root: string, suiteId: string): Promise<Task[]> {
  const tasksDir = path.join(root, 'tasks');
  let names: string[];
  try {
    names = (await fs.readdir(tasksDir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    throw new GymError('SUITE_NOT_FOUND', `no tasks directory at ${tasksDir}`);
  }
  const tasks: Task[] = [];
  for (const name of names.sort()) {
    const dir = path.join(tasksDir, name);
    const file = path.join(dir, 'task.json');
    let raw: unknown;
    try {
      raw = JSON.parse(await fs.readFile(file, 'utf8'));
    } catch (err) {
      throw new GymError('TASK_INVALID', `${file}: ${(err as Error).message}`);
    }
    const record = raw as Record<string, unknown>;
    const tests = (record.tests ?? {}) as Record<string, unknown>;
    const hidden = (tests.hidden ?? {}) as Record<string, unknown>;
    const solutionFiles = await readFileTree(path.join(dir, 'solution'));
    const candidate = {
      ...record,
      suite: suiteId,
      workspace: { type: 'dir', path: path.join(dir, 'workspace') },
      tests: { ...tests, hidden: { ...hidden, files: { ...(hidden.files as object), ...(await readFileTree(path.join(dir, 'hidden'))) } } },
      solution: Object.keys(solutionFiles).length ? { files: solutionFiles } : record.solution,
    };
    const parsed = TaskSchema.safeParse(candidate);
    if (!parsed.success) throw new GymError('TASK_INVALID', `${file}: ${describeIssues(parsed.error)}`);
    if (parsed.data.id !== name) throw new GymError('TASK_INVALID', `${file}: id '${parsed.data.id}' differs from its directory '${name}'`);
    tasks.push(parsed.data);
  }
  return tasks;
}
