import assert from 'node:assert/strict';
import { test } from 'node:test';
import { javaTestExists, mavenTestSelection, parseJavaTestId, qualifyJavaTests } from '../../src/tasks/java_tests.ts';

const SOURCES = [
  'src/test/java/org/acme/RootTest.java',
  'dubbo-common/src/test/java/org/apache/dubbo/common/URLTest.java',
  'dubbo-common/src/test/java/org/apache/dubbo/common/utils/PojoUtilsTest.java',
  'dubbo-rpc/dubbo-rpc-api/src/test/java/org/apache/dubbo/rpc/RpcContextTest.java',
  // The same class in two modules: which one the record means cannot be told.
  'a/src/test/java/org/acme/TwiceTest.java',
  'b/src/test/java/org/acme/TwiceTest.java',
];

test('parseJavaTestId: class, method, module, root module', () => {
  assert.deepEqual(parseJavaTestId('gson:com.g.FooTest#a'), { module: 'gson', pattern: 'com.g.FooTest#a' });
  assert.deepEqual(parseJavaTestId('com.g.FooTest'), { pattern: 'com.g.FooTest' });
  assert.deepEqual(parseJavaTestId('.:com.g.FooTest'), { pattern: 'com.g.FooTest' });
  assert.deepEqual(parseJavaTestId('dubbo-rpc/dubbo-rpc-api/:a.B'), { module: 'dubbo-rpc/dubbo-rpc-api', pattern: 'a.B' });
});

test('qualifyJavaTests: a class alone gets the one module declaring it; root, unknown and twice-declared classes stay as they are', () => {
  assert.deepEqual(
    qualifyJavaTests(
      [
        'org.apache.dubbo.common.URLTest',
        'org.apache.dubbo.common.utils.PojoUtilsTest#testMap',
        'org.apache.dubbo.rpc.RpcContextTest$Inner#x',
        'org.acme.RootTest',
        'org.acme.NoSuchTest',
        'org.acme.TwiceTest',
        'core:org.acme.Kept',
      ],
      SOURCES.map((f) => `./${f}`),
    ),
    [
      'dubbo-common:org.apache.dubbo.common.URLTest',
      'dubbo-common:org.apache.dubbo.common.utils.PojoUtilsTest#testMap',
      'dubbo-rpc/dubbo-rpc-api:org.apache.dubbo.rpc.RpcContextTest$Inner#x',
      'org.acme.RootTest',
      'org.acme.NoSuchTest',
      'org.acme.TwiceTest',
      'core:org.acme.Kept',
    ],
  );
  // Every test in a module: those modules and their upstream; one left without: the whole reactor.
  assert.deepEqual(
    mavenTestSelection(qualifyJavaTests(['org.apache.dubbo.common.URLTest', 'org.apache.dubbo.rpc.RpcContextTest'], SOURCES)).slice(0, 3),
    ['-pl', 'dubbo-common,dubbo-rpc/dubbo-rpc-api', '-am'],
  );
  assert.equal(
    mavenTestSelection(qualifyJavaTests(['org.apache.dubbo.common.URLTest', 'org.acme.RootTest'], SOURCES))[0],
    '-Dtest=org.apache.dubbo.common.URLTest,org.acme.RootTest',
  );
});

test('javaTestExists: by class file, in its module when it names one', () => {
  assert.ok(javaTestExists('org.apache.dubbo.common.URLTest#m', SOURCES));
  assert.ok(javaTestExists('dubbo-common:org.apache.dubbo.common.URLTest', SOURCES));
  assert.ok(!javaTestExists('dubbo-cluster:org.apache.dubbo.common.URLTest', SOURCES));
  assert.ok(javaTestExists('org.acme.RootTest', SOURCES));
  assert.ok(!javaTestExists('org.acme.NoSuchTest', SOURCES));
  assert.ok(!javaTestExists('acme.RootTest', SOURCES), 'a package suffix is not the class');
});

test("mavenTestSelection: tests left out join the same -Dtest as Surefire's '!' patterns, their module dropped", () => {
  assert.deepEqual(mavenTestSelection(['common:a.NetTest', 'common:b.U'], ['common:a.NetTest#needsAnInterface', 'a.NetTest#other']), [
    '-pl',
    'common',
    '-am',
    '-Dtest=a.NetTest,b.U,!a.NetTest#needsAnInterface,!a.NetTest#other',
    '-Dsurefire.failIfNoSpecifiedTests=false',
    '-DfailIfNoTests=false',
  ]);
  assert.deepEqual(
    mavenTestSelection([], ['a.NetTest#m']),
    ['-Dtest=!a.NetTest#m', '-Dsurefire.failIfNoSpecifiedTests=false', '-DfailIfNoTests=false'],
    'no tests named: everything else',
  );
  assert.deepEqual(mavenTestSelection([], []), []);
});
