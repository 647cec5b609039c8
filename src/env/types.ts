/** What a sandbox needs to run a task's code: found or built once, cached by content hash. */
export interface PreparedEnv {
  key: string;
  kind: 'python' | 'java';
  /** PATH entries, first wins. */
  path: string[];
  vars: Record<string, string>;
  /** Host paths the sandbox must be able to read. */
  readOnlyPaths: string[];
  /** The interpreter commands should call (python) or the build tool (mvn). */
  command: string;
  /** Substitutions and other facts a verdict should carry. */
  notes: string[];
  /** Docker backend: the image holding this env (and, for instance images, the start state). */
  image?: string;
  /** Docker backend: the memory this task's containers need, when above the server's limit. */
  memoryBytes?: number;
  /** The processes and threads this task's sandboxes need at once, when above the server's limit. */
  pids?: number;
  /** Local backend, `git` workspaces: the host directory holding the start state (a cached checkout). */
  seedDir?: string;
}

/** The part of a prepared env a sandbox is created with. */
export function sandboxEnv(env: PreparedEnv): {
  path: string[];
  vars: Record<string, string>;
  readOnlyPaths: string[];
  image?: string;
  memoryBytes?: number;
  pids?: number;
} {
  return {
    path: env.path,
    vars: env.vars,
    readOnlyPaths: env.readOnlyPaths,
    ...(env.image ? { image: env.image } : {}),
    ...(env.memoryBytes ? { memoryBytes: env.memoryBytes } : {}),
    ...(env.pids ? { pids: env.pids } : {}),
  };
}

/** What a task's `resources` ask of its sandboxes, in a prepared env's terms. */
export function taskResources(resources: { memoryMb?: number; pids?: number }): { memoryBytes?: number; pids?: number } {
  return {
    ...(resources.memoryMb ? { memoryBytes: resources.memoryMb * 1024 ** 2 } : {}),
    ...(resources.pids ? { pids: resources.pids } : {}),
  };
}
