import { execFile, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../../errors.ts';
import { ExecutorClient } from '../executor/client.ts';
import { ensureExecutorBinary } from '../executor/build.ts';
import { killByEnvMarker } from '../processes.ts';
import type { Cgroup } from './cgroup.ts';

/** What the executor's own processes carry instead of BENCHGYM_SANDBOX, so that sweeping a sandbox's leftovers spares them. */
export const EXECUTOR_MARKER = 'BENCHGYM_EXECUTOR';

/**
 * The executor binary for local sandboxes: the package's prebuilt one, else built from source
 * (ensureExecutorBinary). Without either, no local sandbox can start: the error says how to get one.
 */
export async function localExecutorBinary(cacheDir: string): Promise<string> {
  return ensureExecutorBinary({ cacheDir });
}

/** Whether the executor binary can give a command a user and pid namespace of its own on this machine (`--probe-pid-namespace`). */
export function probePidNamespaces(binary: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(binary, ['--probe-pid-namespace'], { timeout: 10_000 }, (err) => resolve(!err));
  });
}

/** The sandbox's own hard link to (or copy of) the binary: under its directory, reachable by its uid in every isolation mode. */
export async function placeExecutorBinary(binary: string, dir: string): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  const target = path.join(dir, path.basename(binary));
  await fs.link(binary, target).catch(() => fs.copyFile(binary, target));
  await fs.chmod(target, 0o755);
  return target;
}

export interface LocalExecutorStart {
  /** The confined command line that ends with the executor binary and its flags. */
  argv: string[];
  env: Record<string, string>;
  /** The executor's leaf cgroup (its commands are born there), when the sandbox has cgroups. */
  cgroup?: Cgroup;
  label: string;
}

/**
 * One sandbox's executor: the process bubblewrap (or, without it, prlimit) runs for the
 * sandbox's lifetime, forking every command inside the sandbox's confinement. `keep` holds
 * the host pids of the executor and the bubblewrap processes above it: whatever else is in
 * its cgroup once no command runs is a leftover.
 */
export class LocalExecutor {
  private constructor(
    readonly client: ExecutorClient,
    readonly cgroup: Cgroup | undefined,
    /** Host pids that are the executor's own (itself, and bubblewrap's monitor and init above it). */
    readonly keep: ReadonlySet<number>,
    /** The executor's host pid. */
    readonly pid: number,
  ) {}

  static async start(opts: LocalExecutorStart): Promise<LocalExecutor> {
    const [file, ...args] = opts.argv;
    // Its own session (setsid), as commands had: no controlling terminal of the server's to reach.
    const child = spawn(file!, args, { env: opts.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let client: ExecutorClient;
    try {
      client = await ExecutorClient.connect(
        { input: child.stdin, output: child.stdout, stderr: child.stderr, process: child },
        { label: opts.label },
      );
    } catch (err) {
      await opts.cgroup?.killAll();
      throw err;
    }
    const keep = new Set<number>([child.pid!, ...(await descendants(child.pid!))]);
    // Nothing else runs yet: what the cgroup holds now is the executor and what started it.
    for (const p of (await opts.cgroup?.pids()) ?? []) keep.add(p);
    const pid = (await findExecutorPid(keep, client.info!.pid)) ?? child.pid!;
    return new LocalExecutor(client, opts.cgroup, keep, pid);
  }

  /**
   * Kills what commands left behind, once none runs: everything in the executor's cgroup
   * but the executor (whatever left its process group, session or environment), else
   * every process carrying the sandbox's marker.
   */
  async sweep(sandboxId: string): Promise<void> {
    if (this.cgroup) await this.cgroup.killAllExcept(this.keep);
    else await killByEnvMarker('BENCHGYM_SANDBOX', sandboxId);
  }

  /** Ends the executor (it kills what still runs) and, with it, its cgroup. */
  async close(): Promise<void> {
    await this.client.close();
    await this.cgroup?.remove();
  }
}

/** A process's children, and theirs (CONFIG_PROC_CHILDREN; empty without it). */
async function descendants(pid: number): Promise<number[]> {
  const out: number[] = [];
  const tasks = await fs.readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  for (const tid of tasks) {
    const text = await fs.readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch(() => '');
    for (const child of text.split(/\s+/).filter(Boolean).map(Number)) out.push(child, ...(await descendants(child)));
  }
  return out;
}

/** Which of `pids` is the executor: the one whose innermost pid (NSpid, the pid it reported) matches and that is not bubblewrap. */
async function findExecutorPid(pids: Iterable<number>, reported: number): Promise<number | undefined> {
  for (const pid of pids) {
    const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const nspid = /^NSpid:\s+(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/).map(Number);
    const name = /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '';
    if (nspid?.at(-1) === reported && !/^bwrap$/.test(name)) return pid;
  }
  return undefined;
}

/** A sandbox whose executor could not start is unusable, with the reason. */
export function executorStartFailed(sandboxId: string, err: unknown): GymError {
  const reason = err instanceof Error ? err.message : String(err);
  return new GymError('SANDBOX_UNAVAILABLE', `the executor of sandbox ${sandboxId} could not start: ${reason}`);
}
