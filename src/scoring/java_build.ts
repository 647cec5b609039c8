import { matchesAny } from '../sandbox/glob.ts';
import { declaredPackages, jvmSourceLanguage, providedServices } from './java_source.ts';

/**
 * What a Java build reads as configuration, what it writes, and what of a candidate's diff
 * would reach the test toolchain rather than the code under test: data the build guard
 * (java_guard.ts) acts on, for Maven and Gradle alike.
 */

/**
 * Files and folders that configure a build, matched against each path component: a folder
 * (`.mvn`, `gradle`, `buildSrc`) makes its whole tree configuration. Never under a `src`
 * folder: what is there is the code and its resources (a pom of a test project), and a build
 * reads it as configuration only where its own (restored) configuration says so.
 */
export const BUILD_CONFIG: readonly string[] = [
  // Maven: every pom, the project's .mvn (jvm.config, maven.config, extensions.xml, the
  // wrapper), the wrapper scripts, settings and toolchains a maven.config may name, and
  // bnd-maven-plugin's instructions (their macros run commands in Maven's JVM).
  'pom.xml',
  '*.pom',
  '.mvn',
  'mvnw',
  'mvnw.cmd',
  'settings.xml',
  'settings-security.xml',
  'toolchains.xml',
  'bnd.bnd',
  '*.bnd',
  // Gradle: scripts and settings, properties (org.gradle.jvmargs), the wrapper and version
  // catalogs (gradle/), build logic (buildSrc), the project cache (.gradle).
  '*.gradle',
  '*.gradle.kts',
  'gradle.properties',
  'gradlew',
  'gradlew.bat',
  'gradle',
  'buildSrc',
  '.gradle',
];

/** The folders each build tool writes its output to: nothing a patch puts there is kept. */
export const BUILD_OUTPUTS: Readonly<Record<'maven' | 'gradle', readonly string[]>> = {
  maven: ['target'],
  gradle: ['build'],
};

/** Where a path's build configuration begins (the file, or the configuring folder above it); undefined when it is none. */
export function buildConfigRoot(rel: string): string | undefined {
  return rootMatching(rel, BUILD_CONFIG);
}

/** Where a path's build output folder begins, for the task's build tool; undefined when it is in none. */
export function buildOutputRoot(rel: string, tool: 'maven' | 'gradle'): string | undefined {
  return rootMatching(rel, BUILD_OUTPUTS[tool], true);
}

function rootMatching(rel: string, names: readonly string[], foldersOnly = false): string | undefined {
  const parts = rel.split('/');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === 'src') return undefined;
    if (foldersOnly && i === parts.length - 1) return undefined;
    if (matchesAny(part, names as string[])) return parts.slice(0, i + 1).join('/');
  }
  return undefined;
}

/**
 * The packages of the test toolchain: test frameworks and their engines, assertion and
 * mocking libraries, and the runners that host them (Surefire's booter and providers run
 * in the test JVM, Gradle's test worker too). A class of the candidate's in one of them would
 * stand in for the toolchain's own (a project's classes come first on its test classpath).
 * A project whose own code is in one of them (Mockito's `org.mockito`) owns it: its classes
 * there are the code under test.
 */
export const TEST_TOOLCHAIN_PACKAGES: readonly string[] = [
  'junit',
  'org.junit',
  'org.opentest4j',
  'org.apiguardian',
  'org.hamcrest',
  'org.assertj',
  'com.google.common.truth',
  'org.testng',
  'org.mockito',
  'net.bytebuddy',
  'org.objenesis',
  'org.easymock',
  'org.powermock',
  'org.jmock',
  'org.spockframework',
  'spock',
  'kotlin.test',
  'io.kotest',
  'org.skyscreamer.jsonassert',
  'org.xmlunit',
  'org.awaitility',
  'org.apache.maven',
  'org.gradle',
];

/** The toolchain package (of TEST_TOOLCHAIN_PACKAGES) a package or class name is in, if any. */
export function toolchainRoot(name: string): string | undefined {
  let best: string | undefined;
  for (const p of TEST_TOOLCHAIN_PACKAGES) if ((name === p || name.startsWith(`${p}.`)) && (!best || p.length > best.length)) best = p;
  return best;
}

/**
 * Services a build or a test run loads from whatever registers them on its class path: an
 * annotation processor or a javac plugin runs inside the compiler, and the toolchain's own
 * services (JUnit Platform launcher listeners, engines, extensions, Surefire providers,
 * TestNG listeners, Spock extensions) decide how tests run and what they report. Besides
 * these, every service of a toolchain package.
 */
export const REFUSED_SERVICES: readonly string[] = ['javax.annotation.processing.Processor', 'com.sun.source.util.Plugin'];

/** Files the toolchain reads from the test class path as its configuration (JUnit Platform's, Spock's, Mockito's plugins). */
export const TOOLCHAIN_CONFIG: readonly string[] = [
  'junit-platform.properties',
  'SpockConfig.groovy',
  '**/mockito-extensions/org.mockito.plugins.*',
  'mockito-extensions/org.mockito.plugins.*',
];

/** Compiled code and archives: what runs would not be what the diff shows. */
export const COMPILED: readonly string[] = [
  ...['*.class', '*.jar', '*.war', '*.ear', '*.jmod', '*.aar'],
  ...['*.so', '*.dylib', '*.dll', '*.jnilib', '*.kotlin_module'],
];

/** Manifest attributes that make an archive a Java agent (or put archives on the boot class path). */
const AGENT_ATTRIBUTE =
  /^(Premain-Class|Agent-Class|Launcher-Agent-Class|Boot-Class-Path|Can-Redefine-Classes|Can-Retransform-Classes)\s*:/im;

/** Why a file of the candidate's would not reach the code under test, or undefined (it does); `read` gets its text when that decides. */
export type Refusal = { path: string; why: string };

export interface RefusalContext {
  /** Toolchain packages the start state's own (non-test) sources are in. */
  owned: ReadonlySet<string>;
}

/** The name of a service a `META-INF/services/<name>` path registers, if it is one. */
export function serviceName(rel: string): string | undefined {
  const m = /(?:^|\/)META-INF\/services\/([^/]+)$/.exec(rel);
  return m?.[1];
}

/** Whether a service registration would reach the compiler or the test toolchain (a project's own services do not). */
export function refusedService(name: string, ctx: RefusalContext): boolean {
  if (REFUSED_SERVICES.includes(name)) return true;
  const root = toolchainRoot(name);
  return root !== undefined && !ctx.owned.has(root);
}

/**
 * What decides about a path of the candidate's without reading it: a refusal, `read` (its
 * text decides: a JVM source, a module declaration, a manifest), or undefined (the code under
 * test, kept). `link`: the path is a symbolic link (its name still says what a build makes of it).
 */
export function refusalByName(rel: string, ctx: RefusalContext, link = false): string | 'read' | undefined {
  if (matchesAny(rel, COMPILED as string[])) return 'compiled code or an archive: what runs would not be what the diff shows';
  const service = serviceName(rel);
  if (service !== undefined && refusedService(service, ctx)) {
    return `a service registration of ${service}, which the compiler or the test toolchain loads`;
  }
  const ownMockito = rel.includes('mockito-extensions/') && ctx.owned.has('org.mockito');
  if (matchesAny(rel, TOOLCHAIN_CONFIG as string[]) && !ownMockito) return 'configuration the test toolchain reads from the class path';
  if (link) return undefined;
  if (jvmSourceLanguage(rel) || /(^|\/)META-INF\/MANIFEST\.MF$/i.test(rel)) return 'read';
  return undefined;
}

/** The refusal of a file whose text decides (refusalByName said `read`), or undefined. */
export function refusalByContent(rel: string, text: string, ctx: RefusalContext): string | undefined {
  if (/(^|\/)META-INF\/MANIFEST\.MF$/i.test(rel)) {
    const m = AGENT_ATTRIBUTE.exec(text.replace(/\r\n?/g, '\n'));
    return m ? `a manifest declaring a Java agent (${m[1]})` : undefined;
  }
  const language = jvmSourceLanguage(rel);
  if (!language) return undefined;
  if (language === 'java' && /(^|\/)module-info\.java$/.test(rel)) {
    const provided = providedServices(text).filter((s) => refusedService(s, ctx));
    if (!provided.length) return undefined;
    return `a module declaration providing ${provided.join(', ')}, which the compiler or the test toolchain loads`;
  }
  for (const pkg of declaredPackages(text, language)) {
    const root = toolchainRoot(pkg);
    if (root && !ctx.owned.has(root)) {
      return `declares package ${pkg}, of the test toolchain (${root}): its classes would stand in for the toolchain's own`;
    }
  }
  return undefined;
}

/**
 * The sections of a diff that change build configuration (BUILD_CONFIG): a task's own build
 * changes (SWE-bench: the gold patch's), laid down after the start state's configuration is
 * restored. Empty when it has none.
 */
export function buildConfigSections(patch: string): string {
  return patch
    .split(/^(?=diff --git )/m)
    .filter((s) => {
      const head = /^diff --git (?:"?a\/)(.+?)"? (?:"?b\/)(.+?)"?$/m.exec(s.split('\n', 1)[0]!);
      if (!s.startsWith('diff --git ') || head === null) return false;
      return buildConfigRoot(head[1]!) !== undefined || buildConfigRoot(head[2]!) !== undefined;
    })
    .join('');
}
