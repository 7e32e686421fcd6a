#!/usr/bin/env bash
# The HTML report test renders the page in a real headless browser: Debian's chromium package.
# Install it when missing (apt-get as root, or through sudo).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
echo "ensure-chromium: no chromium found; installing Debian's chromium package" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium >/dev/null 2>&1 || { echo "ensure-chromium: chromium could not be installed" >&2; exit 1; }
