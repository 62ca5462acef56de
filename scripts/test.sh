#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (GPU suites skip where no device is visible),
# then the fuzz targets of the input readers for a fixed number of inputs (scripts/fuzz.sh) and
# the CPU suites under ASan and UBSan (scripts/sanitize.sh), which share one instrumented build
# (scripts/instrumented_build.sh, built beside the ctest at the lowest priority). Prints each
# phase's wall time and CPU time at the end (the CPU time, of every process the phase ran,
# depends less on what else the machine runs).
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
# the instrumented tree (clang, ASan, UBSan: scripts/instrumented_build.sh) builds beside the
# ctest at the lowest priority: it takes the cores the tests leave idle (their long tail) and
# yields them otherwise
both() {
  local rc=0 pid
  (nice -n 19 bash -c "set -euo pipefail; source '$root/scripts/instrumented_build.sh'" \
    > "$root/build/instrumented_build.log" 2>&1) &
  pid=$!
  (cd "$root/build" && ctest --output-on-failure -j "$(nproc)") || rc=$?
  if ! wait "$pid"; then
    echo "test.sh: the instrumented build failed (build/instrumented_build.log):"
    tail -40 "$root/build/instrumented_build.log"
    rc=1
  fi
  return "$rc"
}
phase "ctest (the instrumented build beside it)" both
export SLENDER_INSTRUMENTED_BUILT=1
# then the input readers under libFuzzer, ASan and UBSan: a fixed seed and count (issue 18) and
# the CPU suites under ASan and UBSan, the longest tests left out (scripts/sanitize_skip.txt),
# side by side: the fuzz targets one at a time (about 40 s in all on a 2-core machine), the
# suites on every core (with half each, one core idled for most of the suites' 330 s)
fuzz_and_sanitizers() {
  local rc=0 pid
  (SLENDER_JOBS=1 "$root/scripts/fuzz.sh" --ci > "$root/build/fuzz_ci.log" 2>&1) &
  pid=$!
  SLENDER_JOBS="$(nproc)" "$root/scripts/sanitize.sh" || rc=$?
  wait "$pid" || rc=1
  cat "$root/build/fuzz_ci.log"
  return "$rc"
}
phase "fuzz and sanitizers" fuzz_and_sanitizers
echo "test.sh: $(printf '%s; ' "${phases[@]}")total $(($(date +%s) - t0)) s"
