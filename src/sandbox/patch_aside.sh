# What lies outside a patch's reach while patch_apply.ts's script applies it (sourced into that
# script: $w is the workspace root, $r the script's scratch directory, $infra_exit its exit
# code for a failure of its own). Before the first try, every .git in the tree (any depth, any
# case) and every symbolic link of the start state whose target is out of the tree or inside
# a .git is moved into a directory of a random name in the tree ($s): no tool reaches them by
# any name the patch gives. After each try, tree_check finds what the try made of those names.
# restore, on every exit, puts them back without following anything the patch made.

# True when the resolved path $1 is the tree or in it, and not inside a .git.
inside() {
  case "$1" in
    "$w") return 0 ;;
    "$w"/*) case "/${1#"$w"/}/" in */[.][gG][iI][tT]/*) return 1 ;; esac; return 0 ;;
  esac
  return 1
}

# Moves the .git entries and the links out into $s, listing each original path in $r/aside (NUL-separated, in stash order).
put_aside() {
  s=$(mktemp -d "$w/.benchgym-aside-XXXXXXXXXX") || return 1
  : > "$r/aside"
  # One walk of the tree: the .git entries (not walked into) to one list, the links to another.
  # Unreadable directories are skipped, not a failure (a start state from git has none: git keeps no directory modes).
  find "$w" -path "$s" -prune -o -iname .git -prune -fprint0 "$r/gits" -o -type l -fprint0 "$r/links" 2>/dev/null
  [ -f "$r/gits" ] && [ -f "$r/links" ] || return 1
  local e t i=0
  while IFS= read -r -d '' e; do
    t=$(realpath -m -- "$e" 2>/dev/null) || t=/
    inside "$t" && continue
    mv -T -- "$e" "$s/$i" || return 1
    printf '%s\0' "$e" >> "$r/aside"
    i=$((i + 1))
  done < "$r/links"
  while IFS= read -r -d '' e; do
    mv -T -- "$e" "$s/$i" || return 1
    printf '%s\0' "$e" >> "$r/aside"
    if [ "$e" = "$w/.git" ]; then root_git="$s/$i"; fi
    i=$((i + 1))
  done < "$r/gits"
}

# After a try: no .git anywhere (the start state's are aside), nothing where an entry put aside
# was, no link or file on the way to one. Sets $refused to why, naming the path.
tree_check() {
  local e d
  e=$(find "$w" -path "$s" -prune -o -iname .git -prune -print -quit)
  if [ -n "$e" ]; then
    # Named by a file the try wrote there, when there is one.
    d=$(find "$e" ! -type d -print -quit 2>/dev/null)
    d=${d:-$e}
    refused="the patch writes '${d#"$w"/}': inside a .git, which no patch may create or change"
    return 1
  fi
  while IFS= read -r -d '' e; do
    if [ -e "$e" ] || [ -L "$e" ]; then
      refused="the patch writes '${e#"$w"/}': a symbolic link of the start state that leads out of the workspace or into a .git"
      return 1
    fi
    d=${e%/*}
    while [ "${#d}" -gt "${#w}" ]; do
      if [ -L "$d" ] || { [ -e "$d" ] && [ ! -d "$d" ]; }; then
        refused="the patch makes '${d#"$w"/}' a link or a file, on the way to '${e#"$w"/}'"
        refused="$refused (a symbolic link of the start state that leads out of the workspace or into a .git)"
        return 1
      fi
      d=${d%/*}
    done
  done < "$r/aside"
}

# After a reset to the start state: the links it laid down again where entries put aside belong
# are removed (they stay aside until restore).
clear_aside() {
  local e
  while IFS= read -r -d '' e; do
    if [ -L "$e" ]; then rm -f -- "$e"; fi
  done < "$r/aside"
}

# The parents of $1 made real directories (a link or file in the way removed, never followed;
# a missing one made) and nothing left at $1 itself.
make_way() {
  local rel=${1#"$w"/} d=$w
  while [ "${rel#*/}" != "$rel" ]; do
    d=$d/${rel%%/*}
    rel=${rel#*/}
    if [ -L "$d" ] || { [ -e "$d" ] && [ ! -d "$d" ]; }; then rm -f -- "$d" || return 1; fi
    [ -d "$d" ] || mkdir -- "$d" || return 1
  done
  if [ -e "$1" ] || [ -L "$1" ]; then rm -rf -- "$1" || return 1; fi
}

# Every entry put aside back where it was.
restore() {
  if [ -z "$s" ] || [ ! -d "$s" ]; then return 0; fi
  local e i=0 failed=0
  while IFS= read -r -d '' e; do
    { make_way "$e" && mv -T -- "$s/$i" "$e"; } || failed=1
    i=$((i + 1))
  done < "$r/aside"
  [ "$failed" = 0 ] && rmdir -- "$s" && s=
}

on_exit() {
  local rc=$?
  if ! restore; then
    echo "benchgym: could not put the workspace's .git and links back after applying the patch"
    rc=$infra_exit
  fi
  rm -rf "$r"
  exit "$rc"
}
