#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (GPU suites skip where no device is visible).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/build.sh"
cd "$root/build"
ctest --output-on-failure -j "$(nproc)"
