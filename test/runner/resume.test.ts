import { test } from 'node:test';
import assert from 'node:assert/strict';
import { remainingPairs } from '../../src/runner/resume.ts';
import { resultLine } from './run_dir.ts';
import { pythonTask } from '../helpers.ts';

const task = (id: string) => pythonTask({ id, suite: 's', files: { 'a.py': '' } });
const line = (t: string, sample: number, status: 'passed' | 'failed' | 'error', attempt = 1, final = true) =>
  resultLine({
    suite: 's',
    task: t,
    sample,
    agent: 'a',
    model: 'm',
    status,
    metadata: {},
    attempt,
    final,
    infra: status === 'error',
    ...(status === 'error' ? { infraError: { code: 'SANDBOX_UNAVAILABLE', message: 'lost', source: 'gym' as const } } : {}),
  });

test('remainingPairs: pairs without a final result run; with rerunErrors, infrastructure failures run again at their next attempt', () => {
  const tasks = [task('a'), task('b'), task('c')];
  const records = [line('a', 0, 'passed'), line('b', 0, 'error', 1, false), line('b', 0, 'error', 2, true), line('c', 0, 'failed')];
  const plain = remainingPairs(tasks, 2, records);
  assert.deepEqual(
    plain.jobs.map((j) => `${j.task.id}#${j.sample}@${j.firstAttempt}`),
    ['a#1@1', 'b#1@1', 'c#1@1'],
  );
  assert.deepEqual(
    plain.carried.map((r) => `${r.task}#${r.sample}`),
    ['a#0', 'b#0', 'c#0'],
    'an infrastructure failure is a final result without --rerun-errors',
  );

  const rerun = remainingPairs(tasks, 2, records, { rerunErrors: true });
  assert.deepEqual(
    rerun.jobs.map((j) => `${j.task.id}#${j.sample}@${j.firstAttempt}`),
    ['a#1@1', 'b#0@3', 'b#1@1', 'c#1@1'],
    'b#0 again, after its two attempts',
  );
  assert.deepEqual(
    rerun.carried.map((r) => `${r.task}#${r.sample}`),
    ['a#0', 'c#0'],
    'a wrong answer is never rerun',
  );
});
