/** The era helpers a project commit's env is derived with (src/env/era.ts): the Python current at a date, the cut-off. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commitCutoff, PYTHON_RELEASES, pythonCurrentAt } from '../../src/env/era.ts';

test('pythonCurrentAt: the newest of the versions released by the date, else the oldest of them', () => {
  const here = ['3.6', '3.7', '3.8', '3.9', '3.10', '3.11', '3.12', '3.13'];
  assert.equal(pythonCurrentAt('2018-06-26T23:00:00Z', here), '3.6');
  assert.equal(pythonCurrentAt('2018-06-27T12:00:00Z', here), '3.7');
  assert.equal(pythonCurrentAt('2022-01-01', here), '3.10', '3.10 (October 2021), not 3.9');
  assert.equal(pythonCurrentAt('2030-01-01', here), '3.13');
  assert.equal(pythonCurrentAt('2010-01-01', here), '3.6', 'before all of them: the nearest');
  assert.equal(pythonCurrentAt('2022-01-01', ['3.8', '3.12']), '3.8', 'only what the machine has');
  assert.equal(pythonCurrentAt('2022-01-01', ['4.0']), null);
  assert.ok(
    Object.keys(PYTHON_RELEASES).every((v, i, all) => i === 0 || PYTHON_RELEASES[v]! > PYTHON_RELEASES[all[i - 1]!]!),
    'in release order',
  );
});

test("commitCutoff: the commit's date, never before its Python had been out 90 days", () => {
  assert.equal(commitCutoff('2019-04-01T10:00:00Z', '3.7'), '2019-04-01T10:00:00Z');
  assert.equal(commitCutoff('2014-05-01T00:00:00+02:00', '3.6'), '2017-03-23T00:00:00Z');
  assert.equal(commitCutoff('2014-05-01T00:00:00Z', '3.99'), '2014-05-01T00:00:00Z', 'an unknown Python: the date');
});
