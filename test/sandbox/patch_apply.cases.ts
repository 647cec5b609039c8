// The patch-apply chain as data, checked the same way on every backend (local and Docker tests call these).
import assert from 'node:assert/strict';
import { DEFAULT_PATCH_CHAIN, type ApplyPatchOptions, type PatchApplied, type PatchMethod, type Sandbox } from '../../src/sandbox/types.ts';
import { patchApplyOutcome, patchApplyScript } from '../../src/sandbox/patch_apply.ts';
import { GymError } from '../../src/errors.ts';
import { plantScript } from './git_plant.ts';

const TEN = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const lines = (xs: string[]) => xs.join('\n') + '\n';
const replaced = (i: number, to: string) => TEN.map((x, j) => (j === i ? to : x));
const GIT = 'git -c user.name=t -c user.email=t@localhost';

async function sh(sb: Sandbox, command: string, stdin?: string): Promise<string> {
  const r = await sb.exec(command, { timeoutMs: 60_000, ...(stdin !== undefined ? { stdin } : {}) });
  assert.equal(r.exitCode, 0, `${command}\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

/** A repository at the workspace root whose HEAD holds `files` (the start state SWE-bench's harness resets to). */
async function repoWith(sb: Sandbox, files: Record<string, string>): Promise<void> {
  for (const [p, content] of Object.entries(files)) await sb.writeFile(p, content);
  await sh(sb, `git init -q && ${GIT} add -A && ${GIT} commit -qm start`);
}

const PLAIN: readonly PatchMethod[] = [{ kind: 'git-apply' }];
const WITH_3WAY: readonly PatchMethod[] = [{ kind: 'git-apply' }, { kind: 'git-apply', args: ['--3way'] }];

/**
 * A patch made against an older version of f.txt (its blob still in the repository) that
 * plain `git apply` cannot place at HEAD: only `--3way` merges it.
 */
export async function checkThreeWay(sb: Sandbox): Promise<void> {
  await repoWith(sb, { 'f.txt': lines(TEN) });
  await sb.writeFile('f.txt', lines(replaced(4, 'FIVE')));
  const patch = await sh(sb, 'git diff --full-index');
  await sh(sb, `git checkout -q -- f.txt && printf '%s' '${lines(replaced(1, 'TWO'))}' > f.txt && ${GIT} commit -qam later`);

  const lacking = await sb.applyPatch(patch, { chain: PLAIN, resetBetweenTries: true });
  assert.equal(lacking.ok, false, lacking.log);
  assert.equal(lacking.method, undefined);
  assert.match(lacking.log, /^\$ git apply --verbose$/m);
  assert.equal((await sb.readFile('f.txt')).toString(), lines(replaced(1, 'TWO')));

  const having = await sb.applyPatch(patch, { chain: WITH_3WAY, resetBetweenTries: true });
  assert.equal(having.ok, true, having.log);
  assert.equal(having.method, 'git apply --3way');
  assert.equal((await sb.readFile('f.txt')).toString(), lines(TEN.map((x, j) => (j === 1 ? 'TWO' : j === 4 ? 'FIVE' : x))));
  // The workspace's own repository is read, never written: its index still says HEAD.
  assert.equal(await sh(sb, 'git diff --cached --name-only'), '');
}

/** A patch whose outermost context line changed: plain `git apply` and no fuzz fail, `patch --fuzz=2` applies. */
export async function checkFuzz(sb: Sandbox): Promise<void> {
  await sb.writeFile('f.txt', lines(replaced(1, 'TWO')));
  const patch = [
    '--- a/f.txt',
    '+++ b/f.txt',
    '@@ -2,7 +2,7 @@',
    ...['two', 'three', 'four'].map((x) => ` ${x}`),
    '-five',
    '+FIVE',
    ...['six', 'seven', 'eight'].map((x) => ` ${x}`),
    '',
  ].join('\n');

  const lacking = await sb.applyPatch(patch, { chain: [{ kind: 'git-apply' }, { kind: 'patch', fuzz: 0 }] });
  assert.equal(lacking.ok, false, lacking.log);
  assert.match(lacking.log, /^\$ patch --batch --forward -p1 --fuzz=0$/m);
  assert.equal((await sb.readFile('f.txt')).toString(), lines(replaced(1, 'TWO')));
  await sh(sb, 'rm -f f.txt.rej f.txt.orig');

  const having = await sb.applyPatch(patch, { chain: [{ kind: 'git-apply' }, { kind: 'patch', fuzz: 2 }] });
  assert.equal(having.ok, true, having.log);
  assert.equal(having.method, 'patch --fuzz=2');
  assert.equal((await sb.readFile('f.txt')).toString(), lines(TEN.map((x, j) => (j === 1 ? 'TWO' : j === 4 ? 'FIVE' : x))));
}

/**
 * A patch of two files of which `patch --fuzz=0` applies the first and rejects the second:
 * without a reset its leftovers make the fuzzier try fail too; with one, the work tree is
 * the start state again (no half-applied file, no .rej) and the fuzzier try applies both.
 */
export async function checkResetBetweenTries(sb: Sandbox): Promise<void> {
  await repoWith(sb, { 'a.txt': lines(TEN), 'b.txt': lines(replaced(1, 'TWO')) });
  const hunk = (file: string) => [
    `--- a/${file}`,
    `+++ b/${file}`,
    '@@ -2,7 +2,7 @@',
    ...['two', 'three', 'four'].map((x) => ` ${x}`),
    '-five',
    '+FIVE',
    ...['six', 'seven', 'eight'].map((x) => ` ${x}`),
  ];
  const patch = [...hunk('a.txt'), ...hunk('b.txt'), ''].join('\n');
  const chain: PatchMethod[] = [
    { kind: 'patch', fuzz: 0 },
    { kind: 'patch', fuzz: 2 },
  ];

  const kept = await sb.applyPatch(patch, { chain });
  assert.equal(kept.ok, false, kept.log);
  await sh(sb, `${GIT} reset -q --hard && git clean -fdqx`);

  const reset = await sb.applyPatch(patch, { chain, resetBetweenTries: true });
  assert.equal(reset.ok, true, reset.log);
  assert.equal(reset.method, 'patch --fuzz=2');
  assert.match(reset.log, /^# work tree reset to the start state$/m);
  assert.equal((await sb.readFile('a.txt')).toString(), lines(replaced(4, 'FIVE')));
  assert.equal((await sb.readFile('b.txt')).toString(), lines(TEN.map((x, j) => (j === 1 ? 'TWO' : j === 4 ? 'FIVE' : x))));
  assert.equal(await sb.stat('b.txt.rej'), null, "the first try's reject file survived the reset");

  // After a last failure too: the work tree is the start state, nothing of any try is left.
  const none = await sb.applyPatch(patch.replaceAll('five', 'nowhere'), { chain, resetBetweenTries: true });
  assert.equal(none.ok, false, none.log);
  assert.equal(await sh(sb, 'git status --porcelain --untracked-files=all --ignored'), '');
}

/** No repository at the workspace root and no baseline in reach: a reset cannot be promised, so the call fails. */
export async function checkNoStartState(sb: Sandbox): Promise<void> {
  await sb.writeFile('f.txt', lines(TEN));
  await assert.rejects(
    sb.applyPatch('--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-one\n+ONE\n', { chain: PLAIN, resetBetweenTries: true }),
    (e: unknown) => e instanceof GymError && e.code === 'INVALID_ARGUMENT',
  );
  assert.equal((await sb.readFile('f.txt')).toString(), lines(TEN));
}

/**
 * The 3-way try and the resets read the workspace repository's objects and HEAD only: the
 * hooks, fsmonitor and filter drivers planted in its config, the sandbox's home and the
 * work tree's .gitattributes run nothing (`marks` is where the planted script would say so).
 */
export async function checkPlantedRepository(sb: Sandbox, marks: string): Promise<void> {
  await repoWith(sb, { 'f.txt': lines(TEN) });
  await sb.writeFile('f.txt', lines(replaced(4, 'FIVE')));
  const patch = await sh(sb, 'git diff --full-index');
  await sh(sb, `git checkout -q -- f.txt && printf '%s' '${lines(replaced(1, 'TWO'))}' > f.txt && ${GIT} commit -qam later`);
  await sh(sb, `mkdir -p ${marks} && ${plantScript(marks)}`);

  const applied = await sb.applyPatch(patch, { chain: WITH_3WAY, resetBetweenTries: true });
  assert.equal((await sb.exec(`cat ${marks}/ran 2>/dev/null || true`)).stdout.trim(), '', 'a planted script ran');
  assert.equal(applied.ok, true, applied.log);
  assert.equal(applied.method, 'git apply --3way');
  assert.equal((await sb.readFile('f.txt')).toString(), lines(TEN.map((x, j) => (j === 1 ? 'TWO' : j === 4 ? 'FIVE' : x))));
}

/** SWE-bench's chain (envs/swebench/patches.ts), with resets: the one a predictions file is scored by. */
const HARNESS: readonly PatchMethod[] = [{ kind: 'git-apply' }, { kind: 'git-apply', args: ['--3way'] }, { kind: 'patch', fuzz: 5 }];
const HOOK = '#!/bin/sh\necho "$0 ran" >> "$HOME/hook-ran"';

/**
 * Patches that write git's own files, one per format GNU patch reads: `git apply` refuses
 * each (an invalid path), and `patch`, the chain's fallback, would write it.
 */
export const GIT_DIR_PATCHES: Record<string, string> = {
  'a new hook, git diff': [
    'diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout',
    'new file mode 100755',
    '--- /dev/null',
    '+++ b/.git/hooks/post-checkout',
    '@@ -0,0 +1,2 @@',
    ...HOOK.split('\n').map((l) => `+${l}`),
    '',
  ].join('\n'),
  'the config, a hunk without context': '--- a/.git/config\n+++ b/.git/config\n@@ -1,0 +2,1 @@\n+\tfsmonitor = .git/hooks/post-checkout\n',
  'attributes, a context diff': [
    ...['*** a/.git/info/attributes\t2024-01-01', '--- b/.git/info/attributes\t2024-01-01'],
    ...['***************', '*** 0 ****', '--- 1 ----', '+ * filter=evil', ''],
  ].join('\n'),
  'a hook by Index: alone': [
    'Index: a/.git/hooks/pre-commit',
    '='.repeat(67),
    '--- /dev/null',
    '+++ a/.git/hooks/pre-commit',
    '@@ -0,0 +1 @@',
    '+#!/bin/sh',
    '',
  ].join('\n'),
  'a tracked file renamed into hooks': [
    ...['diff --git a/a.txt b/.git/hooks/post-checkout', 'similarity index 100%'],
    ...['rename from a.txt', 'rename to .git/hooks/post-checkout', ''],
  ].join('\n'),
  'a nested repository': '--- a/sub/.git/config\n+++ b/sub/.git/config\n@@ -0,0 +1,2 @@\n+[core]\n+\tfsmonitor = x\n',
};

/**
 * What a patch could have changed of the workspace's repository: every file
 * of .git but its index (which `git status` refreshes), with its mode.
 */
async function gitDirState(sb: Sandbox): Promise<string> {
  return sh(
    sb,
    "find .git ! -name index ! -name '*.lock' \\( -type f -o -type l " +
      "\\) -printf '%p %m %l\\n' -exec sha1sum {} + 2>/dev/null | LC_ALL=C sort",
  );
}

/**
 * The script alone, run as the backends run it, without the check of the patch's names first: the guard of the tries must hold by itself.
 */
export async function applyByScriptAlone(sb: Sandbox, patch: string, opts: ApplyPatchOptions): Promise<PatchApplied> {
  const r = await sb.exec(patchApplyScript(opts), { stdin: patch, timeoutMs: 120_000 });
  return patchApplyOutcome(r.exitCode, r.stdout + r.stderr);
}

/**
 * No method writes inside a .git: each patch is refused with a note naming the path, by its
 * names before any tool runs and, with that check out of the way, by the script itself
 * after the try that wrote there; the repository's files are as they were, nothing is left
 * in the work tree, and git's later checkout runs no hook.
 */
export async function checkGitDirRefused(sb: Sandbox): Promise<void> {
  await repoWith(sb, { 'a.txt': lines(TEN), 'sub/b.txt': 'b\n' });
  const before = await gitDirState(sb);
  for (const [name, patch] of Object.entries(GIT_DIR_PATCHES)) {
    for (const opts of [{}, { chain: HARNESS, resetBetweenTries: true }]) {
      const r = await sb.applyPatch(patch, opts);
      assert.equal(r.ok, false, `${name}: ${r.log}`);
      assert.match(r.refused ?? '', /inside \.git/, `${name}: ${r.log}`);
      assert.equal(await gitDirState(sb), before, name);
      assert.equal(await sh(sb, 'git status --porcelain --untracked-files=all --ignored'), '', name);
    }
    const alone = await applyByScriptAlone(sb, patch, { chain: HARNESS, resetBetweenTries: true });
    assert.equal(alone.ok, false, `${name}: ${alone.log}`);
    if (alone.refused) assert.match(alone.refused, /\.git\//, `${name}: ${alone.log}`);
    assert.equal(await gitDirState(sb), before, `${name}: the script alone let a try change .git\n${alone.log}`);
    assert.equal(await sh(sb, 'git status --porcelain --untracked-files=all --ignored'), '', `${name}: ${alone.log}`);
  }
  // The file `patch` wrote there (before the guard) would be a hook now.
  await sh(sb, `${GIT} checkout -q HEAD -- a.txt`);
  assert.equal((await sb.exec('cat "$HOME/hook-ran" 2>/dev/null || true')).stdout, '');
}

/**
 * A link of the start state into .git (`hooks -> .git/hooks`) has no .git in the patch's
 * names: `patch` would follow it (it follows links that stay in the tree). During the tries
 * it is out of reach: the patch is refused, the link and .git are as they were.
 */
export async function checkLinkIntoGitDir(sb: Sandbox): Promise<void> {
  await repoWith(sb, { 'a.txt': lines(TEN) });
  await sh(sb, `ln -s .git/hooks hooks && ${GIT} add hooks && ${GIT} commit -qm link`);
  const before = await gitDirState(sb);
  const patch = `--- /dev/null\n+++ b/hooks/post-checkout\n@@ -0,0 +1,2 @@\n${HOOK.split('\n')
    .map((l) => `+${l}`)
    .join('\n')}\n`;
  for (const opts of [{}, { chain: HARNESS, resetBetweenTries: true }]) {
    const r = await sb.applyPatch(patch, opts);
    assert.equal(r.ok, false, r.log);
    assert.match(r.refused ?? '', /'hooks'.*symbolic link of the start state/, r.log);
    assert.equal(await gitDirState(sb), before, r.log);
    assert.equal(await sh(sb, 'readlink hooks'), '.git/hooks\n');
    assert.equal(await sh(sb, 'git status --porcelain --untracked-files=all'), '', r.log);
  }
}

/**
 * Links out of the workspace ($HOME/outside, writable in every backend): through one of the
 * start state's, and through one the patch creates (refused by its names; with that check
 * out of the way, GNU patch and git apply refuse it themselves), nothing is written there,
 * and the start state's link is a link to the same place after; a patch beside them applies
 * and leaves them as they were.
 */
export async function checkLinksOut(sb: Sandbox): Promise<void> {
  await repoWith(sb, { 'a.txt': lines(TEN) });
  await sh(sb, `mkdir -p "$HOME/outside" && ln -s "$HOME/outside" out && ${GIT} add out && ${GIT} commit -qm link`);
  const target = (await sh(sb, 'readlink out')).trim();
  const outside = async () => (await sh(sb, 'ls -A "$HOME/outside"')).trim();
  const through = '--- /dev/null\n+++ b/out/pwned.txt\n@@ -0,0 +1 @@\n+pwned\n';
  for (const opts of [{}, { chain: HARNESS, resetBetweenTries: true }]) {
    const r = await sb.applyPatch(through, opts);
    assert.equal(r.ok, false, r.log);
    assert.match(r.refused ?? '', /'out'.*symbolic link of the start state/, r.log);
    assert.equal(await outside(), '', r.log);
    assert.equal(await sh(sb, 'readlink out'), `${target}\n`);
    assert.equal(await sh(sb, 'git status --porcelain --untracked-files=all'), '', r.log);
  }

  const made = [
    ...[
      'diff --git a/mine b/mine',
      'new file mode 120000',
      '--- /dev/null',
      '+++ b/mine',
      '@@ -0,0 +1 @@',
      `+${target}`,
      '\\ No newline at end of file',
    ],
    ...[
      'diff --git a/mine/pwned.txt b/mine/pwned.txt',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/mine/pwned.txt',
      '@@ -0,0 +1 @@',
      '+pwned',
      '',
    ],
  ].join('\n');
  const refused = await sb.applyPatch(made, { chain: HARNESS, resetBetweenTries: true });
  assert.equal(refused.ok, false, refused.log);
  assert.match(refused.refused ?? '', /beyond the symbolic link "mine" it creates/);
  for (const opts of [{ chain: DEFAULT_PATCH_CHAIN }, { chain: HARNESS, resetBetweenTries: true }]) {
    const alone = await applyByScriptAlone(sb, made, opts);
    assert.equal(alone.ok, false, alone.log);
    assert.equal(await outside(), '', alone.log);
    await sh(sb, 'rm -f mine mine.rej');
  }

  const beside = `--- a/a.txt\n+++ b/a.txt\n@@ -4,3 +4,3 @@\n four\n-five\n+FIVE\n six\n`;
  const applied = await sb.applyPatch(beside, { chain: HARNESS, resetBetweenTries: true });
  assert.equal(applied.ok, true, applied.log);
  assert.equal(applied.method, 'git apply');
  assert.equal(await sh(sb, 'readlink out'), `${target}\n`);
  assert.equal(await sh(sb, 'git status --porcelain --untracked-files=all'), ' M a.txt\n');
  assert.equal(await sh(sb, "find . -name '.benchgym-*'"), '', 'the directory the entries were put aside in is gone');
}

/**
 * A repository nested in the start state (vendor/lib/.git) is put aside with the root's: a
 * patch beside it applies and both come back as they were; one that writes into it is refused.
 */
export async function checkNestedRepository(sb: Sandbox): Promise<void> {
  await sb.writeFile('vendor/lib/lib.txt', 'lib\n');
  await sh(sb, `cd vendor/lib && git init -q && ${GIT} add -A && ${GIT} commit -qm lib`);
  await repoWith(sb, { 'a.txt': lines(TEN) });
  const state = () => sh(sb, 'find .git vendor/lib/.git ! -name index \\( -type f -o -type l \\) -exec sha1sum {} + | LC_ALL=C sort');
  const before = await state();
  const beside = await sb.applyPatch('--- a/a.txt\n+++ b/a.txt\n@@ -4,3 +4,3 @@\n four\n-five\n+FIVE\n six\n', {
    chain: HARNESS,
    resetBetweenTries: true,
  });
  assert.equal(beside.ok, true, beside.log);
  assert.equal(await state(), before);
  assert.equal(await sh(sb, 'git -C vendor/lib status --porcelain && git -C vendor/lib log --format=%s'), 'lib\n');
  const into = '--- a/vendor/lib/.git/config\n+++ b/vendor/lib/.git/config\n@@ -1,0 +2,1 @@\n+\tfsmonitor = x\n';
  const opts = { chain: HARNESS, resetBetweenTries: true };
  for (const r of [await sb.applyPatch(into, opts), await applyByScriptAlone(sb, into, opts)]) {
    assert.equal(r.ok, false, r.log);
    assert.equal(await state(), before, r.log);
  }
}
