import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildConfigRoot,
  buildConfigSections,
  buildOutputRoot,
  refusalByContent,
  refusalByName,
  toolchainRoot,
} from '../../src/scoring/java_build.ts';

const none = { owned: new Set<string>() };

test('build configuration at any depth, a configuring folder as a whole; never under a src folder', () => {
  assert.equal(buildConfigRoot('pom.xml'), 'pom.xml');
  assert.equal(buildConfigRoot('core/pom.xml'), 'core/pom.xml');
  assert.equal(buildConfigRoot('.mvn/jvm.config'), '.mvn');
  assert.equal(buildConfigRoot('.mvn'), '.mvn');
  assert.equal(buildConfigRoot('sub/.mvn/wrapper/maven-wrapper.jar'), 'sub/.mvn');
  assert.equal(buildConfigRoot('gradle/wrapper/gradle-wrapper.properties'), 'gradle');
  assert.equal(buildConfigRoot('app/build.gradle.kts'), 'app/build.gradle.kts');
  assert.equal(buildConfigRoot('buildSrc/src/main/kotlin/A.kt'), 'buildSrc');
  assert.equal(buildConfigRoot('gson/bnd.bnd'), 'gson/bnd.bnd');
  assert.equal(buildConfigRoot('mvnw'), 'mvnw');
  assert.equal(buildConfigRoot('core/src/test/resources/projects/a/pom.xml'), undefined);
  assert.equal(buildConfigRoot('jib-gradle-plugin/src/main/java/com/x/gradle/A.java'), undefined);
  assert.equal(buildConfigRoot('core/src/main/java/A.java'), undefined);
  assert.equal(buildConfigRoot('README.md'), undefined);
});

test('build output folders by build tool', () => {
  assert.equal(buildOutputRoot('core/target/classes/A.class', 'maven'), 'core/target');
  assert.equal(buildOutputRoot('target', 'maven'), undefined, 'a file named target is not a folder of output');
  assert.equal(buildOutputRoot('core/src/main/java/target/A.java', 'maven'), undefined);
  assert.equal(buildOutputRoot('app/build/classes/x', 'gradle'), 'app/build');
  assert.equal(buildOutputRoot('app/build/classes/x', 'maven'), undefined);
});

test('toolchain packages by prefix, the longest that holds', () => {
  assert.equal(toolchainRoot('org.junit.jupiter.api'), 'org.junit');
  assert.equal(toolchainRoot('junit.framework'), 'junit');
  assert.equal(toolchainRoot('com.google.common.truth'), 'com.google.common.truth');
  assert.equal(toolchainRoot('com.google.common.collect'), undefined);
  assert.equal(toolchainRoot('org.junitx'), undefined);
  assert.equal(toolchainRoot('org.apache.maven.surefire.booter'), 'org.apache.maven');
});

test("refused by name: compiled code, processor and toolchain services, the toolchain's class-path configuration", () => {
  assert.match(refusalByName('core/src/main/resources/org/junit/Assert.class', none)!, /compiled code/);
  assert.match(refusalByName('tools/agent.jar', none)!, /compiled code/);
  assert.match(
    refusalByName('core/src/main/resources/META-INF/services/javax.annotation.processing.Processor', none)!,
    /service registration of javax\.annotation\.processing\.Processor/,
  );
  assert.match(refusalByName('x/META-INF/services/org.junit.platform.launcher.LauncherSessionListener', none)!, /service registration/);
  assert.equal(refusalByName('x/META-INF/services/com.fasterxml.jackson.databind.Module', none), undefined, "a project's own service");
  assert.match(refusalByName('core/src/main/resources/junit-platform.properties', none)!, /configuration the test toolchain reads/);
  assert.match(refusalByName('src/main/resources/mockito-extensions/org.mockito.plugins.MockMaker', none)!, /configuration/);
  assert.equal(
    refusalByName('src/main/resources/mockito-extensions/org.mockito.plugins.MockMaker', { owned: new Set(['org.mockito']) }),
    undefined,
    "Mockito's own",
  );
  assert.equal(refusalByName('core/src/main/java/A.java', none), 'read');
  assert.equal(refusalByName('META-INF/MANIFEST.MF', none), 'read');
  assert.equal(refusalByName('core/src/main/java/A.java', none, true), undefined, 'a link is not read');
  assert.match(refusalByName('core/src/main/java/Evil.class', none, true)!, /compiled/, 'a link named as compiled code');
});

test('refused by content: toolchain packages (unless owned), module declarations providing refused services, agent manifests', () => {
  assert.match(
    refusalByContent('core/src/main/java/com/acme/Assert.java', '\\u0070ackage org.junit;\npublic class Assert {}', none)!,
    /declares package org\.junit, of the test toolchain/,
  );
  assert.equal(
    refusalByContent('src/main/java/org/mockito/A.java', 'package org.mockito.internal;', { owned: new Set(['org.mockito']) }),
    undefined,
  );
  assert.match(
    refusalByContent('src/main/java/org/junit/A.java', 'package org.junit;', { owned: new Set(['org.mockito']) })!,
    /org\.junit/,
  );
  assert.equal(refusalByContent('src/main/java/com/acme/A.java', 'package com.acme;', none), undefined);
  assert.match(
    refusalByContent('src/main/java/module-info.java', 'module m { provides javax.annotation.processing.Processor with a.P; }', none)!,
    /module declaration providing javax\.annotation\.processing\.Processor/,
  );
  assert.equal(refusalByContent('src/main/java/module-info.java', 'module m { provides com.acme.Spi with a.P; }', none), undefined);
  assert.match(
    refusalByContent('src/main/resources/META-INF/MANIFEST.MF', 'Manifest-Version: 1.0\r\nPremain-Class: a.B\r\n', none)!,
    /Premain-Class/,
  );
  assert.equal(refusalByContent('src/main/resources/META-INF/MANIFEST.MF', 'Manifest-Version: 1.0\nMain-Class: a.B\n', none), undefined);
  assert.match(refusalByContent('src/A.scala', 'package org\npackage junit\nclass Assert', none)!, /declares package (org\.)?junit,/);
});

test("a task's declared build changes: the build-file sections of a patch", () => {
  const patch = [
    'diff --git a/pom.xml b/pom.xml\n--- a/pom.xml\n+++ b/pom.xml\n@@ -1 +1 @@\n-<v>1</v>\n+<v>2</v>\n',
    'diff --git a/core/src/main/java/A.java b/core/src/main/java/A.java\n--- ' +
      'a/core/src/main/java/A.java\n+++ b/core/src/main/java/A.java\n@@ -1 +1 @@\n-a\n+b\n',
    'diff --git a/guava/pom.xml b/guava/pom.xml\n--- a/guava/pom.xml\n+++ b/guava/pom.xml\n@@ -1 +1 @@\n-x\n+y\n',
  ].join('');
  assert.equal(buildConfigSections(patch), [patch.split(/^(?=diff --git )/m)[0], patch.split(/^(?=diff --git )/m)[2]].join(''));
  assert.equal(buildConfigSections('diff --git a/A.java b/A.java\n'), '');
});
