/**
 * The backend table: a fourth backend is one registration. `fake` is registered here alone (no
 * other file knows it): `--sandbox fake` picks it, its flag is parsed by its own schema, and the
 * sandbox conformance suite passes on it. Its sandboxes are the local backend's under its name.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { BUILTINS } from '../../bin/composition.ts';
import type { Composition } from '../../src/cli/composition.ts';
import { gymFrom } from '../../src/cli/gym_options.ts';
import { cliCommands, main } from '../../src/cli/main.ts';
import { backendNamed, defineBuilder, sandboxFactoryFrom, type SandboxBackend } from '../../src/sandbox/backend.ts';
import { LocalInstanceFactory } from '../../src/sandbox/local/index.ts';
import type { Sandbox, SandboxCreateOptions, SandboxFactory } from '../../src/sandbox/types.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { builtinRegistry, expectGymError, tempDir, TEST_CACHE_DIR } from '../helpers.ts';
import { sandboxConformance } from './conformance.ts';

/** A local sandbox that calls itself `fake` (its forks too). */
function fakeSandbox(inner: Sandbox): Sandbox {
  return new Proxy(inner, {
    get(target, key) {
      if (key === 'backend') return 'fake';
      if (key === 'fork') return target.fork && (async () => fakeSandbox(await target.fork!()));
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The fake backend's factory: the local backend's, each sandbox renamed, each creation counted. */
class FakeFactory implements SandboxFactory {
  readonly backend = 'fake';
  created = 0;
  constructor(
    private readonly inner: LocalInstanceFactory,
    readonly tag: string,
  ) {}
  get hostPaths() {
    return this.inner.hostPaths;
  }
  prepare(task: Task) {
    return this.inner.prepare(task);
  }
  async create(opts: SandboxCreateOptions): Promise<Sandbox> {
    this.created++;
    return fakeSandbox(await this.inner.create(opts));
  }
  async describe(): Promise<string> {
    return `isolation: fake (${this.tag}) over ${await this.inner.describe()}`;
  }
  close() {
    return this.inner.close();
  }
}

const FAKE: SandboxBackend = {
  name: 'fake',
  summary: "the local backend's sandboxes under another name (a test's)",
  flags: { 'fake-tag': { type: 'string' } },
  usage: '      --fake-tag WORD (lower-case letters)',
  load: async () =>
    defineBuilder({
      options: z.object({
        'fake-tag': z
          .string()
          .regex(/^[a-z]+$/, 'lower-case letters')
          .default('plain'),
      }),
      create: async (o, ctx) =>
        new FakeFactory(
          new LocalInstanceFactory({ dataDir: ctx.dataDir, cacheDir: ctx.cacheDir ?? TEST_CACHE_DIR, privatePaths: ctx.privatePaths }),
          o['fake-tag'],
        ),
    }),
};

/** The built-in composition with `fake` registered after the built-in backends: the only change a fourth backend needs. */
const ROOT: Composition = { ...BUILTINS, sandboxes: [...BUILTINS.sandboxes, FAKE] };

const dirs: string[] = [];
after(async () => Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true }))));
const dataDir = async () => {
  const d = await tempDir('benchgym-fake-backend-');
  dirs.push(d);
  return d;
};

test('--sandbox fake picks the registered backend, its flag checked by its own schema; an unknown name lists the registered', async () => {
  const gym = await gymFrom({ sandbox: 'fake', 'fake-tag': 'blue', 'data-dir': await dataDir(), 'cache-dir': TEST_CACHE_DIR }, ROOT);
  try {
    assert.ok(gym.sandboxes instanceof FakeFactory);
    assert.equal(gym.sandboxes.tag, 'blue');
    assert.match(await gym.sandboxes.describe(), /^isolation: fake \(blue\) over isolation: local, /);
  } finally {
    await gym.close();
  }
  await expectGymError(
    gymFrom({ sandbox: 'fake', 'fake-tag': 'Blue!', 'data-dir': await dataDir() }, ROOT),
    'INVALID_ARGUMENT',
    /invalid --fake-tag: 'Blue!' \(lower-case letters\)/,
  );
  await expectGymError(
    Promise.resolve().then(() => backendNamed(ROOT.sandboxes, 'podman')),
    'INVALID_ARGUMENT',
    /invalid --sandbox: 'podman' \(registered: local, docker, kubernetes, fake\)/,
  );
  // The built-in table knows no fake.
  await expectGymError(
    Promise.resolve().then(() => backendNamed(BUILTINS.sandboxes, 'fake')),
    'INVALID_ARGUMENT',
    /registered: local, docker, kubernetes\)/,
  );
});

test('the CLI takes --sandbox fake and its flag (exit 0; a bad value exits 2), and every gym command lists it in --help', async () => {
  const args = ['tasks', '--suite', 'examples', '--sandbox', 'fake', '--data-dir', await dataDir()];
  assert.equal(await main([...args, '--fake-tag', 'red'], ROOT), 0);
  assert.equal(await main([...args, '--fake-tag', 'Red!'], ROOT), 2);
  assert.equal(await main([...args, '--fake-tag', 'red'], BUILTINS), 2, 'the built-in table has no --sandbox fake');
  for (const name of ['serve', 'mcp', 'tasks', 'validate', 'run', 'score']) {
    const usage = (
      await cliCommands(ROOT)
        .find((c) => c.name === name)!
        .load()
    ).usage;
    assert.match(
      usage,
      /--sandbox NAME +local \| docker \| kubernetes \| fake[\s\S]*fake: the local backend's sandboxes[\s\S]*--fake-tag/,
      name,
    );
  }
});

const fakes: FakeFactory[] = [];
sandboxConformance({
  name: 'fake',
  onHost: true,
  skip: async () => null,
  factory: async () => {
    const ctx = {
      dataDir: await dataDir(),
      cacheDir: TEST_CACHE_DIR,
      privatePaths: builtinRegistry().privatePaths(),
      purpose: 'episodes' as const,
    };
    const fake = await sandboxFactoryFrom(ROOT.sandboxes, { sandbox: 'fake' }, ctx);
    assert.ok(fake instanceof FakeFactory);
    fakes.push(fake);
    return fake;
  },
});

test('the conformance episodes and their scorers ran in the fake backend', () => {
  const created = fakes.reduce((n, f) => n + f.created, 0);
  assert.ok(fakes.length === 2 && created >= 6, `${fakes.length} fake factories made ${created} sandboxes`);
});
