#!/usr/bin/env bash
# Tears down the cluster up.sh started: kills the pods' containers, stops every component
# (kubelet first, etcd last), unmounts whatever is left under the state dir (container root
# file systems, shm, pod network namespaces, kubelet volumes), removes the kubelet's cgroups
# and the state dir. Safe to run when nothing is up. Leaves the cached binaries.
#   usage: down.sh
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/env.sh"
[[ $(id -u) == 0 ]] || die "must run as root"
[[ -d $STATE ]] || { log "nothing to tear down ($STATE does not exist)"; exit 0; }
[[ $STATE != / && $(basename "$STATE") != "" ]] || die "refusing state dir $STATE"

# stop NAME...: TERM them all, then KILL whatever is left after 3 s (the state is thrown away:
# no need for a graceful end).
stop() {
  local name pid pids=() i
  for name in "$@"; do
    pid=$(pid_of "$name") && { kill -TERM "$pid" 2>/dev/null; pids+=("$pid"); }
  done
  for ((i = 0; i < 30; i++)); do
    kill -0 "${pids[@]}" 2>/dev/null || break # true while any of them lives
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null && log "process $pid ignored TERM: killed it"; done
  for name in "$@"; do rm -f "$STATE/run/$name.pid"; done
  log "stopped $*"
}

stop kubelet registry
# The pods' processes: every one lives in a cgroup under CGROUP_ROOT; SIGKILL them all (the state
# is thrown away, so there is no need to stop the containers through containerd one by one).
pods_procs() {
  local d
  for d in $(cgroup_dirs); do [[ -d $d ]] && find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null; done | sort -u
}
for ((i = 0; i < 50; i++)); do
  procs=$(pods_procs)
  [[ -z $procs ]] && break
  # shellcheck disable=SC2086
  kill -KILL $procs 2>/dev/null
  sleep 0.1
done
[[ -z $(pods_procs) ]] || log "warning: processes left in the pods' cgroups: $(pods_procs | tr '\n' ' ')"
others=()
for c in "${COMPONENTS[@]}"; do [[ $c == kubelet ]] || others+=("$c"); done
stop "${others[@]}"
log "looking for leftover shims"
# Shims of this containerd outlive it: find them by the socket they were started with.
for p in /proc/[0-9]*; do
  cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
  if [[ $cmd == *containerd-shim* && $cmd == *"$CONTAINERD_SOCK"* ]]; then
    log "stopping shim ${p#/proc/}"
    kill -KILL "${p#/proc/}" 2>/dev/null
  fi
done
sleep 0.2

# Unmount everything under the state dir, deepest first.
log "unmounting"
for attempt in 1 2 3; do
  mounts=$(awk -v s="$STATE/" 'index($5, s) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
  [[ -z $mounts ]] && break
  while read -r m; do
    m=$(printf '%b' "$m") # mountinfo escapes spaces as \040
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done <<<"$mounts"
done
left=$(awk -v s="$STATE/" 'index($5, s) == 1 { print $5 }' /proc/self/mountinfo)
[[ -z $left ]] || log "warning: still mounted: $left"

# The kubelet's cgroups (pods, QoS classes) under CGROUP_ROOT in every v1 hierarchy.
for d in $(cgroup_dirs); do
  [[ -d $d ]] || continue
  find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || log "warning: could not remove cgroup $d"
done

log "removing $STATE"
rm -rf --one-file-system "$STATE"
log "down"
