#!/bin/sh
# The worker host's entrypoint before the DinD one: what `--security-opt systempaths=unconfined` does, done from
# inside. docker-compose 1.29 cannot ask for it: the docker CLI turns that option into empty MaskedPaths and
# ReadonlyPaths before it reaches the API, but compose sends it to the daemon as it is, which refuses it
# ('invalid --security-opt 2: "systempaths=unconfined"'). Without it the host's dockerd cannot make its
# cgroups writable, nor can its containers mount a /proc of their own: the kernel refuses a new procfs where
# the present one has paths masked. With CAP_SYS_ADMIN and AppArmor unconfined (the compose file's flags) the
# container may take the masks and read-only binds off its own mount namespace; on a host run with
# systempaths=unconfined there are none and this does nothing.
set -u
# Deepest first: /proc/sys/... overlays before /proc/sys.
grep -E ' /(proc|sys/firmware)[/ ]' /proc/self/mountinfo | awk '{ print $5 }' | grep -vx /proc | sort -r | while read -r path; do
  umount "$path" 2>/dev/null || echo "worker-host: cannot unmount $path (run the host with --security-opt systempaths=unconfined)" >&2
done
exec /usr/local/bin/benchrouter-dind-entrypoint "$@"
