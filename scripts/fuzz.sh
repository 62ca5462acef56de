#!/usr/bin/env bash
# Builds the fuzz targets of the input readers (tests/fuzz: the JSON scene reader, geometry text
# and number tables, OBJ, PLY) with clang, libFuzzer, ASan and UBSan into build-fuzz/, and runs
# each from a seed corpus of the example scenes and test files: for SECONDS each (a campaign,
# random seeds), or with --ci for a fixed number of inputs from a fixed seed (the same inputs on
# every run of the same code: what CI runs). Fails on any finding: a crash, a sanitizer report,
# an exception other than slender's input errors, an input that takes over 2 s, or an allocation
# over 1 GiB. The crash input is kept under build-fuzz/findings/.
# usage: scripts/fuzz.sh SECONDS | scripts/fuzz.sh --ci
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
limit=(-max_total_time="${1:-20}")
what="${1:-20} s"
if [ "${1:-}" = "--ci" ]; then
  limit=(-runs=40000 -seed=1)
  what="a fixed seed"
fi
cd "$root"

# clang and its runtime libraries (libFuzzer, the sanitizers), when missing
source "$root/scripts/clang_setup.sh"

flags="-fsanitize=address,undefined -fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined"
# generated rods and meshes of at most 20,000 nodes (1e7 otherwise): a scene of a few bytes may
# ask for a mesh of millions of nodes, which is valid and takes its time, not a finding
flags="$flags -fno-omit-frame-pointer -DSLENDER_FUZZ_MAX_NODES=20000"
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON -DSLENDER_WITH_CUDA=OFF -DSLENDER_WITH_PYTHON=OFF \
  -DSLENDER_BUILD_TESTS=OFF -DSLENDER_BUILD_BENCH=OFF -DSLENDER_BUILD_APPS=OFF \
  -DSLENDER_BUILD_FUZZ=ON >/dev/null
cmake --build build-fuzz -j "$(nproc)"

# seed corpora: the example scenes and the test data, by format
work="build-fuzz/corpus"
rm -rf "$work"
mkdir -p "$work/scene_json" "$work/geometry" "$work/obj" "$work/ply" build-fuzz/findings
cp apps/scenes/*.json bench/scenes/*.json tests/data/*.json "$work/scene_json/" 2>/dev/null || true
cp tests/data/*.txt "$work/geometry/" 2>/dev/null || true
cp tests/data/*.obj apps/scenes/*.obj "$work/obj/" 2>/dev/null || true
cp tests/data/*.ply "$work/ply/" 2>/dev/null || true

export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
for target in scene_json geometry obj ply; do
  log="build-fuzz/fuzz_${target}.log"
  if "build-fuzz/tests/fuzz/fuzz_${target}" "$work/$target" "${limit[@]}" \
      -timeout=2 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="build-fuzz/findings/${target}-" > "$log" 2>&1; then
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
    cov="$(grep -o 'cov: [0-9]*' "$log" | tail -1)"
    echo "fuzz ${target}: ${runs} inputs (${what}), ${cov}, no finding"
  else
    echo "fuzz ${target}: FINDING (log: $log, input under build-fuzz/findings/)"
    tail -40 "$log"
    status=1
  fi
done
exit $status
