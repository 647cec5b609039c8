// The patch-apply chain as data, checked the same way on every backend (local and Docker tests call these).
import assert from 'node:assert/strict';
import type { PatchMethod, Sandbox } from '../../src/sandbox/types.ts';
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
  const patch = ['--- a/f.txt', '+++ b/f.txt', '@@ -2,7 +2,7 @@', ...['two', 'three', 'four'].map((x) => ` ${x}`), '-five', '+FIVE', ...['six', 'seven', 'eight'].map((x) => ` ${x}`), ''].join('\n');

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
  const hunk = (file: string) => [`--- a/${file}`, `+++ b/${file}`, '@@ -2,7 +2,7 @@', ...['two', 'three', 'four'].map((x) => ` ${x}`), '-five', '+FIVE', ...['six', 'seven', 'eight'].map((x) => ` ${x}`)];
  const patch = [...hunk('a.txt'), ...hunk('b.txt'), ''].join('\n');
  const chain: PatchMethod[] = [{ kind: 'patch', fuzz: 0 }, { kind: 'patch', fuzz: 2 }];

  const kept = await sb.applyPatch(patch, { chain });
  assert.equal(kept.ok, false, kept.log);
  await sh(sb, `${GIT} reset -q --hard && git clean -fdqx`);

  const reset = await sb.applyPatch(patch, { chain, resetBetweenTries: true });
  assert.equal(reset.ok, true, reset.log);
  assert.equal(reset.method, 'patch --fuzz=2');
  assert.match(reset.log, /^# work tree reset to the start state$/m);
  assert.equal((await sb.readFile('a.txt')).toString(), lines(replaced(4, 'FIVE')));
  assert.equal((await sb.readFile('b.txt')).toString(), lines(TEN.map((x, j) => (j === 1 ? 'TWO' : j === 4 ? 'FIVE' : x))));
  assert.equal(await sb.stat('b.txt.rej'), null, 'the first try\'s reject file survived the reset');

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
