#!/usr/bin/env bash
# Copies images from the local Docker engine into the cluster's containerd (namespace k8s.io),
# so pods can use them with imagePullPolicy: Never (nothing is ever pulled).
#   usage: load-image.sh IMAGE...      e.g. load-image.sh benchgym/base-python:3.11
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/env.sh"
(($# > 0)) || die "usage: load-image.sh IMAGE..."
[[ -S $CONTAINERD_SOCK ]] || die "the cluster's containerd is not running ($CONTAINERD_SOCK): run up.sh"
for image in "$@"; do
  docker image inspect "$image" >/dev/null 2>&1 || die "no image $image in the local Docker engine"
  log "importing $image"
  docker save "$image" | ctr -a "$CONTAINERD_SOCK" -n k8s.io images import - >/dev/null
done
