import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exitCodeOf } from '../../../src/sandbox/kubernetes/exec.ts';

test("the exit code is read from the exec channel's final status (no cluster needed)", () => {
  assert.equal(exitCodeOf({ status: 'Success' }), 0);
  assert.equal(
    exitCodeOf({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] } }),
    3,
  );
  assert.equal(exitCodeOf({ status: 'Failure', message: 'container not found' }), null);
  assert.equal(exitCodeOf(undefined), null);
});
