#!/usr/bin/env bash
# The checks that need a GPU, run on the GPU machine in stages named by what they check. Each
# stage is bounded by its own timeout and by the run's deadline (GPU_DEADLINE_SECS, default 500,
# so that the default run fits one device call of about 9 minutes), prints a line per check to
# marks.txt, and leaves its logs under the run's log folder. At the end $OUT (the device tool's
# folder; gpu-logs/ elsewhere) holds summary.txt (the marks, gtest counts and failures, V8 lines,
# sanitizer verdicts), tables.md (the bench tables, ready to paste into bench/results/),
# profile.md (stage profile: ncu's kernels by time) and logs.tar.gz.
#
#   scripts/gpu_check.sh [STAGE ...]       default: suites cli small s8
#
#   suites     gpu_tests (every case) and the engine's /Cuda cases of cpu_backend_tests (V8 over
#              every scene among them), in shards side by side, with memcheck, racecheck and
#              synccheck on $GPU_SANITIZE_FILTER (default: the single-system band solve) beside
#   cli        the CLI on CUDA: `slender run --backend cuda --usd` (a USD file written from device
#              steps), `slender compare` on a contact scene and on the star robot's first heating
#              up +6 degrees
#   small      slender_backend_bench on the small scenes, both backends, ms per Newton iteration
#              (issue 47, item 1); S1 and S7 again with the plain order of host reads
#   s8         the snake batch on CUDA at B = 1, 4096 and 65536, and the CPU's per-environment
#              engine on every core at 4096 (issue 47, item 2)
#   s9         S9's cloth on CUDA: 20k into the fold, 200k and 670k with the multigrid (issue 48)
#   cg         S9's 200k cloth with block-Jacobi CG (pcg, pcg-mixed), the fused iteration against
#              SLENDER_FUSED_CG=0: the time a CG iteration (issue 48, item 3); pcg with inexact
#              Newton (--inexact); the matrix-free solver against the CPU (plate_contact) and
#              beside pcg at 20k
#   profile    ncu's time per kernel on S1, S7 and cloth_drop (5 steps each, one run a scene),
#              tabled by scripts/ncu_table.py into profile.md
#   sanitize   memcheck and racecheck on the GPU suite's short filter and the engine's /Cuda
#              cases at 3 steps, two at a time until the deadline
#   python     S8 from Python on CUDA, and the adjoint with its steps on CUDA against the CPU's
#              gradient (test_adjoint.py -k cuda; if the bundle has the module); the adjoint's
#              bench on CUDA (its cost against the rollout, its gradient against the CPU's)
#   build      configure and build build-gpu there (when no bundle is carried: minutes)
#
# With a prebuilt bundle (.gpubin/bundle.tar.gz from scripts/gpu_bundle.sh, carried along) the
# script unpacks it at the path it was built for and runs there, without building. Rehearse on
# the development machine first: the CUDA cases skip there, the stages' plumbing runs.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bundle_src="${SLENDER_GPU_SRC:-/tmp/slender-src}"
if [ -f .gpubin/bundle.tar.gz ] && [ "$root" != "$bundle_src" ]; then
  rm -rf "$bundle_src" && mkdir -p "$bundle_src" && tar -xzf .gpubin/bundle.tar.gz -C "$bundle_src" ||
    { echo "gpu_check: could not unpack .gpubin/bundle.tar.gz at $bundle_src"; exit 1; }
  echo "gpu_check: prebuilt bundle of $(head -1 "$bundle_src/build-gpu/COMMIT") unpacked at $bundle_src"
  exec "$bundle_src/scripts/gpu_check.sh" "$@"
fi
out="${OUT:-$root/gpu-logs}"
build="${GPU_BUILD:-build-gpu}"
logs="${GPU_LOGS:-/tmp/gpu-check}"
mkdir -p "$out"
rm -rf "$logs" && mkdir -p "$logs"
deadline=$(($(date +%s) + ${GPU_DEADLINE_SECS:-500}))
t0=$(date +%s)
sanitizer="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)"
sanitizer="${sanitizer:-compute-sanitizer}"
gt="$build/tests/gpu_tests"
ct="$build/tests/cpu_backend_tests"
# a bundle's own C++ runtime libraries, only where the machine's do not load the programs
if [ -d lib ] && [ -x "$gt" ] && ! "$gt" --gtest_list_tests > /dev/null 2>&1; then
  export LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "gpu_check: the programs did not load with the machine's libraries; using the bundle's lib/"
fi

left() { local l=$((deadline - $(date +%s))); echo $((l > 5 ? l : 5)); }
cap() { local l; l="$(left)"; echo $(($1 < l ? $1 : l)); }  # SECONDS, or what is left
mark() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$logs/marks.txt"; }
gtest_counts() {  # LOG -> "N ok, N failed, N skipped"
  echo "$(grep -cE '^\[       OK' "$1") ok, $(grep -cE '^\[  FAILED .*\(' "$1") failed," \
       "$(grep -cE '^\[  SKIPPED .*\(' "$1") skipped$(grep -qE 'PASSED|FAILED' "$1" || echo ', no verdict (timeout or crash)')"
}
verdict() {  # a sanitizer LOG's last summary line, or its last line
  local v
  v="$(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY|no time left' "$1" | tail -1)"
  echo "${v:-no verdict: $(tail -1 "$1" | cut -c1-160)}"
}

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -2
  echo "bundle: $(head -1 "$build/COMMIT" 2>/dev/null)"
  echo "cpus: $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
} > "$logs/device.txt"

# gtest PROGRAM FILTER SHARDS NAME SECONDS &: the program's cases in shards, side by side
gtest_shards() {
  local prog="$1" filter="$2" shards="$3" name="$4" secs="$5" i
  for ((i = 0; i < shards; ++i)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 "$secs" stdbuf -oL \
      "$prog" --gtest_filter="$filter" > "$logs/$name-$i.log" 2>&1 &
  done
}

stage_suites() {
  local secs i tool
  secs="$(cap 240)"
  # V8 (the longest case) alone, the other /Cuda cases and the GPU suite in shards beside it
  timeout -k 5 "$secs" stdbuf -oL "$ct" --gtest_filter='*EverySceneMatchesTheCpu*/Cuda' \
    > "$logs/v8-0.log" 2>&1 &
  gtest_shards "$ct" '*/Cuda:-*EverySceneMatchesTheCpu*' 3 engine "$secs"
  gtest_shards "$gt" '*:-*DeviceMemory*' 4 gpu "$secs"
  for tool in memcheck racecheck synccheck; do
    timeout -k 5 "$secs" "$sanitizer" --tool "$tool" --error-exitcode 9 --print-limit 30 "$gt" \
      --gtest_filter="${GPU_SANITIZE_FILTER:-DeviceSolver.Band*}" > "$logs/san-$tool-0.log" 2>&1 &
  done
  wait
  # the memory estimate reads the device's free memory: alone on the GPU
  timeout -k 5 "$(cap 60)" "$gt" --gtest_filter='*DeviceMemory*' > "$logs/gpu-memory.log" 2>&1
  for i in "$logs"/gpu-*.log "$logs"/engine-*.log "$logs"/v8-*.log; do
    mark "$(basename "$i" .log): $(gtest_counts "$i")"
  done
  for i in "$logs"/san-*.log; do mark "$(basename "$i" .log): $(verdict "$i")"; done
}

stage_cli() {
  local cli="$build/slender" usd="$logs/cloth_drop.usda"
  timeout -k 5 "$(cap 60)" "$cli" run apps/scenes/cloth_drop.json --backend cuda --duration 0.05 \
    --out "$logs/cli-run" --usd "$usd" -q > "$logs/cli-run.log" 2>&1
  local rc=$?
  mark "cli: run --backend cuda --usd: rc $rc, $(grep -c 'timeSamples' "$usd" 2>/dev/null || echo 0) time-sampled attributes in the .usda"
  timeout -k 5 "$(cap 60)" "$cli" compare apps/scenes/plate_contact.json --steps 50 \
    > "$logs/cli-compare.log" 2>&1
  mark "cli: compare plate_contact: rc $?; $(grep -i 'relative difference' "$logs/cli-compare.log" | head -1 | cut -c1-200)"
  # the star robot on +6 degrees through its first heating (1.5 s: it tips forward and falls
  # back; bench/results/2026-12-01-star-rolling-soft-limbs-epyc-2c.md), CUDA against the CPU
  timeout -k 5 "$(cap 120)" "$cli" compare apps/scenes/star_roll_incline6.json --steps 3000 \
    > "$logs/cli-compare-star6.log" 2>&1
  mark "cli: compare star_roll_incline6, 3000 steps: rc $?; $(grep -i 'relative difference' "$logs/cli-compare-star6.log" | head -1 | cut -c1-200)"
}

stage_small() {
  local b=bench/scenes a=apps/scenes
  timeout -k 5 "$(cap 120)" "$build/bench/slender_backend_bench" --steps 20 --repeats 3 --markdown \
    --scenes "$b/s1_cantilever_e1e5.json,$b/s2_cantilever_e1e7.json,$b/s3_helix_e1e7.json,$b/s4_helix_e1e9.json,$b/s6_cantilever101_e1e6.json,$b/s7_steel_rod.json,$a/rod_drop.json,$a/plate_contact.json,$a/cloth_drop.json" \
    > "$logs/small.md" 2> "$logs/small.err"
  mark "small scenes (backend bench): rc $?"
  # S1 and S7 with the predictor's and the band's reads apart (the plain order) beside the
  # device's default (bench/results/2026-11-30-predictor-read-with-the-first-direction-epyc-2c.md)
  SLENDER_FUSED_PREDICTOR_READ=0 timeout -k 5 "$(cap 60)" "$build/bench/slender_backend_bench" \
    --steps 20 --repeats 3 --markdown --scenes "$b/s1_cantilever_e1e5.json,$b/s7_steel_rod.json" \
    > "$logs/small_plain_reads.md" 2> "$logs/small_plain_reads.err"
  mark "S1, S7 with the plain order of reads (SLENDER_FUSED_PREDICTOR_READ=0): rc $?"
}

stage_s8() {
  local bb="$build/bench/slender_batch_bench"
  timeout -k 5 "$(cap 90)" "$bb" --engine vectorized --backend cuda --sizes 1,4096,65536 \
    --steps 20 --repeats 3 --markdown > "$logs/s8_cuda.md" 2>&1
  mark "S8 cuda: rc $?"
  OMP_NUM_THREADS="$(nproc)" timeout -k 5 "$(cap 60)" "$bb" --sizes 4096 --steps 10 --repeats 3 \
    --markdown > "$logs/s8_cpu.md" 2>&1
  mark "S8 cpu (per-environment engine, $(nproc) threads): rc $?"
}

stage_s9() {
  local cb="$build/bench/slender_cloth_bench"
  timeout -k 5 "$(cap 230)" stdbuf -oL "$cb" --backend cuda --sizes 20k --steps 520 --repeats 1 \
    --max-seconds 215 --probe-every 20 --markdown "$logs/s9_cuda_20k.md" > "$logs/s9_cuda_20k.log" 2>&1
  mark "S9 cuda 20k: rc $?; $(grep -m1 'run 1/1' "$logs/s9_cuda_20k.log" | cut -c1-200)"
  local size
  for size in 200k 670k; do
    timeout -k 5 "$(cap 90)" stdbuf -oL "$cb" --backend cuda --sizes $size --steps 4 --repeats 1 \
      --probe-every 0 --solver amg --markdown "$logs/s9_cuda_$size.md" > "$logs/s9_cuda_$size.log" 2>&1
    mark "S9 cuda $size amg: rc $?; $(grep -m1 'run 1/1' "$logs/s9_cuda_$size.log" | cut -c1-200)"
  done
}

stage_cg() {
  local cb="$build/bench/slender_cloth_bench" solver fused
  for solver in pcg pcg-mixed; do
    for fused in 1 0; do
      SLENDER_FUSED_CG=$fused timeout -k 5 "$(cap 75)" stdbuf -oL "$cb" --backend cuda \
        --sizes 200k --steps 2 --repeats 1 --probe-every 0 --solver $solver \
        --markdown "$logs/s9_cg_${solver}_fused$fused.md" > "$logs/s9_cg_${solver}_fused$fused.log" 2>&1
      mark "S9 cuda 200k $solver fused $fused: rc $?; $(grep -A2 -m1 '^case  solver' \
        "$logs/s9_cg_${solver}_fused$fused.log" | tail -1 | cut -c1-160)"
    done
  done
  # inexact Newton (integrator.newton.inexact), fused, against the exact pcg run above
  timeout -k 5 "$(cap 75)" stdbuf -oL "$cb" --backend cuda --sizes 200k --steps 2 --repeats 1 \
    --probe-every 0 --solver pcg --inexact --markdown "$logs/s9_cg_pcg_inexact.md" \
    > "$logs/s9_cg_pcg_inexact.log" 2>&1
  mark "S9 cuda 200k pcg inexact: rc $?; $(grep -A2 -m1 '^case  solver' \
    "$logs/s9_cg_pcg_inexact.log" | tail -1 | cut -c1-160)"
  # the matrix-free solver (no Jacobian in memory: each product evaluates the stencils): the
  # CPU's states on a contact scene, then its time beside pcg's at 20k, both inexact
  timeout -k 5 "$(cap 60)" "$build/slender" compare apps/scenes/plate_contact.json --steps 30 \
    --solver matrix-free > "$logs/compare_matrix_free.log" 2>&1
  mark "compare plate_contact matrix-free: rc $?; $(tail -2 "$logs/compare_matrix_free.log" \
    | tr '\n' ' ' | cut -c1-200)"
  for solver in pcg matrix-free; do
    timeout -k 5 "$(cap 60)" stdbuf -oL "$cb" --backend cuda --sizes 20k --steps 2 --repeats 1 \
      --probe-every 0 --solver $solver --inexact --markdown "$logs/s9_20k_${solver}_inexact.md" \
      > "$logs/s9_20k_${solver}_inexact.log" 2>&1
    mark "S9 cuda 20k $solver inexact: rc $?; $(grep -A2 -m1 '^case  solver' \
      "$logs/s9_20k_${solver}_inexact.log" | tail -1 | cut -c1-160)"
  done
}

stage_profile() {
  local nc bb="$build/bench/slender_backend_bench" sc name
  nc="$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)"
  if [ -z "$nc" ]; then
    mark "profile: no ncu on this machine"
    return
  fi
  rm -f "$out/profile.md"
  for sc in bench/scenes/s1_cantilever_e1e5.json bench/scenes/s7_steel_rod.json \
    apps/scenes/cloth_drop.json; do
    name="$(basename "$sc" .json)"
    timeout -k 5 "$(cap 90)" "$nc" --clock-control none --metrics gpu__time_duration.sum \
      --print-summary per-kernel "$bb" --scenes "$sc" --steps 5 --repeats 1 \
      > "$logs/ncu-$name.txt" 2>&1
    mark "profile $name: rc $?"
    { echo "## $name (ncu, 5 steps of each backend's run; the CUDA kernels)"
      python3 scripts/ncu_table.py "$logs/ncu-$name.txt" --top 12; echo; } >> "$out/profile.md" 2>&1
  done
}

stage_sanitize() {
  export sanitizer logs deadline SLENDER_TEST_MAX_STEPS=3
  {
    local t
    for t in memcheck racecheck; do
      echo "$t $gt StencilGpu.*:DeviceEval.*:DeviceSolver.*:CudaBatch.*:ContactPipelineGpu.* gpu"
      echo "$t $ct */Cuda engine"
    done
  } | MIN_LEFT=15 xargs -P "${GPU_SANITIZE_JOBS:-2}" -L 1 bash -c '
      left=$((deadline - $(date +%s)))
      [ "$left" -gt "$MIN_LEFT" ] || { echo "no time left" > "$logs/san-$0-$3.log"; exit 0; }
      timeout -k 5 "$left" "$sanitizer" --tool "$0" --error-exitcode 9 --print-limit 30 \
        "$1" --gtest_filter="$2" > "$logs/san-$0-$3.log" 2>&1'
  local f
  for f in "$logs"/san-*-gpu.log "$logs"/san-*-engine.log; do
    [ -f "$f" ] && mark "$(basename "$f" .log): $(verdict "$f")"
  done
}

stage_python() {
  if [ ! -d "$build/python/slender" ]; then
    mark "python: the bundle has no Python module"
    return
  fi
  PYTHONPATH="$build/python" timeout -k 5 "$(cap 90)" python3 bench/s8_python.py --backend cuda \
    --sizes 1,1024,4096 --steps 20 --repeats 3 --check > "$logs/s8_python.md" 2>&1
  mark "S8 from Python: rc $?; $(grep -E '^check' "$logs/s8_python.md" | head -1)"
  # the adjoint with its steps on CUDA against the CPU's gradient (issue 51)
  PYTHONPATH="$build/python" timeout -k 5 "$(cap 60)" python3 -m pytest -q \
    tests/python/test_adjoint.py -k cuda > "$logs/adjoint_cuda.log" 2>&1
  mark "adjoint on CUDA: rc $?; $(tail -1 "$logs/adjoint_cuda.log")"
  timeout -k 5 "$(cap 90)" "$build/bench/slender_adjoint_bench" --backend cuda --steps 100 \
    --repeats 3 > "$logs/adjoint_bench_cuda.txt" 2>&1
  mark "adjoint bench on CUDA: rc $?; $(grep -E '^CUDA against|^gradient /' "$logs/adjoint_bench_cuda.txt" | tr '\n' ' ')"
}

stage_build() {
  local py=()
  if [ -d .devdeps/pybind11 ]; then py=(-Dpybind11_DIR="$root/.devdeps/pybind11/share/cmake/pybind11"); fi
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSLENDER_CUDA_QUICK_DEVICE=OFF -DSLENDER_BUILD_GPU_TESTS=ON \
    -DSLENDER_DEPS_DIR="$root/.devdeps" -DSLENDER_WITH_CHOLMOD=OFF "${py[@]}" \
    > "$logs/configure.log" 2>&1 || { mark "build: configure FAILED"; return 1; }
  timeout -k 5 "$(cap 400)" cmake --build "$build" -j "$(nproc)" > "$logs/build.log" 2>&1
  mark "build: rc $?"
}

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(suites cli small s8)
for s in "${stages[@]}"; do
  case "$s" in
    suites | cli | small | s8 | s9 | cg | profile | sanitize | python | build) ;;
    *) echo "usage: $0 [suites|cli|small|s8|s9|cg|profile|sanitize|python|build ...]" >&2; exit 2 ;;
  esac
done
for s in "${stages[@]}"; do
  if [ "$(left)" -le 10 ]; then mark "$s: not run (the deadline)"; continue; fi
  "stage_$s"
done

# what comes back: the summary, the tables, the logs
{
  cat "$logs/device.txt"
  cat "$logs/marks.txt"
  grep -h -E '^\[  FAILED .*\(' "$logs"/*.log 2>/dev/null | sort -u | head -30
  grep -h -E '^V8' "$logs"/*.log 2>/dev/null | head -60
  echo "gpu_check: $(($(date +%s) - t0)) s"
} > "$out/summary.txt" 2>&1
grep -h -B3 -A10 -m 4 -E 'Failure$|what\(\)|ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: [1-9]' \
  "$logs"/*.log 2>/dev/null | head -200 > "$out/failures.txt"
{
  for f in "$logs"/small.md "$logs"/small_plain_reads.md "$logs"/s8_*.md "$logs"/s9_*.md "$logs"/s8_python.md; do
    [ -f "$f" ] && { echo "## $(basename "$f")"; grep -E '^\||^slender|rror' "$f"; echo; }
  done
} > "$out/tables.md" 2>&1
tar -czf "$out/logs.tar.gz" -C "$(dirname "$logs")" "$(basename "$logs")"
cat "$out/summary.txt"
cut -c1-240 "$out/tables.md" | head -80
