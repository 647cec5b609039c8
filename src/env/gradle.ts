import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GymError } from '../errors.ts';
import type { JavaEnvSpec } from '../tasks/schema.ts';
import { contentKey } from './key.ts';
import { OncePerKey, withDirLock } from '../lock.ts';
import type { PreparedEnv } from './types.ts';
import { buildFiles } from './workspace.ts';
import { chooseJdk, installedJdks } from './jdk.ts';

/** How a user names the Gradle to use instead of the wrapper. */
export const GRADLE_OPTION = '--gradle PATH (a Gradle distribution directory or zip, or an installed gradle) or BENCHGYM_GRADLE';

/** A Gradle the user provides: a distribution (directory or zip) or an installed `gradle`. */
export interface GivenGradle {
  /** What the user named. */
  given: string;
  /** The launcher to run on this host. */
  command: string;
  /** The distribution's root (`bin/gradle`, `lib/`), when it is a self-contained one that can be copied into an image. */
  home?: string;
  /** Why it cannot be copied into an image, when it cannot. */
  notPortable?: string;
}

/** What runs a project's Gradle builds. */
export interface GradlePlan {
  /** `wrapper`: the project's ./gradlew; `given`: the user's Gradle; `path`: `gradle` from PATH (no wrapper). */
  kind: 'wrapper' | 'given' | 'path';
  command: string;
  given?: GivenGradle;
  /** The wrapper's distribution URL (when the project has a wrapper). */
  distributionUrl?: string;
  notes: string[];
}

/** The Gradle named by an option, else $BENCHGYM_GRADLE, else none. */
export function gradleOption(option?: string): string | undefined {
  return option ?? (process.env.BENCHGYM_GRADLE || undefined);
}

/** The wrapper's `distributionUrl` in `gradle/wrapper/gradle-wrapper.properties` (properties escapes undone). */
export async function wrapperDistributionUrl(dir: string): Promise<string | undefined> {
  const text = await fs.readFile(path.join(dir, 'gradle', 'wrapper', 'gradle-wrapper.properties'), 'utf8').catch(() => null);
  const m = text && /^\s*distributionUrl\s*[=:]\s*(.+?)\s*$/m.exec(text);
  return m ? m[1]!.replace(/\\(.)/g, '$1') : undefined;
}

/**
 * Whether the wrapper's distribution is already unpacked in a Gradle user home, as the
 * wrapper leaves it: `wrapper/dists/<zip name>/<hash>/<zip name>.zip.ok` (any hash: the
 * same distribution fetched from a mirror URL counts).
 */
export async function wrapperDistributionCached(userHome: string, url: string): Promise<boolean> {
  const zip = url.slice(url.lastIndexOf('/') + 1);
  const base = path.join(userHome, 'wrapper', 'dists', zip.replace(/\.zip$/, ''));
  for (const hash of await fs.readdir(base).catch(() => [] as string[])) {
    if (existsSync(path.join(base, hash, `${zip}.ok`))) return true;
  }
  return false;
}

/** The directory name the wrapper gives a distribution URL (base 36 of its MD5), for copying a cached one. */
export function wrapperDistHash(url: string): string {
  return BigInt(`0x${createHash('md5').update(url).digest('hex')}`).toString(36);
}

const probes = new Map<string, Promise<string | null>>();

/**
 * Whether a distribution URL can be had from here: null when it answers, else why not.
 * One short request (a HEAD, 5 s by default, `BENCHGYM_GRADLE_PROBE_MS`), once per URL per process.
 */
export function probeDistribution(url: string): Promise<string | null> {
  let p = probes.get(url);
  if (!p) {
    p = (async () => {
      if (url.startsWith('file:')) {
        const file = decodeURIComponent(new URL(url).pathname);
        return existsSync(file) ? null : `${file} does not exist`;
      }
      const ms = Number(process.env.BENCHGYM_GRADLE_PROBE_MS) || 5000;
      try {
        const res = await fetch(url, { method: 'HEAD', redirect: 'follow', signal: AbortSignal.timeout(ms) });
        return res.ok ? null : `HTTP ${res.status}`;
      } catch (err) {
        const e = err as Error & { cause?: { code?: string; message?: string } };
        if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${ms} ms`;
        return e.cause?.code ?? e.cause?.message ?? e.message;
      }
    })();
    probes.set(url, p);
  }
  return p;
}

/** The Gradle version a plan runs, when it can be told without running it: the wrapper URL's, or the launcher jar's. */
export async function gradleVersionOf(
  plan: Pick<GradlePlan, 'kind' | 'command' | 'distributionUrl' | 'given'>,
): Promise<string | undefined> {
  if (plan.kind === 'wrapper')
    return plan.distributionUrl ? /gradle-(\d[\w.-]*?)-(?:bin|all)\.zip/.exec(plan.distributionUrl)?.[1] : undefined;
  const command = plan.kind === 'path' ? await onPath('gradle') : plan.command;
  if (!command) return undefined;
  const home = path.dirname(path.dirname(await fs.realpath(command).catch(() => command)));
  const jar = (await fs.readdir(path.join(home, 'lib')).catch(() => [] as string[])).find((f) => /^gradle-launcher-.*\.jar$/.test(f));
  return jar ? /^gradle-launcher-(.*)\.jar$/.exec(jar)![1] : undefined;
}

/** Whether a Gradle version reads a read-only dependency cache (GRADLE_RO_DEP_CACHE, Gradle 6.2 on). */
export function readsReadOnlyCache(version: string | undefined): boolean {
  const [major = 0, minor = 0] = (version ?? '').split('.').map((n) => Number.parseInt(n, 10) || 0);
  return major > 6 || (major === 6 && minor >= 2);
}

function onPath(command: string): Promise<string | null> {
  return new Promise((resolve) =>
    execFile('sh', ['-c', `command -v "$1"`, 'sh', command], (err, out) => resolve(err ? null : out.trim() || null)),
  );
}

/** A distribution root: `bin/gradle` and `lib/`, or the one directory inside that has them (an unpacked zip). */
async function distributionRoot(dir: string): Promise<string | null> {
  if (existsSync(path.join(dir, 'bin', 'gradle')) && existsSync(path.join(dir, 'lib'))) return dir;
  const entries = (await fs.readdir(dir, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory());
  if (entries.length === 1) {
    const inner = path.join(dir, entries[0]!.name);
    if (existsSync(path.join(inner, 'bin', 'gradle')) && existsSync(path.join(inner, 'lib'))) return inner;
  }
  return null;
}

/** Why a distribution cannot be copied into an image (its jars link outside it, as Debian's do), or null. */
async function notSelfContained(home: string): Promise<string | null> {
  const lib = path.join(home, 'lib');
  for (const e of await fs.readdir(lib, { withFileTypes: true })) {
    if (!e.isSymbolicLink()) continue;
    const target = await fs.realpath(path.join(lib, e.name)).catch(() => '');
    if (!target.startsWith(home + path.sep))
      return `its lib/${e.name} links to ${target || 'nothing'} (a packaged Gradle, not a self-contained distribution)`;
  }
  return null;
}

/**
 * The Gradle a user named, checked: a distribution directory, a distribution zip (unpacked
 * once under `<cache>/gradle-dists/`), or an installed `gradle` (a path or a name on PATH).
 */
export async function resolveGivenGradle(given: string, cacheDir: string): Promise<GivenGradle> {
  const bad = (why: string) =>
    new GymError('INVALID_ARGUMENT', `invalid Gradle '${given}': ${why} (${GRADLE_OPTION})`, { option: '--gradle' });
  let target = given;
  if (!given.includes('/') && !existsSync(given)) {
    const found = await onPath(given);
    if (!found) throw bad('not a file or directory, and no such command on PATH');
    target = found;
  }
  const abs = path.resolve(target);
  const stat = await fs.stat(abs).catch(() => null);
  if (!stat) throw bad('does not exist');
  let home: string | null = null;
  if (stat.isDirectory()) {
    home = await distributionRoot(abs);
    if (!home) throw bad('a directory that is not a Gradle distribution (no bin/gradle and lib/)');
  } else if (abs.endsWith('.zip')) {
    const dest = path.join(cacheDir, 'gradle-dists', contentKey({ abs, size: stat.size, mtime: stat.mtimeMs }));
    await withDirLock(`${dest}.lock`, async () => {
      if (existsSync(path.join(dest, '.ok'))) return;
      await fs.rm(dest, { recursive: true, force: true });
      await fs.mkdir(dest, { recursive: true });
      await new Promise<void>((resolve, reject) =>
        execFile('unzip', ['-q', '-o', abs, '-d', dest], { maxBuffer: 16 * 1024 * 1024 }, (err, _o, errOut) =>
          err ? reject(bad(`could not unzip it: ${errOut || err.message}`)) : resolve(),
        ),
      );
      await fs.writeFile(path.join(dest, '.ok'), '');
    });
    home = await distributionRoot(dest);
    if (!home) throw bad('a zip that does not hold a Gradle distribution (no <dir>/bin/gradle and lib/)');
  } else {
    // An installed launcher: `<home>/bin/gradle` (through symlinks, as /usr/bin/gradle is).
    const real = await fs.realpath(abs);
    const up = path.dirname(path.dirname(real));
    if (path.basename(path.dirname(real)) === 'bin' && (await distributionRoot(up)) === up) home = up;
    else return { given, command: abs, notPortable: `${abs} is not inside a Gradle distribution` };
  }
  const command = stat.isDirectory() || abs.endsWith('.zip') ? path.join(home, 'bin', 'gradle') : abs;
  const why = await notSelfContained(home);
  return { given, command, ...(why ? { notPortable: `${home}: ${why}` } : { home }) };
}

/**
 * Which Gradle builds a project: the user's (named by the option) when there is one; else
 * the project's wrapper when its distribution can be had (cached in the user home, or its
 * URL answers); else ENV_UNAVAILABLE with the URL, why it cannot be had, and the option.
 * A project without a wrapper uses `gradle` from PATH.
 */
export async function planGradle(dir: string, opts: { userHome: string; cacheDir: string; gradle?: string }): Promise<GradlePlan> {
  const wrapper = existsSync(path.join(dir, 'gradlew'));
  const url = wrapper ? await wrapperDistributionUrl(dir) : undefined;
  const named = gradleOption(opts.gradle);
  if (named) {
    const given = await resolveGivenGradle(named, opts.cacheDir);
    const notes = [`Gradle: ${named}${wrapper ? ` instead of the wrapper${url ? ` (${url.slice(url.lastIndexOf('/') + 1)})` : ''}` : ''}`];
    return { kind: 'given', command: given.command, given, ...(url ? { distributionUrl: url } : {}), notes };
  }
  if (wrapper) {
    if (!url || (await wrapperDistributionCached(opts.userHome, url)))
      return { kind: 'wrapper', command: './gradlew', ...(url ? { distributionUrl: url } : {}), notes: [] };
    const why = await probeDistribution(url);
    if (why) {
      throw new GymError(
        'ENV_UNAVAILABLE',
        `the Gradle wrapper's distribution ${url} is unreachable from this ` +
          `machine (${why}) and no Gradle was given: name one with ${GRADLE_OPTION}`,
        { distributionUrl: url, option: '--gradle', reason: 'gradle distribution unreachable' },
      );
    }
    return { kind: 'wrapper', command: './gradlew', distributionUrl: url, notes: [] };
  }
  if (await onPath('gradle')) return { kind: 'path', command: 'gradle', notes: [] };
  throw new GymError(
    'ENV_UNAVAILABLE',
    `the project has no Gradle wrapper and there is no gradle on this machine: name one with ${GRADLE_OPTION}`,
    { option: '--gradle' },
  );
}

/** The wrapper could not download its distribution: its own message, or a network exception thrown from its classes. */
const WRAPPER_DOWNLOAD_FAILED = new RegExp(
  'Could not install Gradle distribution|' +
    String.raw`Exception in thread "main" java\.(net\.\w+|io\.IOException).*\n(?:.*\n){0,3}.*org\.gradle\.wrapper`,
);

/**
 * What a failed Gradle env build means. Not reaching a distribution, or a Gradle that cannot
 * configure the project (another major version than the wrapper's), is ENV_UNAVAILABLE with
 * that reason; unresolvable dependencies and compiler errors are ENV_BUILD_FAILED; null: the
 * build is usable (test failures are expected at a base commit).
 */
export function classifyGradleLog(log: string, plan: Pick<GradlePlan, 'kind' | 'command' | 'distributionUrl' | 'given'>): GymError | null {
  const tail = log.slice(-4000);
  if (WRAPPER_DOWNLOAD_FAILED.test(log)) {
    return new GymError(
      'ENV_UNAVAILABLE',
      `the Gradle wrapper could not fetch its distribution` +
        `${plan.distributionUrl ? ` ${plan.distributionUrl}` : ''}: name a Gradle with ${GRADLE_OPTION}\n${tail}`,
      { option: '--gradle', log: log.slice(-20_000) },
    );
  }
  const wentWrong = /\* What went wrong:\n([\s\S]*?)(?:\n\* Try:|$)/.exec(log)?.[1]?.trim() ?? '';
  const configuring = new RegExp(
    [
      'A problem occurred (evaluating|configuring)|Could not compile (build|settings|initialization) file|Could not find method',
      String.raw`Plugin \[id: .*\] was not found|Could not get unknown property|Unsupported class file major version`,
      'requires Gradle|minimum supported Gradle|is not compatible with|Could not create (plugin|an instance)|No signature of method',
      String.raw`Could not find (?:org\.gradle|com\.gradle)|Unable to load class|Failed to apply plugin`,
    ].join('|'),
  );
  if (plan.kind === 'given' && wentWrong && configuring.test(wentWrong) && !/compile\w*Java/.test(wentWrong)) {
    const version = plan.distributionUrl ? /gradle-([\d.]+(?:-[a-z0-9]+)?)-(?:bin|all)\.zip/.exec(plan.distributionUrl)?.[1] : undefined;
    return new GymError(
      'ENV_UNAVAILABLE',
      `the given Gradle (${plan.given?.given ?? plan.command}) cannot configure this ` +
        `project${version ? ` (its wrapper asks for Gradle ${version})` : ''}: ` +
        `${wentWrong.split('\n').slice(0, 6).join(' ')}; name a Gradle of the wrapper's version with ${GRADLE_OPTION}`,
      { option: '--gradle', log: log.slice(-20_000), ...(version ? { wrapperVersion: version } : {}) },
    );
  }
  if (
    /Could not resolve|Could not download|Could not GET|UnknownHostException/.test(log) ||
    /Compilation failed|compile\w*Java FAILED|Could not compile/.test(log) ||
    (wentWrong && configuring.test(wentWrong))
  ) {
    return new GymError('ENV_BUILD_FAILED', `the Gradle build could not fetch its dependencies, configure or compile:\n${tail}`, {
      log: log.slice(-20_000),
    });
  }
  return null;
}

/**
 * A Gradle env: the project's dependencies fetched once into a shared Gradle user home
 * (`<cache>/gradle`, with network, on the host) by running the tests once, so tests then run
 * with `--offline`. Gradle is chosen by `planGradle`.
 */
export class GradleEnvBuilder {
  private readonly once = new OncePerKey<PreparedEnv>();

  constructor(
    private readonly cacheDir: string,
    private readonly opts: { gradle?: string } = {},
  ) {}

  get userHome(): string {
    return path.join(this.cacheDir, 'gradle');
  }

  /**
   * The script sandboxes run Gradle through (host-written, read-only to them). Gradle writes
   * to its user home even offline (locks, file hashes), and the shared one must stay
   * read-only: each workspace gets its own (`.benchgym-gradle-home`, outside the diff) with
   * the shared dependency cache behind it (`GRADLE_RO_DEP_CACHE`, Gradle 6.2 on; older ones
   * get a copy of `caches/modules-2`) and the shared wrapper distributions linked in.
   */
  private async launcher(plan: GradlePlan): Promise<string> {
    const version = await gradleVersionOf(plan);
    const ro = readsReadOnlyCache(version);
    const shared = this.userHome;
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const script = [
      '#!/bin/sh',
      `# benchgym: Gradle ${version ?? '(version unknown)'} with a per-workspace user ` +
        `home over ${ro ? 'the read-only' : 'a copy of the'} shared dependency cache`,
      'h="$PWD/.benchgym-gradle-home"',
      'if [ ! -d "$h" ]; then',
      '  mkdir -p "$h/caches"',
      `  [ -d ${q(path.join(shared, 'wrapper'))} ] && ln -s ${q(path.join(shared, 'wrapper'))} "$h/wrapper"`,
      ...(ro
        ? []
        : [`  [ -d ${q(path.join(shared, 'caches', 'modules-2'))} ] && cp -R ${q(path.join(shared, 'caches', 'modules-2'))} "$h/caches/"`]),
      'fi',
      `export GRADLE_USER_HOME="$h"${ro ? ` GRADLE_RO_DEP_CACHE=${q(path.join(shared, 'caches'))}` : ''}`,
      `exec ${plan.kind === 'wrapper' ? './gradlew' : q(plan.command)} "$@"`,
      '',
    ].join('\n');
    const file = path.join(this.cacheDir, 'envs', `gradle-launcher-${contentKey(script)}.sh`);
    if (!existsSync(file)) {
      await fs.mkdir(path.dirname(file), { recursive: true });
      // Its own temporary name: two prepares of one process (validate's scorings) may write it at once.
      const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      await fs.writeFile(tmp, script, { mode: 0o755 });
      await fs.rename(tmp, file);
    }
    return file;
  }

  async prepare(spec: JavaEnvSpec, seed: { dir?: string; files?: Record<string, string> }): Promise<PreparedEnv> {
    const dir = seed.dir;
    if (!dir) throw new GymError('ENV_BUILD_FAILED', 'a Gradle task needs a directory workspace');
    const plan = await planGradle(dir, {
      userHome: this.userHome,
      cacheDir: this.cacheDir,
      ...(this.opts.gradle ? { gradle: this.opts.gradle } : {}),
    });
    const command = plan.command;
    const jdk = chooseJdk(spec.jdk, await installedJdks());
    const javaVars: Record<string, string> = jdk ? { JAVA_HOME: jdk.home } : {};
    const key = contentKey({ format: 1, build: await buildFiles(dir), args: spec.args, command, jdk: jdk?.major });
    const marker = path.join(this.cacheDir, 'envs', `gradle-${key}.ready`);
    const givenDir = plan.given?.home ?? (plan.given && path.isAbsolute(plan.given.command) ? path.dirname(plan.given.command) : undefined);
    const launcher = await this.launcher(plan);
    const env: PreparedEnv = {
      key,
      kind: 'java',
      path: jdk ? [path.join(jdk.home, 'bin')] : [],
      // JDK 17's cgroup v1 metrics throw (NPE) in the local sandbox's cgroups when Gradle asks for the memory size.
      vars: { GRADLE_OPTS: '-Dorg.gradle.daemon=false -XX:-UseContainerSupport', ...javaVars },
      readOnlyPaths: [this.userHome, launcher, ...(jdk ? [jdk.home] : []), ...(givenDir ? [givenDir] : [])],
      command: launcher,
      notes: [...(jdk && jdk.major !== spec.jdk ? [`JDK ${spec.jdk} asked for, JDK ${jdk.major} used`] : []), ...plan.notes],
    };
    return this.once.run(key, () =>
      withDirLock(`${marker}.lock`, async () => {
        if (existsSync(marker)) return env;
        const work = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-gradle-'));
        try {
          await fs.cp(dir, work, { recursive: true });
          const args = ['--no-daemon', '--continue', ...spec.args, 'test'];
          const log = await new Promise<{ ok: boolean; text: string }>((resolve) =>
            execFile(
              command,
              args,
              {
                cwd: work,
                timeout: 30 * 60_000,
                maxBuffer: 64 * 1024 * 1024,
                env: {
                  ...process.env,
                  GRADLE_USER_HOME: this.userHome,
                  ...javaVars,
                  ...(jdk ? { PATH: `${path.join(jdk.home, 'bin')}:${process.env.PATH ?? ''}` } : {}),
                },
              },
              (err, out, errOut) => resolve({ ok: !err, text: `$ ${command} ${args.join(' ')}\n${out}${errOut}` }),
            ),
          );
          const failure = classifyGradleLog(log.text, plan);
          if (log.text.includes('Permission denied') && !failure)
            throw new GymError('ENV_BUILD_FAILED', `the Gradle env build hit a permission error:\n${log.text.slice(-4000)}`);
          if (failure) throw failure;
          await fs.mkdir(path.dirname(marker), { recursive: true });
          await fs.writeFile(marker, new Date().toISOString());
          return env;
        } finally {
          await fs.rm(work, { recursive: true, force: true });
        }
      }),
    );
  }
}

/** Every file of a distribution, symlinks followed (for copying it into an image). */
export async function readDistribution(home: string): Promise<Record<string, Buffer>> {
  const out: Record<string, Buffer> = {};
  const walk = async (rel: string): Promise<void> => {
    for (const name of await fs.readdir(path.join(home, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      const st = await fs.stat(path.join(home, r));
      if (st.isDirectory()) await walk(r);
      else if (st.isFile()) out[r] = await fs.readFile(path.join(home, r));
    }
  };
  await walk('');
  return out;
}

/** Where env images keep a copied Gradle distribution. */
export const IMAGE_GRADLE_HOME = '/opt/gradle';

/**
 * The Gradle part of a Docker env image for a project: the runner of its env build and of
 * its tests, the Dockerfile lines and context files that bring Gradle in (a given
 * distribution copied to /opt/gradle; a wrapper distribution the host has cached copied into
 * the image's Gradle user home), and what joins the image's tag.
 */
export async function gradleImagePart(
  dir: string,
  opts: { cacheDir: string; gradle?: string; imageUserHome: string },
): Promise<{ plan: GradlePlan; runner: string; command: string; lines: string[]; files: Record<string, Buffer>; key: unknown }> {
  const userHome = path.join(opts.cacheDir, 'gradle');
  const plan = await planGradle(dir, { userHome, cacheDir: opts.cacheDir, ...(opts.gradle ? { gradle: opts.gradle } : {}) });
  if (plan.kind === 'given') {
    const given = plan.given!;
    if (!given.home)
      throw new GymError(
        'ENV_UNAVAILABLE',
        `the given Gradle cannot be copied into a Docker image: ${given.notPortable}; for ` +
          `--sandbox docker name a Gradle distribution directory or zip with ${GRADLE_OPTION}`,
        { option: '--gradle' },
      );
    const files = await readDistribution(given.home);
    const digest = createHash('sha256');
    for (const rel of Object.keys(files).sort()) digest.update(rel).update('\0').update(files[rel]!);
    const command = `${IMAGE_GRADLE_HOME}/bin/gradle`;
    return {
      plan,
      runner: command,
      command,
      lines: ['COPY gradle-dist/ /opt/gradle/', `RUN chmod +x ${IMAGE_GRADLE_HOME}/bin/*`],
      files: prefixed('gradle-dist/', files),
      key: { gradle: digest.digest('hex').slice(0, 16) },
    };
  }
  if (plan.kind === 'path')
    throw new GymError(
      'ENV_UNAVAILABLE',
      `the project has no Gradle wrapper and the Docker image has no Gradle: name a Gradle distribution with ${GRADLE_OPTION}`,
      { option: '--gradle' },
    );
  const url = plan.distributionUrl;
  if (url && (await wrapperDistributionCached(userHome, url))) {
    const name = url.slice(url.lastIndexOf('/') + 1).replace(/\.zip$/, '');
    const files = await readDistribution(path.join(userHome, 'wrapper', 'dists', name));
    return {
      plan,
      runner: 'sh ./gradlew',
      command: './gradlew',
      lines: [`COPY gradle-wrapper-dists/ ${opts.imageUserHome}/wrapper/dists/${name}/`],
      files: prefixed('gradle-wrapper-dists/', files),
      key: { wrapperDist: name },
    };
  }
  return { plan, runner: 'sh ./gradlew', command: './gradlew', lines: [], files: {}, key: {} };
}

function prefixed(prefix: string, files: Record<string, Buffer>): Record<string, Buffer> {
  return Object.fromEntries(Object.entries(files).map(([k, v]) => [prefix + k, v]));
}
