import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { availablePythons, findPython, PythonEnvBuilder } from '../../src/env/python.ts';
import type { PreparedEnv } from '../../src/env/types.ts';
import { OncePerKey, withDirLock } from '../../src/lock.ts';
import { pathToFileURL } from 'node:url';

const LOCK_MODULE = pathToFileURL(path.resolve(import.meta.dirname, '../../src/lock.ts')).href;
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
  assert.match(
    execFileSync(env.command, ['-c', 'import pytest, sys; print(pytest.__version__, sys.version_info[:2])'], { encoding: 'utf8' }),
    /^8\.3\.5 \(3, 11\)/,
  );
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
  await assert.rejects(new PythonEnvBuilder(cacheDir).prepare({ kind: 'python', version: '3.2', requirements: [] }), {
    code: 'ENV_UNAVAILABLE',
  });
});

test('withDirLock serializes holders, and a holder killed with SIGKILL releases the lock at once', async () => {
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

  // Another process takes the lock and is killed while holding it (the CI failure mode:
  // `benchgym run` killed with -9 in the middle of preparing an env).
  const holder = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `
    import('${LOCK_MODULE}').then(({ withDirLock }) => withDirLock(${JSON.stringify(lock)}, async () => {
      console.log('held');
      await new Promise((r) => setTimeout(r, 600_000));
    }));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve) => holder.stdout.on('data', (b: Buffer) => b.toString().includes('held') && resolve()));
  await assert.rejects(
    withDirLock(lock, async () => 'too early', { timeoutMs: 1000 }),
    /timed out/,
  );
  holder.kill('SIGKILL');
  const t0 = Date.now();
  assert.equal(await withDirLock(lock, async () => 'taken', { timeoutMs: 10_000 }), 'taken');
  assert.ok(Date.now() - t0 < 5000, 'the lock is free as soon as its holder is gone');
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

test('pytestPinFor: pytest 8.3.5, the last pytest an old Python supports, or none when the task pins pytest', async () => {
  const { pytestPinFor, PYTEST_PIN } = await import('../../src/env/python.ts');
  assert.equal(pytestPinFor('3.11', ['semver==2.13.0']), PYTEST_PIN);
  assert.equal(pytestPinFor('3.7', []), 'pytest==7.4.4');
  assert.equal(pytestPinFor('3.6', []), 'pytest==7.0.1');
  assert.equal(pytestPinFor('3.10', ['pytest==7.0.0']), null);
  assert.equal(pytestPinFor('3.10', ['Pytest >= 7']), null);
  assert.equal(pytestPinFor('3.10', ['pytest-cov==4.1.0']), PYTEST_PIN, 'a plugin is not pytest');
});

test(
  'classifyPipFailure: pins that cannot exist here are ENV_UNAVAILABLE; ' + 'conflicts, network trouble and the rest ENV_BUILD_FAILED',
  async () => {
    const { classifyPipFailure } = await import('../../src/env/python.ts');
    const unavailable = [
      'ERROR: Could not find a version that satisfies the requirement torch==1.9.0 (from ' +
        'versions: 1.13.0, 2.0.0)\nERROR: No matching distribution found for torch==1.9.0',
      "ERROR: Package 'numpy' requires a different Python: 3.7.16 not in '>=3.8'",
      'ERROR: numpy-1.16.0-cp37-cp37m-manylinux1_x86_64.whl is not a supported wheel on this platform.',
      '  error: subprocess-exited-with-error\n  × Getting requirements to ' +
        'build wheel did not run successfully.\nerror: metadata-generation-failed',
      "Building wheel for scipy (setup.py): finished with status 'error'\nFailed to build scipy\nERROR: " +
        'Could not build wheels for scipy, which is required to install pyproject.toml-based projects',
    ];
    for (const log of unavailable) assert.equal(classifyPipFailure(log).code, 'ENV_UNAVAILABLE', log);
    assert.match(classifyPipFailure(unavailable[0]!).reason, /no distribution of torch==1\.9\.0 for this Python and platform/);
    assert.match(classifyPipFailure(unavailable[4]!).reason, /no wheel of scipy/);
    const failed = [
      'ERROR: Cannot install semver==2.13.0 and semver==3.0.0 because these package versions ' +
        'have conflicting dependencies.\nERROR: ResolutionImpossible: for help visit ...',
      "WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError(...)': " +
        '/simple/tqdm/\nERROR: Could not find a version that satisfies the requirement ' +
        'tqdm==4.28.1 (from versions: none)\nERROR: No matching distribution found for tqdm==4.28.1',
      'ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.',
      '',
    ];
    for (const log of failed) assert.equal(classifyPipFailure(log).code, 'ENV_BUILD_FAILED', log);
  },
);

test(
  "a pin with no distribution is ENV_UNAVAILABLE with pip's error; " +
    'conflicting pins stay ENV_BUILD_FAILED; a failed after-install is a note',
  async () => {
    const builder = new PythonEnvBuilder(cacheDir);
    const missing = await builder.prepare({ kind: 'python', version: '3.11', requirements: ['benchgym-no-such-package==0.0.1'] }).then(
      () => null,
      (e: unknown) => e as { code: string; message: string; details: { log: string } },
    );
    assert.equal(missing?.code, 'ENV_UNAVAILABLE');
    assert.match(missing!.message, /no distribution of benchgym-no-such-package==0\.0\.1/);
    assert.match(missing!.details.log, /No matching distribution found for benchgym-no-such-package==0\.0\.1/);
    await assert.rejects(builder.prepare({ kind: 'python', version: '3.11', requirements: ['semver==2.13.0', 'semver==3.0.0'] }), {
      code: 'ENV_BUILD_FAILED',
      message: /conflict/,
    });
    const env = await builder.prepare({
      kind: 'python',
      version: '3.11',
      requirements: ['semver==2.13.0'],
      afterInstall: [['benchgym-no-such-package==0.0.1'], ['semver==3.0.0']],
    });
    assert.equal(env.notes.length, 1);
    assert.match(env.notes[0]!, /after-install `pip install benchgym-no-such-package==0\.0\.1` failed \(no distribution/);
    // Stages run in order and may change what came before: semver 3 replaced 2.13.
    assert.match(execFileSync(env.command, ['-c', 'import semver; print(semver.__version__)'], { encoding: 'utf8' }), /^3\.0\.0/);
    assert.deepEqual(
      (
        await new PythonEnvBuilder(cacheDir).prepare({
          kind: 'python',
          version: '3.11',
          requirements: ['semver==2.13.0'],
          afterInstall: [['benchgym-no-such-package==0.0.1'], ['semver==3.0.0']],
        })
      ).notes,
      env.notes,
      'the notes outlive the build',
    );
  },
);

test(
  'constraints pin what the requirements pull in; a setup step that cannot get ' +
    'its data is ENV_UNAVAILABLE with its reason, and succeeds from a local folder',
  async () => {
    const builder = new PythonEnvBuilder(cacheDir);
    // iniconfig is a dependency of the runner (pytest), not a requirement: the constraint decides its version.
    const constrained = await builder.prepare({
      kind: 'python',
      version: '3.11',
      requirements: ['semver==2.13.0'],
      constraints: ['iniconfig==1.1.1'],
    });
    assert.match(
      execFileSync(constrained.command, ['-c', 'import importlib.metadata as m; print(m.version("iniconfig"))'], { encoding: 'utf8' }),
      /^1\.1\.1/,
    );

    const script = [
      'import os, sys, shutil',
      'src = os.environ.get("BENCHGYM_SETUP_INPUT")',
      'if not src:',
      '    print("benchgym-setup-unavailable: corpus missing (no network); set BENCHGYM_TEST_CORPUS")',
      '    sys.exit(3)',
      'shutil.copytree(src, os.path.join(sys.prefix, "corpus"))',
    ].join('\n');
    const spec = {
      kind: 'python' as const,
      version: '3.11',
      requirements: ['semver==2.13.0'],
      setup: { description: 'test corpus', script, inputEnv: 'BENCHGYM_TEST_CORPUS' },
    };
    delete process.env.BENCHGYM_TEST_CORPUS;
    const counter = counting(builder);
    await assert.rejects(builder.prepare(spec), {
      code: 'ENV_UNAVAILABLE',
      message: /^test corpus: corpus missing \(no network\); set BENCHGYM_TEST_CORPUS/,
    });
    await assert.rejects(builder.prepare(spec), { code: 'ENV_UNAVAILABLE' });
    assert.equal(counter.builds(), 1, 'a second try re-runs the setup step only: the packages stay installed');
    await assert.rejects(builder.prepare({ ...spec, setup: { ...spec.setup, script: 'import sys; sys.exit(1)' } }), {
      code: 'ENV_BUILD_FAILED',
      message: /setup step \(test corpus\) failed/,
    });

    const corpus = await tempDir('benchgym-corpus-');
    await fs.writeFile(path.join(corpus, 'words.txt'), 'hello\n');
    process.env.BENCHGYM_TEST_CORPUS = corpus;
    try {
      const env = await builder.prepare(spec);
      assert.equal(
        execFileSync(env.command, ['-c', 'import sys, os; print(open(os.path.join(sys.prefix, "corpus", "words.txt")).read().strip())'], {
          encoding: 'utf8',
        }).trim(),
        'hello',
      );
      process.env.BENCHGYM_TEST_CORPUS = path.join(corpus, 'nowhere');
      await assert.rejects(builder.prepare(spec), {
        code: 'INVALID_ARGUMENT',
        message: /BENCHGYM_TEST_CORPUS=.*nowhere: no such folder \(test corpus\)/,
      });
    } finally {
      delete process.env.BENCHGYM_TEST_CORPUS;
      await fs.rm(corpus, { recursive: true, force: true });
    }
  },
);

test('availablePythons: the 3.x interpreters findPython finds, oldest first, each with its full version', async () => {
  const found = await availablePythons();
  const exe = await findPython('3.11');
  if (!exe) return void assert.ok(!found.some((p) => p.version === '3.11'));
  const py311 = found.find((p) => p.version === '3.11')!;
  assert.equal(py311.exe, exe);
  assert.equal(py311.full, execFileSync(exe, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], { encoding: 'utf8' }).trim());
  const minors = found.map((p) => Number(p.version.split('.')[1]));
  assert.deepEqual(
    minors,
    [...minors].sort((a, b) => a - b),
  );
  assert.ok(found.every((p) => p.full.startsWith(`${p.version}.`)));
});
