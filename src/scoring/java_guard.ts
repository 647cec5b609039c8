import { createHash } from 'node:crypto';
import path from 'node:path';
import { GymError, toGymError } from '../errors.ts';
import { matchesAny } from '../sandbox/glob.ts';
import { isolatedGitShell } from '../sandbox/git_isolation.ts';
import type { Sandbox } from '../sandbox/types.ts';
import { shellQuote } from '../shell_quote.ts';
import type { RunnerSpec } from '../tasks/schema.ts';
import { clearForHarness, REFUSED } from './candidate_files.ts';
import {
  buildConfigRoot,
  buildOutputRoot,
  refusalByContent,
  refusalByName,
  serviceName,
  TEST_TOOLCHAIN_PACKAGES,
  toolchainRoot,
  type Refusal,
} from './java_build.ts';
import { javaTestRoots, underTestRoots } from './java_test_roots.ts';
import { TAMPER, type ScoringMode } from './mode.ts';

/**
 * The build guard of Java scorings: the candidate's diff reaches the code under test and
 * nothing that runs or configures the scoring. Before the patch it records the start state
 * (every entry of the workspace, the build configuration's bytes, what the test toolchain
 * could read); after it, nothing but the patch having run, it compares:
 *
 * - build configuration (java_build.ts BUILD_CONFIG: poms, .mvn, Gradle scripts, wrappers, at
 *   any depth, tracked or not, link or folder) is put back as the start state has it, whatever
 *   the diff did (changed, deleted, replaced by a link or a folder, added where none was), then
 *   the task's own declared build changes are laid down; build output folders lose whatever
 *   the diff put there;
 * - files that would reach the compiler or the test toolchain rather than the code under test
 *   (compiled classes and archives, service registrations of processors and of the toolchain,
 *   agent manifests, the toolchain's class-path configuration, sources in a toolchain package
 *   by their `package` declaration, links out of the workspace) are refused: removed before
 *   scoring and noted; in strict mode they make the verdict 0 (TAMPER_SUSPECTED);
 * - the scoring build itself forks: Surefire always runs the tests in a JVM of their own
 *   (`-DforkCount=1 -DforkMode=once`, over properties; a start state whose own pom says
 *   otherwise is kept and noted), Maven's JVM cannot be attached to, and a start state that
 *   builds annotation processors of its own compiles with javac in a process of its own.
 *
 * The candidate's test files are judged like any other (they run in the test JVM); whether
 * they stay is the suite's rule (`isTestFile` tells them by the build's test roots).
 */
export class JavaBuildGuard {
  private start: StartState | undefined;
  private readonly refused: Refusal[] = [];

  constructor(private readonly opts: JavaGuardOptions) {}

  /** Records the start state; call before the patch. */
  async readStartState(sandbox: Sandbox, log: string[]): Promise<void> {
    const entries = await listWorkspace(sandbox, this.opts.signal);
    const config = new Map<string, Buffer>();
    const guarded: string[] = [];
    for (const [rel, e] of entries) {
      if (e.type !== 'f') continue;
      if (buildConfigRoot(rel) !== undefined) config.set(rel, await sandbox.readFile(rel));
      else if (isGuarded(rel)) guarded.push(rel);
    }
    const hashes = await hashFiles(sandbox, guarded, this.opts.signal);
    for (const [rel, content] of config) hashes.set(rel, sha256(content));
    const kept = new Map<string, Buffer>();
    let keptBytes = 0;
    for (const rel of guarded) {
      const size = entries.get(rel)!.size;
      if (size > KEEP_FILE_BYTES || keptBytes + size > KEEP_TOTAL_BYTES) continue;
      kept.set(rel, await sandbox.readFile(rel));
      keptBytes += size;
    }
    const owned = await ownedToolchainPackages(sandbox, this.opts.signal);
    const processors = processorsOf(entries, config, this.opts.tool);
    const testRoots = javaTestRoots(this.opts.tool, config);
    this.start = { entries, config, hashes, kept, owned, processors, inMavenJvm: testsInMavenJvm(config), testRoots };
    const ownNote = owned.size ? `, the project's own toolchain packages: ${[...owned].join(', ')}` : '';
    const processorNote = processors.length ? `, annotation processors of its own: ${processors.slice(0, 3).join(', ')}` : '';
    log.push(`build guard: start state of ${entries.size} entries, ${config.size} build configuration file(s)${ownNote}${processorNote}`);
    log.push(`test source roots: ${listed(testRoots, 20)}`);
  }

  /**
   * Whether a path is a test file: inside a test source or resource root of the start state's
   * build (java_test_roots.ts), not wherever a folder happens to be named `test`.
   */
  isTestFile(rel: string): boolean {
    if (!this.start) throw new GymError('INTERNAL', 'the build guard was not given the start state');
    return underTestRoots(rel, this.start.testRoots);
  }

  /**
   * After the patch: refused files removed, build configuration and output folders back as
   * the start state has them, then `declaredBuild` (a diff of the task's own build changes)
   * applied. Each step is a note; `tamperNote()` then says whether strict mode refuses.
   */
  async enforce(sandbox: Sandbox, notes: string[], log: string[], declaredBuild?: string): Promise<void> {
    const start = this.start;
    if (!start) throw new GymError('INTERNAL', 'the build guard was not given the start state');
    const now = await listWorkspace(sandbox, this.opts.signal);
    const ctx = { owned: start.owned };
    // Test files keep their build configuration look-alikes (a test project's pom) and output folders; they are judged like any file.
    const testFile = (rel: string) =>
      this.isTestFile(rel) || ((this.opts.testFiles?.length ?? 0) > 0 && matchesAny(rel, this.opts.testFiles!));
    const touched = [...now]
      .filter(([rel, e]) => {
        const s = start.entries.get(rel);
        return !s || differs(s, e);
      })
      .map(([rel]) => rel);
    const weighed = touched.filter((rel) => now.get(rel)!.type === 'f' && (buildConfigRoot(rel) !== undefined || isGuarded(rel)));
    const rehash = await hashFiles(sandbox, weighed, this.opts.signal);
    const changed = (rel: string) => {
      const s = start.entries.get(rel);
      const e = now.get(rel);
      if (!s || !e) return true;
      if (!differs(s, e)) return false;
      if (s.type !== e.type || s.mode !== e.mode || s.target !== e.target) return true;
      // A folder's times move with its entries, which are compared one by one.
      if (s.type === 'd') return false;
      return s.type !== 'f' || !start.hashes.has(rel) || start.hashes.get(rel) !== rehash.get(rel);
    };

    // 1. What of the candidate's would reach the compiler or the toolchain (its test files run in the test JVM too).
    for (const rel of touched) {
      const e = now.get(rel)!;
      if (!changed(rel) || (e.type !== 'f' && e.type !== 'l')) continue;
      const why = await this.judge(sandbox, rel, e, ctx);
      if (why) this.refused.push({ path: rel, why });
    }

    // 2. Build configuration: each root (a file, or a configuring folder) with a change in it, as the start state has it.
    const roots = new Map<string, string>();
    const deleted = [...start.entries.keys()].filter((rel) => !now.has(rel));
    for (const rel of [...touched, ...deleted]) {
      const root = buildConfigRoot(rel);
      if (root === undefined || roots.has(root) || testFile(root) || !changed(rel)) continue;
      roots.set(root, describeChange(root, start.entries, now));
    }
    // 3. Build output folders: whatever the diff put there.
    const outputs = new Set<string>();
    for (const rel of touched) {
      const root = buildOutputRoot(rel, this.opts.tool);
      if (root === undefined || testFile(rel) || !changed(rel)) continue;
      outputs.add(start.entries.has(root) ? rel : root);
    }

    const refusedPaths = this.refused.map((r) => r.path).filter((rel) => ![...roots.keys()].some((root) => inside(rel, root)));
    const restoreRefused = refusedPaths.filter((rel) => start.kept.has(rel));
    await removeAll(sandbox, [...refusedPaths, ...roots.keys(), ...outputs], this.opts.signal);
    for (const rel of restoreRefused) await sandbox.writeFile(rel, start.kept.get(rel)!);
    await this.restoreConfig(sandbox, [...roots.keys()], restoreRefused, notes);

    for (const r of this.refused.slice(0, 20)) {
      const how = start.kept.has(r.path) ? 'put back as the start state has it' : 'removed';
      notes.push(`${REFUSED}: ${r.path} ${r.why}; ${how} before scoring`);
    }
    if (this.refused.length > 20) {
      notes.push(`${REFUSED}: ${this.refused.length - 20} more file(s) of the same kinds removed before scoring`);
    }
    if (roots.size) {
      const list = listed(
        [...roots].map(([root, how]) => `${root} (${how})`),
        12,
      );
      notes.push(`${BUILD_RESTORED}: the start state's build configuration scores, not the patch's changes to it: ${list}`);
    }
    if (outputs.size) {
      notes.push(`${BUILD_RESTORED}: build output the patch carried was removed (the build makes its own): ${listed([...outputs], 8)}`);
    }
    if (start.inMavenJvm.length) {
      notes.push(
        `TESTS_IN_MAVEN_JVM: the start state's own build configures tests without a forked JVM ` +
          `(${start.inMavenJvm.slice(0, 3).join(', ')}): ` +
          "kept as the project's configuration; the same setting by property is overridden",
      );
    }
    log.push(
      `build guard: ${touched.length} entries touched by the patch; ${this.refused.length} refused, ` +
        `${roots.size} configuration root(s) restored, ${outputs.size} output path(s) removed`,
    );
    if (declaredBuild?.trim()) await applyDeclaredBuild(sandbox, declaredBuild, log, this.opts.signal);
  }

  /** Strict mode's note when the diff carried refused files (reward 0), else null. */
  tamperNote(): string | null {
    if (this.opts.mode !== 'strict' || !this.refused.length) return null;
    const list = listed(
      this.refused.map((r) => r.path),
      8,
    );
    return (
      `${TAMPER}: the patch carries ${this.refused.length} file(s) that would reach the compiler or the test toolchain ` +
      `rather than the code under test (refused, not run): ${list}`
    );
  }

  /** The files refused so far. */
  get refusals(): readonly Refusal[] {
    return this.refused;
  }

  /** The task's runner with the scoring build's own settings: forked tests, a forked compiler where processors are built. */
  runner<T extends RunnerSpec>(spec: T): T {
    if (spec.type !== 'maven') return spec;
    const compiler = this.start?.processors.length ? ['-Dmaven.compiler.fork=true'] : [];
    return { ...spec, args: [...spec.args, ...MAVEN_FORKED_TESTS, ...compiler] };
  }

  /** Settings appended to the test run's environment: the build tool's JVM cannot be attached to (no agent loaded from the tests). */
  runEnv(spec: RunnerSpec): Record<string, string> {
    if (spec.type === 'maven') return { MAVEN_OPTS: NO_ATTACH };
    if (spec.type === 'gradle') return { GRADLE_OPTS: NO_ATTACH };
    return {};
  }

  private async judge(sandbox: Sandbox, rel: string, e: Entry, ctx: { owned: ReadonlySet<string> }): Promise<string | undefined> {
    if (e.type === 'l') {
      const byName = refusalByName(rel, ctx, true);
      if (byName && byName !== 'read') return byName;
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(rel), e.target));
      const out = e.target.startsWith('/') || resolved === '..' || resolved.startsWith('../');
      return out ? `is a symbolic link out of the workspace (-> ${e.target})` : undefined;
    }
    const byName = refusalByName(rel, ctx);
    if (byName !== 'read') return byName;
    if (e.size > MAX_JUDGED_BYTES) return `is a source or manifest of ${e.size} bytes, too large to be judged`;
    const text = await sandbox.readFile(rel).then(
      (b) => b.toString('utf8'),
      (err) => {
        throw new GymError('NOT_A_FILE', `could not be read to be judged: ${toGymError(err).message}`, { candidate: true, path: rel });
      },
    );
    const why = refusalByContent(rel, text, ctx);
    if (why) return why;
    // Processor code where the start state builds none: only a registration (refused, or made by a processor of the build) would load it.
    if (!this.start!.processors.length && jvmSource(rel) && PROCESSOR_API.test(text)) {
      return 'is annotation processor or compiler plugin code in a project whose start state builds none';
    }
    return undefined;
  }

  /**
   * The start state's entries under `roots` laid down again (files, links, folders, modes);
   * `rewritten`: other start-state files written back, whose modes are set too.
   */
  private async restoreConfig(sandbox: Sandbox, roots: string[], rewritten: string[], notes: string[]): Promise<void> {
    const start = this.start!;
    if (!roots.length && !rewritten.length) return;
    const files: string[] = [];
    const links = new Map<string, string>();
    const dirs: string[] = [];
    const modes: [string, number][] = rewritten.map((rel) => [rel, start.entries.get(rel)!.mode]);
    for (const [rel, e] of start.entries) {
      if (!roots.some((root) => inside(rel, root))) continue;
      if (e.type === 'f') (files.push(rel), modes.push([rel, e.mode]));
      else if (e.type === 'l') links.set(rel, e.target);
      else if (e.type === 'd') (dirs.push(rel), modes.push([rel, e.mode]));
    }
    const startLinks = new Map([...start.entries].filter(([, e]) => e.type === 'l').map(([rel, e]) => [rel, e.target] as const));
    const cleared = await clearForHarness(sandbox, files, { startLinks, links, signal: this.opts.signal });
    for (const r of cleared) {
      if (r.kind === 'dir') continue;
      notes.push(`${REFUSED}: ${r.path} was in the way of the start state's build configuration (${r.kind}); removed`);
    }
    for (const rel of files) await sandbox.writeFile(rel, start.config.get(rel)!);
    const script = [
      ...dirs.map((d) => `mkdir -p -- ${shellQuote(d)}`),
      ...modes.map(([rel, mode]) => `chmod ${mode.toString(8)} -- ${shellQuote(rel)}`),
      'true',
    ].join('\n');
    const r = await sandbox.exec(script, { timeoutMs: 120_000, signal: this.opts.signal });
    if (r.exitCode !== 0) {
      throw new GymError('SANDBOX_UNAVAILABLE', `restoring the start state's build configuration failed: ${r.stderr.slice(-500)}`);
    }
  }
}

export interface JavaGuardOptions {
  tool: 'maven' | 'gradle';
  mode: ScoringMode;
  /** Globs of the task's test files besides the build's test roots: their pom look-alikes and output folders are not the build's. */
  testFiles?: string[];
  signal?: AbortSignal;
}

/** The guard of a Java task built by Maven or Gradle (both scorers use it), else undefined. */
export function javaGuardFor(
  task: { language?: string },
  runner: RunnerSpec,
  opts: { strict: boolean; testFiles: string[]; signal?: AbortSignal },
): JavaBuildGuard | undefined {
  if (task.language !== 'java' || (runner.type !== 'maven' && runner.type !== 'gradle')) return undefined;
  const mode: ScoringMode = opts.strict ? 'strict' : 'faithful';
  return new JavaBuildGuard({ tool: runner.type, mode, testFiles: opts.testFiles, ...(opts.signal ? { signal: opts.signal } : {}) });
}

/** The note of build configuration (or output) put back as the start state has it. */
export const BUILD_RESTORED = 'BUILD_CONFIG_RESTORED';

/**
 * Surefire's forking over any property that would turn it off (forkCount 2.14+, forkMode
 * before): the tests run in a JVM of their own, and Maven's JVM, whose exit code scores,
 * runs none of the code under test. Values in a plugin's own configuration win over these:
 * the start state's (TESTS_IN_MAVEN_JVM note).
 */
export const MAVEN_FORKED_TESTS: readonly string[] = ['-DforkCount=1', '-DforkMode=once'];

/** No attach listener in the build tool's JVM: code under test cannot load an agent into it. */
const NO_ATTACH = '-XX:+DisableAttachMechanism';

const KEEP_FILE_BYTES = 1024 * 1024;
const KEEP_TOTAL_BYTES = 32 * 1024 * 1024;
const MAX_JUDGED_BYTES = 8 * 1024 * 1024;

interface Entry {
  /** find's %y: f, d, l, or another letter for special files. */
  type: string;
  mode: number;
  size: number;
  inode: string;
  ctime: string;
  target: string;
}

interface StartState {
  entries: Map<string, Entry>;
  /** The bytes of every build configuration file. */
  config: Map<string, Buffer>;
  /** sha256 of every build configuration and guarded file. */
  hashes: Map<string, string>;
  /** Guarded files' bytes, to put back a start-state file the diff changed (small ones). */
  kept: Map<string, Buffer>;
  /** Toolchain packages the project's own sources are in. */
  owned: Set<string>;
  /** Where the start state registers or configures annotation processors of its own. */
  processors: string[];
  /** Start-state poms whose own plugin configuration runs tests without a fork. */
  inMavenJvm: string[];
  /** The build's test source and resource roots (java_test_roots.ts). */
  testRoots: string[];
}

const jvmSource = (rel: string) => /\.(java|kt|groovy|scala)$/.test(rel);

/** Annotation processing's API or javac's plugin API, named in a source (spaces allowed between the names, as Java allows them). */
const PROCESSOR_API = /\bjavax\s*\.\s*annotation\s*\.\s*processing\b|\bcom\s*\.\s*sun\s*\.\s*source\s*\.\s*util\b/;

/** The first `max` items, and how many more. */
const listed = (items: string[], max: number) =>
  items.slice(0, max).join(', ') + (items.length > max ? `, and ${items.length - max} more` : '');

/** Files whose bytes decide what the build or the toolchain loads: hashed in the start state to tell a change. */
function isGuarded(rel: string): boolean {
  return (
    /\.(class|jar|war|ear|jmod|aar|so|dylib|dll|jnilib|kotlin_module)$/.test(rel) ||
    /(^|\/)META-INF\//.test(rel) ||
    /(^|\/)(junit-platform\.properties|SpockConfig\.groovy)$/.test(rel) ||
    rel.includes('mockito-extensions/')
  );
}

/**
 * Whether the entry moved: its kind, mode, size, inode, change time or target differ (nothing
 * but the patch ran in between, and every write changes a ctime).
 */
function differs(a: Entry, b: Entry): boolean {
  return a.type !== b.type || a.mode !== b.mode || a.size !== b.size || a.inode !== b.inode || a.ctime !== b.ctime || a.target !== b.target;
}

const inside = (rel: string, root: string) => rel === root || rel.startsWith(`${root}/`);

function describeChange(root: string, start: Map<string, Entry>, now: Map<string, Entry>): string {
  const s = start.get(root);
  const e = now.get(root);
  const kind = (x: Entry) =>
    x.type === 'l' ? 'a symbolic link' : x.type === 'd' ? 'a folder' : x.type === 'f' ? 'a file' : 'a special file';
  if (!s) return 'added where the start state has none';
  if (!e) return 'deleted';
  if (s.type !== e.type) return `${kind(e)} where the start state has ${kind(s)}`;
  return 'changed';
}

/**
 * Every entry of the workspace but its own .git (a .git deeper down is listed: it could hold
 * sources a build reads): kind, mode, size, inode, change time, path, link target.
 */
async function listWorkspace(sandbox: Sandbox, signal?: AbortSignal): Promise<Map<string, Entry>> {
  const list = "find . -path ./.git -prune -o ! -path . -printf '%y\\0%m\\0%s\\0%i\\0%C@\\0%P\\0%l\\0'";
  const r = await sandbox.exec(list, { timeoutMs: 300_000, maxOutputBytes: 256 * 1024 * 1024, ...(signal ? { signal } : {}) });
  if (r.timedOut || r.exitCode !== 0 || r.truncated.stdout > 0) {
    const why = `exit ${r.exitCode}${r.timedOut ? ', timed out' : ''}`;
    throw new GymError('SANDBOX_UNAVAILABLE', `listing the workspace failed (${why}): ${r.stderr.slice(-500)}`);
  }
  const f = r.stdout.split('\0');
  const out = new Map<string, Entry>();
  for (let i = 0; i + 6 < f.length; i += 7) {
    const entry = { type: f[i]!, mode: Number.parseInt(f[i + 1]!, 8), size: Number(f[i + 2]), inode: f[i + 3]!, ctime: f[i + 4]! };
    out.set(f[i + 5]!, { ...entry, target: f[i + 6]! });
  }
  return out;
}

/** sha256 of each file, computed in the sandbox (one command for all). */
async function hashFiles(sandbox: Sandbox, files: string[], signal?: AbortSignal): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!files.length) return out;
  const stdin = files.map((f) => `${f}\0`).join('');
  const opts = { stdin, timeoutMs: 300_000, maxOutputBytes: 64 * 1024 * 1024, ...(signal ? { signal } : {}) };
  const r = await sandbox.exec('xargs -0 -r sha256sum -z -- ; true', opts);
  if (r.timedOut || r.exitCode !== 0) {
    throw new GymError('SANDBOX_UNAVAILABLE', `hashing files in the sandbox failed: ${r.stderr.slice(-500)}`);
  }
  for (const line of r.stdout.split('\0')) if (line.length > 66) out.set(line.slice(66), line.slice(0, 64));
  return out;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Toolchain packages the start state's own main sources declare (a project such as Mockito owns its package). */
async function ownedToolchainPackages(sandbox: Sandbox, signal?: AbortSignal): Promise<Set<string>> {
  const names = TEST_TOOLCHAIN_PACKAGES.map((p) => p.replace(/\./g, '\\.')).join('|');
  const script = [
    "find . -name .git -prune -o -type d -path '*/src/*' \\( -name test -o -name it -o -name testFixtures \\) -prune",
    "-o -type f \\( -name '*.java' -o -name '*.kt' -o -name '*.groovy' -o -name '*.scala' \\) -print0",
    `| xargs -0 -r grep -h -o -E '^[[:space:]]*package[[:space:]]+(${names})([.][A-Za-z0-9_.]*)?' ; true`,
  ].join(' ');
  const r = await sandbox.exec(script, { timeoutMs: 300_000, maxOutputBytes: 16 * 1024 * 1024, ...(signal ? { signal } : {}) });
  const owned = new Set<string>();
  for (const line of r.stdout.split('\n')) {
    const pkg = line.replace(/^\s*package\s+/, '').trim();
    const root = pkg && toolchainRoot(pkg);
    if (root) owned.add(root);
  }
  return owned;
}

/** Processor configuration in a pom: processor paths or names, or AutoService, which writes registrations as it compiles. */
const PROCESSOR_CONFIG = /<annotationProcessorPaths>|<annotationProcessors>|<artifactId>auto-service<\/artifactId>/;

/**
 * Where the start state builds annotation processors of its own: a registration outside its
 * tests, or processor configuration in a pom. Maven: a registration in a module no pom of the
 * start state names (gson's `codegen` before 2.9) is never built, so it forks no javac.
 */
function processorsOf(entries: Map<string, Entry>, config: Map<string, Buffer>, tool: 'maven' | 'gradle'): string[] {
  const out: string[] = [];
  const modules = tool === 'maven' ? mavenModules(config) : undefined;
  for (const rel of entries.keys()) {
    if (serviceName(rel) !== 'javax.annotation.processing.Processor' || /(^|\/)src\/(test|it|testFixtures)\//.test(rel)) continue;
    const module = /^(?:(.*)\/)?src\/main\//.exec(rel);
    if (modules && module && !modules.has(module[1] ?? '')) continue;
    out.push(rel);
  }
  for (const [rel, content] of config) {
    if (/(^|\/)pom\.xml$/.test(rel) && PROCESSOR_CONFIG.test(content.toString('utf8'))) out.push(rel);
  }
  return out;
}

/** The folders of the modules a Maven build of the start state can reach: the root and every `<module>` a pom names (profiles' too). */
function mavenModules(config: Map<string, Buffer>): Set<string> {
  const out = new Set<string>(['']);
  for (const [rel, content] of config) {
    if (!/(^|\/)pom\.xml$/.test(rel)) continue;
    const dir = path.posix.dirname(rel);
    for (const m of content.toString('utf8').matchAll(/<module>\s*([^<]+?)\s*<\/module>/g)) {
      let target = path.posix.normalize(path.posix.join(dir, m[1]!));
      // A module may name its pom file rather than its folder.
      if (/\.xml$/.test(target)) target = path.posix.dirname(target);
      out.add(target === '.' ? '' : target.replace(/\/$/, ''));
    }
  }
  return out;
}

/** Start-state poms whose plugin configuration turns forking off (forkCount 0, forkMode never). */
function testsInMavenJvm(config: Map<string, Buffer>): string[] {
  const out: string[] = [];
  for (const [rel, content] of config) {
    if (!/(^|\/)pom\.xml$/.test(rel)) continue;
    const text = content.toString('utf8');
    const m = /<forkCount\s*>\s*0\s*<\/forkCount\s*>|<forkMode\s*>\s*(never|none)\s*<\/forkMode\s*>/.exec(text);
    if (m) out.push(`${m[0].replace(/\s+/g, '')} in ${rel}`);
  }
  return out;
}

/** Removes each path (a file, a link, a whole folder) inside the workspace; they come from the listing, whose folders are real ones. */
async function removeAll(sandbox: Sandbox, paths: string[], signal?: AbortSignal): Promise<void> {
  if (!paths.length) return;
  const stdin = paths.map((p) => `${p}\0`).join('');
  const script = 'while IFS= read -r -d \'\' p; do rm -rf -- "./$p"; done';
  const r = await sandbox.exec(script, { stdin, timeoutMs: 120_000, ...(signal ? { signal } : {}) });
  if (r.timedOut || r.exitCode !== 0) {
    throw new GymError('SANDBOX_UNAVAILABLE', `removing the patch's refused files failed: ${r.stderr.slice(-500)}`);
  }
}

/** The task's declared build changes, applied to the restored configuration; one that does not apply is the task's defect. */
async function applyDeclaredBuild(sandbox: Sandbox, patch: string, log: string[], signal?: AbortSignal): Promise<void> {
  const apply = `${isolatedGitShell({ GIT_DIR: '/nonexistent' })} apply --verbose --whitespace=nowarn "$p" 2>&1`;
  const r = await sandbox.exec(`p=$(mktemp); cat > "$p"; ${apply}; s=$?; rm -f "$p"; exit $s`, {
    stdin: patch.endsWith('\n') ? patch : `${patch}\n`,
    timeoutMs: 120_000,
    ...(signal ? { signal } : {}),
  });
  log.push(`declared build changes:\n${r.stdout}`);
  if (r.exitCode !== 0) {
    const what = "the task's declared build changes do not apply to its start state's build configuration";
    throw new GymError('TASK_INVALID', `${what}:\n${r.stdout.slice(-2000)}`);
  }
}
