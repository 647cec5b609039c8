/**
 * What a container sandbox knows of the processes in it: the markers (BENCHGYM_EXEC) of the
 * commands and terminals running now, and the scripts that kill by marker or sweep leftovers.
 */

/** Markers of the commands and terminals running now, by container (or pod, or pod/container): their processes are never leftovers. */
const liveMarkers = new Map<string, Set<string>>();

/** Counts a command or terminal as running in `where` (its marked processes are spared by leftover sweeps); returns the undo. */
export function trackMarker(where: string, marker: string): () => void {
  let set = liveMarkers.get(where);
  if (!set) liveMarkers.set(where, (set = new Set()));
  set.add(marker);
  return () => {
    set!.delete(marker);
    if (!set!.size && liveMarkers.get(where) === set) liveMarkers.delete(where);
  };
}

/** The markers of the commands and terminals running now in `where`. */
export function liveMarkersOf(where: string): string[] {
  return [...(liveMarkers.get(where) ?? [])];
}

/** Kills every process of the container carrying the exec's marker (setsid escapees too). */
export function killMarkerScript(marker: string): string {
  return (
    `for p in /proc/[0-9]*; do if tr '\\0' '\\n' 2>/dev/null < "$p/environ" | grep ` +
    `-qx 'BENCHGYM_EXEC=${marker}'; then kill -9 "\${p#/proc/}" 2>/dev/null; fi; done; true`
  );
}

/**
 * Kills, from inside the container, every process that belongs to no running command or
 * terminal: exec roots have PPid 0 there, the init is PID 1, the main process is init's oldest child.
 */
export function leftoverScript(liveMarkers: string[]): string {
  return [
    'ppid() { sed -n "s/^PPid:[[:space:]]*//p" "/proc/$1/status" 2>/dev/null; }',
    // The start time is the 20th field after the last ") " of /proc/N/stat: a command's name may hold ") " itself.
    'started() { read -r l < "/proc/$1/stat" 2>/dev/null || return; l=${l##*) }; set -- $l; echo "${20}"; }',
    'main=$(for p in /proc/[0-9]*; do n=${p#/proc/}; [ "$(ppid $n)" = ' +
      '1 ] && echo "$(started $n) $n"; done | sort -n | head -n1 | cut -d" " -f2)',
    // The init (1) is spared but is no root of the spared trees: its other children are the leftovers.
    'keep=" $main $$ "',
    'for p in /proc/[0-9]*; do n=${p#/proc/}; [ $n != 1 ] && [ "$(ppid $n)" = 0 ] && keep="$keep$n "; done',
    `for m in ${liveMarkers.filter((m) => /^[0-9a-f]+(-[0-9]+)?$/.test(m)).join(' ')}; do for p in /proc/[0-9]*; ` +
      `do tr "\\000" "\\n" < $p/environ 2>/dev/null | grep -qx "BENCHGYM_EXEC=$m" && keep="$keep\${p#/proc/} "; done; done`,
    'changed=1; while [ $changed = 1 ]; do changed=0; for p in /proc/[0-9]*; do n=${p#/proc/}; case "$keep" ' +
      'in *" $n "*) continue;; esac; case "$keep" in *" $(ppid $n) "*) keep="$keep$n "; changed=1;; esac; done; done',
    'for p in /proc/[0-9]*; do n=${p#/proc/}; case " 1$keep" in *" $n "*) ;; *) kill -9 $n 2>/dev/null;; esac; done; true',
  ].join('\n');
}
