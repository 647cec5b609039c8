import { test } from 'node:test';
import assert from 'node:assert/strict';
import { registryName } from '../../../src/sandbox/kubernetes/registry.ts';

test('env images are renamed into the registry prefix (no cluster needed)', () => {
  assert.equal(registryName('benchgym/inst-abc:1', 'reg.example:5000/team'), 'reg.example:5000/team/inst-abc:1');
  assert.equal(registryName('plain', 'reg.example/'), 'reg.example/plain:latest');
});
