import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../src/episode/gym.ts';
import { expectGymError, makeGym, markerSurvivors, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
let id: string;
const run = (args: Record<string, unknown>, ctx = testContext()) => gym.callTool('run_command', args, ctx, id);

before(async () => {
  ({ gym, cleanup } = await makeGym());
  id = await startExample(gym, 'roman-numerals');
});
after(() => cleanup());

test('returns the exit code, stdout and stderr', async () => {
  const r = await run({ command: 'echo hello; echo oops >&2; exit 4' });
  assert.match(r.text, /^\[exit code 4, \d+\.\d s\]\nhello\n--- stderr ---\noops$/);
  assert.equal((r.data as { exitCode: number }).exitCode, 4);
  assert.equal((r.data as { stdout: string }).stdout, 'hello\n');
});

test('runs in the workspace root, or in cwd', async () => {
  const root = gym.episode(id).sandbox.workdir;
  assert.equal((await run({ command: 'pwd; ls' })).text.split('\n').slice(1).join('\n'), `${root}\nroman.py\ntests`);
  assert.match((await run({ command: 'pwd', cwd: 'tests' })).text, new RegExp(`\\n${root}/tests$`));
  await expectGymError(run({ command: 'pwd', cwd: '../..' }), 'PATH_OUTSIDE_WORKSPACE');
  await expectGymError(run({ command: 'pwd', cwd: 'nope' }), 'FILE_NOT_FOUND');
});

test('uses the task environment (python with pytest)', async () => {
  const r = await run({ command: 'python -c "import sys, pytest; print(sys.version_info[:2], pytest.__version__)"' });
  assert.match(r.text, /\(3, 11\) 8\.3\.5/);
});

test('no state carries over between calls', async () => {
  await run({ command: 'cd tests; export FOO=bar' });
  assert.match((await run({ command: 'echo "[$FOO]"; pwd' })).text, /\[\]\n\S+\/workspace$/);
});

test('a command past its timeout is killed and says so, and nothing it started survives', async () => {
  const started = Date.now();
  const r = await run({ command: 'echo partial; sleep 30 & sleep 30', timeout_s: 1 });
  assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
  assert.match(r.text, /^\[timed out after 1 s \(killed; partial output below\)/);
  assert.match(r.text, /partial/);
  assert.equal((r.data as { timedOut: boolean }).timedOut, true);
  assert.deepEqual(await markerSurvivors(gym.episode(id).sandbox.id), []);
});

test('output streams to the caller while it runs', async () => {
  const ctx = testContext();
  await run({ command: 'echo one; echo two' }, ctx);
  assert.equal(ctx.output.join(''), 'one\ntwo\n');
});

test('long output is capped and says so', async () => {
  const r = await run({ command: 'seq 1 200000' });
  assert.match(r.text, /bytes omitted/);
  assert.match(r.text, /\[output capped: 1288895 bytes of stdout/);
  assert.ok(r.text.length < 600_000);
});

test('no output says so', async () => {
  assert.match((await run({ command: 'true' })).text, /\(no output\)$/);
});

test('invalid arguments name the field', async () => {
  await expectGymError(run({ command: '' }), 'INVALID_ARGUMENT', /'command'/);
  await expectGymError(run({ command: 'true', timeout_s: 601 }), 'INVALID_ARGUMENT', /'timeout_s'/);
  await expectGymError(run({ command: 'true', timeout_s: 0 }), 'INVALID_ARGUMENT', /'timeout_s'/);
});

test('a cancelled call reports CANCELLED and the episode goes on', async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 300);
  await expectGymError(run({ command: 'sleep 30' }, testContext(ac.signal)), 'CANCELLED');
  assert.match((await run({ command: 'echo after' })).text, /after/);
});
