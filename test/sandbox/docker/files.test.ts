import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Gym } from '../../../src/episode/gym.ts';
import { GymError } from '../../../src/errors.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import type { Sandbox } from '../../../src/sandbox/types.ts';
import { expectGymError, makeGym, startExample } from '../../helpers.ts';
import { describeDocker } from './skip.ts';

/** Within `ms`, or a rejection naming what hung (an old `cat` on a FIFO waited for the exec's timeout). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms))]);
}

describeDocker('docker file operations on special files', async () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let sb: Sandbox;

  before(async () => {
    ({ gym, cleanup } = await makeGym({
      sandboxes: new DockerSandboxFactory({ serverId: `test-files-${randomBytes(4).toString('hex')}`, poolSize: 0 }),
    }));
    sb = gym.episode(await startExample(gym, 'roman-numerals')).sandbox;
  });
  after(async () => cleanup());

  test('a FIFO is refused for reading and writing, at once, and other reads go on', { timeout: 60_000 }, async () => {
    const r = await sb.exec('mkfifo pipe && mkdir -p sub && mkfifo sub/pipe2 && ln -s /dev/zero zero');
    assert.equal(r.exitCode, 0, r.stderr);
    const t0 = Date.now();
    const calls = [
      ...Array.from({ length: 8 }, () => sb.readFile('pipe')),
      ...Array.from({ length: 2 }, () => sb.writeFile('sub/pipe2', 'x')),
    ].map((p) =>
      p.then(
        () => null,
        (e: unknown) => e,
      ),
    );
    const normal = await within(sb.readFile('roman.py'), 20_000, 'a normal read beside FIFO reads');
    assert.ok(normal.length > 0);
    for (const e of await within(Promise.all(calls), 20_000, 'FIFO reads and writes')) {
      assert.ok(e instanceof GymError, `a GymError, got ${String(e)}`);
      assert.equal(e.code, 'NOT_A_FILE');
      assert.match(e.message, /FIFO/);
    }
    assert.ok(Date.now() - t0 < 20_000, `took ${Date.now() - t0} ms`);
    // A link to a device leads outside the workspace.
    await expectGymError(sb.readFile('zero'), 'PATH_OUTSIDE_WORKSPACE');
    assert.equal((await sb.stat('pipe'))?.type, 'other');
  });

  test('a socket is refused, naming the kind', { timeout: 60_000 }, async () => {
    const r = await sb.exec(`python -c "import socket; s = socket.socket(socket.AF_UNIX); s.bind('sock')"`);
    assert.equal(r.exitCode, 0, r.stderr);
    await expectGymError(within(sb.readFile('sock'), 20_000, 'reading a socket'), 'NOT_A_FILE', /socket/);
    await expectGymError(within(sb.writeFile('sock', 'x'), 20_000, 'writing a socket'), 'NOT_A_FILE', /socket/);
  });

  test('regular files still read and write, empty ones and binary ones too', async () => {
    await sb.writeFile('d/e/empty.txt', '');
    assert.equal((await sb.readFile('d/e/empty.txt')).length, 0);
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    await sb.writeFile('d/blob.bin', bytes);
    assert.ok((await sb.readFile('d/blob.bin')).equals(bytes));
    await sb.writeFile('d/blob.bin', 'short');
    assert.equal((await sb.readFile('d/blob.bin')).toString(), 'short');
  });
});
