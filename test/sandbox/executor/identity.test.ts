import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ExecutorClient } from '../../../src/sandbox/executor/client.ts';
import { startExecutorProcess } from '../../../src/sandbox/executor/process.ts';
import { expectGymError, tempDir, waitGone } from '../../helpers.ts';
import { executorBinary, uniqueSleep } from './fixture.ts';

/**
 * How the executor keeps out of its commands' reach (go/identity.go, go/init.go): a root
 * executor runs them as another uid (--user), an unprivileged one gives each a user and pid
 * namespace of its own (--pid-namespace). Either way a command's kill -9 -1, a scan of /proc,
 * prlimit or ptrace cannot end it.
 */

const root = process.getuid?.() === 0;
const needsRoot = root ? false : 'needs root: to start the executor as root, or as another uid';
/** uids no one else on this machine runs as: a stray kill -9 -1 of theirs reaches nobody else's processes. */
const USER = { uid: 64999, gid: 64999 };
const OTHER = { uid: 64998, gid: 64998 };

/** Kills, then signals, traces and prlimits the process `pid` (in the command's view); prints what worked. */
const ATTACK = (pid: number) =>
  [
    'kill -9 -1 2>/dev/null',
    'for p in /proc/[0-9]*; do n=${p#/proc/}; [ "$n" = $$ ] || kill -9 "$n" 2>/dev/null; done',
    `kill -0 ${pid} 2>/dev/null && echo signalled`,
    `prlimit --pid ${pid} --cpu=0:0 2>/dev/null && echo prlimited`,
    `head -c 1 /proc/${pid}/environ >/dev/null 2>&1 && echo read-environ`,
    // The channel: the executor's stdin and stdout, by now on descriptors past 2.
    `for fd in 0 1 2 3 4 5 6 7 8 9; do (echo '{"id":1,"ok":true,"result":{}}' ` +
      `> /proc/${pid}/fd/$fd) 2>/dev/null && echo "wrote fd $fd"; done`,
    `for fd in 0 3 4 5; do timeout 1 head -c 1 /proc/${pid}/fd/$fd >/dev/null 2>&1 && echo "read fd $fd"; done`,
    `readlink /proc/${pid}/fd/3 >/dev/null 2>&1 && echo resolved-fd`,
    'echo done',
  ].join('\n');

describe('executor --user: a root executor runs its commands as another uid', { skip: needsRoot }, () => {
  let ex: ExecutorClient;
  let dir: string;
  before(async () => {
    dir = await fs.realpath(await tempDir('benchgym-identity-'));
    await fs.chown(dir, USER.uid, USER.gid);
    // In a pid namespace of the test's own (this test's kill -9 -1 ends nothing of the machine's),
    // under a shell as its PID 1: the executor is no init, which a SIGKILL from inside would spare.
    ex = await startExecutorProcess({
      binary: await executorBinary(),
      root: dir,
      wrapper: [
        'unshare',
        '--pid',
        '--fork',
        '--kill-child',
        '--mount-proc',
        'sh',
        '-c',
        '"$@"; exit $?',
        'sh',
        'setpriv',
        '--inh-caps=-all',
        '--bounding-set=-all,+setuid,+setgid',
        '--no-new-privs',
        '--',
      ],
      flags: ['--user', `${USER.uid}:${USER.gid}`],
      env: { PATH: '/usr/bin:/bin' },
    });
  });
  after(async () => {
    await ex?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('the handshake tells who runs what: root the executor, the uid its commands', () => {
    assert.equal(ex.info?.uid, 0);
    assert.equal(ex.info?.commandUid, USER.uid);
    assert.equal(ex.info?.isolation, 'uid');
  });

  test('commands run as the uid and gid, without groups or capabilities', async () => {
    const r = await ex.exec('id -u; id -g; id -G; grep CapEff /proc/self/status');
    assert.deepEqual(r.stdout.trim().split('\n'), [String(USER.uid), String(USER.gid), String(USER.gid), 'CapEff:\t0000000000000000']);
  });

  test("a command's kill -9 -1, /proc scan, prlimit and trace of the executor fail; it goes on", async () => {
    const r = await ex.exec(ATTACK(ex.info!.pid));
    assert.equal(r.stdout, 'done\n', JSON.stringify(r));
    assert.equal((await ex.exec('echo still-here')).stdout, 'still-here\n');
  });

  test('file operations run as the uid: what they create is its, what it may not read they may not either', async () => {
    await ex.write('made/by/executor.txt', 'one\n');
    for (const rel of ['made', 'made/by', 'made/by/executor.txt']) {
      const st = await fs.stat(path.join(dir, rel));
      assert.deepEqual([st.uid, st.gid], [USER.uid, USER.gid], rel);
    }
    // Rewritten (a new file renamed over the old): still the uid's, and the command may append to it.
    await ex.write('made/by/executor.txt', 'two\n');
    assert.equal((await fs.stat(path.join(dir, 'made/by/executor.txt'))).uid, USER.uid);
    assert.equal((await ex.exec('echo three >> made/by/executor.txt && cat made/by/executor.txt')).stdout, 'two\nthree\n');
    // A file root keeps to itself: the executor, root as it is, reads it no more than its commands do.
    await fs.writeFile(path.join(dir, 'roots.txt'), 'secret\n', { mode: 0o600 });
    await expectGymError(ex.read('roots.txt'), 'SANDBOX_UNAVAILABLE', /permission denied/);
  });

  test('the executor still ends its commands: a timeout kills the group and a setsid escapee; cancel works', async () => {
    const s = uniqueSleep();
    const r = await ex.exec(`setsid sleep ${s} & sleep ${uniqueSleep()}`, { timeoutMs: 400, graceMs: 200 });
    assert.equal(r.timedOut, true);
    assert.deepEqual(await waitGone(`sleep ${s}`, 3000, 50), []);
    const abort = new AbortController();
    const pending = ex.exec(`sleep ${uniqueSleep()}`, { signal: abort.signal });
    setTimeout(() => abort.abort(), 200);
    await expectGymError(pending, 'CANCELLED');
  });
});

describe('executor --pid-namespace: each command in a user and pid namespace of its own', { skip: needsRoot }, () => {
  let ex: ExecutorClient;
  let dir: string;
  before(async () => {
    dir = await fs.realpath(await tempDir('benchgym-pidns-'));
    await fs.chown(dir, OTHER.uid, OTHER.gid);
    // An unprivileged executor, as an unprivileged server's is: one uid for it and its commands.
    ex = await startExecutorProcess({
      binary: await executorBinary(),
      root: dir,
      wrapper: [
        'setpriv',
        `--reuid=${OTHER.uid}`,
        `--regid=${OTHER.gid}`,
        '--clear-groups',
        '--inh-caps=-all',
        '--bounding-set=-all',
        '--no-new-privs',
        '--',
      ],
      flags: ['--pid-namespace'],
      env: { PATH: '/usr/bin:/bin' },
    });
  });
  after(async () => {
    await ex?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('the handshake says so; commands run as the same uid', async () => {
    assert.equal(ex.info?.isolation, 'pid-namespace');
    assert.equal(ex.info?.uid, OTHER.uid);
    assert.equal((await ex.exec('id -u')).stdout, `${OTHER.uid}\n`);
  });

  test("a command's kill -9 -1, /proc scan, prlimit and trace of the executor fail, its uid notwithstanding; it goes on", async () => {
    // The executor's own pid, as this host sees it: in the command's namespace no pid names it.
    const r = await ex.exec(ATTACK(ex.info!.pid));
    assert.equal(r.stdout, 'done\n', JSON.stringify(r));
    assert.equal((await ex.exec('echo still-here')).stdout, 'still-here\n');
  });

  test('the command is no PID 1: its signals, exit status and background output are as without a namespace', async () => {
    // PID 1 would ignore a signal it has no handler for.
    const term = await ex.exec('echo before; kill -TERM $$; echo after');
    assert.equal(term.signal, 'SIGTERM');
    assert.equal(term.stdout, 'before\n');
    assert.equal((await ex.exec('exit 7')).exitCode, 7);
    assert.equal((await ex.exec('cat', { stdin: 'piped\n' })).stdout, 'piped\n');
    // A background writer still gets its moment after the command, as without a namespace.
    assert.equal((await ex.exec('(sleep 0.1; echo late) & echo early')).stdout, 'early\nlate\n');
  });

  test('a timeout ends the command and everything it started, setsid or not', async () => {
    const a = uniqueSleep();
    const b = uniqueSleep();
    const started = Date.now();
    const r = await ex.exec(`setsid sleep ${a} & sleep ${b} & trap '' TERM; sleep ${uniqueSleep()}`, { timeoutMs: 400, graceMs: 200 });
    assert.equal(r.timedOut, true);
    assert.ok(Date.now() - started < 4000, `took ${Date.now() - started} ms`);
    assert.deepEqual(await waitGone(`sleep ${a}`, 3000, 50), []);
    assert.deepEqual(await waitGone(`sleep ${b}`, 3000, 50), []);
  });
});

test('--user refuses to start without root, or without CAP_SETUID and CAP_SETGID, naming why', { skip: needsRoot }, async () => {
  const dir = await tempDir('benchgym-identity-refused-');
  try {
    const binary = await executorBinary();
    const run = (wrapper: string[]) =>
      promisify(execFile)(wrapper[0]!, [...wrapper.slice(1), binary, '--root', dir, '--user', '64999:64999'], { timeout: 10_000 });
    await assert.rejects(run(['setpriv', '--reuid=64998', '--regid=64998', '--clear-groups', '--']), (err: { stderr?: string }) =>
      /--user needs the executor to start as root/.test(err.stderr ?? ''),
    );
    await assert.rejects(run(['setpriv', '--inh-caps=-all', '--bounding-set=-all', '--']), (err: { stderr?: string }) =>
      /needs CAP_SETUID and CAP_SETGID/.test(err.stderr ?? ''),
    );
    await assert.rejects(promisify(execFile)(binary, ['--root', dir, '--user', '0:0'], { timeout: 10_000 }), (err: { stderr?: string }) =>
      /UID:GID, both above 0/.test(err.stderr ?? ''),
    );
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test(
  'the control: an executor that shares its uid and pid namespace with its commands is ended by the same attack',
  { skip: needsRoot },
  async () => {
    const dir = await fs.realpath(await tempDir('benchgym-identity-control-'));
    await fs.chown(dir, OTHER.uid, OTHER.gid);
    // Neither flag, as before them; in a pid namespace of the test's own, so the kill reaches nothing
    // else, under a root shell as its PID 1 (a PID 1 would shrug off a SIGKILL from inside).
    const ex = await startExecutorProcess({
      binary: await executorBinary(),
      root: dir,
      wrapper: [
        'unshare',
        '--pid',
        '--fork',
        '--kill-child',
        '--mount-proc',
        'sh',
        '-c',
        '"$@"; exit $?',
        'sh',
        'setpriv',
        `--reuid=${OTHER.uid}`,
        `--regid=${OTHER.gid}`,
        '--clear-groups',
        '--inh-caps=-all',
        '--bounding-set=-all',
        '--no-new-privs',
        '--',
      ],
      env: { PATH: '/usr/bin:/bin' },
    });
    try {
      assert.equal(ex.info?.isolation, 'none');
      await expectGymError(ex.exec(ATTACK(ex.info!.pid)), 'SANDBOX_UNAVAILABLE', /is gone/);
    } finally {
      await ex.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
);
