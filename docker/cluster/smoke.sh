#!/usr/bin/env bash
# Checks a cluster that up.sh brought up: the node is Ready; an image copied from the local
# Docker engine runs as a pod with imagePullPolicy: Never; its logs show; `kubectl exec` works
# (with stdin); the pod has only `lo` and cannot reach any address. Exits non-zero on the first failure.
#   usage: smoke.sh [IMAGE]     (default benchgym/base-python:3.11; it needs sh and python3)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/env.sh"
image=${1:-benchgym/base-python:3.11}
k() { "$here/kubectl.sh" "$@"; }
fail() { log "FAIL: $*"; k describe pod benchgym-smoke 2>/dev/null | tail -n 15 >&2 || true; exit 1; }
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

[[ $(k get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]] || fail "node $NODE_NAME not Ready"
t=$(date +%s%N)
"$here/load-image.sh" "$image"
log "image imported in $(ms "$t") ms"
k delete pod benchgym-smoke --ignore-not-found --grace-period=0 --force >/dev/null 2>&1
t=$(date +%s%N)
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: benchgym-smoke}
spec:
  restartPolicy: Never
  automountServiceAccountToken: false
  dnsPolicy: Default
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: $image
    imagePullPolicy: Never
    command: ["sh", "-c", "echo smoke-log-line; exec sleep 3600"]
YAML
k wait --for=condition=Ready pod/benchgym-smoke --timeout=60s >/dev/null || fail "pod not Ready within 60 s"
log "pod Ready in $(ms "$t") ms"
k logs benchgym-smoke | grep -qx smoke-log-line || fail "the pod's log lacks its line"
t=$(date +%s%N)
[[ $(k exec benchgym-smoke -- echo exec-ok) == exec-ok ]] || fail "kubectl exec"
log "exec round trip $(ms "$t") ms"
[[ $(echo stdin-ok | k exec -i benchgym-smoke -- cat) == stdin-ok ]] || fail "kubectl exec -i (stdin)"
ifaces=$(k exec benchgym-smoke -- sh -c "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
[[ $ifaces == lo ]] || fail "the pod has interfaces other than lo: $ifaces"
net=$(k exec benchgym-smoke -- python3 -c '
import socket
for host in ("1.1.1.1", "10.0.0.1", "192.168.0.1"):
    s = socket.socket(); s.settimeout(2)
    try: s.connect((host, 443)); print("reached", host)
    except OSError: pass
')
[[ -z $net ]] || fail "the pod has a network: $net"
k delete pod benchgym-smoke --grace-period=0 --force >/dev/null 2>&1
log "ok: node Ready, pod from $image ran, logs, exec and stdin work, only lo, no network"
