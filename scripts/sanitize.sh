#!/usr/bin/env bash
# Builds the library and the CPU test suites with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer (leak checking on) into build-san/ (scripts/instrumented_build.sh,
# the tree the fuzz targets use too), and runs the suites under them, leaving out the long tests
# listed in scripts/sanitize_skip.txt (each says why). Fails on any test failure or sanitizer
# report.
# usage: scripts/sanitize.sh [--all]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# the instrumented tree build-san/, shared with scripts/fuzz.sh (with --all: every test source)
if [ "${1:-}" = "--all" ]; then export SLENDER_SANITIZE_ALL=1; fi
source "$root/scripts/instrumented_build.sh"

# each suite's executable once (a process per test would spend most of the time starting up
# under the sanitizers), two at a time, with the left-out tests as a negative gtest filter: the
# long ones (scripts/sanitize_skip.txt) and the suites whose library lines the others execute
# (scripts/sanitize_skip_covered.txt, written by scripts/sanitizer_subset.py; --all runs them
# too); then the command-line tests, which ctest runs as scripts
lists=(scripts/sanitize_skip.txt)
if [ "${1:-}" != "--all" ] && [ -f scripts/sanitize_skip_covered.txt ]; then
  lists+=(scripts/sanitize_skip_covered.txt)
fi
skip="$(cat "${lists[@]}" | grep -v '^#' | grep -v '^$' | paste -sd':')"
export ASAN_OPTIONS="detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export OMP_NUM_THREADS=1
start=$(date +%s)
logs=build-san/sanitize
rm -rf "$logs"
mkdir -p "$logs"
# the longest first (physics, contact, the CPU backend: about 84, 56 and 11 s of the ~160 s),
# so that the short ones fill in beside them, and the command-line tests as one more job. The
# two longest run as two shards each (gtest's sharding: every other test), so that no one
# process is left running alone at the end. SLENDER_JOBS: jobs at a time (default: the cores)
suites=()
for name in physics_tests contact_tests; do
  if [ -x "build-san/tests/$name" ]; then
    suites+=("build-san/tests/$name@0" "build-san/tests/$name@1")
  fi
done
[ -x build-san/tests/cpu_backend_tests ] && suites+=(build-san/tests/cpu_backend_tests)
for exe in build-san/tests/*_tests; do
  case " ${suites[*]} " in *" $exe "* | *" $exe@"*) continue ;; esac
  [ -x "$exe" ] && [ "$(basename "$exe")" != gpu_tests ] && suites+=("$exe")
done
jobs_max="${SLENDER_JOBS:-$(nproc)}"
run_suite() {  # run_suite EXE[@SHARD]: its log and exit status under $logs
  local rc=0 exe="${1%@*}" name
  name="$(basename "$1")"
  if [ "$exe" != "$1" ]; then
    GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX="${1##*@}" \
      "$exe" --gtest_filter="-$skip" --gtest_brief=1 > "$logs/$name.log" 2>&1 || rc=$?
  else
    "$exe" --gtest_filter="-$skip" --gtest_brief=1 > "$logs/$name.log" 2>&1 || rc=$?
  fi
  echo "$rc" > "$logs/$name.rc"
}
run_cli() {
  local rc=0
  ctest --test-dir build-san --output-on-failure -R '^cli_' > "$logs/cli.log" 2>&1 || rc=$?
  echo "$rc" > "$logs/cli.rc"
}
for job in "${suites[@]}" cli; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  if [ "$job" = cli ]; then run_cli & else run_suite "$job" & fi
done
wait
status=0
passed=0
for rc in "$logs"/*.rc; do
  name="$(basename "$rc" .rc)"
  if [ "$(cat "$rc")" != 0 ]; then
    status=1
    echo "sanitize: $name FAILED (log: $logs/$name.log)"
    grep -E -A40 'ERROR: AddressSanitizer|runtime error|LeakSanitizer|FAILED|Failed' \
      "$logs/$name.log" | head -80
  fi
done
for log in "$logs"/*_tests.log "$logs"/*_tests@*.log; do
  [ -f "$log" ] || continue
  n="$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)"
  passed=$((passed + ${n:-0}))
done
echo "sanitize (ASan + UBSan): ${#suites[@]} processes, ${passed} tests passed," \
  "$(cat "${lists[@]}" | grep -v '^#' | grep -vc '^$') tests and suites left out, the command-line" \
  "tests $( [ "$(cat "$logs/cli.rc")" = 0 ] && echo passed || echo FAILED);" \
  "$(( $(date +%s) - start )) s"
exit $status
