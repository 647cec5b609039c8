# Settings shared by up.sh, down.sh, load-image.sh and kubectl.sh (sourced, not run).
K8S_VERSION=${BENCHGYM_K8S_VERSION:-v1.36.3}
CACHE=${BENCHGYM_CACHE:-$HOME/.cache/benchgym}
K8S_DIR=$CACHE/kubernetes/$K8S_VERSION
BIN=$K8S_DIR/bin
STATE=${BENCHGYM_CLUSTER_DIR:-/tmp/benchgym-cluster}
# The kubelet refuses a loopback node IP, so the API server reaches it (logs, exec) by the
# node's Hostname address, which is its name: "localhost" resolves to 127.0.0.1 everywhere.
NODE_NAME=localhost
APISERVER_PORT=${BENCHGYM_CLUSTER_PORT:-16443}
ETCD_PORT=${BENCHGYM_CLUSTER_ETCD_PORT:-12379}
ETCD_PEER_PORT=$((ETCD_PORT + 1))
CONTROLLER_MANAGER_PORT=10257
SCHEDULER_PORT=10259
KUBELET_PORT=10250
KUBELET_HEALTHZ_PORT=10248
POD_PIDS_LIMIT=${BENCHGYM_CLUSTER_POD_PIDS:-512}
CNI_BIN=${BENCHGYM_CNI_BIN:-/usr/lib/cni}
PAUSE_IMAGE=benchgym.local/pause:1
CONTAINERD_SOCK=$STATE/containerd/containerd.sock
# Every cgroup the kubelet makes lives under this one (in each v1 hierarchy), so down.sh can remove it.
CGROUP_ROOT=/$(basename "$STATE")
# Start order; down.sh stops them in reverse.
COMPONENTS=(etcd containerd kube-apiserver kube-controller-manager kube-scheduler kubelet)

# cgroup_dirs: where CGROUP_ROOT is, in each hierarchy (one on cgroup v2, one per controller on v1).
cgroup_dirs() {
  if [[ $(stat -fc %T /sys/fs/cgroup) == cgroup2fs ]]; then
    echo "/sys/fs/cgroup$CGROUP_ROOT"
  else
    local h
    for h in /sys/fs/cgroup/*/; do
      [[ -L ${h%/} ]] || echo "${h%/}$CGROUP_ROOT"
    done
  fi
}

log() { printf '[cluster %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
pid_of() { local f=$STATE/run/$1.pid; [[ -s $f ]] && kill -0 "$(cat "$f")" 2>/dev/null && cat "$f"; }
kctl() { "$BIN/kubectl" --kubeconfig "$STATE/kubeconfig" "$@"; }
# A registry for the cluster (Debian's docker-registry), on loopback: `--registry` pushes env
# images there and the cluster's containerd pulls them (plain HTTP, which containerd and
# Docker allow for a loopback registry without configuration).
REGISTRY_PORT=${BENCHGYM_CLUSTER_REGISTRY_PORT:-15000}
REGISTRY=127.0.0.1:$REGISTRY_PORT
