#!/usr/bin/env bash
# Makes a private CA and certificates for the cluster's mTLS with openssl:
#   make-certs.sh <dir>                 CA, the frontend's server certificate, the cluster's own client
#   make-certs.sh <dir> client <name>   one more client certificate (one per worker host, per `br` user)
# Existing files are kept, so rerunning never invalidates certificates already handed out.
set -euo pipefail
dir="${1:?usage: $0 <dir> [client <name>]}"
server_names="${TEMPORAL_TLS_SERVER_SANS:-DNS:temporal,DNS:localhost,IP:127.0.0.1}"
mkdir -p "$dir"
cd "$dir"

# issue <name> <subject CN> <extensions>
issue() {
  local name="$1" cn="$2" ext="$3"
  [[ -s "$name.pem" ]] && return 0
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$name-key.pem" -subj "/CN=$cn" -out "$name.csr" 2>/dev/null
  openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days "${TEMPORAL_TLS_DAYS:-825}" -sha256 -extfile <(printf '%s\n' "$ext") -out "$name.pem" 2>/dev/null
  rm -f "$name.csr"
  chmod 600 "$name-key.pem"
}

if [[ ! -s ca.pem ]]; then
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca-key.pem -subj "/CN=BenchRouter cluster CA" -days 3650 -sha256 \
    -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' -out ca.pem 2>/dev/null
  chmod 600 ca-key.pem
fi

client_ext='basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth'

if [[ "${2:-}" == client ]]; then
  name="${3:?usage: $0 <dir> client <name>}"
  issue "$name" "$name" "$client_ext"
  echo "$dir/$name.pem $dir/$name-key.pem"
  exit 0
fi

issue server temporal "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=$server_names"
issue cluster-internal cluster-internal "$client_ext"
