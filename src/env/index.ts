import type { Task } from '../tasks/schema.ts';
import { MavenEnvBuilder } from './maven.ts';
import { PythonEnvBuilder } from './python.ts';
import type { PreparedEnv } from './types.ts';

export type { PreparedEnv } from './types.ts';

/** Turns a task's env spec into a ready, cached environment for the local backend. */
export class EnvBuilder {
  private readonly python: PythonEnvBuilder;
  private readonly maven: MavenEnvBuilder;

  constructor(readonly cacheDir: string) {
    this.python = new PythonEnvBuilder(cacheDir);
    this.maven = new MavenEnvBuilder(cacheDir);
  }

  prepare(task: Task): Promise<PreparedEnv> {
    if (task.env.kind === 'python') return this.python.prepare(task.env);
    const seed = task.workspace.type === 'dir' ? { dir: task.workspace.path } : { files: task.workspace.files };
    return this.maven.prepare(task.env, seed);
  }
}
