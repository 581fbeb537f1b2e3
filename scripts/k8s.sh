#!/usr/bin/env bash
# A real one-node Kubernetes cluster on this machine, built from upstream sources (scripts/k8s/build.sh:
# k8s.io/kubernetes and etcd through the Go module proxy, CNI plugins from Debian), for running benchmark
# images as pods without a container registry:
#   scripts/k8s.sh build              build the binaries (cached by content hash; a rerun builds nothing)
#   scripts/k8s.sh up                 build what is missing, start etcd, the control plane, a containerd of its
#                                     own and the kubelet; wait until the node is Ready (already up: says so)
#   scripts/k8s.sh status             the processes and the node's readiness (exit 1 when down)
#   scripts/k8s.sh kubeconfig         print the path of the admin kubeconfig
#   scripts/k8s.sh import <image>...  copy images from Docker into the cluster (docker save | ctr import)
#   scripts/k8s.sh kubectl <args>...  the cluster's kubectl with its kubeconfig
#   scripts/k8s.sh down               stop everything it started and remove its state (the binary cache stays)
# The runtime is Debian's containerd and runc, run as a separate containerd (own socket, root and state
# directories), never Docker's. No kube-proxy and no DNS: pods reach each other and this host by address.
# State: BENCHROUTER_K8S_DIR (default ~/.benchrouter/k8s). Operations: docs/production-cluster.md.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
home="${BENCHROUTER_HOME:-$HOME/.benchrouter}"
state="${BENCHROUTER_K8S_DIR:-$home/k8s}"
api_port="${BENCHROUTER_K8S_API_PORT:-16443}"
etcd_port="${BENCHROUTER_K8S_ETCD_PORT:-12379}"
kubelet_port="${BENCHROUTER_K8S_KUBELET_PORT:-10250}"
pod_cidr="${BENCHROUTER_K8S_POD_CIDR:-10.247.0.0/24}"
service_cidr="${BENCHROUTER_K8S_SERVICE_CIDR:-10.96.0.0/16}"
wait_seconds="${BENCHROUTER_K8S_WAIT_SECONDS:-120}"
# Names this cluster gives what it creates outside its state directory, so that `down` removes only its own.
cni_network=benchrouter-k8s
bridge=br-k8s0
fw_chain=BENCHROUTER-K8S
cgroup_parent=kubepods
# Started in this order, stopped in the reverse one.
components=(etcd kube-apiserver containerd kube-controller-manager kube-scheduler kubelet)

say() { printf '[k8s] %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
pki="$state/pki"
sock="$state/run/containerd.sock"
kubeconfig="$state/admin.kubeconfig"

[[ "$(id -u)" == 0 ]] || die "run as root (the kubelet and containerd manage mounts, cgroups and network namespaces)"

bin_dir() { cat "$state/cache-dir" 2>/dev/null || "$repo/scripts/k8s/build.sh"; }
kubectl_() { "$(bin_dir)/bin/kubectl" --kubeconfig "$kubeconfig" "$@"; }

# --- processes: each started detached with its pid in $state/pids, checked against its command before a signal
pid_of() { # <component>: its pid when it is running
  local pid
  pid="$(cat "$state/pids/$1" 2>/dev/null)" || return 1
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$state" || return 1
  echo "$pid"
}
start() { # <component> <binary> <args>...
  local name="$1"
  shift
  setsid "$@" >"$state/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$state/pids/$name"
}
stop() { # <component>...: TERM to all at once (each takes ~2 s to shut down), then KILL after 15 s
  local c pid pids=() names=()
  for c in "$@"; do
    if pid="$(pid_of "$c")"; then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
      names+=("$c")
    fi
    rm -f "$state/pids/$c"
  done
  local i
  for ((i = 0; i < ${#pids[@]}; i++)); do
    for _ in $(seq 300); do
      [[ -d "/proc/${pids[i]}" ]] || break
      sleep 0.05
    done
    if [[ -d "/proc/${pids[i]}" ]]; then
      say "${names[i]} (pid ${pids[i]}) did not stop: killing it"
      kill -KILL "${pids[i]}" 2>/dev/null || true
    fi
  done
}
running() { local c; for c in "${components[@]}"; do pid_of "$c" >/dev/null || return 1; done; }
any_running() { local c; for c in "${components[@]}"; do pid_of "$c" >/dev/null && return 0; done; return 1; }
show_log() { say "last lines of $state/logs/$1.log:"; tail -n "${2:-30}" "$state/logs/$1.log" >&2 || true; }
port_free() { ! ss -Hltn "sport = :$1" | grep -q .; }

node_ip() {
  ip -4 route get 1.1.1.1 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == "src") { print $(i + 1); exit } }'
}

# --- certificates: one CA, a serving certificate per server, a client certificate per client (EC P-256)
cert() { # <name> <subject> <extensions>
  local name="$1" subject="$2" ext="$3"
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/$name.key" 2>/dev/null
  openssl req -new -key "$pki/$name.key" -subj "$subject" -out "$pki/$name.csr" 2>/dev/null
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 365 \
    -extfile <(printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" "$ext") \
    -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr"
}
make_pki() { # <node name> <node ip>
  local node="$1" ip="$2" first_service_ip
  first_service_ip="$(python3 -c "import ipaddress, sys; print(ipaddress.ip_network(sys.argv[1])[1])" "$service_cidr")"
  mkdir -p "$pki"
  chmod 700 "$pki"
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$pki/ca.key" -subj "/CN=benchrouter-k8s-ca" -days 365 -out "$pki/ca.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
  local server="extendedKeyUsage=serverAuth" client="extendedKeyUsage=clientAuth"
  cert etcd "/CN=etcd" "$server,clientAuth
subjectAltName=IP:127.0.0.1,DNS:localhost"
  cert apiserver-etcd-client "/CN=kube-apiserver-etcd-client" "$client"
  cert apiserver "/CN=kube-apiserver" "$server
subjectAltName=IP:127.0.0.1,IP:$ip,IP:$first_service_ip,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$client"
  cert kubelet-server "/CN=$node" "$server
subjectAltName=IP:$ip,DNS:$node"
  cert kubelet "/O=system:nodes/CN=system:node:$node" "$client"
  cert admin "/O=system:masters/CN=benchrouter-admin" "$client"
  cert controller-manager "/CN=system:kube-controller-manager" "$client"
  cert scheduler "/CN=system:kube-scheduler" "$client"
  # The service-account token signing key.
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/sa.key" 2>/dev/null
  openssl ec -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}
write_kubeconfig() { # <file> <client cert name>
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: benchrouter-k8s
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority: $pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $pki/$2.crt
    client-key: $pki/$2.key
contexts:
- name: benchrouter-k8s
  context: {cluster: benchrouter-k8s, user: $2}
current-context: benchrouter-k8s
EOF
  chmod 600 "$1"
}

# --- configuration files
write_configs() { # <cache dir> <node name> <node ip>
  local cache="$1" node="$2" ip="$3"
  mkdir -p "$state/containerd" "$state/cni/net.d" "$state/kubelet/root" "$state/kubelet/pod-logs"
  cat >"$state/containerd/config.toml" <<EOF
# containerd for scripts/k8s.sh: everything under $state, nothing shared with Docker's containerd.
version = 2
root = "$state/containerd/root"
state = "$state/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$state/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$(cat "$cache/pause-image")"
  # This machine lacks CAP_SYS_RESOURCE: runc may not lower a container's oom_score_adj below its own.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$state/containerd/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$cache/cni"
    conf_dir = "$state/cni/net.d"
    max_conf_num = 1
EOF
  cat >"$state/cni/net.d/10-$cni_network.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "$cni_network",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$bridge",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$pod_cidr" }]],
        "routes": [{ "dst": "0.0.0.0/0" }],
        "dataDir": "$state/cni/ipam"
      }
    }
  ]
}
EOF
  cat >"$state/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
port: $kubelet_port
readOnlyPort: 0
healthzPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: AlwaysAllow}
tlsCertFile: $pki/kubelet-server.crt
tlsPrivateKeyFile: $pki/kubelet-server.key
containerRuntimeEndpoint: unix://$sock
cgroupDriver: cgroupfs
# This host may run cgroup v1 (the kubelet refuses it unless told otherwise).
failCgroupV1: false
failSwapOn: false
# The kubelet would add KUBE-FIREWALL and other chains to this host's iptables.
makeIPTablesUtilChains: false
podLogsDir: $state/kubelet/pod-logs
resolvConf: /etc/resolv.conf
# Imported images are the only copy (there is no registry to pull from again): never collect them, and
# evict only when the machine is really out of room.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
serializeImagePulls: false
maxPods: 200
EOF
  write_kubeconfig "$state/admin.kubeconfig" admin
  write_kubeconfig "$state/kubelet.kubeconfig" kubelet
  write_kubeconfig "$state/controller-manager.kubeconfig" controller-manager
  write_kubeconfig "$state/scheduler.kubeconfig" scheduler
}

# --- host resources outside $state, named so that only this cluster's are touched
forward_rules() { # <-I|-D>: let pod traffic through FORWARD (Docker sets its policy to DROP; br_netfilter
  # sends bridged pod-to-pod packets through it too)
  if [[ "$1" == -I ]]; then
    iptables -w -N "$fw_chain" 2>/dev/null || iptables -w -F "$fw_chain"
    iptables -w -A "$fw_chain" -s "$pod_cidr" -j ACCEPT
    iptables -w -A "$fw_chain" -d "$pod_cidr" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
    iptables -w -C FORWARD -j "$fw_chain" 2>/dev/null || iptables -w -I FORWARD 1 -j "$fw_chain"
  else
    while iptables -w -D FORWARD -j "$fw_chain" 2>/dev/null; do :; done
    iptables -w -F "$fw_chain" 2>/dev/null || true
    iptables -w -X "$fw_chain" 2>/dev/null || true
  fi
}

cleanup_host() { # what lives outside $state, after every process has stopped
  local shim_sockets=() f pid
  for f in "$state"/containerd/state/io.containerd.runtime.v2.task/*/*/address; do
    [[ -f "$f" ]] && shim_sockets+=("$(sed 's#^unix://##' "$f")")
  done
  # Shims of this containerd outlive it (their tasks were removed, so they are only idle): by their address.
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $sock( |\$)" || true); do kill -KILL "$pid" 2>/dev/null || true; done
  for f in "${shim_sockets[@]}"; do
    [[ "$f" == /run/containerd/s/* ]] && rm -f "$f"
  done
  # Mounts under $state (pod volumes, root filesystems, network namespaces, shm), deepest first.
  local m
  awk -v s="$state/" 'index($5, s) == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "could not unmount $m"
  done
  # iptables: the FORWARD chain, and any pod masquerade chain that CNI DEL did not remove (by its comment).
  forward_rules -D
  local chain
  for chain in $(iptables -w -t nat -S POSTROUTING | awk -v n="name: \\\"$cni_network\\\"" 'index($0, n) { for (i = 1; i <= NF; i++) if ($i == "-j") print $(i + 1) }'); do
    iptables -w -t nat -S POSTROUTING | grep -F -- "-j $chain" | sed 's/^-A /-D /' | while read -r rule; do eval "iptables -w -t nat $rule" || true; done
    iptables -w -t nat -F "$chain" 2>/dev/null || true
    iptables -w -t nat -X "$chain" 2>/dev/null || true
  done
  ip link del "$bridge" 2>/dev/null || true
  # libcni's result cache, the kubelet's log links, the pods' cgroups.
  rm -f /var/lib/cni/results/"$cni_network"-*
  rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null || true # libcni makes them; empty, they are nobody else's
  for f in /var/log/containers/*.log; do
    [[ -L "$f" && "$(readlink "$f")" == "$state"/* ]] && rm -f "$f"
  done
  rmdir /var/log/containers 2>/dev/null || true # the kubelet makes it; empty, it is nobody else's
  local d
  for d in /sys/fs/cgroup/*/"$cgroup_parent" /sys/fs/cgroup/unified/"$cgroup_parent"; do
    [[ -d "$d" ]] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  true
}

# --- subcommands
cmd_build() { "$repo/scripts/k8s/build.sh"; }

cmd_up() {
  if running; then
    say "already up (state $state); kubeconfig: $kubeconfig"
    return 0
  fi
  if [[ -d "$state" ]]; then
    say "a previous cluster's state is in $state and not all of it runs: removing it first"
    cmd_down
  fi
  trap '(($? == 0)) || say "up failed: scripts/k8s.sh down stops what it started and removes $state"' EXIT
  local cache node ip t0=$SECONDS
  cache="$("$repo/scripts/k8s/build.sh")"
  node="${BENCHROUTER_K8S_NODE:-$(hostname | tr '[:upper:]' '[:lower:]')}"
  ip="$(node_ip)"
  [[ -n "$ip" ]] || die "cannot tell this machine's address (ip route get 1.1.1.1 gives no src)"
  local p
  for p in "$api_port" "$etcd_port" "$((etcd_port + 1))" "$kubelet_port"; do
    port_free "$p" || die "port $p is in use (set BENCHROUTER_K8S_API_PORT, BENCHROUTER_K8S_ETCD_PORT or BENCHROUTER_K8S_KUBELET_PORT)"
  done
  command -v containerd >/dev/null && command -v runc >/dev/null && command -v containerd-shim-runc-v2 >/dev/null ||
    die "Debian's containerd and runc are needed: apt-get install containerd runc (Docker's own containerd is left alone)"
  mkdir -p "$state"/{logs,pids,run}
  echo "$cache" >"$state/cache-dir"
  make_pki "$node" "$ip"
  write_configs "$cache" "$node" "$ip"
  forward_rules -I
  local b="$cache/bin"

  say "starting etcd, containerd and the control plane (node $node, $ip)"
  start etcd "$b/etcd" --name benchrouter --data-dir "$state/etcd" \
    --listen-client-urls "https://127.0.0.1:$etcd_port" --advertise-client-urls "https://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$((etcd_port + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
    --initial-cluster "benchrouter=http://127.0.0.1:$((etcd_port + 1))" \
    --cert-file "$pki/etcd.crt" --key-file "$pki/etcd.key" --trusted-ca-file "$pki/ca.crt" --client-cert-auth \
    --unsafe-no-fsync --log-level warn
  start containerd containerd --config "$state/containerd/config.toml" --log-level warn
  start kube-apiserver "$b/kube-apiserver" --bind-address 127.0.0.1 --secure-port "$api_port" --advertise-address "$ip" \
    --etcd-servers "https://127.0.0.1:$etcd_port" --etcd-cafile "$pki/ca.crt" \
    --etcd-certfile "$pki/apiserver-etcd-client.crt" --etcd-keyfile "$pki/apiserver-etcd-client.key" \
    --client-ca-file "$pki/ca.crt" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$pki/ca.crt" --kubelet-preferred-address-types InternalIP \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --allow-privileged \
    --service-cluster-ip-range "$service_cidr" --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" --profiling=false
  local deadline=$((SECONDS + wait_seconds))
  until kubectl_ get --raw /readyz >/dev/null 2>&1; do
    pid_of etcd >/dev/null || { show_log etcd; die "etcd exited"; }
    pid_of kube-apiserver >/dev/null || { show_log kube-apiserver; die "kube-apiserver exited"; }
    ((SECONDS < deadline)) || { show_log kube-apiserver; die "kube-apiserver was not ready within $wait_seconds s"; }
    sleep 0.25
  done
  say "kube-apiserver ready after $((SECONDS - t0)) s"
  start kube-controller-manager "$b/kube-controller-manager" --kubeconfig "$state/controller-manager.kubeconfig" \
    --secure-port 0 --leader-elect=false --profiling=false --use-service-account-credentials \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key"
  start kube-scheduler "$b/kube-scheduler" --kubeconfig "$state/scheduler.kubeconfig" --secure-port 0 --leader-elect=false --profiling=false
  until [[ -S "$sock" ]]; do
    pid_of containerd >/dev/null || { show_log containerd; die "containerd exited"; }
    ((SECONDS < deadline)) || { show_log containerd; die "containerd did not open $sock within $wait_seconds s"; }
    sleep 0.1
  done
  ctr --address "$sock" -n k8s.io images import "$cache/pause.tar" >/dev/null || { show_log containerd; die "could not import the pause image"; }
  local kubelet_started=$EPOCHREALTIME
  start kubelet "$b/kubelet" --config "$state/kubelet/config.yaml" --kubeconfig "$state/kubelet.kubeconfig" \
    --root-dir "$state/kubelet/root" --hostname-override "$node" --node-ip "$ip" --v 1

  # A Ready node, then the default service account (no pod can be created in a namespace before it exists).
  local c
  until [[ "$(kubectl_ get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]; do
    for c in "${components[@]}"; do pid_of "$c" >/dev/null || { show_log "$c"; die "$c exited"; }; done
    ((SECONDS < deadline)) || { show_log kubelet; kubectl_ describe node "$node" >&2 || true; die "the node was not Ready within $wait_seconds s"; }
    sleep 0.1
  done
  say "node $node Ready $(awk -v a="$kubelet_started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s after the kubelet started"
  until kubectl_ get serviceaccount default -n default >/dev/null 2>&1; do
    ((SECONDS < deadline)) || { show_log kube-controller-manager; die "no default service account within $wait_seconds s"; }
    sleep 0.1
  done
  say "up in $((SECONDS - t0)) s"
  say "kubeconfig: $kubeconfig (kubectl: $b/kubectl, or scripts/k8s.sh kubectl ...)"
}

cmd_down() {
  if [[ ! -d "$state" ]]; then
    say "already down (no $state)"
    return 0
  fi
  local t0=$SECONDS pid
  say "stopping (state $state)"
  # The kubelet first, so that it restarts nothing; then the runtime removes every pod sandbox (unmounting its
  # root filesystems and running CNI DEL: address, veth, iptables) before it stops too.
  # The kubelet needs no graceful stop (its pods are removed below): KILL saves its 2 s of shutting down.
  if pid="$(pid_of kubelet)"; then kill -KILL "$pid" 2>/dev/null || true; fi
  stop kubelet
  if pid_of containerd >/dev/null && [[ -S "$sock" ]]; then
    "$(bin_dir)/bin/cri-clean" "$sock" >/dev/null || say "cri-clean could not remove every pod (cleaning up after them below)"
  fi
  # The rest together (each takes about 2 s to shut down), but etcd last: kube-apiserver does not stop without it.
  stop kube-scheduler kube-controller-manager kube-apiserver containerd
  stop etcd
  cleanup_host
  if awk -v s="$state/" 'index($5, s) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
    die "mounts remain under $state; not removing it (see: grep $state /proc/self/mountinfo)"
  fi
  rm -rf --one-file-system "$state"
  say "down in $((SECONDS - t0)) s (binaries stay cached in ${BENCHROUTER_K8S_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/benchrouter/k8s-bin})"
}

cmd_status() {
  if [[ ! -d "$state" ]]; then
    echo "down"
    return 1
  fi
  local c pid up=1
  for c in "${components[@]}"; do
    if pid="$(pid_of "$c")"; then
      printf '%-24s running (pid %s)\n' "$c" "$pid"
    else
      printf '%-24s not running\n' "$c"
      up=0
    fi
  done
  if pid_of kube-apiserver >/dev/null; then kubectl_ get nodes -o wide || up=0; fi
  ((up)) || return 1
}

cmd_import() {
  (($#)) || die "usage: scripts/k8s.sh import <image>..."
  running || die "the cluster is not up (scripts/k8s.sh up)"
  local image t0
  for image in "$@"; do
    t0=$SECONDS
    docker image inspect "$image" >/dev/null 2>&1 || die "no Docker image $image on this machine"
    docker save "$image" | ctr --address "$sock" -n k8s.io images import - >/dev/null ||
      die "could not import $image (containerd log: $state/logs/containerd.log)"
    say "imported $image in $((SECONDS - t0)) s"
  done
}

case "${1:-}" in
  build) cmd_build ;;
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  kubeconfig)
    [[ -f "$kubeconfig" ]] || die "the cluster is not up (scripts/k8s.sh up)"
    echo "$kubeconfig"
    ;;
  import)
    shift
    cmd_import "$@"
    ;;
  kubectl)
    shift
    [[ -f "$kubeconfig" ]] || die "the cluster is not up (scripts/k8s.sh up)"
    kubectl_ "$@"
    ;;
  *)
    echo "usage: scripts/k8s.sh build|up|down|status|kubeconfig|import <image>...|kubectl <args>..." >&2
    exit 2
    ;;
esac
