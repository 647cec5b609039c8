#!/usr/bin/env bash
# Brings up a single-node Kubernetes cluster on this machine, for tests: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, a containerd of its own and a kubelet, all as plain
# processes (no systemd) listening on 127.0.0.1 only, under BENCHGYM_CLUSTER_DIR
# (default /tmp/benchgym-cluster). Pods get no network (a CNI list with only `loopback`).
# Waits until the node is Ready, writes STATE/kubeconfig and prints its path.
# Idempotent: when the cluster is already up it only prints the path; a half-up one is torn
# down (down.sh) and started again. The Kubernetes binaries are built once per version into
# BENCHGYM_CACHE/kubernetes/VERSION/bin from the Go module proxy (slow: ~40 min on 2 cores).
#   usage: up.sh            (needs root, containerd, runc, etcd, openssl, gcc, containernetworking-plugins;
#                            with docker-registry, also a registry on 127.0.0.1:15000: registry.sh)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/env.sh"
started=$(date +%s)

[[ $(id -u) == 0 ]] || die "must run as root (the kubelet and containerd manage mounts and cgroups)"
for tool in containerd runc ctr etcd openssl gcc; do
  command -v "$tool" >/dev/null || die "$tool not found (Debian: apt-get install docker.io etcd-server openssl gcc)"
done
[[ -x $CNI_BIN/loopback ]] || die "no CNI loopback plugin in $CNI_BIN (Debian: apt-get install containernetworking-plugins)"

# Already up: only print the kubeconfig.
node_ready() {
  [[ $(kctl get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}
all_running() {
  local c
  for c in "${COMPONENTS[@]}"; do pid_of "$c" >/dev/null || return 1; done
}
if [[ -d $STATE ]]; then
  if all_running && node_ready; then
    log "already up"
    "$here/registry.sh" >/dev/null || true
    echo "$STATE/kubeconfig"
    exit 0
  fi
  log "$STATE holds a cluster that is not fully up: tearing it down first"
  "$here/down.sh"
fi

# The Kubernetes binaries, built once per version.
build_kubernetes() {
  local go
  go=$(command -v go || echo /usr/local/go/bin/go)
  [[ -x $go ]] || die "Kubernetes $K8S_VERSION is not cached in $BIN and go is not installed to build it"
  local minor patch staging m
  IFS=. read -r _ minor patch <<<"${K8S_VERSION#v}"
  staging=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
    cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
    cri-client cri-streaming csi-translation-lib dynamic-resource-allocation endpointslice externaljwt
    kms kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
    mount-utils pod-security-admission sample-apiserver streaming)
  log "building Kubernetes $K8S_VERSION into $BIN (from the Go module proxy; ~40 min cold on 2 cores)"
  mkdir -p "$K8S_DIR"
  {
    echo "module benchgym.local/k8sbuild"
    echo
    echo "go 1.26.0"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    echo "replace ("
    # The staging modules that a given release does not publish are simply unused by go mod tidy.
    for m in "${staging[@]}"; do echo "	k8s.io/$m => k8s.io/$m v0.$minor.$patch"; done
    echo ")"
  } >"$K8S_DIR/go.mod"
  cat >"$K8S_DIR/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  local v=k8s.io/component-base/version
  (cd "$K8S_DIR" && "$go" mod tidy -e >&2 && mkdir -p bin.partial &&
    CGO_ENABLED=0 "$go" build -trimpath -o bin.partial/ \
      -ldflags "-s -w -X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubectl >&2 &&
    rm -rf bin && mv bin.partial bin)
}
for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
  if [[ ! -x $BIN/$b ]]; then build_kubernetes; break; fi
done

# The pod sandbox image: a static pause binary in a one-layer docker-archive, cached by content.
pause_tar=$CACHE/kubernetes/pause-$(sha256sum "$here/pause.c" | cut -c1-12).tar
if [[ ! -s $pause_tar ]]; then
  log "building the pause image $PAUSE_IMAGE"
  work=$(mktemp -d)
  gcc -static -Os -s -o "$work/pause" "$here/pause.c"
  mkdir "$work/img" && tar --numeric-owner --owner=0 --group=0 -C "$work" -cf "$work/img/layer.tar" pause
  diff_id=sha256:$(sha256sum "$work/img/layer.tar" | cut -d' ' -f1)
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause"],"User":"65535:65535"},"rootfs":{"type":"layers","diff_ids":["%s"]}}' \
    "$diff_id" >"$work/img/config.json"
  printf '[{"Config":"config.json","RepoTags":["%s"],"Layers":["layer.tar"]}]' "$PAUSE_IMAGE" >"$work/img/manifest.json"
  tar -C "$work/img" -cf "$pause_tar.partial" manifest.json config.json layer.tar
  mv "$pause_tar.partial" "$pause_tar"
  rm -rf "$work"
fi

log "certificates and configuration in $STATE"
mkdir -p "$STATE"/{pki,run,logs,etcd,cni/net.d,containerd,kubelet,manifests}
chmod 700 "$STATE"
pki=$STATE/pki
openssl_quiet() { openssl "$@" 2>/dev/null; }
openssl_quiet req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 -subj "/CN=benchgym-cluster-ca" \
  -keyout "$pki/ca.key" -out "$pki/ca.crt"
# cert NAME SUBJECT USAGE [SAN]: a key and a certificate signed by the cluster CA (P-256 keys:
# RSA ones took seconds each on a loaded 2-core machine).
cert() {
  local name=$1 subject=$2 usage=$3 san=${4:-} ext
  ext="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=$usage"
  [[ -n $san ]] && ext+=$'\n'"subjectAltName=$san"
  openssl_quiet req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "$subject" -keyout "$pki/$name.key" -out "$pki/$name.csr"
  openssl_quiet x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 30 -out "$pki/$name.crt" -extfile <(echo "$ext")
  rm -f "$pki/$name.csr"
}
cert apiserver "/CN=kube-apiserver" serverAuth \
  "IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
cert etcd-server "/CN=etcd" serverAuth "IP:127.0.0.1,DNS:localhost"
cert etcd-client "/CN=kube-apiserver-etcd-client" clientAuth
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
cert kubelet-server "/CN=$NODE_NAME" serverAuth "IP:127.0.0.1,DNS:localhost"
cert kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" clientAuth
cert controller-manager "/CN=system:kube-controller-manager" clientAuth
cert scheduler "/CN=system:kube-scheduler" clientAuth
cert admin "/O=system:masters/CN=benchgym-admin" clientAuth
openssl_quiet ecparam -name prime256v1 -genkey -noout -out "$pki/sa.key"
openssl_quiet ec -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
chmod 600 "$pki"/*.key

kubeconfig() { # kubeconfig FILE CERT-NAME USER
  cat >"$1" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: benchgym
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $pki/ca.crt
users:
- name: $3
  user:
    client-certificate: $pki/$2.crt
    client-key: $pki/$2.key
contexts:
- name: benchgym
  context: {cluster: benchgym, user: $3, namespace: default}
current-context: benchgym
YAML
  chmod 600 "$1"
}
kubeconfig "$STATE/controller-manager.kubeconfig" controller-manager system:kube-controller-manager
kubeconfig "$STATE/scheduler.kubeconfig" scheduler system:kube-scheduler
kubeconfig "$STATE/kubelet.kubeconfig" kubelet "system:node:$NODE_NAME"
# The admin kubeconfig is written last, once the node is Ready (its presence means "up").
kubeconfig "$STATE/admin.kubeconfig" admin benchgym-admin

# No pod network: containerd brings up each pod's `lo` with the loopback plugin, and the only
# network in the CNI list is cni-no-network, which adds nothing (see that file for why it exists).
mkdir -p "$STATE/cni/bin"
ln -s "$CNI_BIN/loopback" "$STATE/cni/bin/loopback"
cp "$here/cni-no-network" "$STATE/cni/bin/benchgym-no-network"
cat >"$STATE/cni/net.d/10-benchgym-no-network.conflist" <<JSON
{"cniVersion": "1.0.0", "name": "benchgym-no-network", "plugins": [{"type": "benchgym-no-network"}]}
JSON

cat >"$STATE/containerd/config.toml" <<TOML
version = 2
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_tls_streaming = false
  netns_mounts_under_state_dir = true
  # This machine may not lower oom_score_adj (no CAP_SYS_RESOURCE): keep pods at containerd's.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$STATE/cni/bin"
    conf_dir = "$STATE/cni/net.d"
    max_conf_num = 1
TOML

cat >"$STATE/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
enableProfilingHandler: false
tlsCertFile: $pki/kubelet-server.crt
tlsPrivateKeyFile: $pki/kubelet-server.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
failCgroupV1: false
failSwapOn: false
staticPodPath: $STATE/manifests
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
# The images come from local imports only and cannot be pulled again: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# Images reach this node both ways: imported (load-image.sh) and pulled from the loopback
# registry. Once the kubelet has pulled an image, it asks pods that use it under another name
# to prove pull credentials, which an imported name with imagePullPolicy Never cannot
# (ErrImageNeverPull). Nothing here is secret: never verify.
imagePullCredentialsVerificationPolicy: NeverVerify
evictionHard: {memory.available: 200Mi, nodefs.available: 5%, imagefs.available: 5%}
maxPods: 250
# Kubernetes has no per-pod pids field: the kubelet caps every pod (the Docker backend's default is 512).
podPidsLimit: $POD_PIDS_LIMIT
YAML

# The processes, in dependency order.
# start NAME COMMAND...: runs it in a session of its own (it outlives this script), logs to STATE/logs.
start() {
  local name=$1; shift
  setsid "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$STATE/run/$name.pid"
}
# wait_for WHAT SECONDS COMMAND...: polls COMMAND until it succeeds.
wait_for() {
  local what=$1 deadline=$(($(date +%s) + $2)); shift 2
  until "$@" >/dev/null 2>&1; do
    if (($(date +%s) > deadline)); then
      log "timed out waiting for $what; last lines of the logs:"
      tail -n 5 "$STATE"/logs/*.log >&2
      exit 1
    fi
    sleep 0.5
  done
}
fail_cleanup() { log "up failed: logs in $STATE/logs (run down.sh to clean up)"; }
trap 'fail_cleanup' ERR

log "starting etcd, containerd, kube-apiserver"
start etcd etcd --name benchgym --data-dir "$STATE/etcd" \
  --listen-client-urls "https://127.0.0.1:$ETCD_PORT" --advertise-client-urls "https://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "benchgym=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
  --cert-file "$pki/etcd-server.crt" --key-file "$pki/etcd-server.key" \
  --client-cert-auth --trusted-ca-file "$pki/ca.crt"
start containerd containerd --config "$STATE/containerd/config.toml"

# The kubelet wants its cgroupRoot to exist (the v2 hierarchy mounted beside v1 it handles itself).
while read -r d; do
  [[ $d == /sys/fs/cgroup/unified/* ]] || mkdir -p "$d"
done < <(cgroup_dirs)

start kube-apiserver "$BIN/kube-apiserver" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
  --etcd-servers="https://127.0.0.1:$ETCD_PORT" --etcd-cafile="$pki/ca.crt" \
  --etcd-certfile="$pki/etcd-client.crt" --etcd-keyfile="$pki/etcd-client.key" \
  --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
  --client-ca-file="$pki/ca.crt" --anonymous-auth=false --profiling=false \
  --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
  --service-cluster-ip-range=10.96.0.0/24 \
  --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority="$pki/ca.crt" --kubelet-preferred-address-types=Hostname
wait_for "etcd and the API server" 60 "$BIN/kubectl" --kubeconfig "$STATE/admin.kubeconfig" get --raw /readyz

log "API server ready; starting kube-controller-manager, kube-scheduler, kubelet"
start kube-controller-manager "$BIN/kube-controller-manager" \
  --bind-address=127.0.0.1 --secure-port="$CONTROLLER_MANAGER_PORT" --leader-elect=false --profiling=false \
  --kubeconfig="$STATE/controller-manager.kubeconfig" \
  --authentication-kubeconfig="$STATE/controller-manager.kubeconfig" \
  --authorization-kubeconfig="$STATE/controller-manager.kubeconfig" \
  --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
  --use-service-account-credentials=true --allocate-node-cidrs=false
start kube-scheduler "$BIN/kube-scheduler" \
  --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --leader-elect=false --profiling=false \
  --kubeconfig="$STATE/scheduler.kubeconfig" \
  --authentication-kubeconfig="$STATE/scheduler.kubeconfig" \
  --authorization-kubeconfig="$STATE/scheduler.kubeconfig"

wait_for "containerd" 30 ctr -a "$CONTAINERD_SOCK" version
ctr -n k8s.io -a "$CONTAINERD_SOCK" images import "$pause_tar" >/dev/null

start kubelet "$BIN/kubelet" --config="$STATE/kubelet/config.yaml" \
  --kubeconfig="$STATE/kubelet.kubeconfig" --root-dir="$STATE/kubelet" \
  --hostname-override="$NODE_NAME" --v=1

cp "$STATE/admin.kubeconfig" "$STATE/kubeconfig.partial"
mv "$STATE/kubeconfig.partial" "$STATE/kubeconfig.wait"
KUBECONFIG_WAIT=$STATE/kubeconfig.wait
node_ready_wait() {
  [[ $("$BIN/kubectl" --kubeconfig "$KUBECONFIG_WAIT" get node "$NODE_NAME" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}
wait_for "node $NODE_NAME to be Ready" 90 node_ready_wait
# Pods are admitted only once the namespace's default service account exists.
wait_for "the default service account" 30 "$BIN/kubectl" --kubeconfig "$KUBECONFIG_WAIT" get serviceaccount default
mv "$STATE/kubeconfig.wait" "$STATE/kubeconfig"
trap - ERR
# The registry is optional: without docker-registry, images are loaded with load-image.sh.
registry=$("$here/registry.sh") && registry=", registry $registry" || registry=
log "up in $(($(date +%s) - started)) s; Kubernetes $K8S_VERSION, node $NODE_NAME, API https://127.0.0.1:$APISERVER_PORT$registry"
echo "$STATE/kubeconfig"
