import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cachedCheckout, checkoutNoFuture, cutFuture, findFuture, git, locateMirror, repoSource } from '../../src/repo/index.ts';
import { expectGymError, tempDir } from '../helpers.ts';

/** A repository with a past (A), a base (B), a future (C, tagged v2) and a side branch (D). */
async function makeHistory(root: string): Promise<{ dir: string; a: string; b: string; c: string; d: string }> {
  const dir = path.join(root, 'origin');
  await fs.mkdir(dir);
  const g = (args: string[]) => git(args, { cwd: dir });
  await g(['init', '-q', '-b', 'main']);
  const commit = async (file: string, text: string, msg: string) => {
    await fs.writeFile(path.join(dir, file), text);
    await g(['add', file]);
    await g(['commit', '-q', '-m', msg]);
    return (await g(['rev-parse', 'HEAD'])).trim();
  };
  const a = await commit('Lib.java', 'class Lib {}\n', 'past');
  await g(['tag', 'v0', a]);
  const b = await commit('Lib.java', 'class Lib { int bug; }\n', 'base');
  const c = await commit('Lib.java', 'class Lib { int fixed; }\n', 'the fix (future)');
  await g(['tag', '-a', '-m', 'release', 'v2', c]);
  await g(['checkout', '-q', '-b', 'side', a]);
  const d = await commit('Side.java', 'class Side {}\n', 'side branch');
  await g(['checkout', '-q', 'main']);
  return { dir, a, b, c, d };
}

describe('repo: workspaces with no future', () => {
  let root: string;
  let h: Awaited<ReturnType<typeof makeHistory>>;
  before(async () => {
    root = await tempDir('benchgym-repo-');
    h = await makeHistory(root);
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  it('checks out the base of a work-tree source: git log --all, tag, reflog, branch -a show nothing after it', async () => {
    const ws = path.join(root, 'ws1');
    const c = await checkoutNoFuture({ source: h.dir, commit: h.b, dest: ws });
    assert.equal(c.commit, h.b);
    assert.ok(c.report.ok, c.report.problems.join('; '));
    const g = (args: string[]) => git(args, { cwd: ws });
    assert.deepEqual((await g(['log', '--all', '--format=%H'])).trim().split('\n'), [h.b, h.a]);
    assert.equal((await g(['tag'])).trim(), '');
    assert.equal((await g(['reflog'])).trim(), '');
    assert.equal((await g(['branch', '-a', '--format=%(refname)'])).trim(), 'refs/heads/main');
    assert.equal((await g(['remote'])).trim(), '');
    assert.equal(await fs.readFile(path.join(ws, 'Lib.java'), 'utf8'), 'class Lib { int bug; }\n');
    assert.equal((await g(['status', '--porcelain'])).trim(), '');
    // The fix and the side branch are not even stored.
    await assert.rejects(g(['cat-file', '-e', h.c]));
    await assert.rejects(g(['cat-file', '-e', h.d]));
    assert.equal((await g(['fsck', '--lost-found', '--no-reflogs'])).trim(), '');
  });

  it('checks out from a bare mirror', async () => {
    const bare = path.join(root, 'mirror.git');
    await git(['clone', '-q', '--mirror', h.dir, bare]);
    const ws = path.join(root, 'ws2');
    const c = await checkoutNoFuture({ source: bare, commit: h.a, dest: ws, branch: 'base' });
    assert.equal((await git(['log', '--all', '--format=%H'], { cwd: ws })).trim(), h.a);
    assert.equal((await git(['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: ws })).trim(), 'base');
    assert.ok(c.report.ok);
  });

  it('finds the future in an ordinary clone: commits, refs, remote, reflog, a dangling blob', async () => {
    const clone = path.join(root, 'clone');
    await git(['clone', '-q', h.dir, clone]);
    await git(['fetch', '-q', 'origin', 'side:side'], { cwd: clone });
    await git(['reset', '-q', '--hard', h.b], { cwd: clone });
    const r = await findFuture(clone, h.b);
    assert.equal(r.ok, false);
    assert.ok(r.strayCommits.includes(h.c) && r.strayCommits.includes(h.d));
    assert.ok(r.strayRefs.some((x) => x.ref === 'refs/tags/v2'));
    assert.ok(r.strayRefs.some((x) => x.ref === 'refs/remotes/origin/main'));
    assert.ok(r.strayRefs.some((x) => x.ref === 'ORIG_HEAD'));
    assert.deepEqual(r.remotes, ['origin']);
    assert.ok(r.reflogEntries > 0);

    // cutFuture makes the same clone clean, which is how a caller cuts history at a parent.
    await cutFuture(clone, 'main');
    const cut = await findFuture(clone, h.b);
    assert.ok(cut.ok, cut.problems.join('; '));

    // A blob of the fixed file, stored but unreachable, is a leak on its own.
    await git(['hash-object', '-w', '--stdin'], { cwd: clone, input: 'class Lib { int fixed; }\n' });
    const leak = await findFuture(clone, h.b);
    assert.equal(leak.ok, false);
    assert.equal(leak.strayObjects.blob, 1);
    assert.deepEqual(leak.strayCommits, []);
  });

  it('refuses bad commits and cleans up after a failed fetch', async () => {
    await expectGymError(
      checkoutNoFuture({ source: h.dir, commit: h.b.slice(0, 12), dest: path.join(root, 'x') }),
      'INVALID_ARGUMENT',
      /full object name/,
    );
    const dest = path.join(root, 'missing');
    await expectGymError(
      checkoutNoFuture({ source: h.dir, commit: 'f'.repeat(40), dest }),
      'ENV_BUILD_FAILED',
      /cannot fetch commit f{40}/,
    );
    assert.equal(existsSync(dest), false);
    // A remote this machine cannot reach is unavailable here, not a broken task.
    await expectGymError(
      checkoutNoFuture({ source: 'https://host.invalid/acme/lib.git', commit: 'f'.repeat(40), dest: path.join(root, 'unreachable') }),
      'ENV_UNAVAILABLE',
      /cannot fetch commit/,
    );
    await fs.mkdir(path.join(root, 'full'));
    await fs.writeFile(path.join(root, 'full', 'x'), '');
    await expectGymError(checkoutNoFuture({ source: h.dir, commit: h.b, dest: path.join(root, 'full') }), 'INVALID_ARGUMENT', /not empty/);
  });

  it('lays out the base from a mirror that lacks some file contents, leaving those files out (sparse) and saying which', async () => {
    // A mirror that left out a large file: its blob is gone from the object store, so git's own fetch refuses.
    const lacking = path.join(root, 'lacking');
    await git(['init', '-q', '-b', 'main', lacking]);
    const g = (args: string[], input?: string) => git(args, { cwd: lacking, ...(input !== undefined ? { input } : {}) });
    await fs.mkdir(path.join(lacking, 'fixtures'));
    await fs.writeFile(path.join(lacking, 'fixtures', 'big [1].tif'), 'a large image\n');
    await fs.writeFile(path.join(lacking, 'lib.py'), 'def f():\n    return 1\n');
    await g(['add', '.']);
    await g(['commit', '-q', '-m', 'base']);
    const base = (await g(['rev-parse', 'HEAD'])).trim();
    await fs.writeFile(path.join(lacking, 'lib.py'), 'def f():\n    return 2\n');
    await g(['commit', '-q', '-am', 'future']);
    const blob = (await g(['rev-parse', `${base}:fixtures/big [1].tif`])).trim();
    await fs.rm(path.join(lacking, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
    const dest = path.join(root, 'from-lacking');
    const c = await checkoutNoFuture({ source: lacking, commit: base, dest });
    assert.deepEqual(c.missing, ['fixtures/big [1].tif']);
    assert.ok(c.report.ok, c.report.problems.join('; '));
    assert.equal(await fs.readFile(path.join(dest, 'lib.py'), 'utf8'), 'def f():\n    return 1\n');
    assert.equal(existsSync(path.join(dest, 'fixtures', 'big [1].tif')), false);
    // git does not see the absent file as deleted, and a reset does not ask for its contents.
    assert.equal((await git(['status', '--porcelain'], { cwd: dest })).trim(), '');
    await fs.writeFile(path.join(dest, 'lib.py'), 'edited\n');
    await git(['reset', '-q', '--hard'], { cwd: dest });
    assert.equal((await git(['log', '--all', '--format=%H'], { cwd: dest })).trim(), base);
    // Without the commit's own tree there is nothing to lay out: the error is git's, as before.
    const tree = (await g(['rev-parse', `${base}^{tree}`])).trim();
    await fs.rm(path.join(lacking, '.git', 'objects', tree.slice(0, 2), tree.slice(2)));
    await expectGymError(
      checkoutNoFuture({ source: lacking, commit: base, dest: path.join(root, 'no-tree') }),
      'ENV_BUILD_FAILED',
      /cannot fetch commit/,
    );
    assert.equal(existsSync(path.join(root, 'no-tree')), false);
  });

  it('locates mirrors by the usual layouts and refuses the network when told', async () => {
    const reposDir = path.join(root, 'mirrors');
    await fs.mkdir(path.join(reposDir, 'acme+lib'), { recursive: true });
    await git(['clone', '-q', '--bare', h.dir, path.join(reposDir, 'acme+lib', 'repo')]);
    await git(['clone', '-q', h.dir, path.join(reposDir, 'octo__widget')]);
    assert.equal(await locateMirror('acme/lib', reposDir), path.join(reposDir, 'acme+lib', 'repo'));
    assert.equal(await locateMirror('octo/widget', reposDir), path.join(reposDir, 'octo__widget'));
    assert.equal(await locateMirror('nobody/none', reposDir), null);
    // GitHub names are case-insensitive: the record's `acme/LIB` is the mirror's `acme+lib`.
    assert.equal(await locateMirror('Acme/LIB', reposDir), path.join(reposDir, 'acme+lib', 'repo'));
    assert.equal(await repoSource('nobody/none', { reposDir }), 'https://github.com/nobody/none.git');
    await expectGymError(repoSource('nobody/none', { reposDir, allowNetwork: false }), 'ENV_UNAVAILABLE', /no mirror of nobody\/none/);
    await expectGymError(repoSource('../etc', {}), 'INVALID_ARGUMENT', /owner\/name/);
  });

  it('caches a checkout per commit and rebuilds a tampered one', async () => {
    const reposDir = path.join(root, 'mirrors2');
    await git(['clone', '-q', '--bare', h.dir, path.join(reposDir, 'acme__lib.git')]);
    const cacheDir = path.join(root, 'cache');
    const first = await cachedCheckout({ cacheDir, repo: 'acme/lib', commit: h.b, reposDir, allowNetwork: false });
    const again = await cachedCheckout({ cacheDir, repo: 'acme/lib', commit: h.b, reposDir, allowNetwork: false });
    assert.equal(again.dir, first.dir);
    await git(['hash-object', '-w', '--stdin'], { cwd: first.dir, input: 'leaked fix\n' });
    const rebuilt = await cachedCheckout({ cacheDir, repo: 'acme/lib', commit: h.b, reposDir, allowNetwork: false });
    assert.ok((await findFuture(rebuilt.dir, h.b)).ok);
  });
});
