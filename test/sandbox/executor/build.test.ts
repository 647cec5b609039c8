import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ensureExecutorBinary, executorSourceHash, findGo } from '../../../src/sandbox/executor/build.ts';
import { TEST_CACHE_DIR, expectGymError, tempDir } from '../../helpers.ts';

describe('executor: the binary', () => {
  test('is built once into the cache, keyed by the source hash, and is static', async () => {
    const hash = await executorSourceHash();
    assert.match(hash, /^[0-9a-f]{16}$/);
    assert.notEqual(await executorSourceHash('arm64'), hash, 'the target is part of the key');
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => ensureExecutorBinary({ cacheDir: TEST_CACHE_DIR })));
    assert.equal(a, path.join(TEST_CACHE_DIR, 'executor', hash, 'benchgym-executor'));
    assert.equal(a, b);
    assert.equal(b, c);
    const elf = await fs.readFile(a!);
    assert.equal(elf.subarray(0, 4).toString('latin1'), '\x7fELF');
    // A dynamically linked binary names its loader (PT_INTERP); a static one does not.
    assert.equal(elf.includes('ld-linux'), false);
    const listed = (await fs.readdir(path.dirname(a!))).filter((n) => n.endsWith('.tmp'));
    assert.deepEqual(listed, [], 'no temporary build output left');
  });

  test('without Go the error says what is missing', async () => {
    const cacheDir = await tempDir('benchgym-executor-nogo-');
    try {
      assert.equal(findGo('/no/such/go'), null);
      await expectGymError(
        ensureExecutorBinary({ cacheDir, go: '/no/such/go' }),
        'SANDBOX_UNAVAILABLE',
        /needs the Go toolchain.*\/no\/such\/go/,
      );
    } finally {
      await fs.rm(cacheDir, { recursive: true, force: true });
    }
  });
});
