import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { ExecutorClient } from '../../../src/sandbox/executor/client.ts';
import { startExecutorProcess } from '../../../src/sandbox/executor/process.ts';
import { baseImageName } from '../../../src/env/images.ts';
import { dockerSkipReason } from '../docker/skip.ts';
import { expectGymError } from '../../helpers.ts';
import { executorBinary } from './fixture.ts';

const execFileP = promisify(execFile);

describe('executor: inside a Docker container', async () => {
  const skip = await dockerSkipReason();
  if (skip) {
    test(`skipped: ${skip}`, { skip }, () => {});
    return;
  }
  const name = `benchgym-executor-test-${randomBytes(4).toString('hex')}`;
  let ex: ExecutorClient;
  before(async () => {
    // One `docker run -i`: the container's only channel to us is the executor's stdin and stdout.
    ex = await startExecutorProcess({
      binary: '/usr/local/bin/benchgym-executor',
      root: '/workspace',
      wrapper: [
        'docker',
        'run',
        '--rm',
        '-i',
        '--init',
        '--name',
        name,
        '--label',
        'benchgym.server=test-executor',
        '--network',
        'none',
        '--tmpfs',
        '/workspace',
        '-v',
        `${await executorBinary()}:/usr/local/bin/benchgym-executor:ro`,
        baseImageName('python', '3.11'),
      ],
      connectTimeoutMs: 60_000,
    });
  });
  after(async () => {
    await ex?.close();
    await execFileP('docker', ['rm', '-f', name]).catch(() => {});
  });

  test('an exec and a read over the one channel', async () => {
    assert.equal(ex.info?.root, '/workspace');
    const r = await ex.exec('python3 -c "print(6 * 7)" && echo "$PWD" && cat /etc/hostname > host.txt');
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout, '42\n/workspace\n');
    const host = await ex.read('host.txt');
    assert.match(host.data.toString(), /^[0-9a-f]{12}\n$/);
    await ex.write('pkg/mod.py', 'X = 1\n');
    assert.equal((await ex.exec('python3 -c "import pkg.mod; print(pkg.mod.X)"')).stdout, '1\n');
    assert.deepEqual((await ex.list('pkg')).entries, [{ path: 'pkg/mod.py', type: 'file', size: 6 }]);
    await expectGymError(ex.read('/etc/passwd'), 'PATH_OUTSIDE_WORKSPACE');
    const timed = await ex.exec('sleep 30 & wait', { timeoutMs: 300 });
    assert.equal(timed.timedOut, true);
    assert.equal((await ex.exec('pgrep -x sleep || echo none')).stdout.trim(), 'none');
  });
});
