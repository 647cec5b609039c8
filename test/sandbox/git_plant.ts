// What an agent plants to make git on the server run its code or misreport the diff (shared by the local and Docker tests).
import assert from 'node:assert/strict';
import type { Sandbox } from '../../src/sandbox/types.ts';

/**
 * What an agent plants with its commands: a script that records being run in `marks`, and
 * every place git would look for a reason to run it (global and XDG config, hooks, an
 * fsmonitor, a pager, an external diff, filter and textconv drivers, ignore rules that hide
 * a file from the diff, line-ending and encoding attributes, a .git of the workspace's own).
 */
export function plantScript(marks: string): string {
  return (
    `set -e
mkdir -p "$HOME/hooks" "$HOME/.config/git"
cat > "$HOME/evil" <<EOF
#!/bin/sh
echo "\\$0 \\$*" >> ${marks}/ran
case "\\$1" in filter) exec cat ;; textconv) exec cat "\\$2" ;; esac
exit 0
EOF
chmod +x "$HOME/evil"
cat > "$HOME/.gitconfig" <<EOF
[core]
	fsmonitor = $HOME/evil
	hooksPath = $HOME/hooks
	pager = $HOME/evil pager
	excludesFile = $HOME/ignore
	attributesFile = $HOME/attributes
[diff]
	external = $HOME/evil external
[filter "evil"]
	clean = $HOME/evil filter
	smudge = $HOME/evil filter
[diff "evil"]
	textconv = $HOME/evil textconv
EOF
cp "$HOME/.gitconfig" "$HOME/.config/git/config"
for h in pre-commit prepare-commit-msg commit-msg post-commit post-index-change reference-transaction post-checkout applypatch-msg ` +
    `pre-applypatch post-applypatch; do
  cp "$HOME/evil" "$HOME/hooks/$h"
done
echo 'secret.txt' > "$HOME/ignore"; cp "$HOME/ignore" "$HOME/.config/git/ignore"
echo '* filter=evil diff=evil' > "$HOME/attributes"; cp "$HOME/attributes" "$HOME/.config/git/attributes"
printf '* filter=evil diff=evil\n*.crlf text\n*.utf16 working-tree-encoding=UTF-16\n' > .gitattributes
mkdir -p .git/hooks .git/info
cat > .git/config <<EOF
[core]
	repositoryformatversion = 0
${HOSTILE_REPOSITORY_CONFIG}
[include]
	path = $HOME/included
[filter "evil"]
	clean = $HOME/evil filter
	smudge = $HOME/evil filter
[diff "evil"]
	textconv = $HOME/evil textconv
	command = $HOME/evil diffcmd
[merge "evil"]
	driver = $HOME/evil merge %O %A %B
EOF
printf '[core]\\n\\tfsmonitor = %s\\n\\thooksPath = %s\\n' "$HOME/evil" "$HOME/hooks" > "$HOME/included"
printf '* filter=evil diff=evil merge=evil\\n' > .git/info/attributes
for h in ${HOOKS.join(' ')}; do cp "$HOME/evil" ".git/hooks/$h"; done
`
  );
}

/** Every hook git runs for the commands the server and the scorer use (and then some). */
export const HOOKS = [
  ...[
    'pre-commit',
    'prepare-commit-msg',
    'commit-msg',
    'post-commit',
    'post-index-change',
    'reference-transaction',
    'post-checkout',
    'post-merge',
  ],
  ...['post-rewrite', 'pre-auto-gc', 'applypatch-msg', 'pre-applypatch', 'post-applypatch', 'fsmonitor-watchman', 'sendemail-validate'],
];

/**
 * A repository config's every key that names a program git runs (or a file it reads) for
 * the commands the server and the scorer run, each pointing at $HOME/evil: the lines of
 * `[core]`, then sections of their own. Drivers named by attributes are planted beside it by
 * plantScript (only a repository of the server's neutralises those; see git_isolation.ts).
 */
export const HOSTILE_REPOSITORY_CONFIG = `\tfsmonitor = $HOME/evil
\thooksPath = $HOME/hooks
\tpager = $HOME/evil pager
\teditor = $HOME/evil editor
\taskPass = $HOME/evil askpass
\tsshCommand = $HOME/evil ssh
\tgitProxy = $HOME/evil proxy
\texcludesFile = $HOME/ignore
\tattributesFile = $HOME/attributes
\tuntrackedCache = true
[sequence]
\teditor = $HOME/evil editor
[pager]
\tstatus = $HOME/evil pager
\tdiff = $HOME/evil pager
\tlog = $HOME/evil pager
[diff]
\texternal = $HOME/evil external
\tnoprefix = true
[color]
\tui = always
[commit]
\tgpgSign = true
[tag]
\tgpgSign = true
[gpg]
\tprogram = $HOME/evil gpg
[credential]
\thelper = !$HOME/evil credential
[alias]
\tst = !$HOME/evil alias
[uploadpack]
\tpackObjectsHook = $HOME/evil upload`;

/** The agent's work after the plant: a changed file, a new one, and one the planted ignore rules would hide. */
export const WORK =
  `printf 'one\\n2\\nthree\\n' > a.txt && echo new > new.txt && echo 'not a secret' > secret.txt && ` +
  `printf 'x\\r\\ny\\r\\n' > win.crlf && printf 'abc' > raw.utf16`;

/** The diff WORK makes, whatever was planted: every change there, nothing of a .git, nothing hidden. */
export function assertWorkDiff(diff: string): void {
  assert.match(diff, /^diff --git a\/a\.txt b\/a\.txt$/m);
  assert.match(diff, /^-two$/m);
  assert.match(diff, /^\+2$/m);
  assert.match(diff, /^diff --git a\/new\.txt b\/new\.txt\nnew file mode/m);
  assert.match(diff, /^diff --git a\/secret\.txt b\/secret\.txt\nnew file mode/m, 'the planted ignore rules hid a file from the diff');
  assert.doesNotMatch(diff, /^diff --git a\/\.git\//m);
}

/** The diff applied to a planted sandbox arrives byte for byte: the workspace's .gitattributes convert nothing. */
export async function assertWorkApplied(target: Sandbox, diff: string): Promise<void> {
  const applied = await target.applyPatch(diff);
  assert.equal(applied.ok, true, applied.log);
  assert.equal(applied.method, 'git apply');
  assert.equal((await target.readFile('a.txt')).toString(), 'one\n2\nthree\n');
  assert.equal((await target.readFile('secret.txt')).toString(), 'not a secret\n');
  assert.equal((await target.readFile('win.crlf')).toString(), 'x\r\ny\r\n');
  assert.equal((await target.readFile('raw.utf16')).toString(), 'abc');
}
