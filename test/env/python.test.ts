import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { findPython, PythonEnvBuilder } from '../../src/env/python.ts';
import type { PreparedEnv } from '../../src/env/types.ts';
import { OncePerKey, withDirLock } from '../../src/env/lock.ts';
import { tempDir } from '../helpers.ts';

test('findPython finds a 3.11 interpreter that is 3.11', async () => {
  const exe = await findPython('3.11');
  assert.ok(exe, 'no Python 3.11 found');
  const version = execFileSync(exe, ['--version'], { encoding: 'utf8' });
  assert.match(version, /^Python 3\.11\.\d+/);
});

test('findPython returns null for a version that does not exist', async () => {
  assert.equal(await findPython('3.2'), null);
  assert.equal(await findPython('3.99'), null);
});

test('findPython does not take 3.1 for 3.11 or 3.11 for 3.1', async () => {
  const exe = await findPython('3.1');
  if (exe) assert.match(execFileSync(exe, ['--version'], { encoding: 'utf8' }), /^Python 3\.1\.\d+/);
});

let cacheDir: string;
before(async () => {
  cacheDir = await tempDir('benchgym-envcache-');
});
after(async () => {
  await fs.rm(cacheDir, { recursive: true, force: true });
});

/** Counts how often a builder really builds a venv. */
function counting(builder: PythonEnvBuilder): { builds: () => number } {
  let n = 0;
  const b = builder as unknown as { build: (...a: unknown[]) => Promise<void> };
  const original = b.build.bind(builder);
  b.build = async (...a: unknown[]) => {
    n++;
    return original(...a);
  };
  return { builds: () => n };
}

test('concurrent prepare() calls for one spec, in one builder and across builders, build once and agree', async () => {
  const one = new PythonEnvBuilder(cacheDir);
  const two = new PythonEnvBuilder(cacheDir); // as another process would, sharing only the cache directory
  const c1 = counting(one);
  const c2 = counting(two);
  const spec = { kind: 'python' as const, version: '3.11', requirements: [] };
  const results: PreparedEnv[] = await Promise.all([one.prepare(spec), one.prepare(spec), two.prepare(spec)]);
  assert.equal(c1.builds() + c2.builds(), 1);
  assert.equal(results[0]!.key, results[1]!.key);
  assert.deepEqual(results[0], results[2]);
  const env = results[0]!;
  assert.equal(env.kind, 'python');
  assert.ok(existsSync(env.command), env.command);
  assert.match(execFileSync(env.command, ['-c', 'import pytest, sys; print(pytest.__version__, sys.version_info[:2])'], { encoding: 'utf8' }), /^8\.3\.5 \(3, 11\)/);
  assert.ok(env.path[0]!.startsWith(cacheDir));
  assert.ok(env.readOnlyPaths.some((p) => env.command.startsWith(p)));

  // A later prepare reuses the built env.
  const three = new PythonEnvBuilder(cacheDir);
  const c3 = counting(three);
  assert.deepEqual(await three.prepare(spec), env);
  assert.equal(c3.builds(), 0);
});

test('the cache key ignores the order of requirements and differs by requirement and version', async () => {
  const builder = new PythonEnvBuilder(cacheDir);
  const b = builder as unknown as { build: () => Promise<void> };
  b.build = async () => {}; // keys only: no real builds
  const key = async (version: string, requirements: string[]) => (await builder.prepare({ kind: 'python', version, requirements })).key;
  assert.equal(await key('3.11', ['a==1', 'b==2']), await key('3.11', ['b==2', 'a==1']));
  assert.notEqual(await key('3.11', ['a==1']), await key('3.11', ['a==2']));
  assert.notEqual(await key('3.11', []), await key('3.12', []));
});

test('a Python that does not exist: ENV_UNAVAILABLE', async () => {
  await assert.rejects(new PythonEnvBuilder(cacheDir).prepare({ kind: 'python', version: '3.2', requirements: [] }), { code: 'ENV_UNAVAILABLE' });
});

test('withDirLock serializes holders and takes over a lock whose owner is dead', async () => {
  const lock = path.join(cacheDir, 'locks', 'x.lock');
  const order: string[] = [];
  await Promise.all([
    withDirLock(lock, async () => {
      order.push('a-in');
      await new Promise((r) => setTimeout(r, 300));
      order.push('a-out');
    }),
    new Promise((r) => setTimeout(r, 50)).then(() =>
      withDirLock(lock, async () => {
        order.push('b-in');
      }),
    ),
  ]);
  assert.deepEqual(order, ['a-in', 'a-out', 'b-in']);
  assert.equal(existsSync(lock), false);

  await fs.mkdir(lock, { recursive: true });
  await fs.writeFile(path.join(lock, 'pid'), '999999999');
  assert.equal(await withDirLock(lock, async () => 'taken over', { timeoutMs: 5000 }), 'taken over');
});

test('OncePerKey runs once per key among concurrent callers, and again after it settles', async () => {
  const once = new OncePerKey<number>();
  let runs = 0;
  const fn = async () => {
    runs++;
    await new Promise((r) => setTimeout(r, 50));
    return runs;
  };
  const [a, b] = await Promise.all([once.run('k', fn), once.run('k', fn)]);
  assert.equal(a, 1);
  assert.equal(b, 1);
  assert.equal(await once.run('k', fn), 2);
});
