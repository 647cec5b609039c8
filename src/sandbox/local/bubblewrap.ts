import { execFile } from 'node:child_process';
import { existsSync, promises as fs, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { SANDBOX_HOSTNAME, SANDBOX_HOSTS_FILE } from '../host_name.ts';
import type { Cgroup } from './cgroup.ts';
import type { Confinement } from './confinement.ts';
import type { LocalLimits } from './limits.ts';

const execFileP = promisify(execFile);

let bwrapWorks: Promise<boolean> | undefined;
/** Probes bubblewrap once: installed is not enough, user namespaces must be allowed. */
export function bubblewrapAvailable(): Promise<boolean> {
  bwrapWorks ??= execFileP(
    'bwrap',
    ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', 'true'],
    { timeout: 10_000 },
  )
    .then(() => true)
    .catch(() => false);
  return bwrapWorks;
}

/** Writes the shell's pid to each cgroup.procs given before `--`, then execs the rest. */
const JOIN_CGROUP = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

/** What one sandbox's command lines are made of: its limits, confinement and mounts. */
export interface SandboxMounts {
  limits: LocalLimits;
  confinement: Confinement;
  /** Under bubblewrap (else prlimit and the cgroup only). */
  bwrap: boolean;
  /** The workspace and the sandbox's home: the only writable binds. */
  writable: string[];
  readOnlyPaths: string[];
  /** Host paths covered by an empty tmpfs (suites, datasets, other episodes). */
  hiddenPaths: string[];
  /** Ancestors the sandbox's uid may not traverse, covered so that it reaches its binds (untraversableDirs). */
  covered: string[];
}

/**
 * The command line that runs `shell` in the sandbox. `newSession` (bubblewrap's
 * --new-session, against TIOCSTI injection into the server's terminal) is off for PTYs:
 * there the controlling terminal is the sandbox's own, and job control needs it.
 */
export function confinedArgv(
  m: SandboxMounts,
  cwd: string,
  { shell, newSession = true, cgroup, executor = false }: { shell: string[]; newSession?: boolean; cgroup?: Cgroup; executor?: boolean },
): string[] {
  const l = m.limits;
  const c = m.confinement;
  // RLIMIT_NPROC counts every process of the uid (all sandboxes, the server): only a fallback.
  const nproc = c.pidsBounded ? [] : [`--nproc=${l.processes}`];
  const prlimit = ['prlimit', `--cpu=${l.cpuSeconds}`, `--fsize=${l.fileSizeBytes}`, `--nofile=${l.openFiles}`, ...nproc, '--'];
  // Into its cgroup before anything runs: what it starts is born there and cannot leave.
  const join = cgroup ? ['/bin/sh', '-c', JOIN_CGROUP, 'benchgym-cgroup', ...cgroup.procsFiles, '--'] : [];
  const user = c.user;
  // An executor that runs commands as the uid itself (--user) stays root, with the two capabilities that takes.
  const drop = !user
    ? []
    : executor && c.executorIsolation === 'uid'
      ? ['setpriv', '--inh-caps=-all', '--bounding-set=-all,+setuid,+setgid', '--no-new-privs', '--']
      : [
          'setpriv',
          `--reuid=${user.uid}`,
          `--regid=${user.gid}`,
          '--clear-groups',
          '--inh-caps=-all',
          '--bounding-set=-all',
          '--no-new-privs',
          '--',
        ];
  // Without bubblewrap a uid is set only for the executor's sandboxes (factory.ts): root's commands could read its channel.
  if (!m.bwrap) return [...join, ...prlimit, ...drop, ...shell];
  const binds: string[] = ['--ro-bind', '/', '/'];
  for (const d of m.covered) binds.push('--perms', '0755', '--tmpfs', d);
  // Disk: /tmp is a capped tmpfs (charged to the memory cgroup); the workspace stays on the
  // host disk, bounded per file by RLIMIT_FSIZE only: a tmpfs per sandbox would hold whole
  // checkouts in memory, and loop-mounted images need root-only mounts a crash leaves behind.
  binds.push('--dev', '/dev', '--proc', '/proc', '--perms', '1777', '--size', String(l.tmpBytes), '--tmpfs', '/tmp');
  // Its own name, resolved as a container resolves its own (host_name.ts), not by the host's /etc/hosts.
  if (existsSync('/etc/hosts')) binds.push('--ro-bind', SANDBOX_HOSTS_FILE, '/etc/hosts');
  const mounts = [...m.covered, '/tmp'];
  for (const hidden of m.hiddenPaths) {
    if (!existsSync(hidden)) continue;
    // A folder gets an empty tmpfs; a file (a task file, a dataset) gets /dev/null,
    // unreadable on the nodev bind: a tmpfs cannot be mounted on a file.
    if (statSync(hidden).isDirectory()) {
      binds.push('--tmpfs', hidden);
      mounts.push(hidden);
    } else binds.push('--ro-bind', '/dev/null', hidden);
  }
  // Directories bubblewrap makes inside those tmpfs mounts are 0700: the uid must pass them.
  const made = new Set<string>();
  const parents = (target: string) => {
    if (!user) return;
    const parts = target.split('/').filter(Boolean);
    for (let i = 1; i < parts.length; i++) {
      const dir = '/' + parts.slice(0, i).join('/');
      if (made.has(dir) || mounts.includes(dir) || !mounts.some((mnt) => dir.startsWith(mnt + '/'))) continue;
      made.add(dir);
      binds.push('--perms', '0755', '--dir', dir);
    }
  };
  for (const ro of m.readOnlyPaths) {
    if (!existsSync(ro)) continue;
    parents(path.resolve(ro));
    binds.push('--ro-bind', ro, ro);
  }
  for (const rw of m.writable) {
    parents(rw);
    binds.push('--bind', rw, rw);
  }
  // A root server runs bubblewrap without a user namespace, so that the command can drop to
  // a real unprivileged host uid (a uid mapped in a namespace would still be host root,
  // reading root's 0600 files); an unprivileged server is that uid already.
  const namespaces = user
    ? ['--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try']
    : ['--unshare-all', '--cap-drop', 'ALL'];
  return [
    ...join,
    ...prlimit,
    'bwrap',
    ...namespaces,
    '--hostname',
    SANDBOX_HOSTNAME,
    '--die-with-parent',
    ...(newSession ? ['--new-session'] : []),
    ...binds,
    '--chdir',
    cwd,
    ...drop,
    ...shell,
  ];
}

/**
 * The directories bubblewrap mounts an empty tmpfs on so that `user` can reach `targets`
 * (its workspace, home and env paths): the nearest ancestor it may not traverse (a root
 * server's data dir under /root, mode 0700). What is below stays hidden, as it was.
 */
export async function untraversableDirs(targets: string[], user: { uid: number; gid: number }): Promise<string[]> {
  const cover = new Set<string>();
  for (const target of targets) {
    const parts = path.resolve(target).split(path.sep).filter(Boolean);
    for (let i = 1; i < parts.length; i++) {
      const dir = '/' + parts.slice(0, i).join('/');
      const st = await fs.stat(dir).catch(() => null);
      if (!st) break;
      const x = st.mode & 0o001 || (st.uid === user.uid && st.mode & 0o100) || (st.gid === user.gid && st.mode & 0o010);
      if (!x) {
        cover.add(dir);
        break;
      }
    }
  }
  return [...cover].sort((a, b) => a.split('/').length - b.split('/').length);
}
