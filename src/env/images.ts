import type Docker from 'dockerode';
import { existsSync, promises as fs } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { GymError } from '../errors.ts';
import { packTar } from './tar.ts';
import { readFileTree } from '../tasks/files.ts';
import type { Task } from '../tasks/schema.ts';
import { contentKey } from './key.ts';
import { OncePerKey } from '../lock.ts';
import { classifyPipFailure, PYTEST_PIN, pytestPinFor } from './python.ts';
import { readBinaryTree, setupFailure, setupInput, setupKey, SETUP_UNAVAILABLE_MARKER } from './setup.ts';
import { taskResources, type PreparedEnv } from './types.ts';
import { assertEnvAvailable, imageUnavailable } from './index.ts';
import { classifyGradleLog, gradleImagePart } from './gradle.ts';
import { MAVEN_RESOLUTION_ERROR, WARM_LIMIT_MS, warmSelection } from './maven.ts';
import { buildFiles, gitStartState, javaTestSources } from './workspace.ts';
import { git } from '../repo/index.ts';
import os from 'node:os';
import { shellQuote } from '../shell_quote.ts';
import { aptInstallLine, unknownAptPackages } from './system_packages.ts';

/** The base images benchgym knows how to build, by language and version. */
export const BASE_IMAGES = {
  python: { '3.7': 'bookworm', '3.9': 'bullseye', '3.10': 'bookworm', '3.11': 'bookworm', '3.13': 'trixie' } as Record<string, string>,
  java: { '17': 'bookworm' } as Record<string, string>,
};

export function baseImageName(kind: 'python' | 'java', version: string): string {
  return `benchgym/base-${kind}:${version}`;
}

const IMAGE_FORMAT = 3;
/**
 * Where Maven env images keep the local repository: commands run as an unprivileged uid, to
 * which root's home (Maven's default, 0700) is closed. Set by MAVEN_OPTS in the image's
 * environment, as the local backend's Maven env does; it joins the Maven images' tags.
 */
const IMAGE_MAVEN_REPOSITORY = '/opt/m2/repository';
const MAVEN_REPOSITORY_ENV = `ENV MAVEN_OPTS=-Dmaven.repo.local=${IMAGE_MAVEN_REPOSITORY}`;
const WORKSPACE = '/workspace';
/** Where an instance image keeps the task's start state; containers copy it into /workspace. */
export const START_STATE = '/opt/benchgym/start';

/**
 * An env image's warm-up build stops at the warm-up limit (a test that never ends must not hold the
 * build): coreutils' timeout signals its whole process group, forked test JVMs included.
 */
const WARM_TIMEOUT = `timeout -k 30 ${WARM_LIMIT_MS / 1000}`;

/**
 * A Java env's JVMs in a container run G1, as on the harness's machines and in the local
 * sandbox (whose JVMs see the machine's CPUs): in a container of one CPU the JVM would pick
 * SerialGC, whose old generation (two thirds of the heap) holds less than G1 in the same heap.
 */
const containerVars = (language: string): Record<string, string> => (language === 'java' ? { JAVA_TOOL_OPTIONS: '-XX:+UseG1GC' } : {});

export interface ImageBuilderOptions {
  /** Refuse a task whose Python version has no base image instead of using the nearest one. */
  exactPython?: boolean;
  /** Copy the host's added CAs (/usr/local/share/ca-certificates) into env images (default true). */
  hostCAs?: boolean;
  /** Called with build output lines (for logs and progress). */
  onLog?: (line: string) => void;
  /** Where checkouts of `git` workspaces are cached (default: $BENCHGYM_CACHE, else <tmp>/benchgym-cache). */
  cacheDir?: string;
  /** The Gradle to use instead of projects' wrappers (`--gradle`; else $BENCHGYM_GRADLE): copied into env images. */
  gradle?: string;
}

/**
 * Docker images in layers, each cached by a content hash in its tag:
 * base (OS + toolchain) → env (pinned dependencies, fetched once with network) →
 * instance (the task's start state in /workspace). Concurrent requests build once.
 */
export class ImageBuilder {
  private readonly once = new OncePerKey<string>();
  private cas?: Promise<Record<string, string>>;

  constructor(
    private readonly docker: Docker,
    private readonly opts: ImageBuilderOptions = {},
  ) {}

  async exists(tag: string): Promise<boolean> {
    try {
      await this.docker.getImage(tag).inspect();
      return true;
    } catch {
      return false;
    }
  }

  /** The base image for a task: the exact version when built, else the nearest (recorded in notes). */
  async base(kind: 'python' | 'java', version: string, notes: string[]): Promise<string> {
    const exact = baseImageName(kind, version);
    if (await this.exists(exact)) return exact;
    const available: string[] = [];
    for (const v of Object.keys(BASE_IMAGES[kind])) if (await this.exists(baseImageName(kind, v))) available.push(v);
    if (!available.length || (kind === 'python' && this.opts.exactPython)) {
      throw new GymError(
        'ENV_UNAVAILABLE',
        `no base image ${exact}${available.length ? ` (have ${available.join(', ')}; substitution refused)` : ''}` +
          `: build it with \`benchgym images base\``,
        { image: exact },
      );
    }
    const minor = (v: string) => Number(v.split('.').at(-1));
    const nearest = available.sort(
      (a, b) => Math.abs(minor(a) - minor(version)) - Math.abs(minor(b) - minor(version)) || minor(b) - minor(a),
    )[0]!;
    notes.push(`${kind === 'python' ? 'Python' : 'JDK'} ${version} asked for; no such base image, ${baseImageName(kind, nearest)} used`);
    return baseImageName(kind, nearest);
  }

  /** Env + instance images for a task. */
  /**
   * CAs this host added to its trust store (e.g. an intercepting proxy's): builds reach
   * registries through the same network, so their images must trust them too.
   */
  private hostCAs(): Promise<Record<string, string>> {
    this.cas ??= (async () => {
      if (this.opts.hostCAs === false) return {};
      const dir = '/usr/local/share/ca-certificates';
      const files = await readFileTree(dir).catch(() => ({}) as Record<string, string>);
      return Object.fromEntries(
        Object.entries(files)
          .filter(([name]) => name.endsWith('.crt'))
          .map(([name, pem]) => [`ca/${name.replace(/\//g, '-')}`, pem]),
      );
    })();
    return this.cas;
  }

  private async trustLines(): Promise<{ lines: string[]; files: Record<string, string> }> {
    const files = await this.hostCAs();
    if (!Object.keys(files).length) return { lines: [], files };
    return { lines: ['COPY ca/ /usr/local/share/ca-certificates/benchgym/', 'RUN update-ca-certificates >/dev/null 2>&1 || true'], files };
  }

  private get cacheDir(): string {
    return this.opts.cacheDir ?? process.env.BENCHGYM_CACHE ?? path.join(os.tmpdir(), 'benchgym-cache');
  }

  async prepare(task: Task): Promise<PreparedEnv> {
    assertEnvAvailable(task);
    const notes: string[] = [];
    const trust = await this.trustLines();
    let envImage: string;
    let command: string;
    if (task.env.kind === 'python') {
      const base = await this.base('python', task.env.version, notes);
      const requirements = [...task.env.requirements].sort();
      const baseId = await this.imageId(base);
      const runner = pytestPinFor(base.slice(base.lastIndexOf(':') + 1), requirements);
      const afterInstall = task.env.afterInstall ?? [];
      const constraints = [...(task.env.constraints ?? [])].sort();
      const system = [...new Set(task.env.systemPackages ?? [])].sort();
      // Only what differs from the plain case joins the key, so existing images keep their tags.
      const extra = {
        ...(runner !== PYTEST_PIN ? { runner } : {}),
        ...(afterInstall.length ? { afterInstall } : {}),
        ...(constraints.length ? { constraints } : {}),
        ...(system.length ? { system } : {}),
        ...setupKey(task.env.setup),
      };
      const setup = task.env.setup ? { script: task.env.setup.script, input: setupInput(task.env.setup) } : undefined;
      const setupFiles: Record<string, string | Buffer> = setup
        ? { 'setup/setup.py': setup.script, ...prefixed('setup/input/', setup.input ? await readBinaryTree(setup.input) : {}) }
        : {};
      const tag = `benchgym/env:py-${contentKey({ IMAGE_FORMAT, baseId, requirements, PYTEST_PIN, trust, ...extra })}`;
      const pip = 'PIP_CERT=/etc/ssl/certs/ca-certificates.crt /opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check -q';
      const dockerfile = [
        `FROM ${base}`,
        ...trust.lines,
        ...(system.length ? [aptInstallLine(system)] : []),
        ...(constraints.length ? ['COPY constraints.txt /opt/benchgym/constraints.txt'] : []),
        `RUN python3 -m venv /opt/venv && ${pip} ${constraints.length ? '-c /opt/benchgym/constraints.txt ' : ''}` +
          `${[...(runner ? [runner] : []), ...requirements].map(shellQuote).join(' ')}`,
        // Later stages may fail without failing the image, as TaskSchema's afterInstall says.
        ...afterInstall.map(
          (stage) => `RUN ${pip} ${stage.map(shellQuote).join(' ')} || echo "benchgym: after-install failed: ${stage.join(' ')}"`,
        ),
        ...(setup
          ? [
              'COPY setup/ /opt/benchgym/setup/',
              `RUN ${setup.input ? 'BENCHGYM_SETUP_INPUT=/opt/benchgym/setup/input ' : ''}/opt/` +
                `venv/bin/python /opt/benchgym/setup/setup.py && rm -rf /opt/benchgym/setup/input`,
            ]
          : []),
        'ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      ].join('\n');
      envImage = await this.build(
        tag,
        {
          Dockerfile: dockerfile,
          ...trust.files,
          ...(constraints.length ? { 'constraints.txt': constraints.join('\n') + '\n' } : {}),
          ...setupFiles,
        },
        `env for Python ${task.env.version} ${requirements.join(' ')}`,
      ).catch((err: unknown) => {
        const log = err instanceof GymError ? String(err.details?.log ?? err.message) : '';
        if (task.env.kind === 'python' && task.env.setup && log.includes(SETUP_UNAVAILABLE_MARKER)) throw setupFailure(task.env.setup, log);
        // A system package the base image's Debian suite does not have cannot be had here.
        const unknown = system.length ? unknownAptPackages(log || (err as Error).message) : [];
        if (unknown.length)
          throw new GymError(
            'ENV_UNAVAILABLE',
            `the env's system package${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: not in the Debian suite of ${base}`,
            { systemPackages: unknown, image: base },
          );
        // A pin that cannot exist on this interpreter and platform is unavailable, not a broken build.
        if (err instanceof GymError && err.code === 'ENV_BUILD_FAILED') {
          const failure = classifyPipFailure(String(err.details?.log ?? err.message));
          if (failure.code === 'ENV_UNAVAILABLE')
            throw new GymError('ENV_UNAVAILABLE', `${failure.reason}\n${err.message}`, { ...err.details, reason: failure.reason });
        }
        throw err;
      });
      command = '/opt/venv/bin/python';
    } else if (task.env.kind === 'image') {
      // A user-supplied image: never pulled or built here, only used when loaded.
      if (!task.env.image || task.env.unsupported) throw imageUnavailable(task.env, 'no image was named');
      if (!(await this.exists(task.env.image)))
        throw imageUnavailable(task.env, `the image ${task.env.image} is not loaded (docker load it first)`);
      envImage = task.env.image;
      command = task.env.command;
    } else if (task.workspace.type === 'git') {
      // A repository at its base commit: env = dependencies and plugins resolved and the
      // project compiled and tested once (keyed by the build files, so instances with the
      // same poms share it); instance = the checkout, .git included, as the start state.
      const base = await this.base('java', task.env.jdk, notes);
      const dir = await gitStartState(this.cacheDir, task.workspace);
      const tree = await readTreeBinary(dir);
      const sources = Object.fromEntries(Object.entries(tree).filter(([rel]) => !rel.startsWith('.git/')));
      const baseId = await this.imageId(base);
      const gradle = task.env.build === 'gradle';
      // Gradle: the user's distribution copied in, else the wrapper when its distribution can be had (else ENV_UNAVAILABLE).
      const g = gradle
        ? await gradleImagePart(dir, {
            cacheDir: this.cacheDir,
            imageUserHome: '/opt/gradle-home',
            ...(this.opts.gradle ? { gradle: this.opts.gradle } : {}),
          })
        : undefined;
      if (g) notes.push(...g.plan.notes);
      const gradleKey = g && g.key && Object.keys(g.key as object).length ? { gradleDist: g.key } : {};
      // Maven: the task's own tests warm the env when it names them (JavaEnvSpec.warmTests), else the whole suite.
      const warm = gradle ? [] : warmSelection(task.env.warmTests, task.env.warmTests?.length ? await javaTestSources(dir) : undefined);
      const warmArgs = task.env.warmArgs ?? [];
      const repository = gradle ? {} : { repository: IMAGE_MAVEN_REPOSITORY };
      const key = contentKey({
        IMAGE_FORMAT,
        baseId,
        build: await buildFiles(dir),
        args: task.env.args,
        trust,
        ...gradleKey,
        ...repository,
        ...(warm.length ? { warm } : {}),
        ...(warmArgs.length ? { warmArgs } : {}),
      });
      const tag = `benchgym/env:${gradle ? 'gradle' : 'maven'}-${key}`;
      const args = task.env.args.map(shellQuote).join(' ');
      const mvn = (extra: string[], to: '>' | '>>') =>
        `(${WARM_TIMEOUT} mvn -B -Dmaven.test.failure.ignore=true --fail-never ` +
        `${[args, ...[...extra, ...warmArgs].map(shellQuote)].join(' ')} test ${to} /tmp/envbuild.log 2>&1; true)`;
      // The whole suite after all when no warm-up test ran (all new in the hidden test patch: no Surefire provider resolved).
      const run = g
        ? `(${WARM_TIMEOUT} ${g.runner} --no-daemon --continue ${args} test > /tmp/envbuild.log 2>&1; true)`
        : warm.length
          ? `${mvn(warm, '>')} && (find . -path '*/target/surefire-reports/TEST-*.xml' | grep -q . || ${mvn([], '>>')})`
          : mvn([], '>');
      const dockerfile = [
        `FROM ${base}`,
        ...trust.lines,
        ...(gradle ? ['ENV GRADLE_USER_HOME=/opt/gradle-home'] : [MAVEN_REPOSITORY_ENV]),
        ...(g?.lines ?? []),
        'COPY seed/ /tmp/envbuild/',
        `RUN cd /tmp/envbuild && ${run} \\`,
        // Maven's resolution errors from its own [ERROR] lines (a failing test's message may say "could not resolve").
        g
          ? ' && if grep -E "Could not resolve|Could not transfer|Non-resolvable|Could not ' +
            'download|Could not install Gradle" /tmp/envbuild.log; then tail -50 /tmp/envbuild.log; exit 1; fi \\'
          : ` && if grep -E ${shellQuote(MAVEN_RESOLUTION_ERROR)} /tmp/envbuild.log; then tail -50 /tmp/envbuild.log; exit 1; fi \\`,
        ...(g
          ? [
              ' && if grep -E "^FAILURE: Build failed" /tmp/envbuild.log && ! grep -E "There were failing ' +
                'tests|tests completed, [0-9]+ failed" /tmp/envbuild.log; then tail -60 /tmp/envbuild.log; exit 1; fi \\',
            ]
          : []),
        ' && if grep -E "COMPILATION ERROR|Compilation failure|Compilation failed|Fatal error compiling|Failed ' +
          'to execute goal" /tmp/envbuild.log; then grep "^\\[ERROR\\]" /tmp/envbuild.log | head -30; exit 1; fi \\',
        ' && rm -rf /tmp/envbuild /tmp/envbuild.log',
      ].join('\n');
      envImage = await this.build(
        tag,
        { Dockerfile: dockerfile, ...trust.files, ...(g?.files ?? {}), ...prefixed('seed/', sources) },
        `${gradle ? 'Gradle' : 'Maven'} env of ${task.workspace.repo}`,
      ).catch((err: unknown) => {
        // A Gradle that cannot reach its distribution or configure the project is unavailable, not a broken project.
        const unavailable = g && err instanceof GymError ? classifyGradleLog(String(err.details?.log ?? err.message), g.plan) : null;
        throw unavailable?.code === 'ENV_UNAVAILABLE' ? unavailable : err;
      });
      command = g ? g.command : 'mvn';
      return {
        ...(await this.gitInstance(task, envImage, dir, tree)),
        kind: 'java',
        vars: { ...containerVars('java'), ...(gradle ? { GRADLE_USER_HOME: '/opt/gradle-home' } : {}) },
        command,
        notes,
      };
    } else {
      const base = await this.base('java', task.env.jdk, notes);
      const seed = await seedFiles(task);
      if (!seed['pom.xml']) throw new GymError('ENV_BUILD_FAILED', 'the Maven task has no pom.xml at its workspace root');
      const baseId = await this.imageId(base);
      const tag =
        `benchgym/env:maven-` +
        `${contentKey({ IMAGE_FORMAT, baseId, pom: String(seed['pom.xml']), trust, repository: IMAGE_MAVEN_REPOSITORY })}`;
      // Running the build once resolves every plugin and dependency; tests then run with `mvn -o`.
      const dockerfile = [
        `FROM ${base}`,
        ...trust.lines,
        MAVEN_REPOSITORY_ENV,
        'COPY seed/ /tmp/envbuild/',
        // Failing tests are expected (the start state); unresolvable dependencies fail the build.
        `RUN cd /tmp/envbuild && (${WARM_TIMEOUT} mvn -B ` +
          `-Dmaven.test.failure.ignore=true --fail-never test > /tmp/envbuild.log 2>&1; true) \\`,
        ` && if grep -E ${shellQuote(MAVEN_RESOLUTION_ERROR)} /tmp/envbuild.log; then tail -50 /tmp/envbuild.log; exit 1; fi \\`,
        ' && rm -rf /tmp/envbuild /tmp/envbuild.log',
      ].join('\n');
      envImage = await this.build(tag, { Dockerfile: dockerfile, ...trust.files, ...prefixed('seed/', seed) }, 'Maven env');
      command = 'mvn';
    }
    if (task.workspace.type === 'git') {
      const dir = await gitStartState(this.cacheDir, task.workspace);
      return {
        ...(await this.gitInstance(task, envImage, dir, await readTreeBinary(dir))),
        kind: task.language,
        vars: containerVars(task.language),
        command,
        notes,
      };
    }
    const seed = await seedFiles(task);
    const envId = await this.imageId(envImage);
    const instance = `benchgym/instance:${contentKey({ IMAGE_FORMAT, envId, seed: seedDigest(seed) })}`;
    // The start state waits outside /workspace: the workspace is a fresh tmpfs volume per container.
    // A .git of the start state gets back the empty directories the tar cannot carry.
    const gitDirs = seed['.git/HEAD']
      ? ['refs/heads', 'refs/tags', 'objects/info', 'objects/pack'].map((d) => `${START_STATE}/.git/${d}`).join(' ')
      : '';
    const dockerfile = [
      `FROM ${envImage}`,
      `COPY workspace/ ${START_STATE}/`,
      ...(gitDirs ? [`RUN mkdir -p ${gitDirs}`] : []),
      `WORKDIR ${WORKSPACE}`,
    ].join('\n');
    await this.build(
      instance,
      { Dockerfile: dockerfile, ...prefixed('workspace/', seed), 'workspace/.benchgym-keep': '' },
      `instance of ${task.id}`,
      { 'benchgym.task': task.id },
    );
    return {
      key: instance,
      kind: task.language,
      path: [],
      vars: containerVars(task.language),
      readOnlyPaths: [],
      command,
      notes,
      image: instance,
      ...taskResources(task.resources),
    };
  }

  /** The instance image of a git workspace: the checkout, .git included, as the start state. */
  private async gitInstance(
    task: Task,
    envImage: string,
    dir: string,
    tree: Record<string, Buffer>,
  ): Promise<Pick<PreparedEnv, 'key' | 'image' | 'path' | 'readOnlyPaths' | 'memoryBytes' | 'pids'>> {
    if (task.workspace.type !== 'git') throw new GymError('INTERNAL', 'not a git workspace');
    const envId = await this.imageId(envImage);
    // The tar carries files only: git's empty directories are made again, and `git reset --hard`
    // gives tracked files their modes and symlinks back, within the checkout's sparse patterns
    // (blobs a mirror lacks stay out); its reflog entry is dropped. The copied index is refreshed
    // first, so reset rewrites only what differs: on a stale index it would write the whole tree
    // into a second layer (jackson-databind's 670 MB of docs twice per instance).
    const gitDirs = ['refs/heads', 'refs/tags', 'objects/info', 'objects/pack'].map((d) => `${START_STATE}/.git/${d}`).join(' ');
    const restore =
      `(git -C ${START_STATE} update-index -q --refresh; true) && git ` +
      `-C ${START_STATE} reset -q --hard && rm -rf ${START_STATE}/.git/logs`;
    const dockerfile = [
      `FROM ${envImage}`,
      `COPY workspace/ ${START_STATE}/`,
      `RUN mkdir -p ${gitDirs} && ${restore}`,
      `WORKDIR ${WORKSPACE}`,
    ].join('\n');
    const instance =
      `benchgym/instance:` + `${contentKey({ IMAGE_FORMAT, envId, repo: task.workspace.repo, head: await headOf(dir), dockerfile })}`;
    await this.build(instance, { Dockerfile: dockerfile, ...prefixed('workspace/', tree) }, `instance of ${task.id}`, {
      'benchgym.task': task.id,
    });
    // A task that asks for more memory gets it here too (jackson's and fastjson2's 6 GiB; they ran in the default 2 GiB before).
    return { key: instance, image: instance, path: [], readOnlyPaths: [], ...taskResources(task.resources) };
  }

  private async imageId(tag: string): Promise<string> {
    return (await this.docker.getImage(tag).inspect()).Id;
  }

  /** Builds `tag` from an in-memory context unless it exists; host network for registries. */
  build(tag: string, context: Record<string, string | Buffer>, what: string, labels: Record<string, string> = {}): Promise<string> {
    return this.once.run(tag, async () => {
      if (await this.exists(tag)) return tag;
      const log: string[] = [];
      try {
        const stream = await this.docker.buildImage(packTar(context) as unknown as NodeJS.ReadableStream, {
          t: tag,
          networkmode: 'host',
          rm: true,
          forcerm: true,
          labels: { 'benchgym.image': 'true', ...labels },
        });
        await new Promise<void>((resolve, reject) => {
          this.docker.modem.followProgress(
            stream,
            (err: Error | null) => (err ? reject(err) : resolve()),
            (event: { stream?: string; error?: string; errorDetail?: { message?: string } }) => {
              const line = event.stream ?? event.error ?? '';
              if (line.trim()) {
                log.push(line.trimEnd());
                this.opts.onLog?.(line.trimEnd());
              }
              if (event.error) reject(new Error(event.errorDetail?.message ?? event.error));
            },
          );
        });
      } catch (err) {
        throw new GymError(
          'ENV_BUILD_FAILED',
          `could not build the ${what} image ${tag}: ${(err as Error).message}\n${log.slice(-40).join('\n')}`,
          { image: tag, log: log.slice(-400).join('\n') },
        );
      }
      if (!(await this.exists(tag)))
        throw new GymError('ENV_BUILD_FAILED', `building ${tag} reported success but no image exists:\n${log.slice(-40).join('\n')}`);
      return tag;
    });
  }
}

async function seedFiles(task: Task): Promise<Record<string, string | Buffer>> {
  if (task.workspace.type === 'git') throw new GymError('INTERNAL', 'git workspaces are laid out by their own image recipe');
  if (task.workspace.type === 'files') return task.workspace.files;
  // A start state that carries its own repository (a history cut at the change's
  // parent) is read binary-safe: git's packs are not text.
  if (existsSync(path.join(task.workspace.path, '.git', 'HEAD'))) return readTreeBinary(task.workspace.path);
  return readFileTree(task.workspace.path);
}

/** Every regular file under `dir` as bytes (binary-safe: git packs), `target/` and `build/` output skipped. */
async function readTreeBinary(dir: string): Promise<Record<string, Buffer>> {
  const out: Record<string, Buffer> = {};
  const walk = async (rel: string): Promise<void> => {
    for (const e of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (e.name === 'target' || (e.name === 'build' && !rel.startsWith('.git'))) continue;
        await walk(r);
      } else if (e.isFile()) out[r] = await fs.readFile(path.join(dir, r));
    }
  };
  await walk('');
  return out;
}

/** The seed as hashed into an instance tag: text as it is (tags of text seeds stay what they were), binary files by digest. */
function seedDigest(seed: Record<string, string | Buffer>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(seed).map(([k, v]) => [k, typeof v === 'string' ? v : `sha256:${createHash('sha256').update(v).digest('hex')}`]),
  );
}

async function headOf(dir: string): Promise<string> {
  return (await fs.readFile(path.join(dir, '.git', 'HEAD'), 'utf8')).trim() + (await git(['rev-parse', 'HEAD'], { cwd: dir })).trim();
}

function prefixed<T extends string | Buffer>(prefix: string, files: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(files).map(([k, v]) => [prefix + k, v]));
}

/** Reads the recipes under docker/ (for `benchgym images`). */
export async function readRecipe(root: string, name: string): Promise<string> {
  return fs.readFile(path.join(root, 'docker', name), 'utf8');
}
