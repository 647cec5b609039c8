/**
 * The Java env of a change's era on a JDK 17 machine: compile levels javac 17 refuses, set
 * through properties, are raised by -D; a literal level in the plugin's configuration cannot
 * be, and makes the era unavailable with why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { javaEraOf } from '../../../envs/humanevo/java_era.ts';
import { defaultRunner, scopedRunner, testInFiles } from '../../../envs/humanevo/builder.ts';

const pom = (inner: string) => `<project><modelVersion>4.0.0</modelVersion>${inner}</project>`;

test('levels JDK 17 accepts: nothing to override', () => {
  assert.deepEqual(javaEraOf({ 'pom.xml': pom('<properties><maven.compiler.release>17</maven.compiler.release></properties>') }).args, []);
  assert.deepEqual(
    javaEraOf({
      'pom.xml': pom(
        '<properties><maven.compiler.source>1.8</maven.compiler.source><maven.compiler.target>1.8</maven.compiler.target></properties>',
      ),
    }).args,
    [],
  );
  assert.deepEqual(
    javaEraOf({
      'pom.xml': pom(
        '<build><plugins><plugin><configuration><source>11</source><target>11</target></configuration></plugin></plugins></build>',
      ),
    }).args,
    [],
  );
});

test('old levels through properties are raised to 1.8 on the command line', () => {
  const jackson = javaEraOf({
    'pom.xml': pom('<properties><javac.src.version>1.6</javac.src.version><javac.target.version>1.6</javac.target.version></properties>'),
  });
  assert.deepEqual(jackson.args, [
    '-Djavac.src.version=1.8',
    '-Djavac.target.version=1.8',
    '-Dmaven.compiler.source=1.8',
    '-Dmaven.compiler.target=1.8',
  ]);
  assert.match(jackson.from, /javac\.src\.version 1\.6, javac\.target\.version 1\.6 raised to 1\.8 for JDK 17/);
  const maven = javaEraOf({
    'pom.xml': pom(
      '<properties><maven.compiler.source>1.5</maven.compiler.source><maven.compiler.target>1.5</maven.compiler.target></properties>',
    ),
  });
  assert.deepEqual(maven.args, ['-Dmaven.compiler.source=1.8', '-Dmaven.compiler.target=1.8']);
  // gson 2017-2019: the plugin reads ${java.version}, set to 1.6 in the pom.
  const gson = javaEraOf({
    'pom.xml': pom(
      '<properties><java.version>1.6</java.version></properties><build><plugins><plugin><configuration>' +
        '<source>${java.version}</source><target>${java.version}</target></configuration></plugin></plugins></build>',
    ),
  });
  assert.deepEqual(gson.args, ['-Djava.version=1.8']);
  assert.equal(gson.unavailable, undefined);
  // gson 2022: <release>${javaVersion}</release> with javaVersion 7: JDK 17 compiles for 7 as it is.
  assert.deepEqual(
    javaEraOf({
      'pom.xml': pom(
        '<properties><javaVersion>7</javaVersion></properties>' +
          '<build><plugins><plugin><configuration><release>${javaVersion}</release></configuration></plugin></plugins></build>',
      ),
    }).args,
    [],
  );
  assert.deepEqual(
    javaEraOf({
      'pom.xml': pom(
        '<properties><javaVersion>6</javaVersion></properties>' +
          '<build><plugins><plugin><configuration><release>${javaVersion}</release></configuration></plugin></plugins></build>',
      ),
    }).args,
    ['-DjavaVersion=8'],
  );
});

test("no level anywhere: the compiler plugin's default (1.5 before 3.8) is raised", () => {
  const era = javaEraOf({ 'pom.xml': pom('<dependencies/>'), 'module/pom.xml': pom('<parent/>') });
  assert.deepEqual(era.args, ['-Dmaven.compiler.source=1.8', '-Dmaven.compiler.target=1.8']);
  assert.match(era.from, /default/);
});

test('a literal old level cannot be overridden: the era is unavailable, with why', () => {
  const era = javaEraOf({
    'pom.xml': pom(
      '<build><plugins><plugin><configuration><source>1.5</source><target>1.5</target></configuration></plugin></plugins></build>',
    ),
  });
  assert.match(
    era.unavailable!,
    /compile for Java 1\.5 \(a literal <source> no -D can override\); this machine's JDK 17 compiles for 7 or later/,
  );
});

test("the runner scoped to a change's test files: pytest gets the files, Maven the module-qualified classes", () => {
  assert.deepEqual(scopedRunner('python', defaultRunner('python', ['tests', '-q']), ['tests/test_a.py', 'tests/data/x.json']), {
    type: 'pytest',
    args: ['--continue-on-collection-errors', '-q', 'tests/test_a.py'],
  });
  assert.deepEqual(
    scopedRunner('java', defaultRunner('java'), [
      'src/test/java/a/BTest.java',
      'core/src/test/java/c/DTest.java',
      'src/test/resources/x.json',
    ]),
    { type: 'maven', tests: ['a.BTest', 'core:c.DTest'], args: [] },
  );
});

test("a test id belongs to a change's test file in the root module and in a submodule (Surefire's module: prefix)", () => {
  assert.ok(testInFiles('java', 'a.BTest#m', ['src/test/java/a/BTest.java']));
  assert.ok(testInFiles('java', 'gson:com.google.gson.JsonWriterTest#nested', ['gson/src/test/java/com/google/gson/JsonWriterTest.java']));
  assert.ok(testInFiles('java', 'gson:com.google.gson.JsonWriterTest$Inner#x', ['gson/src/test/java/com/google/gson/JsonWriterTest.java']));
  assert.ok(
    !testInFiles('java', 'com.google.gson.JsonWriterTest#nested', ['gson/src/test/java/com/google/gson/JsonWriterTest.java']),
    'the root module has no such class',
  );
  assert.ok(
    !testInFiles('java', 'extras:com.google.gson.JsonWriterTest#nested', ['gson/src/test/java/com/google/gson/JsonWriterTest.java']),
  );
});

test("a build plugin of the era that fails on JDK 17 is raised through its parent's version property", () => {
  const commons = (v: string, inner = '') =>
    pom(
      `<parent><groupId>org.apache.commons</groupId><artifactId>commons-parent</artifactId><version>${v}</version></parent>` +
        `${inner}<properties><maven.compiler.source>1.8</maven.compiler.source></properties>`,
    );
  // commons-lang 2019: commons-parent 48 pins maven-bundle-plugin 4.1.0.
  const lang = javaEraOf({ 'pom.xml': commons('48') });
  assert.deepEqual(lang.args, ['-Dcommons.felix.version=5.1.8']);
  assert.match(lang.from, /commons\.felix\.version of commons-parent 48 raised to 5\.1\.8: maven-bundle-plugin before 5 fails on JDK 17/);
  // commons-parent 52 has a bundle plugin that works: nothing to raise.
  assert.deepEqual(javaEraOf({ 'pom.xml': commons('52') }).args, []);
  // The property set in the pom itself decides over the parent's.
  assert.deepEqual(
    javaEraOf({ 'pom.xml': commons('52', '<properties><commons.felix.version>3.5.0</commons.felix.version></properties>') }).args,
    ['-Dcommons.felix.version=5.1.8'],
  );
  assert.deepEqual(
    javaEraOf({ 'pom.xml': commons('48', '<properties><commons.felix.version>5.1.9</commons.felix.version></properties>') }).args,
    [],
  );
  // With an old compile level too: both raises, both reasons.
  const old = javaEraOf({
    'pom.xml': pom(
      '<parent><groupId>org.apache.commons</groupId><artifactId>commons-parent</artifactId><version>42</version></parent>' +
        '<properties><maven.compiler.source>1.6</maven.compiler.source></properties>',
    ),
  });
  assert.deepEqual(old.args, ['-Dmaven.compiler.source=1.8', '-Dcommons.felix.version=5.1.8']);
  assert.match(old.from, /maven\.compiler\.source 1\.6 raised to 1\.8 for JDK 17; commons\.felix\.version of commons-parent 42/);
  // Before 41 commons-parent did not bind the bundle plugin: nothing to raise.
  assert.deepEqual(javaEraOf({ 'pom.xml': commons('39') }).args, []);
  // Another parent: untouched.
  assert.deepEqual(
    javaEraOf({
      'pom.xml': pom(
        '<parent><groupId>com.fasterxml.jackson</groupId><artifactId>jackson-parent</artifactId><version>2.9</version></parent>' +
          '<properties><maven.compiler.source>1.8</maven.compiler.source></properties>',
      ),
    }).args,
    [],
  );
});
