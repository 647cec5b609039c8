import { test } from 'node:test';
import assert from 'node:assert/strict';
import { junitTestId, parseJUnitXml, pytestNodeId } from '../../src/scoring/junit.ts';

/** A pytest --junitxml report (junit_family=xunit1) as pytest 8 writes it. */
const PYTEST_XML =
  `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" ` +
  `tests="6" time="0.05" timestamp="2025-01-01T00:00:00" hostname="h">
<testcase classname="tests.test_cart" name="test_plain" file="tests/test_cart.py" line="10" time="0.001" />
<testcase classname="tests.test_cart.TestCoupon" name="test_in_class" file="tests/test_cart.py" line="20" time="0.002"></testcase>
<testcase classname="tests.test_cart.TestOuter.TestInner" name="test_nested[1.5-a b]" file="tests/test_cart.py" line="30" ` +
  `time="0.003"><failure message="assert 1 == 2&#10; +  where 1 = f()">def test_nested():
&gt;       assert f() == 2
E       assert 1 == 2 &amp; &quot;more&quot;</failure></testcase>
<testcase classname="test_top" name="test_err" file="test_top.py" line="1" time="0"><error message="failed on setup with ` +
  `&quot;RuntimeError: boom&quot;">@pytest.fixture
def broken(): raise RuntimeError('boom')</error></testcase>
<testcase classname="tests.test_cart" name="test_skip" file="tests/test_cart.py" line="40" time="0"><skipped type="pytest.skip" ` +
  `message="not today">tests/test_cart.py:41: not today</skipped></testcase>
<testcase classname="tests.sub.dir.test_x" name="test_cdata" file="tests/sub/dir/test_x.py" line="5" time="0.1"><failure ` +
  `message="cdata"><![CDATA[if a < b && c > d: <tag>]]></failure></testcase>
</testsuite></testsuites>`;

const SUREFIRE_XML =
  `<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" name="org.benchgym.examples.BracketsTest" time="0.05" tests="4" ` +
  `errors="1" skipped="1" failures="1">
  <properties><property name="java.version" value="17"/></properties>
  <testcase name="balanced" classname="org.benchgym.examples.BracketsTest" time="0.01"/>
  <testcase name="unbalanced" classname="org.benchgym.examples.BracketsTest" time="0.002">
    <failure message="expected: &lt;false&gt; but was: &lt;true&gt;" ` +
  `type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: expected: <false> but was: <true>
	at org.benchgym.examples.BracketsTest.unbalanced(BracketsTest.java:17)]]></failure>
  </testcase>
  <testcase name="nullInput()" classname="org.benchgym.examples.BracketsTest" time="0">
    <error message="Cannot invoke &quot;String.length()&quot;" ` +
  `type="java.lang.NullPointerException">java.lang.NullPointerException</error>
    <system-out><![CDATA[some output]]></system-out>
  </testcase>
  <testcase name='deep' classname='org.benchgym.examples.BracketsTest' time='0'><skipped/></testcase>
</testsuite>`;

test('pytest xunit1: node ids for module functions, classes, nested classes and parameters', () => {
  const ids = parseJUnitXml(PYTEST_XML).map((c) => pytestNodeId(c.attrs));
  assert.deepEqual(ids, [
    'tests/test_cart.py::test_plain',
    'tests/test_cart.py::TestCoupon::test_in_class',
    'tests/test_cart.py::TestOuter::TestInner::test_nested[1.5-a b]',
    'test_top.py::test_err',
    'tests/test_cart.py::test_skip',
    'tests/sub/dir/test_x.py::test_cdata',
  ]);
});

test('pytest: statuses, messages (entities decoded) and details', () => {
  const cases = parseJUnitXml(PYTEST_XML);
  assert.deepEqual(
    cases.map((c) => c.status),
    ['passed', 'passed', 'failed', 'error', 'skipped', 'failed'],
  );
  assert.equal(cases[0]!.message, undefined);
  assert.equal(cases[2]!.message, 'assert 1 == 2\n +  where 1 = f()');
  assert.equal(cases[2]!.details, 'def test_nested():\n>       assert f() == 2\nE       assert 1 == 2 & "more"');
  assert.equal(cases[3]!.message, 'failed on setup with "RuntimeError: boom"');
  assert.match(cases[3]!.details!, /raise RuntimeError\('boom'\)/);
  assert.equal(cases[4]!.message, 'not today');
  assert.equal(cases[5]!.details, 'if a < b && c > d: <tag>');
  assert.equal(cases[1]!.attrs.time, '0.002');
});

test('pytest ids without a file attribute are rebuilt from the dotted class name', () => {
  assert.equal(pytestNodeId({ classname: 'tests.test_x.TestY', name: 'test_z[p]' }), 'tests/test_x.py::TestY::test_z[p]');
  assert.equal(pytestNodeId({ classname: 'tests.sub.test_x', name: 'test_z' }), 'tests/sub/test_x.py::test_z');
});

test('pytest ids for directories with dots in their names', () => {
  assert.equal(
    pytestNodeId({ classname: 'tests.v1.2.test_x.TestA', name: 't', file: 'tests/v1.2/test_x.py' }),
    'tests/v1.2/test_x.py::TestA::t',
  );
});

test('surefire: pkg.Class#method ids, failure / error / skipped, CDATA and single quotes', () => {
  const cases = parseJUnitXml(SUREFIRE_XML);
  assert.deepEqual(
    cases.map((c) => junitTestId(c.attrs)),
    [
      'org.benchgym.examples.BracketsTest#balanced',
      'org.benchgym.examples.BracketsTest#unbalanced',
      'org.benchgym.examples.BracketsTest#nullInput()',
      'org.benchgym.examples.BracketsTest#deep',
    ],
  );
  assert.deepEqual(
    cases.map((c) => c.status),
    ['passed', 'failed', 'error', 'skipped'],
  );
  assert.equal(cases[1]!.message, 'expected: <false> but was: <true>');
  assert.match(cases[1]!.details!, /^org\.opentest4j\.AssertionFailedError: expected: <false> but was: <true>\n\tat org\.benchgym/);
  assert.equal(cases[2]!.message, 'Cannot invoke "String.length()"');
  assert.equal(cases[3]!.message, undefined);
});

test('numeric character references, decimal and hex, and unknown entities left alone', () => {
  const [c] = parseJUnitXml('<testcase classname="a" name="t&#233;st&#x2713;&amp;&nbsp;"/>');
  assert.equal(c!.attrs.name, 'tést✓&&nbsp;');
});

test('attributes containing > and / do not end the element early', () => {
  const [c] = parseJUnitXml(
    '<testcase classname="tests.test_a" name="test_x[a>b/c]" file="tests/test_a.py"><failure message="x > y"/></testcase>',
  );
  assert.equal(pytestNodeId(c!.attrs), 'tests/test_a.py::test_x[a>b/c]');
  assert.equal(c!.status, 'failed');
  assert.equal(c!.message, 'x > y');
});

test('an empty or garbled report gives no test cases', () => {
  assert.deepEqual(parseJUnitXml(''), []);
  assert.deepEqual(parseJUnitXml('<testsuite tests="0"></testsuite>'), []);
  assert.deepEqual(parseJUnitXml('not xml at all'), []);
});
