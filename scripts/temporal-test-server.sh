#!/usr/bin/env bash
# Temporal's time-skipping test server (the Java SDK's io.temporal:temporal-test-server), for the policy
# tests (test/policy/): @temporalio/testing would download it at run time from outside the package
# registries, which this project's machines cannot reach. Maven fetches the jar and its dependencies from
# Maven Central instead, into a cache folder named by the hash of what is asked for (the version below),
# so a rerun fetches nothing and a new version gets a folder of its own. Prints the path of an executable
# that runs the server as the SDK runs its own: `<executable> <port>` (core-bridge's ephemeral_server).
# Idempotent, as scripts/bootstrap.sh's steps are; installs Debian's Java and Maven where they are missing.
set -euo pipefail

VERSION=1.38.0
say() { printf '[temporal-test-server] %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

pom="<project xmlns=\"http://maven.apache.org/POM/4.0.0\">
  <modelVersion>4.0.0</modelVersion>
  <groupId>benchrouter</groupId><artifactId>temporal-test-server-deps</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>$VERSION</version></dependency>
  </dependencies>
</project>"
key=$(printf '%s' "$pom" | sha256sum | cut -c1-16)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/benchrouter/temporal-test-server/$VERSION-$key"
exe="$cache/temporal-test-server"

if [ -x "$exe" ] && [ -f "$cache/complete" ]; then
  echo "$exe"
  exit 0
fi

# One fetch at a time: the policy test files start together, each asking for the server.
mkdir -p "$(dirname "$cache")"
exec 9>"$(dirname "$cache")/.lock"
flock 9
if [ -x "$exe" ] && [ -f "$cache/complete" ]; then
  echo "$exe"
  exit 0
fi

if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  say "installing Debian's Java and Maven"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq default-jre-headless maven >/dev/null
fi

say "fetching io.temporal:temporal-test-server:$VERSION and its dependencies (into $cache)"
work=$(mktemp -d "${TMPDIR:-/tmp}/br-test-server-XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '%s\n' "$pom" >"$work/pom.xml"
if ! mvn -B -q -f "$work/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$work/lib" >"$work/mvn.log" 2>&1; then
  cat "$work/mvn.log" >&2
  say "maven could not fetch the test server"
  exit 1
fi
[ -f "$work/lib/temporal-test-server-$VERSION.jar" ] || { say "maven fetched no temporal-test-server-$VERSION.jar"; exit 1; }

rm -rf "$cache.partial"
mkdir -p "$cache.partial"
mv "$work/lib" "$cache.partial/lib"
# The SDK runs `<executable> <port> [extra args]`; exec so that its kill reaches the JVM.
cat >"$cache.partial/temporal-test-server" <<EOF
#!/bin/sh
exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -cp "$cache/lib/*" io.temporal.testserver.TestServer "\$@"
EOF
chmod +x "$cache.partial/temporal-test-server"
(cd "$cache.partial/lib" && sha256sum ./*.jar >../jars.sha256)
touch "$cache.partial/complete"
rm -rf "$cache"
mv "$cache.partial" "$cache"
say "ready: $exe"
echo "$exe"
