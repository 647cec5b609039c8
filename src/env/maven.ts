import { execFile, spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../errors.ts';
import { javaTestExists, MAX_SELECTION_CHARS, mavenTestSelection, parseJavaTestId, qualifyJavaTests } from '../tasks/java_tests.ts';
import type { JavaEnvSpec } from '../tasks/schema.ts';
import { contentKey } from './key.ts';
import { OncePerKey, withDirLock } from '../lock.ts';
import type { PreparedEnv } from './types.ts';
import { buildFiles, javaTestSources } from './workspace.ts';
import { chooseJdk, installedJdks } from './jdk.ts';

const ENV_FORMAT = 1;

function onPath(command: string): Promise<boolean> {
  return new Promise((resolve) => execFile('sh', ['-c', `command -v ${command}`], (err) => resolve(!err)));
}

/** The JDK major version `java -version` reports. */
async function hostJdkMajor(): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('java', ['-version'], (err, _out, stderr) => {
      if (err) return resolve(null);
      const m = /version "(\d+)(?:\.(\d+))?/.exec(stderr);
      resolve(m ? (m[1] === '1' ? m[2]! : m[1]!) : null);
    });
  });
}

/**
 * A Maven env: the project's dependencies and plugins resolved once into a shared local
 * repository (with network, on the host), so that tests then run offline (`mvn -o`).
 */
export class MavenEnvBuilder {
  private readonly once = new OncePerKey<PreparedEnv>();

  /** `warmLimitMs`: how long the warm-up build may run (a test that never ends must not hold the env). */
  constructor(
    private readonly cacheDir: string,
    private readonly warmLimitMs = WARM_LIMIT_MS,
  ) {}

  get repository(): string {
    return path.join(this.cacheDir, 'm2');
  }

  /**
   * `requireCompile`: a compilation failure fails the env (ENV_BUILD_FAILED) instead of being
   * left to the tests; repositories at a base commit must compile, exercise stubs need not.
   */
  async prepare(
    spec: JavaEnvSpec,
    seed: { dir?: string; files?: Record<string, string> },
    opts: { requireCompile?: boolean } = {},
  ): Promise<PreparedEnv> {
    // The spec's JDK when installed (/usr/lib/jvm), else the nearest newer one; else the host's java.
    const chosen = chooseJdk(spec.jdk, await installedJdks());
    const jdk = chosen?.major ?? (await hostJdkMajor());
    if (!jdk) throw new GymError('ENV_UNAVAILABLE', 'no JDK on this machine (java not found)');
    if (!(await onPath('mvn'))) throw new GymError('ENV_UNAVAILABLE', 'no Maven on this machine (mvn not found)');
    const notes = jdk === spec.jdk ? [] : [`JDK ${spec.jdk} asked for, JDK ${jdk} used`];
    const pom = seed.files?.['pom.xml'] ?? (seed.dir ? await fs.readFile(path.join(seed.dir, 'pom.xml'), 'utf8').catch(() => null) : null);
    if (pom === null) throw new GymError('ENV_BUILD_FAILED', 'the Maven task has no pom.xml at its workspace root');
    // Module poms and -D overrides join the key only when there are any, so single-pom envs keep their keys.
    const modules = seed.dir ? Object.fromEntries(Object.entries(await buildFiles(seed.dir)).filter(([rel]) => rel !== 'pom.xml')) : {};
    const warm = warmSelection(spec.warmTests, seed.dir && spec.warmTests?.length ? await javaTestSources(seed.dir) : undefined);
    const extra = {
      ...(Object.keys(modules).length ? { modules } : {}),
      ...(spec.args.length ? { args: spec.args } : {}),
      ...(warm.length ? { warm } : {}),
      ...(spec.warmArgs?.length ? { warmArgs: spec.warmArgs } : {}),
    };
    const key = contentKey({ format: ENV_FORMAT, jdk, pom, ...extra });
    const marker = path.join(this.cacheDir, 'envs', `maven-${key}.ready`);
    const env: PreparedEnv = {
      key,
      kind: 'java',
      path: chosen ? [path.join(chosen.home, 'bin')] : [],
      vars: {
        MAVEN_OPTS: `-Dmaven.repo.local=${this.repository}`,
        JAVA_TOOL_OPTIONS: '-Xss4m',
        ...(chosen ? { JAVA_HOME: chosen.home } : {}),
      },
      readOnlyPaths: [this.repository, ...(chosen ? [chosen.home] : [])],
      command: 'mvn',
      notes,
    };
    return this.once.run(key, async () => {
      if (!existsSync(marker)) {
        await withDirLock(`${marker}.lock`, async () => {
          if (!existsSync(marker))
            await this.build(
              seed,
              marker,
              spec.args,
              { warm, asked: Boolean(spec.warmTests?.length), warmArgs: spec.warmArgs ?? [] },
              opts.requireCompile ?? false,
              chosen?.home,
            );
        });
      }
      return env;
    });
  }

  /**
   * The warm-up build, in `<marker>.work`: when it stops at its limit that folder (its compiled
   * modules) is kept with the Maven repository (what it fetched), the env is not marked ready and
   * the failure is the infrastructure's (ENV_BUILD_FAILED); the next prepare goes on from there
   * (what is compiled and fetched is not done again). A test that never ends holds every attempt:
   * the spec's `warmArgs` leave it out of the warm-up.
   */
  private async build(
    seed: { dir?: string; files?: Record<string, string> },
    marker: string,
    extraArgs: string[],
    { warm, asked, warmArgs }: { warm: string[]; asked: boolean; warmArgs: string[] },
    requireCompile: boolean,
    javaHome?: string,
  ): Promise<void> {
    const work = `${marker}.work`;
    const resumed = existsSync(work);
    let keep = false;
    try {
      await fs.mkdir(work, { recursive: true });
      // Resumed: the seed laid over the kept build (its target/ folders stay); earlier reports go.
      if (resumed) await removeSurefireReports(work);
      // The seed's own times: a kept build's classes are newer than its sources, so they are not compiled again.
      if (seed.dir) await fs.cp(seed.dir, work, { recursive: true, force: true, preserveTimestamps: true });
      for (const [rel, content] of Object.entries(seed.files ?? {})) {
        await fs.mkdir(path.dirname(path.join(work, rel)), { recursive: true });
        await fs.writeFile(path.join(work, rel), content);
      }
      // Running the build once resolves every plugin, provider and dependency the tests need:
      // the tests named to warm it, or the whole suite when there are none, or when none of them
      // ran (they are all new in the hidden test patch, so Surefire resolved no provider).
      const mvn = (extra: string[]) => {
        const args = [
          '-B',
          '-q',
          `-Dmaven.repo.local=${this.repository}`,
          '-Dmaven.test.failure.ignore=true',
          '--fail-never',
          ...extraArgs,
          ...extra,
          ...warmArgs,
          'test',
        ];
        const env = javaHome
          ? { ...process.env, JAVA_HOME: javaHome, PATH: `${path.join(javaHome, 'bin')}:${process.env.PATH ?? ''}` }
          : process.env;
        return runLimited('mvn', args, { cwd: work, env, limitMs: this.warmLimitMs }).then((r) => ({
          ...r,
          log: `$ mvn ${args.join(' ')}\n${r.log}`,
        }));
      };
      const absent = 'the whole suite (none of the warm-up tests exists yet)';
      let result = await mvn(warm);
      let ran = warm.length ? 'the warm-up tests' : asked ? absent : 'the whole suite';
      if (warm.length && result.ok && !(await surefireReportsUnder(work))) {
        result = await mvn([]);
        ran = absent;
      }
      if (warmArgs.length) ran += `, with ${warmArgs.join(' ')}`;
      if (resumed) ran += ', resumed after a warm-up stopped at its limit';
      // Stopped at its limit (a slow machine, a test that never ends): modules it had not reached
      // may lack a plugin or dependency, so the env is not ready; what it did is kept for the next run.
      if (result.timedOut) {
        keep = !mavenResolutionFailed(result.log);
        const limit = `${Math.round(this.warmLimitMs / 1000)} s`;
        const kept = keep
          ? `; what it fetched stays in the Maven repository and its build in ${work}: the next run goes on from there`
          : '';
        throw new GymError(
          'ENV_BUILD_FAILED',
          `${WARM_TIMED_OUT}: the env's warm-up build (${ran}) did not end within ${limit}${kept}:\n${result.log.slice(-4000)}`,
          { log: result.log.slice(-20_000) },
        );
      }
      if (!result.ok || mavenResolutionFailed(result.log)) {
        throw new GymError('ENV_BUILD_FAILED', `could not resolve the Maven project's dependencies:\n${result.log.slice(-4000)}`, {
          log: result.log.slice(-20_000),
        });
      }
      // Test failures are ignored by this build; any other failed goal (javac, a plugin) means the project does not build here.
      if (requireCompile && buildFailed(result.log)) {
        throw new GymError('ENV_BUILD_FAILED', `the project does not build here:\n${compileErrorExcerpt(result.log)}`, {
          log: result.log.slice(-20_000),
        });
      }
      await fs.mkdir(path.dirname(marker), { recursive: true });
      // What warmed the env, for whoever wonders why an offline run lacks something.
      await fs.writeFile(marker, JSON.stringify({ at: new Date().toISOString(), ran }) + '\n');
    } finally {
      if (!keep) await fs.rm(work, { recursive: true, force: true });
    }
  }
}

/** The first words of the error of a warm-up stopped at its limit. */
export const WARM_TIMED_OUT = 'WARM_UP_TIMED_OUT';

/** A failed goal other than the tests' (Surefire's own failures are ignored by the warm-up). */
const buildFailed = (log: string): boolean =>
  /COMPILATION ERROR|Compilation failure|Fatal error compiling/.test(log) ||
  log.split('\n').some((l) => /Failed to execute goal/.test(l) && !/maven-surefire-plugin/.test(l));

/** Removes the Surefire reports under `dir` (a resumed warm-up tells its own run by them). */
async function removeSurefireReports(dir: string): Promise<void> {
  const entries = await fs.readdir(dir, { recursive: true }).catch(() => [] as string[]);
  const reports = entries.map(String).filter((rel) => /(^|\/)target\/surefire-reports$/.test(rel));
  await Promise.all(reports.map((rel) => fs.rm(path.join(dir, rel), { recursive: true, force: true })));
}

/** How long an env's warm-up build may run, on either backend. */
export const WARM_LIMIT_MS = 20 * 60_000;

/** Kills a process and every descendant (Surefire forks its JVMs through `sh -c`). */
function killTree(root: number): void {
  execFile('ps', ['-e', '-o', 'pid=,ppid='], (err, out) => {
    const children = new Map<number, number[]>();
    for (const line of err ? [] : out.split('\n')) {
      const [pid, ppid] = line.trim().split(/\s+/).map(Number);
      if (pid && ppid) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    }
    const all: number[] = [];
    for (let queue = [root]; queue.length;) {
      const pid = queue.shift()!;
      all.push(pid);
      queue.push(...(children.get(pid) ?? []));
    }
    for (const pid of all) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });
}

/**
 * Runs a command; at `limitMs` it is killed with its child processes (Maven's forked test JVMs),
 * and `timedOut` says so. It stays in this process's group, so a Ctrl-C reaches it.
 */
function runLimited(
  cmd: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; limitMs: number },
): Promise<{ ok: boolean; timedOut: boolean; log: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let size = 0;
    const keep = (b: Buffer) => {
      chunks.push(b);
      size += b.length;
      while (size > 64 * 1024 * 1024 && chunks.length > 1) size -= chunks.shift()!.length;
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killTree(child.pid!);
    }, opts.limitMs);
    const done = (ok: boolean, extra = '') => {
      clearTimeout(timer);
      resolve({ ok: ok && !timedOut, timedOut, log: Buffer.concat(chunks).toString('utf8') + extra });
    };
    child.on('error', (err) => done(false, `\n${err.message}`));
    child.on('close', (code) => done(code === 0));
  });
}

/**
 * Maven's own words for an artifact it could not get, on its `[ERROR]` / `[FATAL]` lines only: a
 * test's failure message may say "could not resolve" too (jackson-databind's type-id tests do),
 * and that is no dependency failure. An extended regular expression, for `grep -E` as well.
 */
export const MAVEN_RESOLUTION_ERROR =
  '^\\[(ERROR|FATAL)\\].*(Could not resolve dependencies|Could not transfer artifact|Non-resolvable ' +
  '(parent|import) POM|or one of its dependencies could not be resolved|Could not find artifact|in offline mode)';

const RESOLUTION_LINE = new RegExp(`${MAVEN_RESOLUTION_ERROR}.*$`, 'm');

/** The first of Maven's lines saying an artifact could not be had, if any. */
export const mavenResolutionLine = (log: string): string | undefined => RESOLUTION_LINE.exec(log)?.[0];

export const mavenResolutionFailed = (log: string): boolean => RESOLUTION_LINE.test(log);

/** Whether any path under `dir` (relative to it) matches. */
async function anyPathUnder(dir: string, pattern: RegExp): Promise<boolean> {
  const entries = await fs.readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return entries.some((rel) => pattern.test(String(rel)));
}

/** Whether a Maven build under `dir` wrote any Surefire report (some test ran). */
const surefireReportsUnder = (dir: string) => anyPathUnder(dir, /(^|\/)target\/surefire-reports\/TEST-[^/]+\.xml$/);

/**
 * The Maven arguments that run only the env's warm-up tests (`JavaEnvSpec.warmTests`), or none
 * (the whole suite) when there are none. When their `-Dtest` would be too long for one argument,
 * the first test of each of their modules, with the same `-pl` (none left short enough: none).
 * With the project's test sources (`javaTestSources`): only the tests whose class is there (the
 * others are new in a test patch; none left: the whole suite), each with its module when it
 * names its class alone (`qualifyJavaTests`), so a multi-module project builds those modules.
 */
export function warmSelection(tests: readonly string[] | undefined, testSources?: readonly string[]): string[] {
  let chosen = [...(tests ?? [])];
  if (testSources)
    chosen = qualifyJavaTests(
      chosen.filter((t) => javaTestExists(t, testSources)),
      testSources,
    );
  const tooLong = (selection: string[]) => selection.some((a) => a.length > MAX_SELECTION_CHARS);
  const selection = mavenTestSelection(chosen);
  if (!tooLong(selection)) return selection;
  // Too long for one argument (fastjson2's 2,700 classes): one test of each module warms the same
  // build (the same modules built, Surefire's provider resolved in each), not the whole suite.
  const perModule = new Map<string, string>();
  for (const id of chosen) {
    const module = parseJavaTestId(id).module ?? '';
    if (!perModule.has(module)) perModule.set(module, id);
  }
  const few = mavenTestSelection([...perModule.values()]);
  return tooLong(few) ? [] : few;
}

/**
 * The first compiler errors of a Maven log, for ENV_BUILD_FAILED messages: from the first
 * `COMPILATION ERROR` block when there is one (a reactor's earlier test failures and JVM
 * warnings, which Maven also prints as [ERROR], would push it out), then the failed goals.
 */
export function compileErrorExcerpt(log: string): string {
  const all = log.split('\n');
  const from = all.findIndex((l) => /^\[ERROR\] COMPILATION ERROR/.test(l));
  const lines = all
    .slice(Math.max(0, from))
    .filter(
      (l) =>
        /^\[ERROR\]/.test(l) &&
        !/^\[ERROR\] *(->|$|Re-run|To see|For more|\[Help)/.test(l) &&
        !/^\[ERROR\] (OpenJDK|Java HotSpot)\(TM\)? 64-Bit Server VM warning/.test(l),
    );
  return lines.slice(0, 12).join('\n') || log.slice(-2000);
}
