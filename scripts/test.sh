#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (GPU suites skip where no device is visible),
# then the fuzz targets of the input readers for a fixed number of inputs (scripts/fuzz.sh) and
# the CPU suites under ASan and UBSan (scripts/sanitize.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/build.sh"
(cd "$root/build" && ctest --output-on-failure -j "$(nproc)")
# the input readers under libFuzzer, ASan and UBSan: a fixed seed and count (issue 18)
"$root/scripts/fuzz.sh" --ci
# the CPU suites under ASan and UBSan, the longest tests left out (scripts/sanitize_skip.txt)
"$root/scripts/sanitize.sh"
