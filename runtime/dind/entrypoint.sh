#!/usr/bin/env bash
# BenchRouter DinD entrypoint: gives a `docker: true` task its own Docker daemon.
#
#   1. makes the cgroup hierarchies writable (v1: re-mount each hierarchy; v2: nesting setup);
#   2. starts the inner dockerd (overlay2, falling back to vfs), logging to /var/log/dockerd.log;
#   3. `docker load`s every image archive in $BENCHROUTER_PRELOAD_DIR (default /app/preload);
#   4. runs the task command ("$@", e.g. sh -c "<command>"), then kills every inner container,
#      stops the inner daemon and exits with the task's exit code.
# SIGTERM/SIGINT are forwarded to the task's process group; inner containers and the daemon are
# then stopped and the entrypoint exits with 128+signal.
#
# Exit code 125 means the DinD setup itself failed (infrastructure), never the task; the reason
# is on stderr in a line starting with "[dind] error:".
#
# Settings (environment):
#   BENCHROUTER_PRELOAD_DIR          image archives to load (*.tar, *.tar.gz, *.tgz, *.tar.xz)
#   BENCHROUTER_DIND_STORAGE_DRIVER  force a storage driver (default: overlay2, then vfs)
#   BENCHROUTER_DIND_READY_TIMEOUT   seconds to wait for each dockerd start (default 60)
#   BENCHROUTER_DIND_STOP_TIMEOUT    seconds to wait for dockerd to stop before SIGKILL (default 15)
#   BENCHROUTER_DIND_TERM_GRACE      seconds the task gets after SIGTERM before SIGKILL (default 3)
#   BENCHROUTER_DIND_DOCKERD_ARGS    extra dockerd arguments (word-split)
set -u

SELF="${BASH_SOURCE[0]}"
SETUP_FAILED=125
DOCKERD_LOG=/var/log/dockerd.log
PRELOAD_DIR="${BENCHROUTER_PRELOAD_DIR:-/app/preload}"
READY_TIMEOUT="${BENCHROUTER_DIND_READY_TIMEOUT:-60}"
STOP_TIMEOUT="${BENCHROUTER_DIND_STOP_TIMEOUT:-15}"
TERM_GRACE="${BENCHROUTER_DIND_TERM_GRACE:-3}"

# As PID 1, re-exec under tini (shipped with docker.io): it reaps the zombies that
# containerd shims leave behind and forwards signals to this script.
if [ "$$" = 1 ] && [ -z "${BENCHROUTER_DIND_INIT:-}" ] && command -v tini >/dev/null 2>&1; then
  export BENCHROUTER_DIND_INIT=1
  exec tini -- "$SELF" "$@"
fi
unset BENCHROUTER_DIND_INIT

T_START=${EPOCHREALTIME/./}
log() { printf '[dind] %s\n' "$*" >&2; }
now_us() { echo "${EPOCHREALTIME/./}"; }
secs_since() { # microsecond timestamp -> "1.23"
  local d=$(( $(now_us) - $1 ))
  printf '%d.%02d' $(( d / 1000000 )) $(( d % 1000000 / 10000 ))
}

dockerd_pid=""
task_pid=""
storage_driver=""

# alive PID: true while the process exists and is not a zombie (our own children stay
# visible to `kill -0` as zombies until reaped).
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# wait_pid PID SECONDS: wait for a child to exit, SIGKILL it after SECONDS, reap it.
wait_pid() {
  local pid=$1 deadline=$(( $(now_us) + $2 * 1000000 ))
  while alive "$pid" && [ "$(now_us)" -lt "$deadline" ]; do sleep 0.05; done
  alive "$pid" && kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return 0
}

# ---------------------------------------------------------------------------- cgroups

# Mounts of cgroup filesystems below /sys/fs/cgroup, as "mountpoint fstype superopts" with
# rw/ro dropped from the super options (they must match the hierarchy to re-mount it).
cgroup_mounts() {
  awk '{
    for (i = 7; i <= NF; i++) if ($i == "-") break
    fs = $(i + 1); if (fs != "cgroup" && fs != "cgroup2") next
    if ($5 !~ /^\/sys\/fs\/cgroup\//) next
    n = split($(i + 3), o, ","); opts = ""
    for (j = 1; j <= n; j++) if (o[j] != "rw" && o[j] != "ro") opts = opts (opts == "" ? "" : ",") o[j]
    print $5, fs, (opts == "" ? "none" : opts)
  }' /proc/self/mountinfo
}

sorted_opts() { tr ',' '\n' <<<"$1" | grep -v -e '^$' -e '^none$' | sort | paste -sd, -; }

setup_cgroup_v1() {
  local mp fs opts ctrl hier path name mounted=" "
  # /sys/fs/cgroup must be a writable tmpfs to hold the hierarchy mount points.
  if ! mountpoint -q /sys/fs/cgroup; then
    mount -t tmpfs -o nosuid,nodev,noexec,mode=755 cgroup /sys/fs/cgroup || return 1
  else
    mount -o remount,rw /sys/fs/cgroup 2>/dev/null || true
  fi
  # Re-mount every hierarchy the runtime bound read-only (named ones like name=systemd and
  # co-mounted ones like cpu,cpuacct included): umount, then mount it again read-write.
  while read -r mp fs opts; do
    umount "$mp" || { log "error: cannot umount $mp"; return 1; }
    if [ "$opts" = none ]; then mount -t "$fs" "$fs" "$mp"; else mount -t "$fs" -o "$opts" "$fs" "$mp"; fi \
      || { log "error: cannot mount $fs ($opts) at $mp"; return 1; }
    [ "$fs" = cgroup ] && mounted="$mounted$(sorted_opts "$opts") "
  done < <(cgroup_mounts | sort -r)
  # Mount any v1 hierarchy this process belongs to that the runtime did not mount at all.
  while IFS=: read -r hier ctrl path; do
    [ "$hier" = 0 ] || [ -z "$ctrl" ] && continue
    case "$mounted" in *" $(sorted_opts "$ctrl") "*) continue ;; esac
    name=${ctrl#name=}
    mkdir -p "/sys/fs/cgroup/$name"
    mount -t cgroup -o "$ctrl" cgroup "/sys/fs/cgroup/$name" || { log "error: cannot mount cgroup $ctrl"; return 1; }
    case "$ctrl" in *,*)  # co-mounted: cpu -> cpu,cpuacct like systemd does
      for c in ${ctrl//,/ }; do [ -e "/sys/fs/cgroup/$c" ] || ln -s "$name" "/sys/fs/cgroup/$c"; done ;;
    esac
  done </proc/self/cgroup
}

setup_cgroup_v2() {
  local pid
  # The runtime mounts cgroup2 read-only unless privileged; in a private cgroup namespace a
  # fresh mount shows this container's own subtree.
  if awk '$5 == "/sys/fs/cgroup" { split($6, o, ","); if (o[1] == "ro") ro = 1 } END { exit !ro }' /proc/self/mountinfo; then
    umount /sys/fs/cgroup || { log "error: cannot umount /sys/fs/cgroup"; return 1; }
    mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup 2>/dev/null || mount -t cgroup2 cgroup2 /sys/fs/cgroup \
      || { log "error: cannot re-mount cgroup2 read-write"; return 1; }
  fi
  # No internal processes: move everything into a leaf, then delegate all controllers.
  mkdir -p /sys/fs/cgroup/init
  for _ in 1 2 3 4 5; do
    while read -r pid; do echo "$pid" >/sys/fs/cgroup/init/cgroup.procs 2>/dev/null; done </sys/fs/cgroup/cgroup.procs
    sed -e 's/ / +/g' -e 's/^/+/' </sys/fs/cgroup/cgroup.controllers >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null && return 0
  done
  log "error: cannot enable cgroup v2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
  return 1
}

# Without a private cgroup namespace, re-mounting shows the HOST's hierarchy root and the inner
# dockerd would put its containers in /docker/<id> beside (not inside) this container, outside
# its memory/cpu/pids limits. Then nest them explicitly under our own cgroup.
cgroup_parent_args=()
pick_cgroup_parent() {
  local hier ctrl path own=""
  while IFS=: read -r hier ctrl path; do
    case ",$ctrl," in *,memory,*|*,pids,*) own=$path; break ;; esac
    [ -z "$own" ] && [ "$hier" != 0 ] && own=$path
  done </proc/self/cgroup
  if [ -n "$own" ] && [ "$own" != / ]; then
    cgroup_parent_args=(--cgroup-parent "${own%/}/docker")
    log "no private cgroup namespace: inner containers go under ${own%/}/docker (run the outer container with --cgroupns private to avoid this)"
  fi
}

setup_cgroups() {
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    setup_cgroup_v2
  else
    setup_cgroup_v1 && pick_cgroup_parent
  fi
}

# ---------------------------------------------------------------------------- dockerd

dockerd_extra_args() {
  local iface mtu
  # Match the inner bridge MTU to the outer interface, or large packets vanish.
  iface=$(awk '$2 == "00000000" { print $1; exit }' /proc/net/route 2>/dev/null)
  if [ -n "$iface" ] && mtu=$(cat "/sys/class/net/$iface/mtu" 2>/dev/null) && [ "$mtu" -lt 1500 ] 2>/dev/null; then
    echo "--mtu=$mtu"
  fi
  # shellcheck disable=SC2086
  [ -n "${BENCHROUTER_DIND_DOCKERD_ARGS:-}" ] && printf '%s\n' ${BENCHROUTER_DIND_DOCKERD_ARGS}
}

# The daemon log without the gRPC connection chatter dockerd 20.10 logs at info level.
log_tail() { grep -v 'module=grpc' "$DOCKERD_LOG" 2>/dev/null | tail -n "$1"; }
last_log_line() { log_tail 1; }

# start_dockerd DRIVER: start the daemon and wait until `docker info` answers.
start_dockerd() {
  local driver=$1 t0 deadline extra
  t0=$(now_us)
  deadline=$(( t0 + READY_TIMEOUT * 1000000 ))
  mapfile -t extra < <(dockerd_extra_args)
  printf '\n=== [dind] starting dockerd --storage-driver %s at %s\n' "$driver" "$(date -Is)" >>"$DOCKERD_LOG"
  # Own session: a Ctrl-C on a tty must not reach the daemon directly; we stop it in order.
  setsid dockerd --host unix:///var/run/docker.sock --storage-driver "$driver" \
    "${cgroup_parent_args[@]}" "${extra[@]}" >>"$DOCKERD_LOG" 2>&1 </dev/null &
  dockerd_pid=$!
  while :; do
    if ! alive "$dockerd_pid"; then
      wait "$dockerd_pid" 2>/dev/null
      log "dockerd --storage-driver $driver exited (status $?) before it was ready: $(last_log_line)"
      dockerd_pid=""
      return 1
    fi
    if [ -S /var/run/docker.sock ] && docker info >/dev/null 2>&1; then
      storage_driver=$(docker info --format '{{.Driver}}' 2>/dev/null)
      log "dockerd ready in $(secs_since "$t0")s (storage-driver=${storage_driver:-$driver})"
      return 0
    fi
    if [ "$(now_us)" -ge "$deadline" ]; then
      log "dockerd --storage-driver $driver not ready after ${READY_TIMEOUT}s"
      kill -TERM "$dockerd_pid" 2>/dev/null
      wait_pid "$dockerd_pid" 5
      dockerd_pid=""
      return 1
    fi
    sleep 0.1
  done
}

# Kill every inner container, stop the daemon, unmount what it left below /var/lib/docker.
stop_inner() {
  local ids mp
  if [ -n "$dockerd_pid" ] && alive "$dockerd_pid"; then
    ids=$(timeout 10 docker ps -q 2>/dev/null)
    # shellcheck disable=SC2086
    [ -n "$ids" ] && timeout 20 docker kill $ids >/dev/null 2>&1
    kill -TERM "$dockerd_pid" 2>/dev/null
    wait_pid "$dockerd_pid" "$STOP_TIMEOUT"
  fi
  dockerd_pid=""
  # containerd is dockerd's child; after a SIGKILLed daemon it may survive.
  for mp in /var/run/docker/containerd/containerd.pid; do
    [ -f "$mp" ] && kill -KILL "$(cat "$mp")" 2>/dev/null
  done
  awk '$5 ~ /^\/(var\/lib\/docker|run\/docker|var\/run\/docker)\// { print $5 }' /proc/self/mountinfo | sort -r |
    while read -r mp; do umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null; done
}

die() {
  log "error: $*"
  if [ -f "$DOCKERD_LOG" ]; then
    log "last lines of $DOCKERD_LOG:"
    log_tail 20 | sed 's/^/[dind]   /' >&2
  fi
  stop_inner
  exit "$SETUP_FAILED"
}

# ---------------------------------------------------------------------------- signals

on_signal() {
  local sig=$1 num t0
  t0=$(now_us)
  num=$(kill -l "$sig")
  trap '' TERM INT
  log "received SIG$sig: stopping the task, the inner containers and dockerd"
  if [ -n "$task_pid" ] && alive "$task_pid"; then
    kill -"$sig" -- "-$task_pid" 2>/dev/null || kill -"$sig" "$task_pid" 2>/dev/null
  fi
  if [ -n "$dockerd_pid" ] && alive "$dockerd_pid"; then
    ids=$(timeout 10 docker ps -q 2>/dev/null)
    # shellcheck disable=SC2086
    [ -n "$ids" ] && timeout 20 docker kill $ids >/dev/null 2>&1
  fi
  if [ -n "$task_pid" ]; then
    wait_pid "$task_pid" "$TERM_GRACE"
    kill -KILL -- "-$task_pid" 2>/dev/null
  fi
  stop_inner
  log "task, inner containers and dockerd stopped in $(secs_since "$t0")s"
  exit $(( 128 + num ))
}
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT

# ---------------------------------------------------------------------------- main

[ "$#" -gt 0 ] || set -- sh -c 'docker info'
command -v dockerd >/dev/null 2>&1 || die "dockerd is not installed in this image"

mount --make-rshared / 2>/dev/null || true
setup_cgroups || die "cannot make the cgroup hierarchies writable (is the container run with --cap-add ALL --security-opt systempaths=unconfined?)"

mkdir -p /var/lib/docker /var/log
if [ -n "${BENCHROUTER_DIND_STORAGE_DRIVER:-}" ]; then
  drivers=("$BENCHROUTER_DIND_STORAGE_DRIVER")
else
  drivers=(overlay2 vfs)
fi
started=""
for d in "${drivers[@]}"; do
  if start_dockerd "$d"; then started=1; break; fi
  [ "$d" != "${drivers[-1]}" ] && log "retrying with the next storage driver"
done
[ -n "$started" ] || die "inner dockerd did not start (storage drivers tried: ${drivers[*]}; log: $DOCKERD_LOG)"
[ "$storage_driver" = vfs ] && log "warning: vfs storage driver (no overlay2): image loads and container starts are slow; bind a host directory at /var/lib/docker"

if [ -d "$PRELOAD_DIR" ]; then
  t0=$(now_us)
  shopt -s nullglob
  archives=("$PRELOAD_DIR"/*.tar "$PRELOAD_DIR"/*.tar.gz "$PRELOAD_DIR"/*.tgz "$PRELOAD_DIR"/*.tar.xz)
  shopt -u nullglob
  for f in "${archives[@]}"; do
    # In the background so that SIGTERM (cancel) is handled during a long load.
    docker load -i "$f" >/tmp/dind-load.out 2>&1 &
    wait $! || die "docker load -i $f failed: $(tail -n 5 /tmp/dind-load.out)"
    out=$(cat /tmp/dind-load.out)
    log "$(basename "$f"): ${out//$'\n'/; }"
  done
  log "loaded ${#archives[@]} image(s) in $(secs_since "$t0")s"
fi
log "ready in $(secs_since "$T_START")s since entrypoint start; running the task"

# The task runs in the background in its own session/process group so that the signal traps
# can fire while we wait, and a forwarded signal reaches all of its processes.
setsid --wait "$@" <&0 &
task_pid=$!
wait "$task_pid"
rc=$?
# `wait` returns early (status > 128) when a trapped signal arrives; on_signal then exits.
while alive "$task_pid"; do wait "$task_pid"; rc=$?; done
task_pid=""
trap '' TERM INT
t0=$(now_us)
stop_inner
log "task exited with status $rc; inner daemon stopped in $(secs_since "$t0")s"
exit "$rc"
