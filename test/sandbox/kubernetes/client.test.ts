import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GymError } from '../../../src/errors.ts';
import { labelValue, loadKubeConfig } from '../../../src/sandbox/kubernetes/client.ts';

test('label values are made valid for Kubernetes (no cluster needed)', () => {
  assert.equal(labelValue('host.example-1'), 'host.example-1');
  assert.equal(labelValue('a b/c'), 'a_b_c');
  assert.equal(labelValue('-x-'), 'x');
  assert.equal(labelValue(''), 'x');
  assert.equal(labelValue('y'.repeat(100)).length, 63);
});

test('a kubeconfig that does not exist is INVALID_ARGUMENT naming it', () => {
  assert.throws(
    () => loadKubeConfig('/nonexistent/kubeconfig'),
    (e: unknown) => e instanceof GymError && e.code === 'INVALID_ARGUMENT' && /nonexistent/.test(e.message),
  );
});
