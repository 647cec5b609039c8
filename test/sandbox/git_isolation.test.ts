import { execFile } from 'node:child_process';
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bubblewrapAvailable, LocalSandbox, LocalSandboxFactory } from '../../src/sandbox/local/index.ts';
import { tempDir } from '../helpers.ts';
import { isolatedGitShell } from '../../src/sandbox/git_isolation.ts';
import { assertWorkApplied, assertWorkDiff, HOOKS, HOSTILE_REPOSITORY_CONFIG, plantScript, WORK } from './git_plant.ts';

/**
 * The server runs git (and patch) over an episode's files on the host. Nothing the agent can
 * write (its home, its workspace, a .git in it) may be read by those processes as
 * configuration, hooks or attributes: a planted ~/.gitconfig with core.fsmonitor once ran
 * the agent's script on the host as the server's user.
 */

/** A directory outside /tmp (bubblewrap mounts a private /tmp): where the planted script leaves its marks. */
async function hostDir(prefix: string): Promise<string> {
  const parent = existsSync('/var/tmp') ? '/var/tmp' : os.homedir();
  return fs.mkdtemp(path.join(parent, prefix));
}

for (const mode of ['none', 'bwrap'] as const) {
  describe(`host git over a '${mode}' local sandbox takes no orders from the agent's files`, () => {
    let baseDir: string;
    let marks: string;
    let factory: LocalSandboxFactory | undefined;
    let usable = false;

    before(async () => {
      usable = mode === 'none' || (await bubblewrapAvailable());
      baseDir = await tempDir('benchgym-gitiso-');
      marks = await hostDir('benchgym-marks-');
      await fs.chmod(marks, 0o777);
      if (usable) factory = new LocalSandboxFactory({ baseDir, isolation: mode });
    });
    after(async () => {
      await factory?.close();
      await fs.rm(baseDir, { recursive: true, force: true });
      await fs.rm(marks, { recursive: true, force: true });
    });

    const it = (name: string, fn: () => Promise<void>) =>
      test(name, async (t: TestContext) => {
        if (!usable) return t.skip('bubblewrap is not usable on this machine');
        await fn();
      });
    const create = async () =>
      (await factory!.create({ seed: { files: { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'bee\n' } } })) as LocalSandbox;
    const ran = async () => (await fs.readFile(path.join(marks, 'ran'), 'utf8').catch(() => '')).trim();

    it('commitBaseline, diff and applyPatch run none of the planted scripts, and the diff is what changed', async () => {
      const source = await create();
      const target = await create();
      try {
        const planted = await source.exec(plantScript(marks));
        assert.equal(planted.exitCode, 0, planted.stderr);
        await source.commitBaseline();
        const work = await source.exec(WORK);
        assert.equal(work.exitCode, 0, work.stderr);
        const diff = await source.diff();
        assert.equal(await ran(), '', 'a planted script ran on the host');
        assertWorkDiff(diff);

        const plantedTarget = await target.exec(plantScript(marks));
        assert.equal(plantedTarget.exitCode, 0, plantedTarget.stderr);
        await assertWorkApplied(target, diff);
        assert.equal(await ran(), '', 'a planted script ran on the host');
      } finally {
        await Promise.all([source.destroy(), target.destroy()]);
      }
    });

    it('a patch cannot write through a symbolic link it creates, out of the workspace', async () => {
      const target = await create();
      const outside = await hostDir('benchgym-out-');
      try {
        const patch = [
          'diff --git a/link b/link',
          'new file mode 120000',
          '--- /dev/null',
          '+++ b/link',
          '@@ -0,0 +1 @@',
          `+${outside}`,
          '\\ No newline at end of file',
          'diff --git a/link/pwned.txt b/link/pwned.txt',
          'new file mode 100644',
          '--- /dev/null',
          '+++ b/link/pwned.txt',
          '@@ -0,0 +1 @@',
          '+pwned',
          '',
        ].join('\n');
        await target.applyPatch(patch);
        assert.deepEqual(await fs.readdir(outside), []);
      } finally {
        await target.destroy();
        await fs.rm(outside, { recursive: true, force: true });
      }
    });
  });
}

/**
 * isolatedGitShell() is how git runs inside a sandbox (the baseline's diff in containers, the
 * apply script, the scorer's checks): over a repository whose own config and hooks name the
 * agent's script for every key that can, the commands of the scorer run none of it, and
 * their output keeps its format; the same commands without it do run the script (the plant
 * works). Drivers named by attributes are no key of that kind (see git_isolation.ts).
 */
describe('isolatedGitShell over a repository with a hostile config and hooks', () => {
  const sh = (cwd: string, home: string, script: string) =>
    new Promise<{ code: number; out: string }>((resolve) =>
      execFile('bash', ['-c', script], { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home } }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: String(stdout) + String(stderr) }),
      ),
    );

  test('rev-parse, status, diff, checkout, reset, ls-files, cat-file, apply, add and commit run nothing planted', async () => {
    const root = await tempDir('benchgym-isogit-');
    try {
      const [repo, home, marks] = ['repo', 'home', 'marks'].map((d) => path.join(root, d)) as [string, string, string];
      for (const d of [repo, home, marks]) await fs.mkdir(d);
      const setup = await sh(
        repo,
        home,
        `git init -q && printf 'one\\ntwo\\n' > a.txt && git add a.txt
git -c user.name=t -c user.email=t@localhost commit -qm start
mkdir -p "$HOME/hooks" .git/hooks
printf '#!/bin/sh\\necho "$0 $*" >> ${marks}/ran\\nexit 0\\n' > "$HOME/evil" && chmod +x "$HOME/evil"
cat >> .git/config <<EOF
[core]
${HOSTILE_REPOSITORY_CONFIG}
[include]
	path = $HOME/included
EOF
printf '[core]\\n\\tfsmonitor = %s\\n' "$HOME/evil" > "$HOME/included"
for h in ${HOOKS.join(' ')}; do cp "$HOME/evil" "$HOME/hooks/$h"; cp "$HOME/evil" ".git/hooks/$h"; done
printf 'one\\n2\\n' > a.txt && echo new > b.txt`,
      );
      assert.equal(setup.code, 0, setup.out);
      const ran = async () => (await fs.readFile(path.join(marks, 'ran'), 'utf8').catch(() => '')).trim();

      const g = isolatedGitShell();
      const id = '-c user.name=t -c user.email=t@localhost';
      const steps: [string, (out: string) => void][] = [
        [`${g} rev-parse --verify HEAD`, (out) => assert.match(out, /^[0-9a-f]{40}\n$/)],
        [
          `${g} status --porcelain=v1 --untracked-files=all --ignored=matching --no-renames`,
          (out) => assert.equal(out, ' M a.txt\n?? b.txt\n'),
        ],
        [
          `${g} diff --no-ext-diff --no-textconv HEAD -- a.txt`,
          (out) => assert.match(out, /^diff --git a\/a\.txt b\/a\.txt\n[\s\S]*^-two\n\+2\n/m),
        ],
        [
          `printf -- '--- a/a.txt\\n+++ b/a.txt\\n@@ -1,2 +1,2 @@\\n one\\n-2\\n+two\\n' | ${g} apply --verbose --whitespace=nowarn -`,
          (out) => assert.match(out, /Applied patch a\.txt cleanly/),
        ],
        [`printf 'one\\n2\\n' > a.txt && ${g} checkout -q HEAD -- a.txt && cat a.txt`, (out) => assert.equal(out, 'one\ntwo\n')],
        [
          `${g} ls-files -s && ${g} cat-file -e HEAD:a.txt && ${g} cat-file blob HEAD:a.txt`,
          (out) => assert.match(out, /^100644 [0-9a-f]{40} 0\ta\.txt\none\ntwo\n$/),
        ],
        [`${g} add -A . && ${g} ${id} commit -q -m next && ${g} log --format=%s -1`, (out) => assert.equal(out, 'next\n')],
        [`${g} reset -q --hard HEAD~1 && ls`, (out) => assert.equal(out, 'a.txt\n')],
      ];
      for (const [command, check] of steps) {
        const r = await sh(repo, home, command);
        assert.equal(r.code, 0, `${command}\n${r.out}`);
        check(r.out);
        assert.equal(await ran(), '', `a planted program ran for: ${command}`);
      }

      // Without the isolation, the same repository runs the plant (status: fsmonitor; commit: hooks, gpg).
      await sh(repo, home, `echo x > c.txt && git status --short >/dev/null; git add -A && git ${id} commit -qm again`);
      assert.match(await ran(), /evil/);
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });
});
