import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';

export interface Jdk {
  /** The major version: `8`, `11`, `17`, `25`. */
  major: string;
  /** JAVA_HOME. */
  home: string;
}

/** Where JDKs are looked for: $BENCHGYM_JDK_DIRS (colon-separated) or /usr/lib/jvm. */
export function jdkRoots(): string[] {
  return (process.env.BENCHGYM_JDK_DIRS ?? '/usr/lib/jvm').split(':').filter(Boolean);
}

/** The JDKs installed under `roots` (a folder with `bin/javac` and a `release` file), one per real path. */
export async function installedJdks(roots: string[] = jdkRoots()): Promise<Jdk[]> {
  const found = new Map<string, Jdk>();
  for (const root of roots) {
    for (const name of await fs.readdir(root).catch(() => [] as string[])) {
      const home = await fs.realpath(path.join(root, name)).catch(() => null);
      if (!home || found.has(home) || !existsSync(path.join(home, 'bin', 'javac'))) continue;
      const release = await fs.readFile(path.join(home, 'release'), 'utf8').catch(() => '');
      const m = /^JAVA_VERSION="(\d+)(?:\.(\d+))?/m.exec(release);
      if (!m) continue;
      found.set(home, { major: m[1] === '1' ? m[2]! : m[1]!, home });
    }
  }
  return [...found.values()].sort((a, b) => Number(a.major) - Number(b.major));
}

/**
 * The JDK for a spec asking for `wanted`: that major version when installed, else the
 * nearest newer one (a newer javac still compiles older sources with `--release`), else the
 * nearest older one. Null when there is none.
 */
export function chooseJdk(wanted: string, jdks: Jdk[]): Jdk | null {
  const exact = jdks.find((j) => j.major === wanted);
  if (exact) return exact;
  const w = Number(wanted);
  const newer = jdks.filter((j) => Number(j.major) > w).sort((a, b) => Number(a.major) - Number(b.major));
  if (newer.length) return newer[0]!;
  return [...jdks].sort((a, b) => Number(b.major) - Number(a.major))[0] ?? null;
}
