import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodeUnicodeEscapes,
  declaredPackages,
  jvmSourceLanguage,
  providedServices,
  stripCommentsAndLiterals,
} from '../../src/scoring/java_source.ts';

test('unicode escapes are undone as javac does: \\uXXXX and \\uuuXXXX, not after an escaped backslash', () => {
  assert.equal(decodeUnicodeEscapes('\\u0070ackage'), 'package');
  assert.equal(decodeUnicodeEscapes('\\uuu0070ackage'), 'package');
  assert.equal(decodeUnicodeEscapes('"\\\\u0070"'), '"\\\\u0070"');
  assert.equal(decodeUnicodeEscapes('\\\\\\u0070'), '\\\\p');
});

test('comments and literals are dropped, nested block comments of Kotlin and Scala too', () => {
  assert.equal(stripCommentsAndLiterals('a /* b */ c // d\ne').replace(/\s+/g, ' '), 'a c e');
  assert.equal(stripCommentsAndLiterals('x /* a /* b */ c */ y').replace(/\s+/g, ' '), 'x y');
  assert.equal(stripCommentsAndLiterals('s = "package org.junit;"; t = \'"\';').includes('package'), false);
  assert.equal(stripCommentsAndLiterals('"""\npackage org.junit;\n"""').includes('package'), false);
});

test("a Java file's package is its declaration, however it is written", () => {
  assert.deepEqual(declaredPackages('package com.acme.core;\n\nclass A {}'), ['com.acme.core']);
  assert.deepEqual(declaredPackages('/* licence */\n// x\npackage org . junit /* y */ . jupiter.api ;'), ['org.junit.jupiter.api']);
  assert.deepEqual(declaredPackages('/* helpers */ \\u0070ackage org /* x */ . junit;\npublic class Assert {}'), ['org.junit']);
  assert.deepEqual(
    declaredPackages('\\u002f\\u002a */ package junit.framework;'),
    ['junit.framework'],
    'an escaped comment opener is a comment',
  );
  assert.deepEqual(
    declaredPackages('@Deprecated\n@SuppressWarnings("x")\npackage org.junit;'),
    ['org.junit'],
    'package-info.java annotations',
  );
  assert.deepEqual(declaredPackages('import java.util.List;\nclass A { String p = "package org.junit;"; }'), [], 'the unnamed package');
  assert.deepEqual(declaredPackages('\uFEFFpackage org.junit;'), ['org.junit'], 'a byte order mark');
  assert.deepEqual(declaredPackages('class A {}\npackage org.junit;'), [], 'not a declaration after a type');
});

test('Kotlin and Groovy file headers; Scala package clauses, chained and in blocks', () => {
  assert.deepEqual(declaredPackages('@file:JvmName("X")\npackage org.junit\n\nfun f() = 1', 'kotlin'), ['org.junit']);
  assert.deepEqual(declaredPackages('package junit.framework\nclass A {}', 'groovy'), ['junit.framework']);
  assert.deepEqual(declaredPackages('package org\npackage junit\n\nclass Assert', 'scala').sort(), ['junit', 'org', 'org.junit']);
  assert.ok(declaredPackages('package com.acme\n\npackage object util {}\npackage x { class A }', 'scala').includes('x'));
});

test('a module declaration provides services', () => {
  assert.deepEqual(
    providedServices('module m {\n  provides javax.annotation.processing.Processor with a.P;\n  provides com.acme.Spi with a.S, a.T;\n}'),
    ['javax.annotation.processing.Processor', 'com.acme.Spi'],
  );
  assert.deepEqual(providedServices('module m { // provides x.Y with z.W;\n}'), []);
});

test('JVM source languages by extension', () => {
  assert.equal(jvmSourceLanguage('a/B.java'), 'java');
  assert.equal(jvmSourceLanguage('a/B.kt'), 'kotlin');
  assert.equal(jvmSourceLanguage('build.gradle.kts'), undefined);
  assert.equal(jvmSourceLanguage('a.b/README'), undefined);
});
