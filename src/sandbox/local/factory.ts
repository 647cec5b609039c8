import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { GymError } from '../../errors.ts';
import { EnvBuilder } from '../../env/index.ts';
import type { PreparedEnv } from '../../env/types.ts';
import type { Task } from '../../tasks/schema.ts';
import type { Sandbox, SandboxCreateOptions, SandboxFactory } from '../types.ts';
import { CgroupDriver, type CgroupMode } from './cgroup.ts';
import { bubblewrapAvailable, untraversableDirs } from './bubblewrap.ts';
import { localExecutorBinary, probePidNamespaces } from './executor.ts';
import { describeExecutorIsolation, type Confinement, type ExecutorIsolation } from './confinement.ts';
import { sandboxUserFromEnv, type SandboxUser } from '../sandbox_user.ts';
import { DEFAULT_LOCAL_LIMITS, type LocalLimits } from './limits.ts';
import { LocalSandbox } from './sandbox.ts';

export interface LocalSandboxOptions {
  /** Where episode directories are made. */
  baseDir: string;
  /** 'auto' uses bubblewrap when it is installed and works. */
  isolation?: 'auto' | 'bwrap' | 'none';
  /** Host paths hidden from commands under bubblewrap (suites, datasets, other episodes). */
  privatePaths?: string[];
  limits?: Partial<LocalLimits>;
  /** Where venvs and the Maven repository are cached (needed by prepare()). */
  cacheDir?: string;
  /** Per-sandbox cgroups for pids and memory and for finding every process ('auto': v2, else v1, else none). */
  cgroups?: CgroupMode;
  /** The unprivileged uid/gid commands run as under bubblewrap when the server is root (default nobody). */
  sandboxUser?: SandboxUser;
  /**
   * Where the executor binary (one process per sandbox forks every command) is put: the
   * package's prebuilt one, else built from src/sandbox/executor/go on first use (default:
   * cacheDir, else ~/.cache/benchgym). Without one, create() fails (localExecutorBinary).
   */
  executorCacheDir?: string;
  /** The Gradle to use instead of projects' wrappers (`--gradle`; else $BENCHGYM_GRADLE). */
  gradle?: string;
}

const SEED_SKIP = new Set(['__pycache__', '.pytest_cache', 'target']);

export class LocalSandboxFactory implements SandboxFactory {
  readonly backend = 'local' as const;
  private readonly limits: LocalLimits;
  private readonly live = new Set<LocalSandbox>();
  private envs?: EnvBuilder;
  private ready?: Promise<void>;
  private cgroups: CgroupDriver | null = null;
  private executorBinary?: Promise<string>;
  private pidNamespaceProbe?: Promise<boolean>;

  constructor(private readonly opts: LocalSandboxOptions) {
    this.limits = { ...DEFAULT_LOCAL_LIMITS, ...opts.limits };
  }

  /**
   * Finds the cgroups this server may use and kills and removes what servers that are gone
   * left in them (a kill -9, a crash): every process of theirs, whatever it did to its session
   * or environment. Run by `benchgym serve` at start, else by the first create().
   */
  init(): Promise<void> {
    // Built (the first time: seconds) while the server starts, not at the first episode; a failure is create()'s.
    this.executor().catch(() => {});
    this.ready ??= (async () => {
      this.cgroups = await CgroupDriver.detect(this.opts.cgroups ?? 'auto');
      await this.cgroups?.reapStale();
    })();
    return this.ready;
  }

  /** The executor binary (localExecutorBinary); a failure is not kept, so a later create() tries again. */
  private executor(): Promise<string> {
    this.executorBinary ??= localExecutorBinary(
      this.opts.executorCacheDir ?? this.opts.cacheDir ?? path.join(os.homedir(), '.cache', 'benchgym'),
    ).catch((err: unknown) => {
      this.executorBinary = undefined;
      throw err;
    });
    return this.executorBinary;
  }

  async prepare(task: Task): Promise<PreparedEnv> {
    if (!this.opts.cacheDir) throw new GymError('ENV_UNAVAILABLE', 'this local sandbox factory has no env cache directory');
    this.envs ??= new EnvBuilder(this.opts.cacheDir, this.opts.gradle ? { gradle: this.opts.gradle } : {});
    return this.envs.prepare(task);
  }

  async create(create: SandboxCreateOptions): Promise<Sandbox> {
    const mode = this.opts.isolation ?? 'auto';
    const useBwrap = mode === 'bwrap' || (mode === 'auto' && (await bubblewrapAvailable()));
    if (mode === 'bwrap' && !(await bubblewrapAvailable())) {
      throw new GymError('SANDBOX_UNAVAILABLE', 'bubblewrap isolation was asked for but bwrap is missing or cannot create namespaces');
    }
    await this.init();
    const executor = await this.executor();
    const id = `lsb-${randomBytes(6).toString('hex')}`;
    const dir = path.join(this.opts.baseDir, id);
    await fs.mkdir(path.join(dir, 'workspace'), { recursive: true });
    await fs.mkdir(path.join(dir, 'home'), { recursive: true });
    await fs.mkdir(path.join(dir, 'tmp'), { recursive: true });
    const confinement = await this.confinement(id, dir, useBwrap, executor, create).catch(async (err) => {
      await fs.rm(dir, { recursive: true, force: true });
      throw new GymError('SANDBOX_UNAVAILABLE', `could not make the sandbox's cgroup: ${(err as Error).message}`);
    });
    const sandbox = new LocalSandbox(
      id,
      dir,
      useBwrap,
      this.limits,
      create,
      [this.opts.baseDir, ...(this.opts.privatePaths ?? [])],
      () => this.live.delete(sandbox),
      (from) => this.fork(from, create),
      confinement,
      executor,
    );
    try {
      if (create.seed.dir) {
        await fs.cp(create.seed.dir, sandbox.root, {
          recursive: true,
          verbatimSymlinks: true,
          filter: (src) => !SEED_SKIP.has(path.basename(src)),
        });
      }
      for (const [rel, content] of Object.entries(create.seed.files ?? {})) await sandbox.writeFile(rel, content);
      await sandbox.handOver();
      // Started now, while the agent thinks; the first command waits for it if it must.
      sandbox.startExecutor().catch(() => {});
    } catch (err) {
      await sandbox.destroy();
      throw err instanceof GymError
        ? err
        : new GymError('SANDBOX_UNAVAILABLE', `could not lay out the workspace: ${(err as Error).message}`);
    }
    this.live.add(sandbox);
    return sandbox;
  }

  /**
   * The sandbox's cgroup (with its limits) and, for a root server, the uid it runs as: under
   * always (without bubblewrap, a root command could open the executor's channel through /proc),
   * but without bubblewrap only where that uid can reach the sandbox's paths.
   */
  private async confinement(id: string, dir: string, bwrap: boolean, executor: string, create: SandboxCreateOptions): Promise<Confinement> {
    const l = this.limits;
    let user = process.getuid?.() === 0 ? (this.opts.sandboxUser ?? sandboxUserFromEnv()) : undefined;
    let unreachable = '';
    if (user && !bwrap) {
      const blocked = await untraversableDirs([path.join(dir, 'workspace'), ...(create.env?.readOnlyPaths ?? [])], user);
      if (blocked.length) [unreachable, user] = [` (uid ${user.uid} cannot pass ${blocked.join(', ')})`, undefined];
    }
    // The executor out of its commands' reach: by uid where the server is root, else by a pid namespace per command.
    const executorIsolation: ExecutorIsolation = user ? 'uid' : (await this.pidNamespaces(executor)) ? 'pid-namespace' : 'none';
    const who = [
      user
        ? `commands as uid ${user.uid} without capabilities`
        : bwrap
          ? `commands as the server's uid ${process.getuid?.()} without capabilities`
          : `commands as the server's user${unreachable}`,
      describeExecutorIsolation(executorIsolation, user),
    ].join('; ');
    if (!this.cgroups)
      return {
        user,
        executorIsolation,
        describe: `${who}; no writable cgroups: bounded by rlimits only, leftovers found by an environment marker (which env -i clears)`,
      };
    const limits = { pids: Math.max(create.env?.pids ?? 0, l.pids), memoryBytes: Math.max(create.env?.memoryBytes ?? 0, l.memoryBytes) };
    const cgroup = await this.cgroups.createSandbox(id, limits);
    return {
      cgroup,
      user,
      executorIsolation,
      pidsBounded: this.cgroups.limitsPids,
      ...(this.cgroups.limitsMemory ? { memoryBytes: limits.memoryBytes } : {}),
      describe: `${who}; ${this.cgroups.describe(limits)}`,
    };
  }

  /** Whether the executor may give each command a user and pid namespace of its own here (probed once). */
  private pidNamespaces(binary: string): Promise<boolean> {
    this.pidNamespaceProbe ??= probePidNamespaces(binary);
    return this.pidNamespaceProbe;
  }

  /** A new sandbox seeded with another's workspace, its baseline copied beside it. */
  private async fork(from: LocalSandbox, create: SandboxCreateOptions): Promise<Sandbox> {
    const copy = (await this.create({ ...create, seed: { dir: from.root } })) as LocalSandbox;
    await copy.adoptBaseline(from);
    return copy;
  }

  async close(): Promise<void> {
    await Promise.all([...this.live].map((s) => s.destroy()));
  }
}
