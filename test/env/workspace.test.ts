import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gitStartState } from '../../src/env/workspace.ts';
import { git } from '../../src/repo/index.ts';
import { tempDir } from '../helpers.ts';

describe('env: the start state of a git workspace with build-setup edits', () => {
  let root: string;
  const bases = new Map<string, string>();
  before(async () => {
    root = await tempDir('benchgym-setup-');
    // A mirror (`acme__lib`) whose history holds a later commit; one mirror lacks a blob of the base.
    for (const name of ['acme__lib', 'acme__lacking']) {
      const repo = path.join(root, 'mirrors', name);
      await git(['init', '-q', '-b', 'main', repo]);
      await fs.mkdir(path.join(repo, 'docs'));
      await fs.writeFile(path.join(repo, 'pom.xml'), '<project><version>1.0-SNAPSHOT</version></project>\n');
      await fs.writeFile(path.join(repo, 'docs', 'big.html'), '<html>a large page</html>\n');
      await fs.writeFile(path.join(repo, 'docs', 'version.txt'), '1.0-SNAPSHOT\n');
      await git(['add', '.'], { cwd: repo });
      await git(['commit', '-q', '-m', 'base'], { cwd: repo });
      const base = (await git(['rev-parse', 'HEAD'], { cwd: repo })).trim();
      bases.set(name.replace('__', '/'), base);
      await fs.writeFile(path.join(repo, 'pom.xml'), '<project><version>1.0</version></project>\n');
      await git(['commit', '-q', '-am', 'future'], { cwd: repo });
      if (name === 'acme__lacking') {
        const blob = (await git(['rev-parse', `${base}:docs/big.html`], { cwd: repo })).trim();
        await fs.rm(path.join(repo, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
      }
    }
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  for (const repo of ['acme/lib', 'acme/lacking']) {
    it(
      `commits the edits as "benchgym: build setup" on the base ` +
        `(${repo === 'acme/lib' ? 'a complete mirror' : 'a mirror that lacks a blob of the base'})`,
      async () => {
        // One edit beside the absent page: its folder's tree is written again, naming the absent blob.
        const edits = [
          { file: 'pom.xml', find: '1.0-SNAPSHOT', replace: '1.0' },
          { file: 'docs/version.txt', find: '1.0-SNAPSHOT', replace: '1.0' },
        ];
        const base = bases.get(repo)!;
        const dir = await gitStartState(path.join(root, `cache-${repo.replace('/', '-')}`), {
          type: 'git',
          repo,
          commit: base,
          reposDir: path.join(root, 'mirrors'),
          allowNetwork: false,
          edits,
        });
        assert.equal(await fs.readFile(path.join(dir, 'pom.xml'), 'utf8'), '<project><version>1.0</version></project>\n');
        assert.equal((await git(['rev-parse', 'HEAD^'], { cwd: dir })).trim(), base);
        assert.match(
          await git(['log', '-1', '--format=%s%n%b'], { cwd: dir }),
          /^benchgym: build setup\npom\.xml: 1\.0-SNAPSHOT -> 1\.0\ndocs\/version\.txt: /,
        );
        assert.equal(await fs.readFile(path.join(dir, 'docs', 'version.txt'), 'utf8'), '1.0\n');
        // Nothing left uncommitted; the absent page stays absent, and not as a deletion.
        assert.equal((await git(['status', '--porcelain'], { cwd: dir })).trim(), '');
        assert.equal(existsSync(path.join(dir, 'docs', 'big.html')), repo === 'acme/lib');
        assert.equal(
          (await git(['ls-tree', '-r', '--name-only', 'HEAD'], { cwd: dir })).trim().split('\n').sort().join(','),
          'docs/big.html,docs/version.txt,pom.xml',
        );
      },
    );
  }
});
