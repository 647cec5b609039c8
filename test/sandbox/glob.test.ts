import { test } from 'node:test';
import assert from 'node:assert/strict';
import { globToRegExp, matchesAny } from '../../src/sandbox/glob.ts';

const matches = (glob: string, p: string) => globToRegExp(glob).test(p);

test('* stays within one path component', () => {
  assert.ok(matches('*.py', 'a.py'));
  assert.ok(!matches('*.py', 'dir/a.py'));
  assert.ok(matches('src/*.py', 'src/a.py'));
  assert.ok(!matches('src/*.py', 'src/x/a.py'));
});

test('**/ matches zero or more directories', () => {
  assert.ok(matches('**/*.py', 'a.py'));
  assert.ok(matches('**/*.py', 'x/y/z/a.py'));
  assert.ok(!matches('**/*.py', 'x/y/a.pyc'));
  assert.ok(matches('**/conftest.py', 'conftest.py'));
  assert.ok(matches('**/conftest.py', 'pkg/tests/conftest.py'));
  assert.ok(!matches('**/conftest.py', 'pkg/not_conftest.py'));
  assert.ok(matches('src/**/Test*.java', 'src/test/java/org/TestFoo.java'));
  assert.ok(matches('src/**/Test*.java', 'src/TestFoo.java'));
});

test('a trailing ** matches everything below a directory, but not the directory name alone', () => {
  assert.ok(matches('tests/**', 'tests/test_cart.py'));
  assert.ok(matches('tests/**', 'tests/deep/er/x.py'));
  assert.ok(!matches('tests/**', 'tests'));
  assert.ok(!matches('tests/**', 'tests_extra/x.py'));
  assert.ok(!matches('tests/**', 'src/tests/x.py'));
});

test('? matches one character except /', () => {
  assert.ok(matches('file?.txt', 'file1.txt'));
  assert.ok(!matches('file?.txt', 'file12.txt'));
  assert.ok(!matches('a?b', 'a/b'));
});

test('character classes, negated with !', () => {
  assert.ok(matches('[abc].txt', 'b.txt'));
  assert.ok(!matches('[abc].txt', 'd.txt'));
  assert.ok(matches('[!abc].txt', 'd.txt'));
  assert.ok(!matches('[!abc].txt', 'a.txt'));
  assert.ok(matches('v[0-9].md', 'v7.md'));
});

test('brace alternatives', () => {
  assert.ok(matches('*.{py,txt}', 'a.py'));
  assert.ok(matches('*.{py,txt}', 'a.txt'));
  assert.ok(!matches('*.{py,txt}', 'a.md'));
  assert.ok(matches('{src,tests}/**/*.py', 'tests/x/a.py'));
});

test('regular-expression characters in globs are literal', () => {
  assert.ok(matches('a+b(1).txt', 'a+b(1).txt'));
  assert.ok(!matches('a.txt', 'abtxt'));
  assert.ok(matches('x$^|y', 'x$^|y'));
  assert.ok(matches('[unclosed', '[unclosed'));
  assert.ok(matches('a,b}', 'a,b}'));
});

test('the whole path must match', () => {
  assert.ok(!matches('a.py', 'xa.py'));
  assert.ok(!matches('a.py', 'a.py.bak'));
});

test('matchesAny: a glob without a slash also matches the base name anywhere', () => {
  assert.ok(matchesAny('pkg/tests/conftest.py', ['conftest.py']));
  assert.ok(matchesAny('deep/dir/x.pyc', ['*.pyc']));
  assert.ok(!matchesAny('pkg/tests/conftest.py', ['tests/conftest.py']));
  assert.ok(matchesAny('tests/conftest.py', ['tests/conftest.py']));
  assert.ok(matchesAny('src/main/A.java', ['*.py', 'src/**']));
  assert.ok(!matchesAny('src/main/A.java', []));
});

test('an agent-written glob cannot stall the event loop: *a*a…b on a long name answers at once', () => {
  const t0 = Date.now();
  assert.ok(!matches('*a*a*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(60)));
  assert.ok(!matches('**/**/**/**/**/**/**/**/**/**/x', 'a/'.repeat(40) + 'y'));
  assert.ok(matches('*a*a*a*a*a*a*a*a*a*a*a*a*b', `${'a'.repeat(60)}b`));
  assert.ok(Date.now() - t0 < 1000, `took ${Date.now() - t0} ms`);
  assert.throws(() => globToRegExp('{a,b'), /INVALID_ARGUMENT|not closed/);
});
