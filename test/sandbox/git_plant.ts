// What an agent plants to make git on the server run its code or misreport the diff (shared by the local and Docker tests).

/**
 * What an agent plants with its commands: a script that records being run in `marks`, and
 * every place git would look for a reason to run it (global and XDG config, hooks, an
 * fsmonitor, a pager, an external diff, filter and textconv drivers, ignore rules that hide
 * a file from the diff, line-ending and encoding attributes, a .git of the workspace's own).
 */
export function plantScript(marks: string): string {
  return `set -e
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
for h in pre-commit prepare-commit-msg commit-msg post-commit post-index-change reference-transaction post-checkout applypatch-msg pre-applypatch post-applypatch; do
  cp "$HOME/evil" "$HOME/hooks/$h"
done
echo 'secret.txt' > "$HOME/ignore"; cp "$HOME/ignore" "$HOME/.config/git/ignore"
echo '* filter=evil diff=evil' > "$HOME/attributes"; cp "$HOME/attributes" "$HOME/.config/git/attributes"
printf '* filter=evil diff=evil\n*.crlf text\n*.utf16 working-tree-encoding=UTF-16\n' > .gitattributes
mkdir -p .git/hooks
printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = %s\\n\\thooksPath = %s\\n[filter "evil"]\\n\\tclean = %s filter\\n' "$HOME/evil" "$HOME/hooks" "$HOME/evil" > .git/config
cp "$HOME/evil" .git/hooks/post-index-change
`;
}

/** The agent's work after the plant: a changed file, a new one, and one the planted ignore rules would hide. */
export const WORK = `printf 'one\\n2\\nthree\\n' > a.txt && echo new > new.txt && echo 'not a secret' > secret.txt && printf 'x\\r\\ny\\r\\n' > win.crlf && printf 'abc' > raw.utf16`;
