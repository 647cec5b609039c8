import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bubblewrapAvailable, LocalSandboxFactory, type LocalSandbox } from '../../../src/sandbox/local/index.ts';
import { diskUsage } from '../../../src/sandbox/local/disk_guard.ts';
import { tempDir } from '../../helpers.ts';

/** The local backend's disk bound: a command filling the workspace is stopped near the limit. */
for (const isolation of ['none', 'bwrap'] as const) {
  test(
    `a command that fills the workspace is stopped past the disk limit (${isolation})`,
    { skip: isolation === 'bwrap' && !(await bubblewrapAvailable()) ? 'bubblewrap is not available' : false },
    async () => {
      const base = await tempDir();
      const factory = new LocalSandboxFactory({ baseDir: base, isolation, limits: { diskBytes: 40 * 1024 ** 2, diskCheckMs: 100 } });
      const sb = (await factory.create({ seed: { files: { 'keep.txt': 'kept\n' } } })) as LocalSandbox;
      try {
        // 60 files of 5 MB (300 MB) unless stopped; a pause between them so the watch can see it.
        const r = await sb.exec('for i in $(seq 1 60); do head -c 5000000 /dev/zero > "fill$i"; sleep 0.05; done; echo finished', {
          timeoutMs: 60_000,
        });
        assert.notEqual(r.exitCode, 0, 'the filler was stopped');
        assert.doesNotMatch(r.stdout, /finished/);
        assert.match(r.stderr, /past the sandbox's disk limit of 40 MiB/);
        const used = await diskUsage([sb.root]);
        assert.ok(used < 200 * 1024 ** 2, `the workspace holds ${used} bytes: stopped well before 300 MB`);
        // Over the limit already, growing further is stopped again.
        const more = await sb.exec('for i in $(seq 61 90); do head -c 5000000 /dev/zero > "fill$i"; sleep 0.05; done; echo finished', {
          timeoutMs: 60_000,
        });
        assert.doesNotMatch(more.stdout, /finished/);
        assert.match(more.stderr, /past the sandbox's disk limit/);
        // The sandbox goes on: the agent can clean up and work, even while the workspace is still over the limit.
        const after = await sb.exec('sleep 0.5; rm -f fill*; cat keep.txt');
        assert.equal(after.exitCode, 0);
        assert.equal(after.stdout, 'kept\n');
      } finally {
        await factory.close();
      }
    },
  );
}

test('a command within the disk limit is not disturbed', async () => {
  const base = await tempDir();
  const factory = new LocalSandboxFactory({ baseDir: base, isolation: 'none', limits: { diskBytes: 40 * 1024 ** 2, diskCheckMs: 50 } });
  const sb = await factory.create({ seed: { files: {} } });
  try {
    const r = await sb.exec('head -c 1000000 /dev/zero > small; sleep 0.5; echo ok');
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, 'ok\n');
    assert.doesNotMatch(r.stderr, /disk limit/);
  } finally {
    await factory.close();
  }
});
