import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DockerSandboxFactory } from '../../src/sandbox/docker/index.ts';
import { TaskSchema } from '../../src/tasks/schema.ts';
import { makeGym } from '../helpers.ts';
import { dockerSkipReason } from '../sandbox/docker/skip.ts';

const task = (version: string) =>
  TaskSchema.parse({
    id: `py${version}`,
    suite: 'adhoc',
    language: 'python',
    kind: 'function',
    prompt: 'implement double(x)',
    env: { kind: 'python', version },
    workspace: { type: 'files', files: { 'double.py': 'def double(x):\n    raise NotImplementedError\n' } },
    tests: {
      hidden: {
        runner: { type: 'pytest', args: ['test_double.py'] },
        files: { 'test_double.py': 'from double import double\n\ndef test_double():\n    assert double(2) == 4\n' },
      },
    },
  });

const PATCH = `diff --git a/double.py b/double.py
--- a/double.py
+++ b/double.py
@@ -1,2 +1,2 @@
 def double(x):
-    raise NotImplementedError
+    return 2 * x
`;

test('a Python version with no base image runs on the nearest one, and the verdict says so; or is refused', async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const serverId = `test-images-${randomBytes(4).toString('hex')}`;
  const { gym, cleanup } = await makeGym({ sandboxes: new DockerSandboxFactory({ serverId }) });
  try {
    const verdict = await gym.score(task('3.12'), PATCH);
    assert.equal(verdict.reward, 1, JSON.stringify(verdict));
    assert.ok(
      verdict.notes.some((n) => /Python 3\.12 asked for.*base-python:3\.1\d used/.test(n)),
      verdict.notes.join('; '),
    );
  } finally {
    await cleanup();
  }
  const strict = await makeGym({ sandboxes: new DockerSandboxFactory({ serverId, images: { exactPython: true } }) });
  try {
    const verdict = await strict.gym.score(task('3.12'), PATCH);
    assert.equal(verdict.status, 'error');
    assert.equal(verdict.error?.code, 'ENV_UNAVAILABLE');
    assert.match(verdict.error!.message, /substitution refused/);
  } finally {
    await strict.cleanup();
  }
});

const magicTask = (systemPackages?: string[]) =>
  TaskSchema.parse({
    id: `magic-${systemPackages?.join('-') ?? 'none'}`,
    suite: 'adhoc',
    language: 'python',
    kind: 'function',
    prompt: 'nothing to do: the test checks that the env has libmagic',
    env: { kind: 'python', version: '3.11', ...(systemPackages ? { systemPackages } : {}) },
    workspace: { type: 'files', files: { README: 'nothing here\n' } },
    tests: {
      hidden: {
        runner: { type: 'pytest', args: ['test_magic.py'] },
        files: {
          'test_magic.py':
            'import ctypes, ctypes.util\n\ndef test_libmagic_loads():\n    name = ' +
            "ctypes.util.find_library('magic')\n    assert name, 'no libmagic'\n    ctypes.CDLL(name).magic_open\n",
        },
      },
    },
  });

test(
  "a Python env's system packages are in its Docker image (apt, " + "the build's network); one the suite lacks is unavailable, named",
  async (t) => {
    const skip = await dockerSkipReason();
    if (skip) return t.skip(skip);
    const { gym, cleanup } = await makeGym({
      sandboxes: new DockerSandboxFactory({ serverId: `test-syspkg-${randomBytes(4).toString('hex')}` }),
    });
    try {
      // The base image has no libmagic: without the package the same test fails.
      const without = await gym.score(magicTask(), '');
      assert.equal(without.reward, 0, JSON.stringify(without));
      const withIt = await gym.score(magicTask(['libmagic1']), '');
      assert.equal(withIt.reward, 1, JSON.stringify(withIt));
      const unknown = await gym.score(magicTask(['benchgym-no-such-package']), '');
      assert.equal(unknown.status, 'error');
      assert.equal(unknown.error?.code, 'ENV_UNAVAILABLE');
      assert.match(
        unknown.error!.message,
        /system package benchgym-no-such-package: not in the Debian suite of benchgym\/base-python:3\.11/,
      );
    } finally {
      await cleanup();
    }
  },
);
