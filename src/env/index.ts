import { GymError } from '../errors.ts';
import type { ImageEnvSpec, Task } from '../tasks/schema.ts';
import { MavenEnvBuilder } from './maven.ts';
import { PythonEnvBuilder } from './python.ts';
import type { PreparedEnv } from './types.ts';

export type { PreparedEnv } from './types.ts';

/** ENV_UNAVAILABLE for a task that needs a user-supplied image, naming the option that supplies it. */
export function imageUnavailable(spec: ImageEnvSpec, why: string): GymError {
  if (spec.unsupported) return new GymError('ENV_UNAVAILABLE', spec.about, { option: spec.option });
  return new GymError('ENV_UNAVAILABLE', `${spec.about}; ${why}${spec.image ? '' : ` (name a loaded image with ${spec.option})`}`, { option: spec.option, ...(spec.image ? { image: spec.image } : {}) });
}

/** Turns a task's env spec into a ready, cached environment for the local backend. */
export class EnvBuilder {
  private readonly python: PythonEnvBuilder;
  private readonly maven: MavenEnvBuilder;

  constructor(readonly cacheDir: string) {
    this.python = new PythonEnvBuilder(cacheDir);
    this.maven = new MavenEnvBuilder(cacheDir);
  }

  async prepare(task: Task): Promise<PreparedEnv> {
    if (task.env.kind === 'python') return this.python.prepare(task.env);
    if (task.env.kind === 'image') throw imageUnavailable(task.env, 'the local sandbox cannot run a Docker image: use --sandbox docker');
    const seed = task.workspace.type === 'dir' ? { dir: task.workspace.path } : { files: task.workspace.files };
    return this.maven.prepare(task.env, seed);
  }
}
