#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (GPU suites skip where no device is visible),
# then the fuzz targets of the input readers for a fixed number of inputs (scripts/fuzz.sh) and
# the CPU suites under ASan and UBSan (scripts/sanitize.sh), which share one instrumented build
# (scripts/instrumented_build.sh). Prints each phase's wall time and CPU time at the end (the CPU
# time, of every process the phase ran, depends less on what else the machine runs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
phases=()
t0=$(date +%s)
tck=$(getconf CLK_TCK)
cpu_ticks() {  # the CPU time (user + system) of this shell's finished children, in ticks
  awk '{print $16 + $17}' /proc/$$/stat
}
phase() {  # phase NAME COMMAND...: runs it and keeps its wall time and its processes' CPU time
  local name="$1" start c0
  shift
  start=$(date +%s)
  c0=$(cpu_ticks)
  "$@"
  phases+=("$name $(($(date +%s) - start)) s ($((($(cpu_ticks) - c0) / tck)) s CPU)")
}
phase "set-up and build" "$root/scripts/build.sh"
phase "ctest" sh -c "cd '$root/build' && ctest --output-on-failure -j $(nproc)"
# the input readers under libFuzzer, ASan and UBSan: a fixed seed and count (issue 18); its
# instrumented build is the sanitizer suites' too
phase "fuzz (instrumented build included)" "$root/scripts/fuzz.sh" --ci
# the CPU suites under ASan and UBSan, the longest tests left out (scripts/sanitize_skip.txt)
phase "sanitizers" "$root/scripts/sanitize.sh"
echo "test.sh: $(printf '%s; ' "${phases[@]}")total $(($(date +%s) - t0)) s"
