import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { PreparedEnv } from '../../src/env/types.ts';
import { GymError } from '../../src/errors.ts';
import { TaskSchema, type EnvSpec, type Task } from '../../src/tasks/schema.ts';
import { exportTree, fileAt, gitIn, isUnexportable, type Change } from './history.ts';
import { EraEnvResolver, type EraEnvDerivation } from './era_env.ts';
import { javaEraOf } from './java_era.ts';
import type { BuildOptions } from './build_options.ts';
import { defaultRunner, scopedRunner } from './runner_specs.ts';

/** The env a change is tested in: the spec, how it was derived (era envs), and the built env. */
export interface ChangeEnv {
  spec: EnvSpec;
  derivation?: EraEnvDerivation;
  /** Java: what the compile level was taken from (`java_era.ts`). */
  javaFrom?: string;
  prepared: PreparedEnv;
}

/**
 * The env of each change. Fixed (`opts.env`): prepared once, from the first candidate's
 * tree, and a failure ends the build. Era (`opts.eraEnv`, Python): derived per change,
 * built once per distinct spec (the env builder keys by content), and an env that cannot
 * be had (derivation or build) makes the change's candidates `env-unavailable`.
 */
export function changeEnvs(
  opts: BuildOptions,
  repo: string,
  workDir: string,
): (change: Change, testFiles: string[]) => Promise<ChangeEnv | { unavailable: string }> {
  if (opts.language === 'java' && opts.env.kind === 'java') return javaEnvs(opts, opts.env, repo, workDir);
  if (!opts.eraEnv || opts.language !== 'python') {
    let fixed: Promise<ChangeEnv> | undefined;
    return (change) => {
      fixed ??= prepareEnv(opts, opts.env, repo, change.commit, workDir).then((prepared) => ({ spec: opts.env, prepared }));
      return forgetUnexportable(fixed, () => (fixed = undefined));
    };
  }
  const resolver = new EraEnvResolver(repo, { progress: opts.progress, ...opts.eraEnv });
  const built = new Map<string, Promise<ChangeEnv | { unavailable: string }>>();
  return async (change) => {
    const era = await resolver.envFor(change.commit, change.date);
    if ('unavailable' in era) return era;
    const key = JSON.stringify(era.spec);
    let env = built.get(key);
    if (!env) {
      env = buildDropping(opts, era.spec, era.derivation, repo, change.commit, workDir);
      built.set(key, env);
    }
    return forgetUnexportable(env, () => built.delete(key));
  };
}

/**
 * An env prepared from a change's tree that could not be exported says nothing of the env: it
 * is forgotten (the next change with the same env tries again from its own tree), and the error
 * rejects this change only.
 */
function forgetUnexportable<T>(env: Promise<T>, forget: () => void): Promise<T> {
  return env.catch((err: unknown) => {
    if (isUnexportable(err)) forget();
    throw err;
  });
}

/** pip's own words when a pinned release has no file for the env's Python (`src/env/python.ts`). */
const NO_DISTRIBUTION = /no distribution of ([A-Za-z0-9_.-]+)==\S+ for this Python/;

/**
 * Builds a Python era env; a pinned release with no file for the env's Python (glom's 2018
 * `futures==3.2.0`, a Python 2 backport uv kept because the pin is exact) is left out and named
 * in the derivation, and the env built again without it (a few times at most).
 */
async function buildDropping(
  opts: BuildOptions,
  spec: EnvSpec,
  derivation: EraEnvDerivation,
  repo: string,
  commit: string,
  workDir: string,
): Promise<ChangeEnv | { unavailable: string }> {
  const what = `Python ${spec.kind === 'python' ? spec.version : ''} env (${derivation.python_from})`;
  const dropped = [...(derivation.dropped ?? [])];
  let current = spec;
  for (let attempt = 0; ; attempt++) {
    try {
      const prepared = await prepareEnv(opts, current, repo, commit, workDir);
      return { spec: current, derivation: { ...derivation, ...(dropped.length ? { dropped } : {}) }, prepared };
    } catch (err) {
      const reason = err instanceof GymError ? (typeof err.details?.reason === 'string' ? err.details.reason : err.message) : '';
      const name = NO_DISTRIBUTION.exec(reason)?.[1]
        ?.toLowerCase()
        .replace(/[-_.]+/g, '-');
      const norm = (r: string) =>
        r
          .split(/[=<>!~ ;[]/)[0]!
          .toLowerCase()
          .replace(/[-_.]+/g, '-');
      const gone = current.kind === 'python' && name ? current.requirements.find((r) => norm(r) === name) : undefined;
      if (!gone || current.kind !== 'python' || attempt >= 4) return unavailableEnv(err, what);
      opts.progress?.(`  era env: left out ${gone} (${reason.slice(0, 160)})`);
      dropped.push({ requirement: gone, why: reason.slice(0, 400) });
      current = { ...current, requirements: current.requirements.filter((r) => r !== gone) };
    }
  }
}

/**
 * An env build that failed for a reason of the era (not an unreachable index, which stops the build, nor a tree the copy cannot export).
 */
function unavailableEnv(err: unknown, what: string): { unavailable: string } {
  if (isUnexportable(err)) throw err;
  const reason =
    err instanceof GymError ? (typeof err.details?.reason === 'string' ? err.details.reason : err.message.split('\n')[0]!) : '';
  if (
    err instanceof GymError &&
    (err.code === 'ENV_UNAVAILABLE' || err.code === 'ENV_BUILD_FAILED') &&
    !/could not reach the package index/.test(reason)
  ) {
    return { unavailable: `${what} could not be built: ${reason}` };
  }
  throw err;
}

/**
 * Java: each change in the env its poms call for (`java_era.ts`: compile levels JDK 17 refuses
 * raised by -D), built once per distinct set of poms and overrides, since a Maven env is its
 * resolved dependencies and a later pom needs others. A pom no override can fit is the era's
 * `env-unavailable`.
 */
function javaEnvs(
  opts: BuildOptions,
  base: Extract<EnvSpec, { kind: 'java' }>,
  repo: string,
  workDir: string,
): (change: Change, testFiles: string[]) => Promise<ChangeEnv | { unavailable: string }> {
  const built = new Map<string, Promise<ChangeEnv | { unavailable: string }>>();
  return async (change, testFiles) => {
    const listing = await gitIn(repo, ['ls-tree', '-r', change.commit]);
    const poms = listing
      .split('\n')
      .map((l) => /^\d+ blob ([0-9a-f]+)\t(.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => Boolean(m) && /(^|\/)pom\.xml$/.test(m![2]!));
    if (!poms.length) return { unavailable: `no pom.xml at ${change.commit.slice(0, 10)}: only Maven builds are mined` };
    const key = poms.map((m) => `${m[2]}:${m[1]}`).join(',');
    let env = built.get(key);
    if (!env) {
      env = (async () => {
        const texts: Record<string, string> = {};
        for (const m of poms) texts[m[2]!] = (await fileAt(repo, change.commit, m[2]!)) ?? '';
        const era = javaEraOf(texts);
        if (era.unavailable) return { unavailable: era.unavailable };
        // Scoped to the change's tests, the env is warmed by the first change's test classes (it resolves
        // Surefire's provider and what they need), not by every test of the project.
        const warm = opts.testScope === 'change' ? scopedRunner('java', defaultRunner('java'), testFiles) : undefined;
        const spec: EnvSpec = {
          ...base,
          args: [...base.args, ...era.args],
          ...(warm?.type === 'maven' && warm.tests.length ? { warmTests: warm.tests } : {}),
        };
        if (era.args.length) opts.progress?.(`  java env: ${era.from} (${era.args.join(' ')})`);
        return prepareEnv(opts, spec, repo, change.commit, workDir).then(
          (prepared): ChangeEnv => ({ spec, prepared, javaFrom: era.from }),
          (err: unknown) => unavailableEnv(err, `the Maven env of ${change.commit.slice(0, 10)} (${era.from})`),
        );
      })();
      built.set(key, env);
    }
    return forgetUnexportable(env, () => built.delete(key));
  };
}

async function prepareEnv(opts: BuildOptions, env: EnvSpec, repo: string, commit: string, workDir: string): Promise<PreparedEnv> {
  // Maven envs are keyed by the pom of the start state: the first candidate's tree stands in.
  const dir = path.join(workDir, 'env-seed');
  await fs.rm(dir, { recursive: true, force: true });
  await exportTree(repo, commit, dir);
  return opts.sandboxes.prepare(provisionalTask(opts, env, dir));
}

function provisionalTask(opts: BuildOptions, env: EnvSpec, dir: string): Task {
  return TaskSchema.parse({
    id: 'build-tasks-candidate',
    suite: 'humanevo-build',
    language: opts.language,
    kind: 'function',
    prompt: 'validation of a candidate',
    env,
    workspace: { type: 'dir', path: dir },
    tests: { hidden: { runner: opts.runner ?? defaultRunner(opts.language) } },
  });
}
