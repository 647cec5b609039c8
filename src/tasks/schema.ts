import { z } from 'zod';

/** A Debian package name (policy 5.6.1): lower case, digits, `+ - .`, at least two characters. */
export const DEBIAN_PACKAGE = /^[a-z0-9][a-z0-9+.-]+$/;

/** Paths (relative to the workspace root) to file contents. */
export const FileMap = z.record(z.string(), z.string());

export const WorkspaceSource = z.discriminatedUnion('type', [
  z.object({ type: z.literal('files'), files: FileMap }),
  /** A directory on the host copied as the start state. */
  z.object({ type: z.literal('dir'), path: z.string() }),
  /**
   * A git repository at a base commit with no future (src/repo): from the repository's
   * mirror in `reposDir`, else from GitHub when `allowNetwork`. `edits` are build-setup
   * rewrites (e.g. a Java release level a newer JDK still accepts), committed on top of the
   * base as one "benchgym: build setup" commit so that resetting to HEAD keeps them.
   */
  z.object({
    type: z.literal('git'),
    repo: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9_.-]+$/, "a repository as 'owner/name'"),
    commit: z.string().regex(/^[0-9a-f]{40}$/, 'a full 40-hex commit hash'),
    reposDir: z.string().optional(),
    allowNetwork: z.boolean().default(true),
    edits: z.array(z.object({ file: z.string().min(1), find: z.string().min(1), replace: z.string() })).default([]),
  }),
]);

export const PythonEnvSpec = z.object({
  kind: z.literal('python'),
  version: z
    .string()
    .regex(/^3\.\d+$/, 'a Python version such as "3.11"')
    .default('3.11'),
  requirements: z.array(z.string()).default([]),
  /**
   * Later pip installs, one after another once `requirements` are in: each may change what
   * the earlier ones installed, and a failing one is noted, not fatal. For harnesses that
   * install in stages (one pins numpy and scipy this way).
   */
  afterInstall: z.array(z.array(z.string()).min(1)).optional(),
  /**
   * pip constraints (`-c`) for the `requirements` install: the versions dependencies take
   * if they are installed, not installed themselves. For pinning what an exact pin pulls
   * in to its era (a dependency-drift table).
   */
  constraints: z.array(z.string().min(1)).optional(),
  /**
   * Debian packages the env needs at run time (a shared library a pip package loads:
   * python-magic's libmagic1). Docker env images install them; the local backend runs on the
   * host's libraries and reports ENV_UNAVAILABLE, naming them, when the host lacks one.
   */
  systemPackages: z.array(z.string().regex(DEBIAN_PACKAGE, 'a Debian package name such as "libmagic1"')).optional(),
  /**
   * A step after the installs that puts data the env needs into it (corpora, models): a
   * Python script run by the env's interpreter. It fails by exiting non-zero; its line
   * `benchgym-setup-unavailable: <reason>` makes the env ENV_UNAVAILABLE with that reason
   * (the data cannot be had here), anything else ENV_BUILD_FAILED.
   */
  setup: z
    .object({
      /** What the step provides, for messages ("nltk data punkt, wordnet, omw-1.4"). */
      description: z.string().min(1),
      script: z.string().min(1),
      /**
       * An environment variable of the host naming a local folder to take the data from
       * instead (no network): the script sees it as `BENCHGYM_SETUP_INPUT`; in Docker builds
       * the folder is copied into the build.
       */
      inputEnv: z
        .string()
        .regex(/^[A-Z_][A-Z0-9_]*$/)
        .optional(),
    })
    .optional(),
});

export const JavaEnvSpec = z.object({
  kind: z.literal('java'),
  jdk: z.string().default('17'),
  build: z.enum(['maven', 'gradle']).default('maven'),
  /** Extra arguments of every build and test command (`-D` overrides such as `-Djava.version=1.7`). */
  args: z.array(z.string()).default([]),
  /**
   * Why this env cannot exist on this machine, when a suite knows before building it (ENV_UNAVAILABLE with this reason, on every backend).
   */
  unavailable: z.string().min(1).optional(),
  /**
   * Maven: the tests whose run warms the env (resolves the plugins, Surefire's providers and the
   * dependencies the tests need) instead of the whole suite, in the ids of `RunnerSpec` (a
   * repository task names its hidden tests: one selected run instead of every test of the
   * project). Part of the env's key. Absent: the whole suite runs once.
   */
  warmTests: z.array(z.string()).optional(),
  /**
   * Maven: extra arguments of the env's warm-up build only, after its test selection (a `-Dtest`
   * here replaces it): `-pl !:<module>` for a module a `test` build of the reactor cannot make, a
   * test or two instead of a whole suite that takes too long. Part of the env's key.
   */
  warmArgs: z.array(z.string()).optional(),
});

/**
 * A prebuilt image the user loads (a benchmark's published evaluation image, say): only the
 * Docker backend can run it, and only when it is named and present. Without it the task's
 * env is ENV_UNAVAILABLE, and the message says which option names the image.
 */
export const ImageEnvSpec = z.object({
  kind: z.literal('image'),
  /** The image's name, when the user gave one (through `option`). */
  image: z.string().min(1).optional(),
  /** How a user names the image, for the ENV_UNAVAILABLE message (e.g. an environment variable). */
  option: z.string().min(1),
  /** What the image is and why the task needs it. */
  about: z.string().min(1),
  /** The interpreter or build tool commands call inside the image. */
  command: z.string().min(1).default('python'),
  /** Set when no image can make this task run here (`about` says why): always ENV_UNAVAILABLE. */
  unsupported: z.boolean().optional(),
});

export const EnvSpec = z.discriminatedUnion('kind', [PythonEnvSpec, JavaEnvSpec, ImageEnvSpec]);

export const RunnerSpec = z.discriminatedUnion('type', [
  /** `python -m pytest <args>` with a JUnit XML report. */
  z.object({ type: z.literal('pytest'), args: z.array(z.string()).default([]) }),
  /**
   * `mvn -o test [-pl modules -am] [-Dtest=...]`, Surefire XML reports of every module.
   * Tests are `Class`, `Class#method` or `module:Class[#method]` (module = its directory).
   */
  z.object({
    type: z.literal('maven'),
    tests: z.array(z.string()).default([]),
    args: z.array(z.string()).default([]),
    /** Tests left out of every run (`Class#method`): ones this machine's sandboxes cannot run; the suite says why. */
    exclude: z.array(z.string().regex(/^[^!,\s]+$/, 'a test id (Class or Class#method), no "!" or ","')).optional(),
  }),
  /** `gradle --offline test [--tests ...]` (the wrapper when the project has one), Gradle XML reports. */
  z.object({ type: z.literal('gradle'), tests: z.array(z.string()).default([]), args: z.array(z.string()).default([]) }),
  /** Any command; the exit code decides. */
  z.object({ type: z.literal('script'), command: z.string().min(1) }),
]);

export const TestSpec = z.object({
  runner: RunnerSpec,
  /** Extra test files written into the workspace before running (hidden tests live here). */
  files: FileMap.default({}),
  /** A patch adding the hidden tests (SWE-bench's `test_patch`); applied by suite scorers that know how. */
  patch: z.string().optional(),
  /**
   * Java: the task's own build changes, a diff laid down after the start state's build
   * configuration is restored over whatever a candidate did to it (SWE-bench: the gold patch's
   * build-file sections, which the hidden tests may need to build). Hidden, as the tests are.
   */
  buildPatch: z.string().optional(),
  timeoutMs: z.number().int().positive().default(300_000),
  /**
   * What passes a run without FAIL_TO_PASS lists: `tests` (default) needs exit code 0, every
   * reported test passed or skipped and at least one passed; `exit-code` needs exit code 0
   * alone, as harnesses that read pytest's return code decide (a file whose tests are all
   * skipped passes there; nothing collected, pytest's exit 5, still fails).
   */
  passWhen: z.enum(['tests', 'exit-code']).default('tests'),
});

/**
 * Another start state an episode may choose (`start_episode {context}`): an
 * evolving-ignored repository beside the evolving-aware one, say. It replaces the workspace and,
 * when given, the prompts; scoring still happens against the task's own start state (the
 * suite maps the episode's work onto it).
 */
export const TaskContext = z.object({
  description: z.string(),
  workspace: WorkspaceSource,
  prompt: z.string().min(1).optional(),
  promptVariants: z.record(z.string(), z.string()).default({}),
  /** The reference solution as it is written in this start state (for validate and --gold), when it differs from the task's. */
  solution: z.object({ files: z.record(z.string(), z.string()).optional(), patch: z.string().optional() }).optional(),
});

export const TaskSchema = z.object({
  id: z
    .string()
    .min(1)
    .regex(/^[A-Za-z0-9._\/@+-]+$/, 'letters, digits and ._/@+- only'),
  suite: z.string().min(1),
  title: z.string().optional(),
  language: z.enum(['python', 'java']),
  kind: z.enum(['function', 'repo-patch']),
  prompt: z.string().min(1),
  /** Other renderings of the prompt (raw / human-label / brief / with-docs ...). */
  promptVariants: z.record(z.string(), z.string()).default({}),
  env: EnvSpec,
  workspace: WorkspaceSource,
  tests: z.object({
    visible: TestSpec.optional(),
    hidden: TestSpec,
    /** Globs of files that are tests: reset to the start state before scoring. */
    testFiles: z.array(z.string()).default([]),
    failToPass: z.array(z.string()).default([]),
    passToPass: z.array(z.string()).default([]),
  }),
  solution: z.object({ files: FileMap.optional(), patch: z.string().optional() }).optional(),
  /** Other start states an episode may choose, by name; `defaultContext` names the task's own. */
  contexts: z.record(z.string(), TaskContext).default({}),
  defaultContext: z.string().min(1).default('default'),
  metadata: z.record(z.string(), z.unknown()).default({}),
  /**
   * What the task needs beyond the defaults: a sandbox gets max(memoryMb, the server's limit)
   * of memory and max(pids, the server's limit) processes and threads at once (a Docker
   * container's PidsLimit, the local sandbox's pids cgroup; a Kubernetes pod's pids are the
   * kubelet's `podPidsLimit`, not the pod's).
   */
  resources: z
    .object({ memoryMb: z.number().int().min(64).max(262_144).optional(), pids: z.number().int().min(16).max(65_536).optional() })
    .default({}),
});

export type Task = z.infer<typeof TaskSchema>;
export type TaskInput = z.input<typeof TaskSchema>;
export type EnvSpec = z.infer<typeof EnvSpec>;
export type PythonEnvSpec = z.infer<typeof PythonEnvSpec>;
export type JavaEnvSpec = z.infer<typeof JavaEnvSpec>;
export type ImageEnvSpec = z.infer<typeof ImageEnvSpec>;
export type RunnerSpec = z.infer<typeof RunnerSpec>;
export type TestSpec = z.infer<typeof TestSpec>;
export type WorkspaceSource = z.infer<typeof WorkspaceSource>;
export type TaskContext = z.infer<typeof TaskContext>;

/**
 * The public face of a task: what an agent or a listing may see (never hidden tests or the
 * solution); `privateMetadata` are the suite's keys agents never see (Suite.privateMetadata).
 */
export function publicTaskInfo(task: Task, privateMetadata: readonly string[] = []): Record<string, unknown> {
  return {
    id: task.id,
    suite: task.suite,
    title: task.title ?? task.id,
    language: task.language,
    kind: task.kind,
    env: task.env,
    hasVisibleTests: Boolean(task.tests.visible),
    promptVariants: Object.keys(task.promptVariants),
    contexts: [task.defaultContext, ...Object.keys(task.contexts)],
    metadata: Object.fromEntries(Object.entries(task.metadata).filter(([k]) => !privateMetadata.includes(k))),
  };
}
