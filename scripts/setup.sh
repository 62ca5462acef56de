#!/usr/bin/env bash
# Installs the Debian packages Slender's build needs (only what is missing, so a second run
# is quick). Needs root or sudo on a fresh machine.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config libeigen3-dev libcli11-dev libopenblas-dev
          libsuitesparse-dev googletest libgtest-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all build dependencies present"
fi
