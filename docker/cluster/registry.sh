#!/usr/bin/env bash
# Starts the cluster's image registry (Debian's docker-registry) on 127.0.0.1:REGISTRY_PORT,
# storing under the cluster's state dir, and prints its address: for `--registry ADDR/benchgym`.
# Idempotent; down.sh stops it with the rest. Without docker-registry installed it says so
# and exits 3 (the cluster works without it: images are then loaded with load-image.sh).
#   usage: registry.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/env.sh"
bin=$(command -v docker-registry || true)
[[ -n $bin ]] || { log "no docker-registry (Debian: apt-get install docker-registry): no registry for the cluster"; exit 3; }
[[ -d $STATE/run ]] || die "the cluster is not up ($STATE): run up.sh"
ready() { curl -fs -o /dev/null --max-time 2 "http://$REGISTRY/v2/"; }
if pid_of registry >/dev/null && ready; then echo "$REGISTRY"; exit 0; fi
mkdir -p "$STATE/registry/data"
cat >"$STATE/registry/config.yml" <<YAML
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $STATE/registry/data
  delete:
    enabled: true
http:
  addr: $REGISTRY
YAML
setsid "$bin" serve "$STATE/registry/config.yml" >"$STATE/logs/registry.log" 2>&1 </dev/null &
echo $! >"$STATE/run/registry.pid"
for ((i = 0; i < 100; i++)); do
  ready && { log "registry on $REGISTRY"; echo "$REGISTRY"; exit 0; }
  pid_of registry >/dev/null || die "the registry exited: $(tail -5 "$STATE/logs/registry.log")"
  sleep 0.1
done
die "the registry did not answer on $REGISTRY within 10 s"
