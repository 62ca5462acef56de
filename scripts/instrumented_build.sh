#!/usr/bin/env bash
# Sourced by scripts/fuzz.sh and scripts/sanitize.sh: configures and builds the one instrumented
# tree, build-san/, with clang, AddressSanitizer and UndefinedBehaviorSanitizer (-O1, line
# tables for the reports): the library, the CPU test suites (less the sources of which the
# sanitizer run runs no test), the slender program (the
# command-line tests) and the fuzz targets of the input readers, whose sources (host/io) also
# carry libFuzzer's coverage instrumentation (CMakeLists.txt, SLENDER_BUILD_FUZZ). One build
# serves both scripts; the second one to run finds it up to date. CUDA, Python and OpenMP are
# off in it: the GPU code is checked by compute-sanitizer on a device (scripts/gpu_check.sh),
# and the host's OpenMP runtime is not built for ASan (its own internals would report).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# scripts/test.sh builds the tree once before it runs fuzz.sh and sanitize.sh side by side, and
# says so: two configures of one tree at the same time would race
if [ "${SLENDER_INSTRUMENTED_BUILT:-}" = 1 ] && [ -f "$root/build-san/build.ninja" ]; then
  return 0
fi
source "$root/scripts/clang_setup.sh"
san_flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# the test sources of which the sanitizer run runs no test (its negative filter leaves out every
# one) are not compiled here: the plain build's executables tell which (scripts/sanitizer_subset.py
# --left-out-files); without a plain build, or with SLENDER_SANITIZE_ALL=1 (sanitize.sh --all),
# every source is
left_out=""
if [ "${SLENDER_SANITIZE_ALL:-}" != 1 ] && [ -d "$root/build/tests" ]; then
  left_out="$(python3 "$root/scripts/sanitizer_subset.py" --left-out-files "$root/build")" || left_out=""
fi
cmake -S "$root" -B "$root/build-san" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS="$san_flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON -DSLENDER_WITH_CUDA=OFF -DSLENDER_WITH_PYTHON=OFF \
  -DSLENDER_BUILD_BENCH=OFF -DSLENDER_BUILD_FUZZ=ON -DSLENDER_TEST_SOURCES_LEFT_OUT="$left_out" \
  >/dev/null
cmake --build "$root/build-san" -j "$(nproc)"
