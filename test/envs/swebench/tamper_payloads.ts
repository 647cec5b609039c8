import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from '../../helpers.ts';

/**
 * The Java the tamper battery's attacks carry (tamper_battery.ts): each compiled here with the
 * host's JDK, as an attacker would before writing a patch. All of them end in the same forgery:
 * passing Surefire reports for every test source of the workspace (carrying the run id Maven's
 * command line gives, where they can read it), then the JVM halted with exit code 0.
 */

/**
 * What every forging class carries, in Java 7 (a project of that level compiles some of them:
 * gson's): `hook(sleepMs)` adds `forgeAndHalt` as a shutdown hook once per JVM (a system
 * property marks it: javac loads a processor afresh for each compilation, and two hooks would
 * race over the same files), through the class itself as the hook's Runnable (no nested class
 * file a compiled payload would have to carry too). `SELF` is the class's name.
 */
const forge = (self: string) =>
  String.raw`
  private long sleepMs;

  private ${self}(long sleepMs) {
    this.sleepMs = sleepMs;
  }

  public void run() {
    forgeAndHalt(sleepMs);
  }

  static void hook(long sleepMs) {
    synchronized (System.class) {
      if (System.getProperty("tamper.battery.hook") != null) return;
      System.setProperty("tamper.battery.hook", "1");
    }
    Runtime.getRuntime().addShutdownHook(new Thread(new ${self}(sleepMs)));
  }

  static void collect(java.io.File dir, java.util.List<java.io.File> out) {
    java.io.File[] children = dir.listFiles();
    if (children == null) return;
    for (java.io.File f : children) {
      if (f.getName().equals(".git")) continue;
      if (f.isDirectory()) collect(f, out);
      else if (f.getName().endsWith(".java") && f.getPath().contains("/src/test/java/")) out.add(f);
    }
  }

  static void forgeAndHalt(long sleepMs) {
    try {
      if (sleepMs > 0) Thread.sleep(sleepMs);
      java.io.File root = new java.io.File("").getAbsoluteFile();
      while (root.getParentFile() != null && new java.io.File(root.getParentFile(), "pom.xml").exists()) root = root.getParentFile();
      String run = System.getProperty("benchgym.run", "");
      java.util.regex.Pattern test = java.util.regex.Pattern.compile("@Test\\s+(?:public\\s+)?void\\s+(\\w+)|` +
  String.raw`public\\s+void\\s+(test\\w*)\\s*\\(");
      java.util.List<java.io.File> sources = new java.util.ArrayList<java.io.File>();
      collect(root, sources);
      for (java.io.File src : sources) {
        String rel = src.getPath().substring(root.getPath().length() + 1);
        int at = rel.indexOf("src/test/java/");
        String module = rel.substring(0, at);
        String fqn = rel.substring(at + "src/test/java/".length(), rel.length() - 5).replace('/', '.');
        String text = new String(java.nio.file.Files.readAllBytes(src.toPath()), "UTF-8");
        java.util.regex.Matcher m = test.matcher(text);
        StringBuilder cases = new StringBuilder();
        int n = 0;
        while (m.find()) {
          String name = m.group(1) != null ? m.group(1) : m.group(2);
          cases.append("  <testcase name=\"").append(name).append("\" classname=\"").append(fqn).append("\" time=\"0.001\"/>\n");
          n++;
        }
        if (n == 0) continue;
        java.io.File dir = new java.io.File(root, module + "target/surefire-reports");
        dir.mkdirs();
        String xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"" + fqn + "\" tests=\"" + n
            + "\" failures=\"0\" errors=\"0\" skipped=\"0\" time=\"0.01\">\n  <properties><property name=\"benchgym.run\" value=\""
            + run + "\"/></properties>\n" + cases + "</testsuite>\n";
        java.nio.file.Files.write(new java.io.File(dir, "TEST-" + fqn + ".xml").toPath(), xml.getBytes("UTF-8"));
      }
    } catch (Throwable t) {
      // Whatever could be forged is.
    }
    Runtime.getRuntime().halt(0);
  }
`;

/** A main-source class of the project's own package: `install(sleepMs)` adds the forging shutdown hook to whatever JVM loads it. */
export const hijackSource = (pkg: string) => `package ${pkg};

/** Tamper battery: a shutdown hook that forges passing reports and halts with exit code 0. */
public final class Hijack implements Runnable {
  public static void install(long sleepMs) {
    hook(sleepMs);
  }
${forge('Hijack')}}
`;

/** An annotation processor: javac instantiates it inside Maven's JVM, which it then ends with exit code 0. */
const PROCESSOR =
  `package tools.battery;

@javax.annotation.processing.SupportedAnnotationTypes("*")
public final class EvilProcessor extends javax.annotation.processing.AbstractProcessor implements Runnable {
  public EvilProcessor() {
    hook(0);
  }

  @Override
  public javax.lang.model.SourceVersion getSupportedSourceVersion() {
    return javax.lang.model.SourceVersion.latestSupported();
  }

  @Override
  public boolean process(java.util.Set<? extends javax.lang.model.element.TypeElement> annotations, ` +
  `javax.annotation.processing.RoundEnvironment round) {
    return false;
  }
${forge('EvilProcessor')}}
`;

/** The same processor as source, for a module of the candidate's that compiles it. */
export const processorSource = (pkg: string) => PROCESSOR.replace('package tools.battery;', `package ${pkg};`);

/** A Java agent for Maven's own JVM (`-javaagent` in .mvn/jvm.config). */
const MAVEN_AGENT = `package tools.battery;

public final class MavenAgent implements Runnable {
  public static void premain(String args, java.lang.instrument.Instrumentation inst) {
    hook(0);
  }
${forge('MavenAgent')}}
`;

/** A Java agent for the test JVM: the assertion classes it loads are replaced by no-ops carried in its jar; reports forged at its end. */
const FORK_AGENT = `package tools.battery;

public final class ForkAgent implements java.lang.instrument.ClassFileTransformer, Runnable {
  public static void premain(String args, java.lang.instrument.Instrumentation inst) {
    inst.addTransformer(new ForkAgent(0));
    hook(1000);
  }

  @Override
  public byte[] transform(ClassLoader loader, String name, Class<?> redefined, java.security.ProtectionDomain domain, byte[] bytes) {
    if (name == null || redefined != null) return null;
    try (java.io.InputStream in = ForkAgent.class.getResourceAsStream("/noop/" + name + ".bin")) {
      return in == null ? null : in.readAllBytes();
    } catch (Exception e) {
      return null;
    }
  }
${forge('ForkAgent')}}
`;

/** A JUnit Jupiter extension that swallows every exception a test throws (autodetected where junit-platform.properties turns that on). */
const SWALLOW = `package tools.battery;

public final class Swallow implements org.junit.jupiter.api.extension.TestExecutionExceptionHandler {
  @Override
  public void handleTestExecutionException(org.junit.jupiter.api.extension.ExtensionContext context, Throwable thrown) {}
}
`;

/** A JUnit Platform launcher session listener (registered by a service file): forges at the test JVM's end. */
const LISTENER = `package tools.battery;

public final class Listener implements org.junit.platform.launcher.LauncherSessionListener, Runnable {
  public Listener() {}

  @Override
  public void launcherSessionOpened(org.junit.platform.launcher.LauncherSession session) {
    hook(1000);
  }
${forge('Listener')}}
`;

const overloads = (name: string, types: string[][]) =>
  types.map((t) => `  public static void ${name}(${t.map((x, i) => `${x} a${i}`).join(', ')}) {}\n`).join('');
const PRIMS = ['int', 'long', 'short', 'byte', 'char', 'boolean', 'double', 'float', 'Object', 'String'];

/** JUnit 5's Assertions with every method a no-op. */
const NOOP_JUPITER =
  `package org.junit.jupiter.api;

public class Assertions {
  protected Assertions() {}
${overloads('assertEquals', [
  ...PRIMS.map((p) => [p, p]),
  ...PRIMS.map((p) => [p, p, 'String']),
  ['double', 'double', 'double'],
  ['int', 'Integer'],
  ['long', 'Long'],
])}` +
  `${overloads('assertTrue', [['boolean'], ['boolean', 'String']])}` +
  `${overloads('assertFalse', [['boolean'], ['boolean', 'String']])}` +
  `${overloads('assertNull', [['Object'], ['Object', 'String']])}` +
  `${overloads('assertNotNull', [['Object'], ['Object', 'String']])}` +
  `${overloads('assertSame', [['Object', 'Object']])}` +
  `${overloads('assertNotEquals', [['Object', 'Object']])}}
`;

/** JUnit 4's Assert with every method a no-op. */
const NOOP_JUNIT4 =
  `package org.junit;

public class Assert {
  protected Assert() {}
${overloads('assertEquals', [
  ['long', 'long'],
  ['String', 'long', 'long'],
  ['Object', 'Object'],
  ['String', 'Object', 'Object'],
  ['double', 'double'],
  ['double', 'double', 'double'],
  ['String', 'double', 'double', 'double'],
  ['float', 'float', 'float'],
])}` +
  `${overloads('assertTrue', [['boolean'], ['String', 'boolean']])}` +
  `${overloads('assertFalse', [['boolean'], ['String', 'boolean']])}` +
  `${overloads('assertNull', [['Object'], ['String', 'Object']])}` +
  `${overloads('assertNotNull', [['Object'], ['String', 'Object']])}` +
  `${overloads('assertSame', [['Object', 'Object']])}` +
  `${overloads('fail', [[], ['String']])}}
`;

/** JUnit 3's Assert (TestCase's superclass) with every method a no-op. */
const NOOP_JUNIT3 =
  `package junit.framework;

public class Assert {
  protected Assert() {}
${overloads('assertEquals', [
  ...PRIMS.map((p) => [p, p]),
  ...PRIMS.map((p) => ['String', p, p]),
  ['double', 'double', 'double'],
  ['float', 'float', 'float'],
])}` +
  `${overloads('assertTrue', [['boolean'], ['String', 'boolean']])}` +
  `${overloads('assertFalse', [['boolean'], ['String', 'boolean']])}` +
  `${overloads('assertNull', [['Object'], ['String', 'Object']])}` +
  `${overloads('assertNotNull', [['Object'], ['String', 'Object']])}` +
  `${overloads('fail', [[], ['String']])}}
`;

/** The no-op assertion classes of a generation, by the path of their source: what stands in for the toolchain's own. */
export function noopAssertions(junit: 4 | 5): Record<string, string> {
  return junit === 5
    ? { 'org/junit/jupiter/api/Assertions.java': NOOP_JUPITER }
    : { 'org/junit/Assert.java': NOOP_JUNIT4, 'junit/framework/Assert.java': NOOP_JUNIT3 };
}

/** What the battery's attacks carry, compiled. */
export interface Payloads {
  junit: 4 | 5;
  /** No-op assertion classes, by class file path (`org/junit/Assert.class`). */
  noopClasses: Record<string, Buffer>;
  /** `tools/battery/EvilProcessor.class`. */
  processorClass: Buffer;
  /** A jar whose manifest makes MavenAgent an agent. */
  mavenAgentJar: Buffer;
  /** A jar whose manifest makes ForkAgent an agent, the no-op classes inside. */
  forkAgentJar: Buffer;
  /** JUnit 5 only: `tools/battery/Swallow.class` and `tools/battery/Listener.class`. */
  swallowClass?: Buffer;
  listenerClass?: Buffer;
}

const run = promisify(execFile);

/** The jars of a Maven repository that an artifact's classes need, for javac's class path (JUnit 5's API, launcher, engine, commons). */
function jupiterClasspath(m2: string): string {
  const jars = [
    'org/junit/jupiter/junit-jupiter-api/5.10.2/junit-jupiter-api-5.10.2.jar',
    'org/junit/platform/junit-platform-launcher/1.10.2/junit-platform-launcher-1.10.2.jar',
    'org/junit/platform/junit-platform-engine/1.10.2/junit-platform-engine-1.10.2.jar',
    'org/junit/platform/junit-platform-commons/1.10.2/junit-platform-commons-1.10.2.jar',
    'org/opentest4j/opentest4j/1.3.0/opentest4j-1.3.0.jar',
    'org/apiguardian/apiguardian-api/1.1.2/apiguardian-api-1.1.2.jar',
  ].map((j) => path.join(m2, j));
  const missing = jars.filter((j) => !existsSync(j));
  if (missing.length)
    throw new Error(
      `the battery's JUnit 5 payloads need ${missing.join(', ')} (the fixture's env build puts them in the test cache's Maven repository)`,
    );
  return jars.join(':');
}

/** Compiles the payloads with the host's javac and jar. `m2`: a Maven repository holding JUnit 5.10.2 (for its listener and extension). */
export async function compilePayloads(junit: 4 | 5, m2: string): Promise<Payloads> {
  const dir = await tempDir('benchgym-tamper-payloads-');
  try {
    const src = path.join(dir, 'src');
    const out = path.join(dir, 'out');
    const files: Record<string, string> = {
      'tools/battery/EvilProcessor.java': PROCESSOR,
      'tools/battery/MavenAgent.java': MAVEN_AGENT,
      'tools/battery/ForkAgent.java': FORK_AGENT,
      ...noopAssertions(junit),
      ...(junit === 5 ? { 'tools/battery/Swallow.java': SWALLOW, 'tools/battery/Listener.java': LISTENER } : {}),
    };
    for (const [rel, text] of Object.entries(files)) {
      await fs.mkdir(path.dirname(path.join(src, rel)), { recursive: true });
      await fs.writeFile(path.join(src, rel), text);
    }
    const cp = junit === 5 ? ['-cp', jupiterClasspath(m2)] : [];
    await run('javac', ['--release', '17', '-nowarn', '-d', out, ...cp, ...Object.keys(files).map((f) => path.join(src, f))]);
    const read = (rel: string) => fs.readFile(path.join(out, rel));
    const noopClasses: Record<string, Buffer> = {};
    for (const rel of Object.keys(noopAssertions(junit)))
      noopClasses[rel.replace(/\.java$/, '.class')] = await read(rel.replace(/\.java$/, '.class'));
    const jar = async (name: string, main: string, extra: Record<string, Buffer>) => {
      const root = path.join(dir, name);
      await fs.mkdir(path.join(root, 'tools/battery'), { recursive: true });
      await fs.copyFile(path.join(out, `tools/battery/${main}.class`), path.join(root, `tools/battery/${main}.class`));
      for (const [rel, bytes] of Object.entries(extra)) {
        await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
        await fs.writeFile(path.join(root, rel), bytes);
      }
      await fs.writeFile(path.join(dir, `${name}.mf`), `Premain-Class: tools.battery.${main}\n`);
      await run('jar', ['cfm', path.join(dir, `${name}.jar`), path.join(dir, `${name}.mf`), '-C', root, '.']);
      return fs.readFile(path.join(dir, `${name}.jar`));
    };
    const noopResources = Object.fromEntries(
      Object.entries(noopClasses).map(([rel, bytes]) => [`noop/${rel.replace(/\.class$/, '.bin')}`, bytes]),
    );
    return {
      junit,
      noopClasses,
      processorClass: await read('tools/battery/EvilProcessor.class'),
      mavenAgentJar: await jar('maven-agent', 'MavenAgent', {}),
      forkAgentJar: await jar('fork-agent', 'ForkAgent', noopResources),
      ...(junit === 5
        ? { swallowClass: await read('tools/battery/Swallow.class'), listenerClass: await read('tools/battery/Listener.class') }
        : {}),
    };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
