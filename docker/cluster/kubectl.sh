#!/usr/bin/env bash
# kubectl of the cached Kubernetes version, on the cluster up.sh started.
#   usage: kubectl.sh ARGS...      e.g. kubectl.sh get nodes
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/env.sh"
[[ -s $STATE/kubeconfig ]] || die "no cluster up ($STATE/kubeconfig missing): run up.sh"
exec "$BIN/kubectl" --kubeconfig "$STATE/kubeconfig" "$@"
