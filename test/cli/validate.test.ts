/** benchgym validate when it can check nothing, and when the cause is an unreachable package index. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { EXAMPLES_DIR } from '../../envs/examples/index.ts';
import { unreachableIndexLines, unreachableIndexOf } from '../../src/cli/package_index.ts';
import { TEST_CACHE_DIR, tempDir } from '../helpers.ts';
import { startCli } from './cli.ts';

test("unreachableIndexOf reads pip's reason and Maven's and Gradle's transfer errors; other failures are not the network", () => {
  assert.equal(
    unreachableIndexOf('start state: ENV_BUILD_FAILED: could not build the Python env (x==1): pip could not reach the package index\n...'),
    'PyPI',
  );
  const maven =
    "could not resolve the Maven project's dependencies:\n[ERROR] Failed to execute goal on project p: Could " +
    'not resolve dependencies for project a:b:jar:1: Could not transfer artifact junit:junit:pom:4.13.2 from/to ' +
    'central (https://repo.maven.apache.org/maven2): repo.maven.apache.org: Temporary failure in name resolution';
  assert.equal(unreachableIndexOf(maven), 'Maven Central');
  assert.equal(unreachableIndexOf("Could not GET 'https://repo.maven.apache.org/maven2/x.pom'. > Connect timed out"), 'Maven Central');
  assert.equal(
    unreachableIndexOf('could not build the Python env (x==1): no distribution of x==1 for this Python and platform'),
    undefined,
  );
  assert.equal(
    unreachableIndexOf('the project does not build here:\n[ERROR] COMPILATION ERROR: Connection refused is a string in the code'),
    undefined,
    'a compile error is not the network',
  );
  assert.deepEqual(
    unreachableIndexLines([
      ['gold: pip could not reach the package index'],
      ['start state: pip could not reach the package index', 'gold: pip could not reach the package index'],
      ['x'],
    ]),
    [
      'pip could not reach the package index (PyPI or $PIP_INDEX_URL): check the network, ' +
        'a proxy ($HTTPS_PROXY) or the index URL; 2 tasks could not build their env for that',
    ],
  );
});

test('benchgym validate says when pip could not reach the package index, and exits 1 having checked nothing', async () => {
  const suite = await tempDir('benchgym-cli-validate-');
  const dataDir = await tempDir('benchgym-cli-validate-');
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  try {
    // roman-numerals with a requirement no cached env holds: its env must be built, from an index that is down.
    const dir = path.join(suite, 'tasks', 'offline');
    await fs.cp(path.join(EXAMPLES_DIR, 'tasks', 'roman-numerals'), dir, { recursive: true });
    const taskJson = JSON.parse(await fs.readFile(path.join(dir, 'task.json'), 'utf8'));
    const requirement = `benchgym-probe-${randomBytes(4).toString('hex')}==1.0`;
    await fs.writeFile(
      path.join(dir, 'task.json'),
      JSON.stringify({
        ...taskJson,
        id: 'offline',
        env: { kind: 'python', version: taskJson.env?.version ?? '3.11', requirements: [requirement] },
      }),
    );
    const env = {
      ...process.env,
      PIP_INDEX_URL: `http://127.0.0.1:${port}/simple`,
      PIP_RETRIES: '1',
      PIP_TIMEOUT: '2',
      PIP_EXTRA_INDEX_URL: '',
      PIP_FIND_LINKS: '',
    };
    const r = await startCli(['validate', '--suite', `mine=${suite}`, '--data-dir', dataDir, '--cache-dir', TEST_CACHE_DIR], 300_000, env)
      .done;
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /^error +offline .*ENV_BUILD_FAILED: could not build the Python env .*pip could not reach the package index/m);
    assert.match(
      r.stderr,
      new RegExp(
        String.raw`benchgym validate: pip could not reach the package index \(PyPI or \$PIP_INDEX_URL\): check the ` +
          String.raw`network.*; 1 task could not build its env for that`,
      ),
    );
    assert.match(r.stderr, /benchgym validate: nothing was checked: 0 unavailable here, 1 failed to score \(of 1 task\)/);
    const json = await startCli(
      ['validate', '--suite', `mine=${suite}`, '--json', '--data-dir', dataDir, '--cache-dir', TEST_CACHE_DIR],
      300_000,
      env,
    ).done;
    assert.equal(json.code, 1);
    const report = JSON.parse(json.stdout) as { checked: number; nothingChecked: boolean; unreachableIndex: string[] };
    assert.equal(report.checked, 0);
    assert.equal(report.nothingChecked, true);
    assert.match(report.unreachableIndex[0] ?? '', /^pip could not reach the package index/);
  } finally {
    await fs.rm(suite, { recursive: true, force: true });
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});
