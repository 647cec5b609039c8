import assert from 'node:assert/strict';
import { test } from 'node:test';
import { javaTestRoots, mavenTestDirs, underTestRoots } from '../../src/scoring/java_test_roots.ts';

const pom = (build = '') => `<project><modelVersion>4.0.0</modelVersion><artifactId>x</artifactId>${build}</project>`;

test("Maven: each module's default test roots; a folder named test under main sources is in none", () => {
  const roots = javaTestRoots(
    'maven',
    new Map([
      ['pom.xml', pom()],
      ['core/pom.xml', pom()],
      ['.mvn/jvm.config', '-Xmx1g'],
    ]),
  );
  assert.deepEqual(roots, ['core/src/test/java', 'core/src/test/resources', 'src/test/java', 'src/test/resources']);
  assert.equal(underTestRoots('core/src/test/java/com/acme/FooTest.java', roots), true);
  assert.equal(underTestRoots('core/src/main/java/com/src/test/java/Helper.java', roots), false);
  assert.equal(underTestRoots('app/src/test/java/AppTest.java', roots), false, 'a folder with no pom of the start state is no module');
  assert.equal(underTestRoots('src/test/javax/Other.java', roots), false, 'a root is a whole path component');
});

test('Maven: testSourceDirectory and testResources as the pom declares them (comments and profiles not read, basedir resolved)', () => {
  assert.deepEqual(mavenTestDirs(pom('<build><testSourceDirectory>${project.basedir}/test</testSourceDirectory></build>')), [
    'test',
    'src/test/resources',
  ]);
  assert.deepEqual(
    mavenTestDirs(
      pom(
        '<build><testSourceDirectory>src/it/java/</testSourceDirectory>' +
          '<testResources><testResource><directory>${basedir}/src/it/res</directory></testResource></testResources></build>',
      ),
    ),
    ['src/it/java', 'src/it/res'],
  );
  assert.deepEqual(
    mavenTestDirs(
      pom(
        '<!-- <build><testSourceDirectory>x</testSourceDirectory></build> ' +
          '--><profiles><profile><build><testSourceDirectory>y</testSourceDirectory></build></profile></profiles>',
      ),
    ),
    ['src/test/java', 'src/test/resources'],
  );
  assert.deepEqual(
    mavenTestDirs(pom('<build><testSourceDirectory>${other}/t</testSourceDirectory></build>')),
    ['src/test/java', 'src/test/resources'],
    'a value only Maven can resolve: the default',
  );
  assert.deepEqual(
    javaTestRoots('maven', new Map([['m/pom.xml', pom('<build><testSourceDirectory>test</testSourceDirectory></build>')]])),
    ['m/src/test/resources', 'm/test'],
  );
});

test('Gradle: each project’s src/test', () => {
  const roots = javaTestRoots(
    'gradle',
    new Map([
      ['settings.gradle', ''],
      ['jib-core/build.gradle', ''],
      ['jib-cli/build.gradle.kts', ''],
    ]),
  );
  assert.deepEqual(roots, ['jib-cli/src/test', 'jib-core/src/test', 'src/test']);
  assert.equal(underTestRoots('jib-core/src/test/resources/x.json', roots), true);
  assert.equal(underTestRoots('jib-core/src/integration-test/java/X.java', roots), false);
});
