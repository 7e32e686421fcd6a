#!/usr/bin/env bash
# Spark (PySpark 4) needs a Java 17+ runtime. Install it from Debian's packages when missing.
set -euo pipefail
version_ok() {
  command -v java >/dev/null 2>&1 || return 1
  local v
  v=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)
  [ -n "$v" ] && [ "$v" -ge 17 ]
}
if version_ok; then exit 0; fi
echo "ensure-java: no Java >= 17 found; installing openjdk-17-jre-headless" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null
version_ok || { echo "ensure-java: Java 17 could not be installed" >&2; exit 1; }
