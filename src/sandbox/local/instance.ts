import { promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { PROJECT_ROOT } from '../../project.ts';
import { bubblewrapAvailable } from './bubblewrap.ts';
import { localExecutorBinary } from './executor.ts';
import { LocalSandboxFactory, type LocalSandboxOptions } from './factory.ts';
import { DEFAULT_LOCAL_LIMITS } from './limits.ts';
import { claimSandboxDir, removeStaleSandboxDirs } from './stale.ts';

/** What the local backend of one server (or run) is built with. */
export interface LocalInstanceOptions {
  /** The gym's data folder: the sandboxes go into `<dataDir>/sandboxes/<instance>/`. */
  dataDir: string;
  /** Built envs (venvs, the Maven repository) and the executor binary (default: the data dir). */
  cacheDir?: string;
  isolation?: LocalSandboxOptions['isolation'];
  gradle?: string;
  /** Host paths hidden from commands under bubblewrap besides the data dir and the checkout (the suites' private files). */
  privatePaths?: readonly string[];
}

const gib = (bytes: number) => `${+(bytes / 1024 ** 3).toFixed(1)} GiB`;
const kib = (bytes: number) => `${Math.round(bytes / 1024)} KiB`;

/**
 * The local backend as a server or a run uses it: its sandboxes in a folder of its own under the
 * data folder, claimed for this process; at start it removes the folders of instances that died
 * without cleaning up (and what their commands left running), and at close its own.
 */
export class LocalInstanceFactory extends LocalSandboxFactory {
  /** The folder every instance's sandboxes folder is in: `<dataDir>/sandboxes`. */
  readonly root: string;
  /** This instance's folder name under `root`. */
  readonly instance: string;
  /** The start-up sweep of dead instances' sandboxes folders (await it to know it is done). */
  readonly staleSwept: Promise<void>;
  readonly hostPaths: readonly { root: string; placeholder: string }[];

  constructor(private readonly instanceOpts: LocalInstanceOptions) {
    const dataDir = path.resolve(instanceOpts.dataDir);
    const root = path.join(dataDir, 'sandboxes');
    const cacheDir = path.resolve(instanceOpts.cacheDir ?? dataDir);
    const instance = randomBytes(4).toString('hex');
    super({
      baseDir: path.join(root, instance),
      isolation: instanceOpts.isolation,
      ...(instanceOpts.gradle ? { gradle: instanceOpts.gradle } : {}),
      cacheDir,
      // Hidden from commands under bubblewrap: suites (hidden tests), the whole data dir
      // (other sandboxes, logs, trajectories) and the checkout (its git history holds the suites).
      privatePaths: [...(instanceOpts.privatePaths ?? []), dataDir, PROJECT_ROOT],
    });
    this.root = root;
    this.instance = instance;
    this.hostPaths = [{ root, placeholder: '<sandboxes>' }];
    this.staleSwept = claimSandboxDir(root, instance)
      .then(() => removeStaleSandboxDirs(root, instance))
      .then(
        () => {},
        () => {},
      );
  }

  /** bubblewrap or not, the executor, the network, the limits; says plainly when commands can reach the network. */
  async describe(): Promise<string> {
    const isolation = this.instanceOpts.isolation ?? 'auto';
    const bwrap = isolation === 'bwrap' || (isolation === 'auto' && (await bubblewrapAvailable()));
    const cacheDir = path.resolve(this.instanceOpts.cacheDir ?? this.instanceOpts.dataDir);
    // 'missing': no sandbox can start (the first one's error says how to get an executor).
    const executor = await localExecutorBinary(cacheDir).then(
      () => 'on',
      () => 'missing',
    );
    const l = DEFAULT_LOCAL_LIMITS;
    const sandbox = bwrap
      ? 'bubblewrap (own mount, pid and network namespaces)'
      : isolation === 'none'
        ? 'no bubblewrap (--isolation none)'
        : 'no bubblewrap (not available here)';
    const network = bwrap ? 'network none' : "network: the host's (commands can reach it)";
    return (
      `isolation: local, ${sandbox}, executor ${executor}, ${network}, limits: memory ${gib(l.memoryBytes)} ` +
      `and ${l.pids} pids (cgroup, where writable), CPU ${l.cpuSeconds} s, disk ${gib(l.diskBytes)}, ` +
      `command timeout ${l.defaultTimeoutMs / 1000} s, output ${kib(l.maxOutputBytes)}`
    );
  }

  /** Ends every sandbox, then removes this instance's folder and its pid file. */
  override async close(): Promise<void> {
    await super.close();
    await this.staleSwept;
    await fs.rm(path.join(this.root, this.instance), { recursive: true, force: true });
    await fs.rm(path.join(this.root, `${this.instance}.pid`), { force: true });
  }
}
