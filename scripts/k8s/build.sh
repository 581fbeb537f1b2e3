#!/usr/bin/env bash
# Builds what scripts/k8s.sh runs, from upstream sources fetched through the Go module proxy and Debian's
# archive (this machine reaches no container registry and no GitHub), and caches it: prints the cache
# directory, which holds
#   bin/   kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl etcd (static Go binaries
#          from k8s.io/kubernetes@$K8S_VERSION; etcd from the go.etcd.io/etcd/server/v3 its go.mod pins),
#          cri-clean (scripts/k8s/go/cri-clean) and pause (the pod sandbox process)
#   cni/   bridge, host-local and loopback from Debian's containernetworking-plugins (extracted, not installed)
#   pause.tar  a `docker save` of benchrouter/k8s-pause:<key>, an image FROM scratch holding bin/pause
# The directory is named by the Kubernetes version and a hash of this script and of scripts/k8s/go (the
# content that decides what is built), as cluster/build-binaries.sh names its cache by module version: a
# rerun builds nothing, a changed script builds into a new directory. About 13 minutes of 2 cores cold.
# One build at a time per cache: a second invocation waits for the first and then finds its binaries.
#   scripts/k8s/build.sh            build what is missing; print the directory
#   scripts/k8s/build.sh --cached   print the directory and exit 0 when it is complete, else exit 1
set -euo pipefail

K8S_VERSION=v1.37.2
# The staging modules (k8s.io/api, client-go, ...) that kubernetes' go.mod replaces with ./staging/src/...,
# which its module zip does not hold: the published copies of the same release.
STAGING_VERSION=v0.37.2
here="$(cd "$(dirname "$0")" && pwd)"
say() { printf '[k8s] %s\n' "$*" >&2; }

key="$( { cat "$here/build.sh"; (cd "$here/go" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); } | sha256sum | cut -c1-16)"
cache_root="${BENCHROUTER_K8S_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/benchrouter/k8s-bin}"
dir="$cache_root/$K8S_VERSION-$key"
pause_image="benchrouter/k8s-pause:$key"

if [[ -f "$dir/complete" ]]; then
  echo "$dir"
  exit 0
fi
[[ "${1:-}" == --cached ]] && exit 1

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"
flock 9
if [[ -f "$dir/complete" ]]; then
  echo "$dir"
  exit 0
fi
# Holding the lock, no build is under way: a temporary directory is what an interrupted one left.
rm -rf "$cache_root"/.build.*
tmp="$(mktemp -d "$cache_root/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
total=$SECONDS

export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false"
command -v go >/dev/null || { say "go is not installed (the build needs Go >= 1.26)"; exit 1; }

# --- the sources: kubernetes' module zip, made buildable outside its repository
say "fetching k8s.io/kubernetes@$K8S_VERSION from the Go module proxy"
src_mod="$(cd "$tmp" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
[[ -d "$src_mod" ]] || { say "go mod download k8s.io/kubernetes@$K8S_VERSION gave no directory"; exit 1; }
src="$tmp/kubernetes"
cp -r "$src_mod" "$src"
chmod -R u+w "$src"
rm -f "$src/go.work" "$src/go.work.sum"
replaced="$(grep -cE '^\s*k8s\.io/[^ ]+ => \./staging/src/k8s\.io/' "$src/go.mod" || true)"
[[ "$replaced" -gt 30 ]] || { say "expected kubernetes' go.mod to replace ~33 k8s.io modules with ./staging, found $replaced"; exit 1; }
sed -i -E "s#^(\s*)(k8s\.io/[^ ]+) => \./staging/src/k8s\.io/[^ ]+\$#\1\2 => \2 $STAGING_VERSION#" "$src/go.mod"
# The one source change: the kubelet would rewrite this host's sysctls (vm.overcommit_memory, kernel.panic,
# kernel.panic_on_oops) to its liking; on a shared machine it only warns.
manager="$src/pkg/kubelet/cm/container_manager_linux.go"
grep -q '^\s*b := KernelTunableModify$' "$manager" || { say "the kubelet's KernelTunableModify default moved; update the patch in $0"; exit 1; }
sed -i 's/^\(\s*\)b := KernelTunableModify$/\1b := KernelTunableWarn/' "$manager"
for tool in etcd pause cri-clean; do
  mkdir -p "$src/cmd/br-$tool"
  cp "$here/go/$tool/main.go" "$src/cmd/br-$tool/main.go"
done

# --- the binaries
# What `kubectl version` and the node's kubeletVersion report (upstream's hack/lib/version.sh sets the same).
minor="${K8S_VERSION#v1.}"
minor="${minor%%.*}"
version_flags=""
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
  version_flags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done
mkdir -p "$tmp/bin"
for target in br-etcd:etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl br-cri-clean:cri-clean br-pause:pause; do
  package="${target%%:*}" name="${target##*:}"
  start=$SECONDS
  say "building $name (static, nice -n 10, -p=2)"
  (cd "$src" && nice -n 10 go build -p=2 -trimpath -ldflags "-s -w$version_flags" -o "$tmp/bin/$name" "./cmd/$package")
  say "built $name in $((SECONDS - start)) s"
done

# --- CNI plugins: Debian's package, extracted (installing it would put files where others' tools look)
say "fetching Debian's containernetworking-plugins"
(cd "$tmp" && { apt-get download containernetworking-plugins >/dev/null 2>&1 || { apt-get update -qq && apt-get download containernetworking-plugins >/dev/null; }; })
dpkg-deb -x "$tmp"/containernetworking-plugins_*.deb "$tmp/deb"
mkdir -p "$tmp/cni"
for plugin in bridge host-local loopback; do cp "$tmp/deb/usr/lib/cni/$plugin" "$tmp/cni/$plugin"; done

# --- the pause image: FROM scratch, saved for `ctr images import` (no registry to pull one from)
command -v docker >/dev/null || { say "docker is needed to build the pause image"; exit 1; }
mkdir -p "$tmp/pause-image"
cp "$tmp/bin/pause" "$tmp/pause-image/pause"
printf 'FROM scratch\nCOPY pause /pause\nENTRYPOINT ["/pause"]\n' >"$tmp/pause-image/Dockerfile"
docker build -q -t "$pause_image" "$tmp/pause-image" >/dev/null
docker save "$pause_image" -o "$tmp/pause.tar"

rm -rf "$dir"
mkdir -p "$dir"
mv "$tmp/bin" "$tmp/cni" "$tmp/pause.tar" "$dir/"
echo "$pause_image" >"$dir/pause-image"
(cd "$dir" && sha256sum bin/* cni/* pause.tar >SHA256SUMS)
touch "$dir/complete"
say "built into $dir in $((SECONDS - total)) s ($(du -sh "$dir" | cut -f1))"
echo "$dir"
