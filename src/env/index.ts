import { GymError } from '../errors.ts';
import type { ImageEnvSpec, Task } from '../tasks/schema.ts';
import { GradleEnvBuilder } from './gradle.ts';
import { MavenEnvBuilder } from './maven.ts';
import { PythonEnvBuilder } from './python.ts';
import { taskResources, type PreparedEnv } from './types.ts';
import { gitStartState } from './workspace.ts';

export type { PreparedEnv } from './types.ts';

/** ENV_UNAVAILABLE for a task that needs a user-supplied image, naming the option that supplies it. */
export function imageUnavailable(spec: ImageEnvSpec, why: string): GymError {
  if (spec.unsupported) return new GymError('ENV_UNAVAILABLE', spec.about, { option: spec.option });
  return new GymError('ENV_UNAVAILABLE', `${spec.about}; ${why}${spec.image ? '' : ` (name a loaded image with ${spec.option})`}`, {
    option: spec.option,
    ...(spec.image ? { image: spec.image } : {}),
  });
}

/** ENV_UNAVAILABLE for a Java env its suite knows cannot exist here (checked before any build, on every backend). */
export function assertEnvAvailable(task: Task): void {
  if (task.env.kind === 'java' && task.env.unavailable)
    throw new GymError('ENV_UNAVAILABLE', task.env.unavailable, { reason: task.env.unavailable });
}

/** Turns a task's env spec into a ready, cached environment for the local backend. */
export class EnvBuilder {
  private readonly python: PythonEnvBuilder;
  private readonly maven: MavenEnvBuilder;
  private readonly gradle: GradleEnvBuilder;

  /** `gradle`: the Gradle to use instead of projects' wrappers (see `planGradle`). */
  constructor(
    readonly cacheDir: string,
    opts: { gradle?: string } = {},
  ) {
    this.python = new PythonEnvBuilder(cacheDir);
    this.maven = new MavenEnvBuilder(cacheDir);
    this.gradle = new GradleEnvBuilder(cacheDir, opts);
  }

  async prepare(task: Task): Promise<PreparedEnv> {
    // A git workspace is a cached checkout with no future; its directory is the sandbox seed.
    if (task.env.kind === 'image') throw imageUnavailable(task.env, 'the local sandbox cannot run a Docker image: use --sandbox docker');
    assertEnvAvailable(task);
    const seedDir = task.workspace.type === 'git' ? await gitStartState(this.cacheDir, task.workspace) : undefined;
    // The memory and pids the task asks for (a JVM and its test fork above the sandbox's defaults) go with the env.
    const resources = taskResources(task.resources);
    const withSeed = (env: PreparedEnv): PreparedEnv => ({ ...env, ...resources, ...(seedDir ? { seedDir } : {}) });
    if (task.env.kind === 'python') return withSeed(await this.python.prepare(task.env));
    const seed = seedDir
      ? { dir: seedDir }
      : task.workspace.type === 'dir'
        ? { dir: task.workspace.path }
        : { files: task.workspace.type === 'files' ? task.workspace.files : {} };
    if (task.env.build === 'gradle') return withSeed(await this.gradle.prepare(task.env, seed));
    return withSeed(await this.maven.prepare(task.env, seed, { requireCompile: Boolean(seedDir) }));
  }
}
