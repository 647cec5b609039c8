import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GymError } from '../errors.ts';
import { ownValue } from '../own.ts';

/**
 * Era constraints: an env's dependencies as PyPI held them at a date (a pinned library's
 * upload, a project commit's date), resolved by `uv pip compile --exclude-newer CUTOFF` into
 * exact pins that a suite stores and hands to the env builder as pip constraints (pip has
 * no upload-date cut-off; uv is only needed to regenerate a suite's table, never to build
 * envs). Used by GitChameleon (per pinned library) and CoderEval (per project commit).
 */

/** When wheels for a Python became common on PyPI: no cut-off of an env on that Python is earlier. */
export const PYTHON_WHEEL_ERA: Record<string, string> = { '3.7': '2018-10-01', '3.9': '2021-01-01', '3.10': '2022-01-01' };

/** When PyPI received `name==version` (its earliest file), from the simple index's JSON form (PEP 691/700). */
export async function uploadTime(name: string, version: string): Promise<Date> {
  const versionOf = (file: string) =>
    file.endsWith('.whl') ? file.split('-')[1] : /-([^-]+)\.(?:tar\.gz|tar\.bz2|zip|tgz)$/.exec(file)?.[1];
  const times = (await filesOf(name))
    .filter((f) => versionOf(f.filename) !== undefined && release(versionOf(f.filename)!) === release(version))
    .map((f) => f['upload-time'])
    .filter((t): t is string => Boolean(t))
    .sort();
  if (!times.length) throw new GymError('ENV_BUILD_FAILED', `no files of ${name}==${version} on PyPI`);
  return new Date(times[0]!);
}

/**
 * The first cut-off of an env: the pinned library's upload time, but never before wheels
 * for its Python were common (a 2021 library on Python 3.10 would otherwise get
 * dependencies that only have source distributions for it), plus a day. `eraLock` moves
 * it on while some dependency still has no wheel for the Python.
 */
export function eraCutoff(upload: Date, python: string): string {
  const wheels = ownValue(PYTHON_WHEEL_ERA, python);
  const floor = wheels ? new Date(wheels) : upload;
  const at = new Date(Math.max(upload.getTime(), floor.getTime()) + 24 * 3600_000);
  return at.toISOString().replace(/\.\d+Z$/, 'Z');
}

/** `uv pip compile` of requirements for a Python at a cut-off (exact pins exempt from it), wheels-only for `onlyBinary`. */
export function uvCompile(uv: string, python: string, cutoff: string, requirements: string[], onlyBinary: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const dir = path.join(os.tmpdir(), `benchgym-era-${process.pid}-${Math.random().toString(36).slice(2)}`);
    void fs.mkdir(dir, { recursive: true }).then(async () => {
      const input = path.join(dir, 'requirements.in');
      await fs.writeFile(input, requirements.join('\n') + '\n');
      // The env's own exact pins are taken as they are, whatever their upload date (a wildcard `==3.*` is a range: not exempt).
      // A requirement with a marker is not exempt (`passlib; sys_platform ==
      // 'darwin'` pins nothing; `x==1 ; python_version < '3'` may not apply).
      const exempt = requirements
        .filter((r) => !r.includes(';'))
        .map((r) => r.trim())
        .filter((r) => /^[\w.-]+(\[[^\]]*\])?\s*==\s*[^*,\s]+$/.test(r))
        .flatMap((r) => [
          '--exclude-newer-package',
          `${r.split('==')[0]!.replace(/\[.*$/, '').trim()}=${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}`,
        ]);
      const wheels = onlyBinary.length
        ? ['--python-platform', 'x86_64-manylinux_2_28', ...onlyBinary.flatMap((p) => ['--only-binary', p])]
        : [];
      execFile(
        uv,
        [
          'pip',
          'compile',
          '-q',
          '--no-header',
          '--no-annotate',
          '--python-version',
          python,
          '--exclude-newer',
          cutoff,
          ...wheels,
          ...exempt,
          input,
        ],
        { env: { ...process.env, UV_NATIVE_TLS: '1' } },
        (err, stdout, stderr) => {
          void fs.rm(dir, { recursive: true, force: true });
          if (err)
            return reject(
              new GymError(
                'ENV_BUILD_FAILED',
                `uv pip compile ${requirements.join(' ')} (Python ${python}, before ${cutoff}): ${stderr.trim()}`,
              ),
            );
          resolve(
            stdout
              .split('\n')
              .map((l) => l.trim())
              .filter((l) => l && !l.startsWith('#')),
          );
        },
      );
    });
  });
}

/** PyPI's files of a project (PEP 691 JSON), cached per run. */
const projectFiles = new Map<string, Promise<{ filename: string; 'upload-time'?: string }[]>>();
function filesOf(name: string): Promise<{ filename: string; 'upload-time'?: string }[]> {
  const key = name.toLowerCase().replace(/[-_.]+/g, '-');
  let files = projectFiles.get(key);
  if (!files) {
    files = fetch(`https://pypi.org/simple/${key}/`, { headers: { Accept: 'application/vnd.pypi.simple.v1+json' } }).then(async (res) => {
      if (!res.ok) throw new GymError('ENV_BUILD_FAILED', `PyPI simple index for ${name}: HTTP ${res.status}`);
      return ((await res.json()) as { files: { filename: string; 'upload-time'?: string }[] }).files;
    });
    projectFiles.set(key, files);
  }
  return files;
}

const release = (v: string) => v.toLowerCase().replace(/(\.0+)+$/, '');

/** Does `name==version` ship wheels, but none that installs on CPython `python` (x86-64 Linux)? */
export async function lacksWheelFor(name: string, version: string, python: string): Promise<boolean> {
  const wheels = (await filesOf(name))
    .map((f) => f.filename)
    .filter((f) => f.endsWith('.whl') && release(f.split('-')[1] ?? '') === release(version));
  if (!wheels.length) return false; // a source-only project: pip builds it (pure Python, as a rule)
  const cp = `cp${python.replace('.', '')}`;
  const minor = Number(python.split('.')[1]);
  return !wheels.some((w) => {
    const [pyTag, abiTag, platform] = w.slice(0, -4).split('-').slice(-3) as [string, string, string];
    const platformOk = platform === 'any' || (/linux/.test(platform) && /x86_64/.test(platform));
    const pyOk = pyTag
      .split('.')
      .some((t) => t === cp || t === 'py3' || t === 'py2.py3' || (abiTag === 'abi3' && /^cp3\d+$/.test(t) && Number(t.slice(3)) <= minor));
    return platformOk && (pyOk || pyTag.split('.').includes('py3'));
  });
}

/**
 * The resolution at the cut-off, where every dependency that ships wheels has one for the
 * env's Python (what a user of that Python installed then without compiling): a
 * dependency whose resolved release lacks one is resolved again wheels-only (an older
 * release with one), and when none exists yet (fiona 1.8.20 for 3.10 in January 2022)
 * the cut-off moves on a month at a time, up to a year. Source-only dependencies (ffmpy)
 * stay as they are. Failing all that, the plain resolution at the first cut-off.
 */
export async function eraLock(
  uv: string,
  python: string,
  first: string,
  requirements: string[],
): Promise<{ cutoff: string; lock: string[] }> {
  const pinned = new Set(
    requirements.map((r) =>
      r
        .split(/[=<>!~ ]/)[0]!
        .toLowerCase()
        .replace(/_/g, '-'),
    ),
  );
  let at = new Date(first);
  for (let month = 0; month <= 12; month++) {
    const cutoff = at.toISOString().replace(/\.\d+Z$/, 'Z');
    const onlyBinary = new Set<string>();
    for (let round = 0; round < 5; round++) {
      const lock = await uvCompile(uv, python, cutoff, requirements, [...onlyBinary]).catch(() => null);
      if (!lock) break;
      const missing: string[] = [];
      for (const line of lock) {
        const [name, version] = line.split('==') as [string, string];
        if (!version || pinned.has(name.toLowerCase()) || onlyBinary.has(name)) continue;
        if (await lacksWheelFor(name, version, python)) missing.push(name);
      }
      if (!missing.length) return { cutoff, lock };
      for (const name of missing) onlyBinary.add(name);
    }
    at = new Date(at.getTime() + 30 * 24 * 3600_000);
  }
  return { cutoff: first, lock: await uvCompile(uv, python, first, requirements, []) };
}

/** When each Python 3 minor version had its first final release (python.org). */
export const PYTHON_RELEASES: Record<string, string> = {
  '3.0': '2008-12-03',
  '3.1': '2009-06-27',
  '3.2': '2011-02-20',
  '3.3': '2012-09-29',
  '3.4': '2014-03-16',
  '3.5': '2015-09-13',
  '3.6': '2016-12-23',
  '3.7': '2018-06-27',
  '3.8': '2019-10-14',
  '3.9': '2020-10-05',
  '3.10': '2021-10-04',
  '3.11': '2022-10-24',
  '3.12': '2023-10-02',
  '3.13': '2024-10-07',
  '3.14': '2025-10-07',
};

/** Days after a Python's release before its ecosystem (wheels, a test runner that knows it) is taken to have caught up. */
const PYTHON_SETTLE_DAYS = 90;

/**
 * The Python that was current at a date among `versions` (`3.X`): the newest released by
 * then; when none was, the oldest of them (the nearest this machine has). Null for none.
 */
export function pythonCurrentAt(date: string | Date, versions: string[]): string | null {
  const at = new Date(date).getTime();
  const known = versions.filter((v) => ownValue(PYTHON_RELEASES, v)).sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  if (!known.length) return null;
  const released = known.filter((v) => new Date(PYTHON_RELEASES[v]!).getTime() <= at);
  return released.length ? released[released.length - 1]! : known[0]!;
}

/**
 * The cut-off of a project commit's env: its date, but never before the env's Python had
 * been out PYTHON_SETTLE_DAYS (a 2014 commit run on Python 3.6 gets the packages of early
 * 2017, the first that knew 3.6), as an ISO instant.
 */
export function commitCutoff(date: string | Date, python: string): string {
  const commit = new Date(date).getTime();
  const released = ownValue(PYTHON_RELEASES, python);
  const release = released ? new Date(released).getTime() + PYTHON_SETTLE_DAYS * 24 * 3600_000 : commit;
  return new Date(Math.max(commit, release)).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The uv on this machine (`$BENCHGYM_UV`, else `uv` on PATH), or null. */
export async function findUv(): Promise<string | null> {
  const candidates = process.env.BENCHGYM_UV ? [process.env.BENCHGYM_UV] : ['uv'];
  for (const exe of candidates) {
    const ok = await new Promise<boolean>((resolve) => execFile(exe, ['--version'], { timeout: 30_000 }, (err) => resolve(!err)));
    if (ok) return exe;
  }
  return null;
}
