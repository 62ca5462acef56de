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
# the instrumented tree build-san/, shared with scripts/fuzz.sh
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
suites=()
for exe in build-san/tests/*_tests; do
  [ -x "$exe" ] && [ "$(basename "$exe")" != gpu_tests ] && suites+=("$exe")
done
printf '%s\n' "${suites[@]}" | xargs -P "$(nproc)" -I{} sh -c \
  '"$1" --gtest_filter="-$2" --gtest_brief=1 > "$3/$(basename "$1").log" 2>&1;
   echo $? > "$3/$(basename "$1").rc"' _ {} "$skip" "$logs"
ctest --test-dir build-san --output-on-failure -R '^cli_' > "$logs/cli.log" 2>&1
echo $? > "$logs/cli.rc"
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
for log in "$logs"/*_tests.log; do
  n="$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)"
  passed=$((passed + ${n:-0}))
done
echo "sanitize (ASan + UBSan): ${#suites[@]} executables, ${passed} tests passed," \
  "$(cat "${lists[@]}" | grep -v '^#' | grep -vc '^$') tests and suites left out, the command-line" \
  "tests $( [ "$(cat "$logs/cli.rc")" = 0 ] && echo passed || echo FAILED);" \
  "$(( $(date +%s) - start )) s"
exit $status
