#!/usr/bin/env bash
# Threads under load (issue 53, item 9): S1, the 2k cloth (S9) and S8 (the vectorized snake
# batch) on 1 thread, 2 threads and the default thread count, each on the machine as it is
# ("quiet") and with a competing job: a busy loop pinned to one core (CPU_BUSY, default 1), as
# another user's job on a shared machine or a cluster node. Prints a markdown table: each
# benchmark's own timing (only the stepping loop; min / median / max over RUNS repeats) and the
# ratio of the loaded median to the quiet one. Run it on an otherwise idle machine to get
# clean figures; the load averages are printed before and after.
#
#   bench/threads_under_load.sh [BUILD_DIR]      (default: build; needs its bench/ programs:
#                                                 cmake --build BUILD_DIR --target slender_bench
#                                                 slender_cloth_bench slender_batch_bench)
#   RUNS=5 CPU_BUSY=1 CLOTH_STEPS=30 S8_ENVS=64 S8_STEPS=20 bench/threads_under_load.sh
#
# The thread count is set with OMP_NUM_THREADS, which Slender's host threads follow (as
# SLENDER_THREADS, which takes precedence); "default" unsets both. The same command then also
# measures builds from before the host thread pool (they were OpenMP teams).
set -euo pipefail

BUILD=${1:-build}
BENCH="$BUILD/bench"
RUNS=${RUNS:-5}
CPU_BUSY=${CPU_BUSY:-1}
CLOTH_STEPS=${CLOTH_STEPS:-30}
S8_ENVS=${S8_ENVS:-64}
S8_STEPS=${S8_STEPS:-20}

for p in slender_bench slender_cloth_bench slender_batch_bench; do
  [[ -x "$BENCH/$p" ]] || { echo "missing $BENCH/$p (build it first)" >&2; exit 2; }
done
command -v taskset >/dev/null || { echo "taskset (util-linux) is needed" >&2; exit 2; }

busy=""
busy_start() {
  taskset -c "$CPU_BUSY" sh -c 'while :; do :; done' &
  busy=$!
  sleep 0.5
}
busy_stop() {
  if [[ -n "$busy" ]]; then
    kill "$busy" 2>/dev/null || true
    wait "$busy" 2>/dev/null || true
    busy=""
  fi
}
trap busy_stop EXIT

# one case on the current thread setting: "min median max"
run_case() {
  case "$1" in
    S1)
      "$BENCH/slender_bench" S1 --repeats "$RUNS" 2>/dev/null |
        awk '$1 == "S1" && $2 ~ /^[0-9]+$/ { print $6, $7, $8 }' ;;
    cloth)
      "$BENCH/slender_cloth_bench" --sizes 2k --steps "$CLOTH_STEPS" --repeats "$RUNS" \
        --probe-every 0 2>/dev/null |
        awk '$1 == "2k" && $2 ~ /^[0-9]+$/ { print $7, $8, $9 }' ;;
    S8)
      "$BENCH/slender_batch_bench" --engine vectorized --sizes "$S8_ENVS" --steps "$S8_STEPS" \
        --repeats "$RUNS" 2>/dev/null |
        awk -v b="$S8_ENVS" '$1 == b && $3 == "/" { print $2, $4, $6 }' ;;
  esac
}

with_threads() {
  local t=$1
  shift
  if [[ "$t" == default ]]; then
    env -u OMP_NUM_THREADS -u SLENDER_THREADS "$@"
  else
    env -u SLENDER_THREADS OMP_NUM_THREADS="$t" "$@"
  fi
}

export -f run_case
export BENCH RUNS CLOTH_STEPS S8_ENVS S8_STEPS

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) logical cores"
echo "build: $BUILD; runs: $RUNS; competing job: a busy loop pinned to CPU $CPU_BUSY"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| case (unit) | threads | quiet min / median / max | loaded min / median / max | loaded / quiet (median) |"
echo "| --- | --- | --- | --- | --- |"
for c in S1 cloth S8; do
  case "$c" in
    S1) label="S1, 200 steps (s)" ;;
    cloth) label="2k cloth, $CLOTH_STEPS steps (s)" ;;
    S8) label="S8 vectorized, B = $S8_ENVS (ms per batch step)" ;;
  esac
  for t in 1 2 default; do
    quiet=$(with_threads "$t" bash -c "run_case $c")
    busy_start
    loaded=$(with_threads "$t" bash -c "run_case $c")
    busy_stop
    read -r q0 q1 q2 <<<"$quiet"
    read -r l0 l1 l2 <<<"$loaded"
    ratio=$(awk -v a="$l1" -v b="$q1" 'BEGIN { printf "%.2f", a / b }')
    echo "| $label | $t | $q0 / $q1 / $q2 | $l0 / $l1 / $l2 | $ratio |"
  done
done
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
