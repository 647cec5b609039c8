import { test } from 'node:test';
import assert from 'node:assert/strict';
import { streamProgress } from '../../src/runner/progress.ts';
import type { ResultRecord } from '../../src/runner/results.ts';
import { resultLine } from './run_dir.ts';

test('progress lines: passing over every finished sample (an infrastructure failure did not pass), the scored rate beside it', () => {
  const written: string[] = [];
  const stream = { write: (s: string) => written.push(s), columns: 100 } as unknown as NodeJS.WriteStream;
  const progress = streamProgress(stream, false);
  progress.start(3, 0, 0, 0);
  const line = (task: string, status: ResultRecord['status']) =>
    resultLine({
      suite: 'examples',
      task,
      sample: 0,
      agent: 'a',
      model: 'm',
      status,
      metadata: {},
      ...(status === 'error' ? { infra: true, infraError: { code: 'SANDBOX_UNAVAILABLE', message: 'lost', source: 'gym' as const } } : {}),
    });
  progress.finished(line('a', 'passed'));
  progress.finished(line('b', 'error'));
  progress.finished(line('c', 'error'));
  progress.stop();
  assert.match(written[1]!, /^\[1\/3\] a#0 passed .* · passing 1\/1 \(100%\) · ETA/);
  assert.match(
    written[3]!,
    /^\[3\/3\] c#0 infra error SANDBOX_UNAVAILABLE .* · passing 1\/3 \(33%\) · infra 2 · scored 1\/1 \(100%\) · ETA/,
  );
});
