import { execFile } from 'node:child_process';
import { GymError } from '../errors.ts';

/**
 * System packages of an env (`systemPackages` of a Python env spec): Debian packages a pip
 * package needs at run time, such as the shared library python-magic loads (libmagic1).
 * Docker env images install them (apt-get, with the build's host network); the local backend
 * runs on the host's /usr, so there they must already be installed: the server never installs
 * anything on its host.
 */

/** The Dockerfile line that installs `packages` into an image built from a Debian base. */
export function aptInstallLine(packages: string[]): string {
  return (
    `RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ` +
    `--no-install-recommends ${packages.join(' ')} >/dev/null && rm -rf /var/lib/apt/lists/*`
  );
}

/**
 * The packages a failed apt-get says it does not know (`Unable to locate package X`, `Package 'X'
 * has no installation candidate`). apt colours its errors when it thinks it writes to a terminal
 * (`E: ...X\x1b[0m`), so terminal escapes are dropped before the names are read.
 */
export function unknownAptPackages(output: string): string[] {
  const log = output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  const names = [
    ...log.matchAll(/Unable to locate package (\S+)/g),
    ...log.matchAll(/Package '?([a-z0-9][a-z0-9+.-]+)'? has no installation candidate/g),
  ].map((m) => m[1]!);
  return [...new Set(names)];
}

/**
 * The packages of `packages` that are not installed on this host, asked of dpkg; `null` when
 * this host has no dpkg to ask (not a Debian-based system).
 */
export function missingOnHost(packages: string[]): Promise<string[] | null> {
  if (!packages.length) return Promise.resolve([]);
  return new Promise((resolve) => {
    // One line per package: its status, or dpkg-query's "no packages found" on stderr for an unknown one.
    execFile('dpkg-query', ['-W', '-f=${Package}\t${db:Status-Abbrev}\n', ...packages], { timeout: 30_000 }, (err, stdout) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') return resolve(null);
      const installed = new Set(
        stdout
          .split('\n')
          .map((l) => l.split('\t'))
          .filter(([, status]) => status?.startsWith('ii'))
          .map(([name]) => name!.replace(/:.*$/, '')),
      );
      resolve(packages.filter((p) => !installed.has(p)));
    });
  });
}

/** ENV_UNAVAILABLE unless the host has every one of `packages` (nothing is checked on a host without dpkg; `notes` says so). */
export async function requireOnHost(packages: string[], notes: string[]): Promise<void> {
  const missing = await missingOnHost(packages);
  if (missing === null) {
    notes.push(`the env needs the system packages ${packages.join(', ')}; this host has no dpkg to check that they are installed`);
    return;
  }
  if (missing.length) {
    throw new GymError(
      'ENV_UNAVAILABLE',
      `the env needs the system package${missing.length > 1 ? 's' : ''} ${missing.join(', ')}` +
        `, not installed on this host (the local backend runs on the host's libraries: \`apt-get ` +
        `install ${missing.join(' ')}\`, or use --sandbox docker, whose env image installs them)`,
      { systemPackages: missing },
    );
  }
}
