#!/usr/bin/env bash
# Fetching Kafka's jars (kafka/pom.xml) needs Maven and a JDK (javac for our Java harness and the
# Streams app). Install them from Debian's packages when missing.
set -euo pipefail
need=()
command -v mvn >/dev/null 2>&1 || need+=(maven)
command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
[ ${#need[@]} -eq 0 ] && exit 0
echo "ensure-maven: installing ${need[*]} from Debian's packages" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
command -v mvn >/dev/null && command -v javac >/dev/null || { echo "ensure-maven: failed" >&2; exit 1; }
