import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { debootstrapRecipe, HOST_INTERPRETER_PYTHONS } from '../../src/env/base_images.ts';
import { BASE_IMAGES, baseImageName } from '../../src/env/images.ts';
import { findPython } from '../../src/env/python.ts';
import { dockerSkipReason } from '../sandbox/docker/skip.ts';

test(
  "recipes: Debian's own python3 (with its headers and a C toolchain, for source-only pins) where a suite " +
    "packages the version; bookworm plus the host's interpreter and its run-time libraries for 3.7 and 3.10",
  () => {
    assert.deepEqual(debootstrapRecipe({ kind: 'python', version: '3.11' }), {
      suite: 'bookworm',
      packages: [
        'python3',
        'python3-venv',
        'python3-pip',
        'python3-dev',
        'gcc',
        'g++',
        'make',
        'libc6-dev',
        'git',
        'patch',
        'coreutils',
        'findutils',
      ],
      hostInterpreter: false,
    });
    for (const version of ['3.7', '3.10']) {
      const recipe = debootstrapRecipe({ kind: 'python', version });
      assert.equal(recipe.suite, 'bookworm');
      assert.equal(recipe.hostInterpreter, true);
      for (const pkg of ['libssl3', 'libffi8', 'libsqlite3-0', 'gcc', 'git', 'patch'])
        assert.ok(recipe.packages.includes(pkg), `${version}: ${pkg}`);
      assert.ok(!recipe.packages.includes('python3'), 'no Debian python3 to shadow the copied one');
      assert.ok(BASE_IMAGES.python[version]);
    }
    assert.deepEqual([...HOST_INTERPRETER_PYTHONS].sort(), ['3.10', '3.7']);
    assert.equal(debootstrapRecipe({ kind: 'java', version: '17' }).hostInterpreter, false);
    assert.throws(() => debootstrapRecipe({ kind: 'python', version: '3.8' }), {
      code: 'INVALID_ARGUMENT',
      message: /no base image recipe for python 3\.8 \(have: .*3\.7.*3\.10/,
    });
  },
);

for (const version of ['3.7', '3.10']) {
  test(`benchgym/base-python:${version} runs the host's ${version} with ssl, sqlite3 and venv, and makes a venv`, async (t) => {
    const skip = await dockerSkipReason([baseImageName('python', version)]);
    if (skip) return t.skip(skip);
    const host = execFileSync((await findPython(version))!, ['-c', 'import sys; print(sys.version.split()[0])'], {
      encoding: 'utf8',
    }).trim();
    const out = execFileSync(
      'docker',
      [
        'run',
        '--rm',
        '--network',
        'none',
        baseImageName('python', version),
        'sh',
        '-c',
        'python3 -c "import sys, ssl, sqlite3, ctypes; print(sys.version.split()[0])" && ' +
          'python3 -m venv /tmp/v && /tmp/v/bin/python -c "import sys; print(sys.prefix)"',
      ],
      { encoding: 'utf8' },
    );
    assert.deepEqual(out.trim().split('\n'), [host, '/tmp/v']);
  });
}
