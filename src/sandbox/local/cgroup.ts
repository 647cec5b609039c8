import { promises as fs, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { createHash, randomBytes } from 'node:crypto';
import { processAlive } from '../../lock.ts';

/**
 * Per-sandbox control groups for the local backend: a kernel bound on pids and memory, and
 * the one list of a sandbox's processes that nothing inside can leave (setsid, `env -i`,
 * double forks and reparenting change nothing), so every process can be found and killed.
 *
 * Layout: `<base>/benchgym-<host>-<pid>-<start>-<sandbox>/<exec-or-pty leaf>`, where <base>
 * is the server's own cgroup in each hierarchy. The limits sit on the sandbox cgroup (so they
 * bound every command and terminal of the sandbox together); each command runs in a leaf
 * of its own, so the end of one command kills its leftovers without touching a terminal.
 * The owner in the name (host hash, server pid and start time, as Docker's reapStale labels)
 * lets the next server find and kill what a crashed one left.
 */

export type CgroupMode = 'auto' | 'v1' | 'v2' | 'off';

export interface CgroupLimits {
  pids: number;
  memoryBytes: number;
}

/** v1 hierarchies used: pids and freezer are required (count, find, stop), memory optional. */
const V1_CONTROLLERS = ['pids', 'freezer', 'memory'] as const;
type V1Controller = (typeof V1_CONTROLLERS)[number];

const PREFIX = 'benchgym-';
const HOST = createHash('sha256').update(os.hostname()).digest('hex').slice(0, 8);

interface Mount {
  point: string;
  root: string;
  fstype: string;
  superOpts: string[];
}

function mounts(): Mount[] {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [left, right] = line.split(' - ');
        const f = left!.split(' ');
        const r = (right ?? '').split(' ');
        return { point: unescapeMount(f[4]!), root: unescapeMount(f[3]!), fstype: r[0] ?? '', superOpts: (r[2] ?? '').split(',') };
      });
  } catch {
    return [];
  }
}

function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** This process's cgroup paths: '' for v2, the controller name for v1. */
function ownCgroups(): Map<string, string> {
  const out = new Map<string, string>();
  try {
    for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
      const m = /^\d+:([^:]*):(.*)$/.exec(line);
      if (!m) continue;
      for (const c of m[1]!.split(',')) out.set(c, m[2]!);
    }
  } catch {
    // not Linux
  }
  return out;
}

/** Where this process's cgroup of a hierarchy lies in the file system. */
function hierarchyDir(mount: Mount, own: string | undefined): string | null {
  if (own === undefined) return null;
  const rel = path.posix.relative(mount.root, own);
  if (rel.startsWith('..')) return null;
  return path.join(mount.point, rel);
}

/** A process's start time in clock ticks since boot (/proc/PID/stat, field 22), or null. */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** `benchgym-<host>-<pid>-<start>-`: this server's prefix for the cgroups it makes. */
export function ownerPrefix(pid = process.pid): string {
  return `${PREFIX}${HOST}-${pid}-${processStart(pid) ?? '0'}-`;
}

/** Is the server that named this cgroup gone? Another host's, or a reused pid, count as gone. */
export function ownerDead(name: string): boolean {
  const m = /^benchgym-([0-9a-f]{8})-(\d+)-(\d+)-/.exec(name);
  if (!m) return false;
  if (m[1] !== HOST) return true;
  const pid = Number(m[2]);
  if (pid === process.pid) return m[3] !== processStart(pid);
  return !processAlive(pid) || processStart(pid) !== m[3];
}

async function writeFile(file: string, value: string): Promise<boolean> {
  try {
    await fs.writeFile(file, value);
    return true;
  } catch {
    return false;
  }
}

async function readPids(file: string): Promise<number[]> {
  try {
    return (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function subdirs(dir: string): Promise<string[]> {
  try {
    return (await fs.readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => path.join(dir, d.name));
  } catch {
    return [];
  }
}

/** Directories below and including `dir`, deepest first (the order rmdir needs). */
/**
 * The same walk, synchronous: what every command's OOM count and sweep read (cgroupfs files, made
 * by the kernel on read, never waiting on a disk). Through the thread pool these reads queued behind
 * every other file operation of the server: most of a command's cost under load.
 */
function treeDeepestFirstSync(dir: string): string[] {
  const out: string[] = [];
  let entries: { name: string; isDirectory(): boolean }[] = [];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    // gone (removed meanwhile): nothing below it
  }
  for (const sub of entries) if (sub.isDirectory()) out.push(...treeDeepestFirstSync(path.join(dir, sub.name)));
  out.push(dir);
  return out;
}

function readSync(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

async function treeDeepestFirst(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const sub of await subdirs(dir)) out.push(...(await treeDeepestFirst(sub)));
  out.push(dir);
  return out;
}

async function rmdirRetry(dir: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    try {
      await fs.rmdir(dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || i === 49) return;
      await sleep(20);
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One cgroup (a sandbox's, or a command's leaf below it), in one or several hierarchies. */
export class Cgroup {
  constructor(
    private readonly driver: CgroupDriver,
    /** By v1 controller, or under '' for v2. */
    readonly dirs: Map<string, string>,
  ) {}

  /** The cgroup.procs files a command writes its pid to before it execs. */
  get procsFiles(): string[] {
    return [...this.dirs.values()].map((d) => path.join(d, 'cgroup.procs'));
  }

  /** A leaf cgroup below this one (a command's, a terminal's). */
  async child(name = `c-${randomBytes(4).toString('hex')}`): Promise<Cgroup> {
    const dirs = new Map<string, string>();
    for (const [k, d] of this.dirs) {
      const sub = path.join(d, name);
      await fs.mkdir(sub);
      dirs.set(k, sub);
    }
    return new Cgroup(this.driver, dirs);
  }

  /** Every process in this cgroup and below it. */
  async pids(): Promise<number[]> {
    const dir = this.driver.version === 2 ? this.dirs.get('') : this.dirs.get('pids');
    if (!dir) return [];
    const all = new Set<number>();
    for (const d of treeDeepestFirstSync(dir))
      for (const p of readSync(path.join(d, 'cgroup.procs')).split('\n').filter(Boolean)) all.add(Number(p));
    return [...all];
  }

  /**
   * How often the memory limit killed a process here or below (v2 memory.events, which counts
   * descendants; v1 memory.oom_control, which counts only the cgroup the victim was in: the
   * command leaves' counts are added, so read it before a leaf is removed).
   */
  async oomKills(): Promise<number> {
    try {
      if (this.driver.version === 2) {
        const text = readFileSync(path.join(this.dirs.get('')!, 'memory.events'), 'utf8');
        return Number(/oom_kill (\d+)/.exec(text)?.[1] ?? 0);
      }
      const dir = this.dirs.get('memory');
      if (!dir) return 0;
      let total = 0;
      for (const d of treeDeepestFirstSync(dir))
        total += Number(/oom_kill (\d+)/.exec(readSync(path.join(d, 'memory.oom_control')))?.[1] ?? 0);
      return total;
    } catch {
      return 0;
    }
  }

  /**
   * Kills every process in the cgroup and below it. Frozen first, so nothing can fork while
   * it is being killed (a fork bomb included); v2's cgroup.kill does the same in the kernel.
   */
  async killAll(): Promise<void> {
    if (this.driver.version === 2) {
      const dir = this.dirs.get('')!;
      if (await writeFile(path.join(dir, 'cgroup.kill'), '1')) {
        for (let i = 0; i < 200 && (await this.pids()).length; i++) await sleep(10);
        return;
      }
    }
    for (let round = 0; round < 100; round++) {
      // An empty cgroup (the usual end of a sandbox) needs no freeze.
      if (!(await this.pids()).some((p) => p !== process.pid)) return;
      await this.freeze(true);
      const pids = (await this.pids()).filter((p) => p !== process.pid);
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      await this.freeze(false);
      if (!pids.length) return;
      await sleep(round < 10 ? 5 : 20);
    }
  }

  /**
   * Kills every process here but `keep` (the executor and the bubblewrap processes above it,
   * which live as long as the sandbox, so their pids are never reused). Returns how many it
   * killed; reading the pids is all it costs when there is nothing to kill.
   */
  async killAllExcept(keep: ReadonlySet<number>): Promise<number> {
    const others = async () => (await this.pids()).filter((p) => !keep.has(p) && p !== process.pid);
    let killed = 0;
    for (let round = 0; round < 100; round++) {
      if (!(await others()).length) return killed;
      // Frozen while killing, so nothing forks past the kill (a fork bomb included).
      await this.freeze(true);
      const pids = await others();
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
          killed++;
        } catch {
          // gone already
        }
      }
      await this.freeze(false);
      if (!pids.length) return killed;
      await sleep(round < 10 ? 5 : 20);
    }
    return killed;
  }

  /** Stops (or restarts) every process in the cgroup and below it. */
  async freeze(on: boolean): Promise<void> {
    if (this.driver.version === 2) {
      const file = path.join(this.dirs.get('')!, 'cgroup.freeze');
      if (!(await writeFile(file, on ? '1' : '0')) || !on) return;
      for (let i = 0; i < 100; i++) {
        const events = await fs.readFile(path.join(this.dirs.get('')!, 'cgroup.events'), 'utf8').catch(() => 'frozen 1');
        if (/frozen 1/.test(events)) return;
        await sleep(5);
      }
      return;
    }
    const dir = this.dirs.get('freezer');
    if (!dir) return;
    if (!(await writeFile(path.join(dir, 'freezer.state'), on ? 'FROZEN' : 'THAWED')) || !on) return;
    // FREEZING lasts while a task sleeps uninterruptibly; killing then is still better than waiting.
    for (let i = 0; i < 100; i++) {
      const state = await fs.readFile(path.join(dir, 'freezer.state'), 'utf8').catch(() => 'FROZEN');
      if (state.trim() === 'FROZEN') return;
      await sleep(5);
    }
  }

  /** Kills everything in it, then removes it and its children. */
  async remove(): Promise<void> {
    await this.killAll();
    for (const d of this.dirs.values()) for (const sub of await treeDeepestFirst(d)) await rmdirRetry(sub);
  }
}

/** What this machine's cgroups can do for the local backend, found once by detect(). */
export class CgroupDriver {
  private constructor(
    readonly version: 1 | 2,
    /** By v1 controller, or under '' for v2: the server's own cgroup, where sandbox cgroups go. */
    readonly bases: Map<string, string>,
    readonly limitsPids: boolean,
    readonly limitsMemory: boolean,
  ) {}

  /** A sentence for Sandbox.isolation. */
  describe(limits: CgroupLimits): string {
    const bounds = [
      this.limitsPids ? `at most ${limits.pids} processes` : '',
      this.limitsMemory ? `${Math.round(limits.memoryBytes / 1024 ** 2)} MiB of memory` : '',
    ].filter(Boolean);
    return (
      `cgroup v${this.version}: ${bounds.length ? bounds.join(' and ') + ', ' : 'no limits (controllers not delegated), '}` +
      `every process found and killed by its cgroup`
    );
  }

  /**
   * The cgroups this server can use, or null (then the sandbox falls back to rlimits and
   * marker scans). 'auto' prefers v2 with pids and memory, then v1, then v2 for tracking only.
   */
  static async detect(mode: CgroupMode = 'auto'): Promise<CgroupDriver | null> {
    if (mode === 'off' || process.platform !== 'linux') return null;
    const all = mounts();
    const own = ownCgroups();
    let v2: CgroupDriver | null = null;
    if (mode !== 'v1') {
      const m = all.find((x) => x.fstype === 'cgroup2');
      const base = m ? hierarchyDir(m, own.get('')) : null;
      if (base && (await probeWritable(base))) {
        const enabled = await enableV2Controllers(base);
        v2 = new CgroupDriver(2, new Map([['', enabled.base]]), enabled.pids, enabled.memory);
        if ((v2.limitsPids && v2.limitsMemory) || mode === 'v2') return v2;
      } else if (mode === 'v2') return null;
    }
    const bases = new Map<string, string>();
    for (const c of V1_CONTROLLERS) {
      const m = all.find((x) => x.fstype === 'cgroup' && x.superOpts.includes(c));
      const base = m ? hierarchyDir(m, own.get(c)) : null;
      if (base && (await probeWritable(base))) bases.set(c, base);
    }
    if (bases.has('pids') && bases.has('freezer')) return new CgroupDriver(1, bases, true, bases.has('memory'));
    return v2;
  }

  /** A new cgroup for a sandbox with its limits, named after this server. */
  async createSandbox(sandboxId: string, limits: CgroupLimits): Promise<Cgroup> {
    const name = `${ownerPrefix()}${sandboxId}`;
    const dirs = new Map<string, string>();
    try {
      for (const [k, base] of this.bases) {
        const dir = path.join(base, name);
        await fs.mkdir(dir);
        dirs.set(k, dir);
      }
      const cg = new Cgroup(this, dirs);
      if (this.version === 2) {
        const dir = dirs.get('')!;
        if (this.limitsPids) await fs.writeFile(path.join(dir, 'pids.max'), String(limits.pids));
        if (this.limitsMemory) {
          await fs.writeFile(path.join(dir, 'memory.max'), String(limits.memoryBytes));
          await writeFile(path.join(dir, 'memory.swap.max'), '0');
          // No memory.oom.group: the whole sandbox would go on an OOM, its executor with it; the killer picks the process.
        }
      } else {
        await fs.writeFile(path.join(dirs.get('pids')!, 'pids.max'), String(limits.pids));
        const mem = dirs.get('memory');
        if (mem) {
          await fs.writeFile(path.join(mem, 'memory.limit_in_bytes'), String(limits.memoryBytes));
          // No swap either, where swap is accounted (the limit must be set first).
          await writeFile(path.join(mem, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
        }
      }
      return cg;
    } catch (err) {
      await new Cgroup(this, dirs).remove();
      throw err;
    }
  }

  /** Kills and removes the cgroups that servers which are gone left behind. Returns how many. */
  async reapStale(): Promise<number> {
    let reaped = 0;
    const names = new Set<string>();
    for (const base of this.bases.values())
      for (const d of await subdirs(base)) if (path.basename(d).startsWith(PREFIX)) names.add(path.basename(d));
    for (const name of names) {
      if (!ownerDead(name)) continue;
      const dirs = new Map<string, string>();
      for (const [k, base] of this.bases) dirs.set(k, path.join(base, name));
      await new Cgroup(this, dirs).remove();
      reaped++;
    }
    return reaped;
  }
}

async function probeWritable(base: string): Promise<boolean> {
  const probe = path.join(base, `${PREFIX}probe-${process.pid}-${randomBytes(3).toString('hex')}`);
  try {
    await fs.mkdir(probe);
    await fs.rmdir(probe);
    return true;
  } catch {
    return false;
  }
}

/**
 * Enables pids and memory for the cgroups below `base` (v2). A cgroup holding processes
 * cannot hand controllers to its children (except the root), so when the server is alone in
 * its cgroup it moves into a leaf of its own first, as systemd's delegation expects.
 */
async function enableV2Controllers(base: string): Promise<{ base: string; pids: boolean; memory: boolean }> {
  const read = async (file: string) => (await fs.readFile(path.join(base, file), 'utf8').catch(() => '')).split(/\s+/).filter(Boolean);
  const available = await read('cgroup.controllers');
  const wanted = ['pids', 'memory'].filter((c) => available.includes(c));
  const done = async () => {
    const on = await read('cgroup.subtree_control');
    return { base, pids: on.includes('pids'), memory: on.includes('memory') };
  };
  if (!wanted.length) return done();
  if (await writeFile(path.join(base, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '))) return done();
  const procs = await readPids(path.join(base, 'cgroup.procs'));
  if (procs.length === 1 && procs[0] === process.pid) {
    const leaf = path.join(base, `${ownerPrefix()}server`);
    await fs.mkdir(leaf).catch(() => {});
    if (await writeFile(path.join(leaf, 'cgroup.procs'), String(process.pid))) {
      await writeFile(path.join(base, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
    }
  }
  return done();
}
