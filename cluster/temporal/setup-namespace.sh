#!/usr/bin/env bash
# Once the frontend answers: creates the namespace BenchRouter uses and registers the search
# attributes every run carries (their names and types are runs/search-attributes.ts; the cluster
# test fails when this list and that file disagree). Safe to rerun.
set -euo pipefail
namespace="${DEFAULT_NAMESPACE:-default}"
export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-temporal:7233}"

until temporal operator cluster health >/dev/null 2>&1; do sleep 1; done
if ! temporal operator namespace describe --namespace "$namespace" >/dev/null 2>&1; then
  temporal operator namespace create --namespace "$namespace" --retention "${DEFAULT_NAMESPACE_RETENTION:-30d}"
fi
# A new namespace reaches each service through its cache (up to ~10 s): wait until it is usable.
until registered="$(temporal operator search-attribute list --namespace "$namespace" --output json 2>/dev/null)"; do sleep 1; done
for attribute in BenchRouterModel:Keyword BenchRouterBenchmark:Keyword BenchRouterStatus:Keyword BenchRouterScore:Double BenchRouterProvenance:Keyword BenchRouterScoreStats:Keyword; do
  name="${attribute%%:*}" type="${attribute##*:}"
  if ! grep -q "\"$name\"" <<<"$registered"; then
    temporal operator search-attribute create --namespace "$namespace" --name "$name" --type "$type"
  fi
done
echo "namespace $namespace ready with BenchRouter's search attributes"
