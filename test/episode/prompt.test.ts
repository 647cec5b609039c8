import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GymError } from '../../src/errors.ts';
import { contextFor, promptFor } from '../../src/episode/prompt.ts';
import { pythonTask } from '../helpers.ts';

const task = pythonTask({
  files: { 'a.py': '' },
  prompt: 'own prompt',
  promptVariants: { brief: 'own brief' },
  contexts: {
    later: {
      description: 'the repository later',
      workspace: { type: 'files', files: { 'b.py': '' } },
      prompt: 'later prompt',
      promptVariants: { detailed: 'later detailed' },
    },
  },
});

test("the task's own start state and prompt, or a context's, or a variant of either", () => {
  assert.deepEqual(contextFor(task), { name: 'default' });
  assert.deepEqual(contextFor(task, 'default'), { name: 'default' });
  assert.deepEqual(contextFor(task, 'later'), { name: 'later', workspace: { type: 'files', files: { 'b.py': '' } } });
  assert.equal(promptFor(task), 'own prompt');
  assert.equal(promptFor(task, 'brief'), 'own brief');
  assert.equal(promptFor(task, 'default', 'later'), 'later prompt');
  // A context's variants add to the task's.
  assert.equal(promptFor(task, 'detailed', 'later'), 'later detailed');
  assert.equal(promptFor(task, 'brief', 'later'), 'own brief');
});

test('an unknown context or variant (prototype names too) is INVALID_ARGUMENT naming what the task has', () => {
  for (const name of ['nope', '__proto__', 'constructor']) {
    assert.throws(
      () => contextFor(task, name),
      (e: unknown) => e instanceof GymError && e.code === 'INVALID_ARGUMENT' && e.message.includes('(this task has default, later)'),
    );
    assert.throws(
      () => promptFor(task, name),
      (e: unknown) => e instanceof GymError && e.code === 'INVALID_ARGUMENT' && e.message.includes('(this task has default, brief)'),
    );
  }
});
