#!/usr/bin/env bash
# The GPU session in stages, on the GPU machine (after scripts/gpu_pack.sh on the development
# machine, with .devdeps carried along). Logs go to $OUT (the device tool's folder) or gpu-logs/.
#   scripts/gpu_check.sh build      configure and build build-gpu (CUDA arch 90, no SuiteSparse)
#   scripts/gpu_check.sh test       the whole ctest suite, GPU suites included
#   scripts/gpu_check.sh sanitize   compute-sanitizer memcheck and racecheck on the GPU suites
#   scripts/gpu_check.sh sanitize2  compute-sanitizer synccheck (the warp barriers) and initcheck
#                                   (device memory read before it is written) on the same
#   scripts/gpu_check.sh bench      backend comparison (S1-S10 scenes) and S8 on GPU and CPU
#   scripts/gpu_check.sh s9         S9 cloth at 20k and 200k triangles on the GPU, and its Newton
#                                   iteration at about 10^6 DOF (670k triangles)
#   scripts/gpu_check.sh s9cpu      the CPU reference of S9 on the same machine (all cores)
#   scripts/gpu_check.sh all        all of them
#   scripts/gpu_check.sh first      a first run in one go, everything at once under its own timeout:
#                                   the GPU suites, each /Cuda device-stepper case (V8 among them),
#                                   memcheck and racecheck on a short filter; summary.txt and one
#                                   logs.tar.gz in $OUT (the device tool brings back 8 files at most)
#   scripts/gpu_check.sh sanitize3  memcheck, racecheck, synccheck and initcheck at once (as first)
#   scripts/gpu_check.sh sanitize4  memcheck and racecheck on every /Cuda stepper case, capped steps
#   scripts/gpu_check.sh third      the checks owed after `second` (V8 again, BiCGSTAB traced, the
#                                   whole GPU suite, sanitizers on the cases not yet covered)
#   scripts/gpu_check.sh fourth     every suite, the CLI on CUDA, a queue of sanitizer runs (run 6)
#   scripts/gpu_check.sh fifth      the same with memcheck and racecheck on every stepper case
#                                   at 3 steps, 8 at once (the list owed after run 7)
#   scripts/gpu_check.sh s8prof     S8 alone: the vectorized batch to B = 65536, ncu's time per
#                                   kernel at B = 4096, the CPU engine on all cores
#   scripts/gpu_check.sh sixth      S8's banded-solve forms side by side (staged in shared memory
#                                   among them), ncu at real clocks, the staged form's bits and
#                                   sanitizers, the GPU suite, racecheck's leftovers (after run 11)
#   scripts/gpu_check.sh s9b        S9 at 20k, 200k and 10^6 DOF on the GPU with the rest-neighbour
#                                   rule, and the CPU's 200k step on all cores (issue 21)
#   scripts/gpu_check.sh seventh    issues 20, 21 and 14 in one call: S8's forms and the CPU
#                                   engine, S9 at 20k/200k/670k and the CPU's 200k step, then the
#                                   GPU suite, V8, Python, S9 compares, racecheck until the deadline
#   scripts/gpu_check.sh eighth     after run 12: the GPU suite and the engine's /Cuda cases (the
#                                   one engine), S9 at 20k through the fold, at 200k with block
#                                   Jacobi and the multigrid, at 670k with the multigrid, S8 with
#                                   its defaults and ncu, racecheck's leftovers
#   scripts/gpu_check.sh ninth      after run 13: the three GPU tests whose set-ups run 13 found
#                                   faulty, the GPU suite, S9 at 20k into the fold and at 670k
#                                   with block Jacobi and with the multigrid over 4 steps, S8
#                                   under nsys, the sanitizers still owed
# Each stage prints a one-line verdict; the logs hold the details.
#
# With a prebuilt bundle (.gpubin/bundle.tar.gz from scripts/gpu_bundle.sh, carried along) the
# script unpacks it at the path it was built for and runs there, without building.
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
mkdir -p "$out"
jobs="$(nproc)"
build=build-gpu
# a bundle's own C++ runtime libraries, only where the machine's do not load the programs
if [ -d lib ] && [ -x "$build/tests/gpu_tests" ] && ! "$build/tests/gpu_tests" --gtest_list_tests > /dev/null 2>&1; then
  export LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "gpu_check: the programs did not load with the machine's libraries; using the bundle's lib/"
fi

stage_build() {
  nvidia-smi > "$out/nvidia-smi.txt" 2>&1
  nvcc --version > "$out/nvcc.txt" 2>&1
  local py=()
  if [ -d .devdeps/pybind11 ]; then py=(-Dpybind11_DIR="$root/.devdeps/pybind11/share/cmake/pybind11"); fi
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSLENDER_DEPS_DIR="$root/.devdeps" -DSLENDER_WITH_CHOLMOD=OFF "${py[@]}" \
    > "$out/configure.log" 2>&1 || { echo "build: configure FAILED"; tail -30 "$out/configure.log"; return 1; }
  local t0=$SECONDS
  cmake --build "$build" -j "$jobs" > "$out/build.log" 2>&1 ||
    { echo "build: FAILED"; grep -m 20 -E "error" "$out/build.log"; return 1; }
  echo "build: ok ($((SECONDS - t0)) s)"
}

stage_test() {
  ctest --test-dir "$build" --output-on-failure -j 8 > "$out/ctest.log" 2>&1
  local rc=$?
  echo "test: rc $rc; $(grep -E 'tests passed|tests failed' "$out/ctest.log")"
  grep -E "\(Failed\)|\*\*\*Failed|Timeout" "$out/ctest.log" | head -20
  # the GPU suites' own output (skips), and the device-stepper suite on the device (V8 lines)
  "$build/tests/gpu_tests" > "$out/gpu_tests.log" 2>&1
  echo "gpu_tests: rc $?; $(grep -cE '^\[       OK' "$out/gpu_tests.log") ok," \
       "$(grep -cE '^\[  FAILED' "$out/gpu_tests.log") failed, $(grep -c 'SKIPPED' "$out/gpu_tests.log") skipped"
  "$build/tests/cpu_backend_tests" --gtest_filter='*DeviceStepper*/Cuda' > "$out/stepper_cuda.log" 2>&1
  echo "device stepper on CUDA: rc $?; $(grep -cE '^\[       OK' "$out/stepper_cuda.log") ok," \
       "$(grep -cE '^\[  FAILED' "$out/stepper_cuda.log") failed, $(grep -c 'SKIPPED' "$out/stepper_cuda.log") skipped"
  grep -E "^V8" "$out/stepper_cuda.log" | head -40
}

sanitize_with() {
  local filter='StencilGpu.*:DeviceEval.*:DeviceSolver.*:CudaBatch.*:ContactPipelineGpu.*'
  local stepper='*DeviceStepper.TwoRunsAreBitIdentical/Cuda:*DeviceStepper.FailedStepLeavesTheStateUntouched/Cuda:*DeviceStepper.ParametersMatchTheCpu/Cuda:*DeviceStepper.PcgWithDeviceContactAssemblyMatchesTheCpu/Cuda:*DeviceStepper.HostEvaluationsBetweenStepsLeaveTheDeviceStepsAlone/Cuda:*DeviceStepper.FixedTargetsMatchTheCpu/Cuda'
  for tool in "$@"; do
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$build/tests/gpu_tests" \
      --gtest_filter="$filter" > "$out/sanitize-$tool.log" 2>&1
    echo "sanitize $tool (gpu_tests): rc $?; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize-$tool.log" | tail -1)"
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$build/tests/cpu_backend_tests" \
      --gtest_filter="$stepper" > "$out/sanitize-stepper-$tool.log" 2>&1
    echo "sanitize $tool (device stepper): rc $?; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize-stepper-$tool.log" | tail -1)"
  done
}

stage_sanitize() { sanitize_with memcheck racecheck; }
stage_sanitize2() { sanitize_with synccheck initcheck; }

stage_bench() {
  "$build/bench/slender_backend_bench" --steps 20 --repeats 3 --markdown \
    > "$out/backend_bench.md" 2> "$out/backend_bench.err"
  echo "backend bench: rc $?"
  "$build/bench/slender_batch_bench" --engine vectorized --backend cuda \
    --sizes 1,64,1024,4096,16384 --steps 20 --repeats 3 --markdown > "$out/s8_cuda.md" 2>&1
  echo "S8 cuda: rc $?"
  # the factorizations on a warp per environment against a thread per environment (the default
  # switches at kLanesMaxEnvs = 8192 environments, a guess to be set from these tables)
  for lanes in 0 1; do
    SLENDER_BATCH_LANES=$lanes "$build/bench/slender_batch_bench" --engine vectorized \
      --backend cuda --sizes 1024,4096,16384 --steps 20 --repeats 3 --markdown \
      > "$out/s8_cuda_lanes$lanes.md" 2>&1
    echo "S8 cuda, lanes $lanes: rc $?"
    SLENDER_BATCH_LANES=$lanes "$build/bench/slender_batch_bench" --model plate-hinge \
      --engine vectorized --backend cuda --sizes 256,4096 --steps 10 --repeats 3 --markdown \
      > "$out/s8_plate_cuda_lanes$lanes.md" 2>&1
    echo "S8 plate cuda, lanes $lanes: rc $?"
  done
  "$build/bench/slender_batch_bench" --model plate-hinge --engine vectorized --backend cuda \
    --sizes 1,256,4096 --steps 10 --repeats 3 --markdown > "$out/s8_plate_cuda.md" 2>&1
  echo "S8 plate cuda: rc $?"
  "$build/bench/slender_batch_bench" --sizes 1,16,256,1024 --steps 20 --repeats 3 --markdown \
    > "$out/s8_cpu.md" 2>&1
  echo "S8 cpu: rc $?"
  cat "$out/backend_bench.md" "$out/s8_cuda.md" "$out/s8_cuda_lanes0.md" "$out/s8_cuda_lanes1.md" \
    "$out/s8_plate_cuda.md" "$out/s8_plate_cuda_lanes0.md" "$out/s8_plate_cuda_lanes1.md" \
    "$out/s8_cpu.md" | head -150
}

stage_s9() {
  "$build/bench/slender_cloth_bench" --backend cuda --sizes 20k,200k --steps 5 --repeats 1 \
    --probe-every 1000 --markdown "$out/s9_cuda.md" > "$out/s9_cuda.log" 2>&1
  echo "S9 cuda: rc $?"
  "$build/bench/slender_cloth_bench" --backend cuda --sizes 670k --steps 2 --repeats 1 \
    --probe-every 0 --markdown "$out/newton_1e6_cuda.md" > "$out/newton_1e6_cuda.log" 2>&1
  echo "1e6 DOF cuda: rc $?"
  cat "$out/s9_cuda.md" "$out/newton_1e6_cuda.md" | head -60
}

# the CPU reference of S9 on the same machine, all cores; SuiteSparse is not there, so the
# CPU's sparse direct solver would be Eigen's simplicial LDLT: block-Jacobi PCG instead
stage_s9cpu() {
  "$build/bench/slender_cloth_bench" --backend cpu --solver pcg --sizes 20k,200k --steps 5 \
    --repeats 1 --probe-every 1000 --markdown "$out/s9_cpu.md" > "$out/s9_cpu.log" 2>&1
  echo "S9 cpu (pcg): rc $?"
  "$build/bench/slender_cloth_bench" --backend cpu --sizes 20k --steps 5 --repeats 1 \
    --probe-every 1000 --markdown "$out/s9_cpu_direct.md" > "$out/s9_cpu_direct.log" 2>&1
  echo "S9 cpu 20k (direct): rc $?"
  cat "$out/s9_cpu.md" "$out/s9_cpu_direct.md" | head -60
}

# compute-sanitizer: on the PATH, or where CUDA toolkits put it
sanitizer="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer \
  /usr/local/cuda/compute-sanitizer/compute-sanitizer /opt/nvidia/*/compute-sanitizer/compute-sanitizer \
  2>/dev/null | head -1)"
sanitizer="${sanitizer:-compute-sanitizer}"

# everything of a first run at once (16 cores: the CPU references of the /Cuda cases run side by
# side), each under its own timeout; logs in a scratch folder, packed into one file at the end
short_gpu_filter='StencilGpu.*:DeviceEval.*:DeviceSolver.*:ContactPipelineGpu.FlattenedSheet:CudaBatch.TwoVectorizedRunsAreBitIdentical'
short_stepper_filter='*DeviceStepper.FailedStepLeavesTheStateUntouched/Cuda:*DeviceStepper.FixedTargetsMatchTheCpu/Cuda:*DeviceStepper.SetStateRoundTripsAndQueriesSeeTheDeviceState/Cuda:*DeviceStepper.PcgAndCholeskyGiveTheSameNewtonIterates/Cuda'

gtest_counts() { # LOG -> "N ok, N failed, N skipped"
  echo "$(grep -cE '^\[       OK' "$1") ok, $(grep -cE '^\[  FAILED .*\(' "$1") failed," \
       "$(grep -cE '^\[  SKIPPED .*\(' "$1") skipped"
}

run_sanitizers() { # LOGDIR SECONDS TOOL... : each tool on the short filters, all at once
  local logs="$1" secs="$2"; shift 2
  local tool
  for tool in "$@"; do
    timeout -k 5 "$secs" "$sanitizer" --tool "$tool" --error-exitcode 9 --print-limit 30 \
      "$build/tests/gpu_tests" --gtest_filter="$short_gpu_filter" > "$logs/san-$tool-gpu.log" 2>&1 &
    timeout -k 5 "$secs" "$sanitizer" --tool "$tool" --error-exitcode 9 --print-limit 30 \
      "$build/tests/cpu_backend_tests" --gtest_filter="$short_stepper_filter" \
      > "$logs/san-$tool-stepper.log" 2>&1 &
  done
}

sanitizer_summary() { # LOGDIR
  local f
  for f in "$1"/san-*.log; do
    [ -f "$f" ] || continue
    local verdict
    verdict="$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$f" | tail -1)"
    [ -n "$verdict" ] || verdict="no summary (timeout or crash): $(tail -1 "$f" | cut -c1-140)"
    echo "$(basename "$f" .log): $verdict" \
         "[$(gtest_counts "$f")]$(grep -q 'Device not supported' "$f" && echo ' DEVICE NOT SUPPORTED')"
    grep -m 3 -E '^========= (Invalid|Race|Barrier|Uninitialized|Program hit|  at )' "$f" | cut -c1-200
  done
}

pack_logs() { # LOGDIR
  tar -czf "$out/logs.tar.gz" -C "$(dirname "$1")" "$(basename "$1")"
}

# the sanitizer queue (JOBS [MIN_LEFT]): lines "TOOL PROGRAM FILTER NAME" on standard input, JOBS
# at a time, each bounded by the exported $deadline and skipped with less than MIN_LEFT seconds
# (default 10) left; logs in $logs/san-TOOL-NAME.log (needs sanitizer, logs, deadline exported)
sanitizer_queue() {
  MIN_LEFT="${2:-10}" xargs -P "$1" -L 1 bash -c '
      left=$((deadline - $(date +%s)))
      [ "$left" -gt "$MIN_LEFT" ] || { echo "skipped: no time left" > "$logs/san-$0-$3.log"; exit 0; }
      timeout -k 5 "$left" "$sanitizer" --tool "$0" --error-exitcode 9 --print-limit 30 \
        "$1" --gtest_filter="$2" > "$logs/san-$0-$3.log" 2>&1'
}

stage_first() {
  local logs=/tmp/gpu-first
  rm -rf "$logs" && mkdir -p "$logs"
  local t0=$SECONDS
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    nvcc --version | tail -2 | head -1
    echo "bundle: $(head -1 "$build/COMMIT" 2>/dev/null)"
  } > "$logs/device.txt" 2>&1
  nvidia-smi > "$logs/nvidia-smi.txt" 2>&1
  # smoke: does a kernel run at all?
  timeout -k 5 60 "$build/tests/gpu_tests" --gtest_filter=StencilGpu.StretchMatchesHost \
    > "$logs/smoke.log" 2>&1
  echo "smoke rc $?" >> "$logs/device.txt"
  export OMP_NUM_THREADS=2
  timeout -k 5 "${GPU_SUITE_SECS:-240}" "$build/tests/gpu_tests" > "$logs/gpu_tests.log" 2>&1 &
  local t
  for t in $("$build/tests/cpu_backend_tests" --gtest_list_tests --gtest_filter='*DeviceStepper*/Cuda' |
             awk '/^[^ ]/ {s=$1} /^  / {print s $1}'); do
    timeout -k 5 "${GPU_SUITE_SECS:-240}" "$build/tests/cpu_backend_tests" --gtest_filter="$t" \
      > "$logs/stepper-$(echo "$t" | sed 's/.*DeviceStepper\.//; s,/Cuda,,').log" 2>&1 &
  done
  run_sanitizers "$logs" "${GPU_SANITIZE_SECS:-240}" memcheck racecheck
  wait
  {
    cat "$logs/device.txt"
    echo "gpu_tests: $(gtest_counts "$logs/gpu_tests.log")"
    grep -E '^\[  FAILED .*\(' "$logs/gpu_tests.log"
    local f
    for f in "$logs"/stepper-*.log; do
      echo "$(basename "$f" .log): $(gtest_counts "$f")$(grep -q 'PASSED\|FAILED' "$f" || echo ' (no verdict: timeout or crash)')"
    done
    grep -h -E '^V8' "$logs"/stepper-*.log
    sanitizer_summary "$logs"
    echo "first: $((SECONDS - t0)) s"
  } > "$out/summary.txt" 2>&1
  # the failures' own lines, a few per log
  grep -h -B2 -A8 -m 6 -E 'Failure|error|what\(\)' "$logs"/gpu_tests.log "$logs"/stepper-*.log \
    2>/dev/null | head -150 > "$out/failures.txt"
  pack_logs "$logs"
  cat "$out/summary.txt"
}

# the device's name, driver and memory, and the bundle's commit, into LOGDIR/device.txt
device_header() {
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    echo "bundle: $(head -1 "$build/COMMIT" 2>/dev/null)"
  } > "$1/device.txt" 2>&1
}

# the summary of a run's logs (LOGDIR NAME SECONDS): each gtest log's counts and failures, the V8
# and Krylov lines, the sanitizers' verdicts; summary.txt and failures.txt in $OUT, and the logs
run_summary() {
  local logs="$1" name="$2" secs="$3" f
  {
    cat "$logs/device.txt"
    for f in "$logs"/stepper-*.log "$logs"/gpu-*.log; do
      [ -f "$f" ] || continue
      echo "$(basename "$f" .log): $(gtest_counts "$f")$(grep -q 'PASSED\|FAILED' "$f" || echo ' (no verdict: timeout or crash)')"
      grep -E '^\[  FAILED .*\(' "$f" | head -5
    done
    grep -h -E '^V8|steps in|BiCGSTAB|^krylov' "$logs"/*.log 2>/dev/null | head -60
    sanitizer_summary "$logs"
    echo "$name: $secs s"
  } > "$out/summary.txt" 2>&1
  grep -h -B2 -A8 -m 6 -E 'Failure|what\(\)' "$logs"/stepper-*.log "$logs"/gpu-*.log \
    2>/dev/null | head -150 > "$out/failures.txt"
  pack_logs "$logs"
  cat "$out/summary.txt"
}

# a second run after `first`: V8 alone in front (with line-buffered output, so that a timeout
# keeps the scenes done), beside it three chains of the rest; everything ends by a deadline
stage_second() {
  local logs=/tmp/gpu-second deadline=$((SECONDS + ${GPU_DEADLINE_SECS:-400}))
  rm -rf "$logs" && mkdir -p "$logs"
  left() { echo $((deadline - SECONDS > 5 ? deadline - SECONDS : 5)); }
  device_header "$logs"
  export OMP_NUM_THREADS=4 SLENDER_KRYLOV_TRACE=1
  local gt="$build/tests/gpu_tests" ct="$build/tests/cpu_backend_tests"
  timeout -k 5 "$(left)" stdbuf -oL "$ct" --gtest_filter='*EverySceneMatchesTheCpuOver50Steps/Cuda' \
    > "$logs/stepper-V8.log" 2>&1 &
  (
    timeout -k 5 "$(left)" stdbuf -oL "$gt" --gtest_filter='CudaBatch.FactorizationsOnWarps*' \
      > "$logs/gpu-factorizations.log" 2>&1
    timeout -k 5 "$(left)" "$gt" --gtest_filter='CudaBatch.TwoVectorizedRunsAreBitIdentical:ContactPipelineGpu.*' \
      > "$logs/gpu-rest.log" 2>&1
    timeout -k 5 "$(left)" "$ct" --gtest_filter='*NonSymmetricJacobiansTakeBicgstab/Cuda' \
      > "$logs/stepper-NonSymmetric.log" 2>&1
  ) &
  local ss='*DeviceStepper.FailedStepLeavesTheStateUntouched/Cuda:*DeviceStepper.FixedTargetsMatchTheCpu/Cuda:*DeviceStepper.SetStateRoundTripsAndQueriesSeeTheDeviceState/Cuda:*DeviceStepper.SolverNamesTellTheExecutor/Cuda'
  local tool
  (
    for tool in memcheck racecheck; do
      timeout -k 5 "$(left)" "$sanitizer" --tool "$tool" --error-exitcode 9 --print-limit 30 \
        "$ct" --gtest_filter="$ss" > "$logs/san-$tool-stepper.log" 2>&1
    done
  ) &
  (
    for tool in synccheck initcheck; do
      timeout -k 5 "$(left)" "$sanitizer" --tool "$tool" --error-exitcode 9 --print-limit 30 \
        "$gt" --gtest_filter="$short_gpu_filter" > "$logs/san-$tool-gpu.log" 2>&1
    done
  ) &
  wait
  run_summary "$logs" second $((SECONDS - deadline + ${GPU_DEADLINE_SECS:-400}))
}

# a third run (owed after `second`): V8 again (the physics changed) with the dashpots' case,
# BiCGSTAB with its trace, the whole GPU suite and every other /Cuda case, initcheck on the short
# filter, memcheck and racecheck on the cases no sanitizer had run; four chains, one deadline
stage_third() {
  local logs=/tmp/gpu-third deadline=$((SECONDS + ${GPU_DEADLINE_SECS:-420}))
  rm -rf "$logs" && mkdir -p "$logs"
  left() { echo $((deadline - SECONDS > 5 ? deadline - SECONDS : 5)); }
  device_header "$logs"
  export OMP_NUM_THREADS=4
  local gt="$build/tests/gpu_tests" ct="$build/tests/cpu_backend_tests"
  local san=("$sanitizer" --error-exitcode 9 --print-limit 30)
  (
    timeout -k 5 "$(left)" stdbuf -oL "$ct" --gtest_filter='*EverySceneMatchesTheCpuOver50Steps/Cuda' \
      > "$logs/stepper-V8.log" 2>&1
    timeout -k 5 "$(left)" "$ct" --gtest_filter='*DashpotsMatchTheCpu/Cuda' \
      > "$logs/stepper-Dashpots.log" 2>&1
  ) &
  (
    SLENDER_KRYLOV_TRACE=1 timeout -k 5 "$(left)" "$ct" \
      --gtest_filter='*NonSymmetricJacobiansTakeBicgstab/Cuda' > "$logs/stepper-NonSymmetric.log" 2>&1
    timeout -k 5 "$(left)" stdbuf -oL "$gt" > "$logs/gpu-all.log" 2>&1
    timeout -k 5 "$(left)" stdbuf -oL "$ct" \
      --gtest_filter='*DeviceStepper*/Cuda:-*EveryScene*:*NonSymmetric*:*Dashpots*' \
      > "$logs/stepper-rest.log" 2>&1
  ) &
  local batch='CudaBatch.VectorizedSnakesMatchTheCpuEngine:CudaBatch.FixedTargetsMatchTheCpuEngine:CudaBatch.ResetMatchesTheCpuEngine:ContactPipelineGpu.EqualsHost*'
  (
    timeout -k 5 "$(left)" "${san[@]}" --tool initcheck "$gt" --gtest_filter="$short_gpu_filter" \
      > "$logs/san-initcheck-gpu.log" 2>&1
    timeout -k 5 "$(left)" "${san[@]}" --tool memcheck "$gt" --gtest_filter="$batch" \
      > "$logs/san-memcheck-batch.log" 2>&1
    timeout -k 5 "$(left)" "${san[@]}" --tool racecheck "$gt" --gtest_filter="$batch" \
      > "$logs/san-racecheck-batch.log" 2>&1
    timeout -k 5 "$(left)" "${san[@]}" --tool memcheck "$gt" \
      --gtest_filter='CudaBatch.FactorizationsOnWarpsAndOnThreadsGiveTheSameBits' \
      > "$logs/san-memcheck-factorizations.log" 2>&1
  ) &
  (
    timeout -k 5 "$(left)" "${san[@]}" --tool memcheck "$ct" --gtest_filter='*DashpotsMatchTheCpu/Cuda' \
      > "$logs/san-memcheck-dashpots.log" 2>&1
    timeout -k 5 "$(left)" "${san[@]}" --tool racecheck "$ct" --gtest_filter='*DashpotsMatchTheCpu/Cuda' \
      > "$logs/san-racecheck-dashpots.log" 2>&1
    timeout -k 5 "$(left)" "${san[@]}" --tool memcheck "$ct" \
      --gtest_filter='*PcgWithDeviceContactAssemblyMatchesTheCpu/Cuda' > "$logs/san-memcheck-pcgcontact.log" 2>&1
    timeout -k 5 "$(left)" "${san[@]}" --tool memcheck "$ct" \
      --gtest_filter='*TwoRunsAreBitIdentical/Cuda:*ParametersMatchTheCpu/Cuda:*LinearFallbacks*/Cuda:*FrictionSwitchedOn*/Cuda' \
      > "$logs/san-memcheck-stepper-rest.log" 2>&1
  ) &
  wait
  run_summary "$logs" third $((SECONDS - deadline + ${GPU_DEADLINE_SECS:-420}))
}

# memcheck and racecheck on every /Cuda device-stepper case, each case in its own process, four
# at a time, with the step counts capped (SLENDER_TEST_MAX_STEPS, default 20: the plate catches
# the rod and the tile by then); by a deadline
stage_sanitize4() {
  local logs=/tmp/gpu-sanitize4 deadline=$(($(date +%s) + ${GPU_DEADLINE_SECS:-420}))
  rm -rf "$logs" && mkdir -p "$logs"
  export SLENDER_TEST_MAX_STEPS="${SLENDER_TEST_MAX_STEPS:-20}" OMP_NUM_THREADS=2
  export sanitizer build logs deadline
  "$build/tests/cpu_backend_tests" --gtest_list_tests --gtest_filter='*DeviceStepper*/Cuda' |
    awk '/^[^ ]/ {s=$1} /^  / {print s $1}' |
    while read -r t; do echo "memcheck $t"; echo "racecheck $t"; done |
    xargs -P "${GPU_SANITIZE_JOBS:-4}" -L 1 bash -c '
      left=$((deadline - $(date +%s))); [ "$left" -gt 5 ] || left=5
      name="$(echo "$1" | sed "s/.*DeviceStepper\.//; s,/Cuda,,")"
      timeout -k 5 "$left" "$sanitizer" --tool "$0" --error-exitcode 9 --print-limit 30 \
        "$build/tests/cpu_backend_tests" --gtest_filter="$1" > "$logs/san-$0-$name.log" 2>&1' 
  sanitizer_summary "$logs" > "$out/sanitize4.txt"
  pack_logs "$logs"
  cat "$out/sanitize4.txt"
}

stage_sanitize3() {
  local logs=/tmp/gpu-sanitize3
  rm -rf "$logs" && mkdir -p "$logs"
  run_sanitizers "$logs" "${GPU_SANITIZE_SECS:-240}" memcheck racecheck synccheck initcheck
  wait
  sanitizer_summary "$logs" > "$out/sanitize3.txt"
  pack_logs "$logs"
  cat "$out/sanitize3.txt"
}

# suites_and_sanitizers NAME QUEUE JOBS MAX_STEPS: every GPU-suite test and every /Cuda stepper
# case (V8 first), the CLI on the CUDA backend end to end (compare, a checkpoint resumed bit for
# bit), and a queue of sanitizer runs (the function QUEUE, given the two test programs), JOBS at
# a time, stepper cases capped at SLENDER_TEST_MAX_STEPS=MAX_STEPS; everything ends by one
# deadline (GPU_DEADLINE_SECS)
suites_and_sanitizers() {
  local name="$1" queue="$2" jobs="$3" max_steps="$4"
  local logs=/tmp/gpu-$name deadline=$(($(date +%s) + ${GPU_DEADLINE_SECS:-430}))
  rm -rf "$logs" && mkdir -p "$logs"
  left() { local l=$((deadline - $(date +%s))); echo $((l > 5 ? l : 5)); }
  device_header "$logs"
  export OMP_NUM_THREADS=4
  local gt="$build/tests/gpu_tests" ct="$build/tests/cpu_backend_tests" cli="$build/slender"
  (
    timeout -k 5 "$(left)" stdbuf -oL "$ct" --gtest_filter='*EverySceneMatchesTheCpuOver50Steps/Cuda' \
      > "$logs/stepper-V8.log" 2>&1
    timeout -k 5 "$(left)" "$ct" --gtest_filter='*DashpotsMatchTheCpu/Cuda' \
      > "$logs/stepper-Dashpots.log" 2>&1
  ) &
  (
    timeout -k 5 "$(left)" stdbuf -oL "$gt" > "$logs/gpu-all.log" 2>&1
    SLENDER_KRYLOV_TRACE=1 timeout -k 5 "$(left)" "$ct" \
      --gtest_filter='*NonSymmetricJacobiansTakeBicgstab/Cuda' > "$logs/stepper-NonSymmetric.log" 2>&1
    timeout -k 5 "$(left)" stdbuf -oL "$ct" \
      --gtest_filter='*DeviceStepper*/Cuda:-*EveryScene*:*NonSymmetric*:*Dashpots*' \
      > "$logs/stepper-rest.log" 2>&1
    # the CLI on the CUDA backend: the front end, the lazily loaded module, compare (Kelvin-Voigt
    # damping and moduli in time among the scenes), checkpoints
    {
      local sc s
      for sc in plate_contact rod_drop cloth_drop viscoelastic_beams sma_limb; do
        echo "== compare $sc"
        timeout -k 5 "$(left)" "$cli" compare "apps/scenes/$sc.json" --steps 30
        echo "rc $?"
      done
      s=apps/scenes/plate_contact.json
      rm -rf /tmp/ck-a /tmp/ck-b
      timeout -k 5 "$(left)" "$cli" run "$s" --backend cuda --duration 0.08 --every 1 -q --out /tmp/ck-a
      echo "uninterrupted rc $?"
      timeout -k 5 "$(left)" "$cli" run "$s" --backend cuda --duration 0.08 --every 1 -q \
        --checkpoint-every 30 --out /tmp/ck-b
      echo "first half rc $?"
      timeout -k 5 "$(left)" "$cli" run "$s" --backend cuda --duration 0.08 --every 1 -q \
        --resume /tmp/ck-b/checkpoint.slck --out /tmp/ck-c
      echo "resumed rc $?"
      if [ ! -s /tmp/ck-a/nodes.csv ] || [ ! -s /tmp/ck-c/nodes.csv ]; then
        echo "CHECKPOINT on cuda: a run wrote no nodes.csv"
      elif [ "$(tail -1 /tmp/ck-a/nodes.csv)" = "$(tail -1 /tmp/ck-c/nodes.csv)" ]; then
        echo "CHECKPOINT on cuda: last rows bit-identical"
      else
        echo "CHECKPOINT on cuda: last rows DIFFER"
        tail -1 /tmp/ck-a/nodes.csv | cut -c1-200; tail -1 /tmp/ck-c/nodes.csv | cut -c1-200
      fi
    } > "$logs/cli-cuda.log" 2>&1
  ) &
  # the sanitizer queue: "TOOL PROGRAM FILTER NAME", `jobs` at a time, each bounded by the
  # deadline (the suites above started before the step cap is exported)
  export sanitizer logs deadline
  export SLENDER_TEST_MAX_STEPS="${SLENDER_TEST_MAX_STEPS:-$max_steps}"
  "$queue" "$gt" "$ct" | sanitizer_queue "${GPU_SANITIZE_JOBS:-$jobs}" &
  wait
  {
    echo "== CLI on cuda"
    grep -E '^== |^rc |rc [0-9]|CHECKPOINT|max|relative|differ|error' "$logs/cli-cuda.log" | head -40
  } > "$logs/cli-summary.txt"
  run_summary "$logs" "$name" $((${GPU_DEADLINE_SECS:-430} - deadline + $(date +%s)))
  cat "$logs/cli-summary.txt" | tee -a "$out/summary.txt"
}

short_gpu_filter_sg='StencilGpu.*:DeviceEval.*:DeviceSolver.*:ContactPipelineGpu.FlattenedSheet:CudaBatch.TwoVectorizedRunsAreBitIdentical'
batch_filter='CudaBatch.VectorizedSnakesMatchTheCpuEngine:CudaBatch.FixedTargetsMatchTheCpuEngine:CudaBatch.ResetMatchesTheCpuEngine:ContactPipelineGpu.EqualsHost*'

# run 6's queue (GPU_TESTS STEPPER_TESTS): ordered by what the one CUDA executor touched most
queue_fourth() {
  local gt="$1" ct="$2" sg="$short_gpu_filter_sg" batch="$batch_filter"
  {
    echo "memcheck $gt $sg gpu"
    echo "memcheck $ct *HostEvaluationsBetweenSteps*/Cuda HostEvaluations"
    echo "racecheck $gt $sg gpu"
    echo "memcheck $gt $batch batch"
    echo "racecheck $ct *HostEvaluationsBetweenSteps*/Cuda HostEvaluations"
    echo "memcheck $ct *PcgWithDeviceContactAssembly*/Cuda PcgContact"
    echo "racecheck $gt $batch batch"
    echo "memcheck $ct *TwoRunsAreBitIdentical/Cuda TwoRuns"
    echo "memcheck $ct *FailedStepLeavesTheStateUntouched/Cuda:*SetStateRoundTrips*/Cuda FailedSetState"
    echo "racecheck $ct *PcgWithDeviceContactAssembly*/Cuda PcgContact"
    echo "memcheck $ct *PcgAndCholesky*/Cuda PcgChol"
    echo "memcheck $ct *FrictionSwitchedOn*/Cuda:*LinearFallbacks*/Cuda FrictionFallbacks"
    echo "initcheck $gt $sg gpu"
    echo "synccheck $gt $sg gpu"
    echo "racecheck $ct *PcgAndCholesky*/Cuda PcgChol"
    echo "memcheck $ct *NonSymmetric*/Cuda NonSymmetric"
    echo "racecheck $ct *FrictionSwitchedOn*/Cuda:*LinearFallbacks*/Cuda FrictionFallbacks"
    echo "racecheck $ct *TwoRunsAreBitIdentical/Cuda TwoRuns"
  }
}

# the owed list after run 7: memcheck, then racecheck, on every /Cuda stepper case (each in its
# own process), then the GPU suite's short filter again, then the factorizations on warps and
# threads (the slowest under a sanitizer: last)
queue_fifth() {
  local gt="$1" ct="$2" tool t
  local cases
  cases="$("$ct" --gtest_list_tests --gtest_filter='*DeviceStepper*/Cuda' |
    awk '/^[^ ]/ {s=$1} /^  / {print s $1}')"
  for tool in memcheck racecheck; do
    for t in $cases; do
      echo "$tool $ct $t $(echo "$t" | sed 's/.*DeviceStepper\.//; s,/Cuda,,')"
    done
  done
  for tool in memcheck racecheck; do echo "$tool $gt $short_gpu_filter_sg gpu"; done
  for tool in memcheck racecheck; do
    echo "$tool $gt CudaBatch.FactorizationsOnWarpsAndOnThreadsGiveTheSameBits factorizations"
  done
}

# run 6 (owed after the engines became one: one CUDA executor for the stepper, the batch and the
# contact pipeline; residual() on the device)
stage_fourth() { suites_and_sanitizers fourth queue_fourth 2 20; }
# the next run: the suites again (the Newton loop became one for B >= 1 after run 7) and the
# sanitizers on every stepper case at 3 steps, 8 processes at once
stage_fifth() { suites_and_sanitizers fifth queue_fifth 8 3; }

# S8 on the one engine, alone on the GPU (issue 20): the vectorized batch up to B = 65536 with its
# phase split, the time of each kernel at B = 4096 (ncu, one metric, so one replay per launch),
# and the per-environment CPU engine on all the machine's cores, in the same run
ncu_bin="$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
stage_s8prof() {
  local bb="$build/bench/slender_batch_bench" deadline=$(($(date +%s) + ${GPU_DEADLINE_SECS:-200}))
  left() { local l=$((deadline - $(date +%s))); echo $((l > 5 ? l : 5)); }
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/s8_device.txt" 2>&1
  echo "bundle: $(head -1 "$build/COMMIT" 2>/dev/null)" >> "$out/s8_device.txt"
  timeout -k 5 "$(left)" "$bb" --engine vectorized --backend cuda \
    --sizes 1,64,1024,4096,16384,65536 --steps 20 --repeats 3 --markdown > "$out/s8_cuda.md" 2>&1
  echo "S8 cuda: rc $?"
  if [ -n "$ncu_bin" ]; then
    timeout -k 5 "$(($(left) / 2))" "$ncu_bin" --metrics gpu__time_duration.sum \
      --print-summary per-kernel --launch-skip 200 --launch-count 4000 \
      "$bb" --engine vectorized --backend cuda --sizes 4096 --steps 3 --repeats 1 \
      > "$out/s8_ncu.txt" 2>&1
    echo "S8 ncu: rc $? ($(grep -c 'gpu__time_duration' "$out/s8_ncu.txt") kernels)"
  else
    echo "S8 ncu: no ncu on this machine"
  fi
  OMP_NUM_THREADS="$(nproc)" timeout -k 5 "$(left)" "$bb" --sizes 1,64,1024,4096 --steps 20 \
    --repeats 3 --markdown > "$out/s8_cpu.md" 2>&1
  echo "S8 cpu: rc $?"
  grep -E '^\|' "$out/s8_cuda.md" "$out/s8_cpu.md"
}

# the next run (issue 20, then issue 14's leftovers): S8's forms of the banded solve measured
# side by side alone on the GPU (a warp per environment, the same staged in shared memory,
# a thread per environment; the first form again last, to see drift), the CPU engine in the same
# run, ncu at the real clocks (per kernel, and the heavy kernels' sections), then the staged
# form's bits and sanitizers, the whole GPU suite and racecheck on the stepper cases left, two
# at a time
stage_sixth() {
  local bb="$build/bench/slender_batch_bench" gt="$build/tests/gpu_tests"
  local ct="$build/tests/cpu_backend_tests" logs=/tmp/gpu-sixth
  local deadline=$(($(date +%s) + ${GPU_DEADLINE_SECS:-480}))
  left() { local l=$((deadline - $(date +%s))); echo $((l > 5 ? l : 5)); }
  rm -rf "$logs" && mkdir -p "$logs"
  device_header "$logs"
  cp "$logs/device.txt" "$out/s8_device.txt"
  local form lanes staged name
  for form in "1 0 warps" "1 1 staged" "0 0 threads" "1 0 warps-again"; do
    read -r lanes staged name <<< "$form"
    SLENDER_BATCH_LANES=$lanes SLENDER_BATCH_STAGED=$staged timeout -k 5 60 "$bb" \
      --engine vectorized --backend cuda --sizes 1,64,1024,4096,16384 --steps 20 --repeats 5 \
      --markdown > "$out/s8_$name.md" 2>&1
    echo "S8 cuda $name: rc $?"
  done
  SLENDER_BATCH_STAGED=1 timeout -k 5 40 "$bb" --engine vectorized --backend cuda --sizes 65536 \
    --steps 10 --repeats 3 --markdown > "$out/s8_staged_65536.md" 2>&1
  echo "S8 cuda staged, B = 65536: rc $?"
  OMP_NUM_THREADS="$(nproc)" timeout -k 5 40 "$bb" --sizes 1024,4096 --steps 20 --repeats 3 \
    --markdown > "$out/s8_cpu.md" 2>&1
  echo "S8 cpu: rc $?"
  # from Python (the bundle's module for the machine's Python 3.12): torch's actions on the
  # device through DLPack against numpy's from the host, the same bits first (--check)
  if [ -d "$build/python/slender" ]; then
    PYTHONPATH="$build/python" timeout -k 5 100 python3 bench/s8_python.py --backend cuda \
      --sizes 1,64,1024,4096,16384 --steps 20 --repeats 3 --check > "$out/s8_python.md" 2>&1
    echo "S8 python: rc $?"
    grep -E '^check|rror' "$out/s8_python.md" | head -5
    PYTHONPATH="$build/python" timeout -k 5 60 python3 apps/examples/snake_cem.py --envs 256 \
      --iterations 3 --seconds 1 --backend cuda --out "$out/cem_cuda" > "$out/cem_cuda.log" 2>&1
    echo "CEM on cuda: rc $?; $(tail -2 "$out/cem_cuda.log" | head -1)"
  else
    echo "S8 python: the bundle has no Python module"
  fi
  if [ -n "$ncu_bin" ]; then
    for staged in 0 1; do
      SLENDER_BATCH_STAGED=$staged timeout -k 5 40 "$ncu_bin" --clock-control none \
        --cache-control none --metrics gpu__time_duration.sum --print-summary per-kernel \
        --launch-skip 200 --launch-count 4000 "$bb" --engine vectorized --backend cuda \
        --sizes 4096 --steps 3 --repeats 1 > "$out/s8_ncu_staged$staged.txt" 2>&1
      echo "S8 ncu (staged $staged): rc $?"
    done
    SLENDER_BATCH_STAGED=1 timeout -k 5 60 "$ncu_bin" --clock-control none \
      -k 'regex:BendTwist|RodRft|RodStretch|env_columns|GatherJacobian' --launch-skip 10 \
      --launch-count 5 --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis "$bb" \
      --engine vectorized --backend cuda --sizes 4096 --steps 3 --repeats 1 \
      > "$out/s8_ncu_sections.txt" 2>&1
    echo "S8 ncu sections: rc $?"
  fi
  grep -E '^\| (1|64|1024|4096|16384|65536) ' "$out"/s8_*.md | sed "s|^$out/||" | head -60
  # correctness: the staged form's bits (and its sanitizers), the GPU suite, racecheck's leftovers
  timeout -k 5 "$(left)" "$gt" \
    --gtest_filter='CudaBatch.StagedBandSolveGivesTheSameBits' > "$logs/gpu-staged.log" 2>&1
  (timeout -k 5 "$(left)" stdbuf -oL "$gt" --gtest_filter='-CudaBatch.Staged*' \
    > "$logs/gpu-all.log" 2>&1) &
  export sanitizer logs deadline
  export SLENDER_TEST_MAX_STEPS=3
  {
    for tool in memcheck racecheck; do
      echo "$tool $gt CudaBatch.StagedBandSolveGivesTheSameBits staged"
    done
    for t in EverySceneMatchesTheCpuOver50Steps HostEvaluationsBetweenStepsLeaveTheDeviceStepsAlone \
      LinearFallbacksAreCountedAsOnTheCpu NonSymmetricJacobiansTakeBicgstab \
      PcgAndCholeskyGiveTheSameNewtonIterates SolverNamesTellTheExecutor TwoRunsAreBitIdentical; do
      echo "racecheck $ct *DeviceStepper.$t/Cuda $t"
    done
    echo "memcheck $ct *DeviceStepper.NonSymmetricJacobiansTakeBicgstab/Cuda NonSymmetric"
  } | sanitizer_queue "${GPU_SANITIZE_JOBS:-3}"
  wait
  run_summary "$logs" sixth $((${GPU_DEADLINE_SECS:-480} - deadline + $(date +%s)))
}

# issue 21 on the code with the rest-neighbour rule (a fine cloth's own neighbours are no
# contact pairs): S9 at 20k and 200k triangles and the Newton iteration at 10^6 DOF on the GPU,
# then the CPU at 200k on all cores (PCG, one step), each under its own timeout, one at a time
stage_s9b() {
  local cb="$build/bench/slender_cloth_bench"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/s9_device.txt" 2>&1
  echo "bundle: $(head -1 "$build/COMMIT" 2>/dev/null)" >> "$out/s9_device.txt"
  timeout -k 5 150 "$cb" --backend cuda --sizes 20k,200k --steps 5 --repeats 1 --probe-every 1 \
    --markdown "$out/s9_cuda.md" > "$out/s9_cuda.log" 2>&1
  echo "S9 cuda 20k, 200k: rc $?"
  timeout -k 5 120 "$cb" --backend cuda --sizes 670k --steps 2 --repeats 1 --probe-every 0 \
    --markdown "$out/newton_1e6_cuda.md" > "$out/newton_1e6_cuda.log" 2>&1
  echo "10^6 DOF cuda: rc $?"
  OMP_NUM_THREADS="$(nproc)" timeout -k 5 150 "$cb" --backend cpu --solver pcg --sizes 200k \
    --steps 1 --repeats 1 --probe-every 1 --markdown "$out/s9_cpu_200k.md" \
    > "$out/s9_cpu_200k.log" 2>&1
  echo "S9 cpu 200k (pcg, 1 step): rc $?"
  # the backends side by side: 20 steps at 20k from rest, and 20 steps at 2k in the fold (after
  # 380 CPU steps, contact active): states within 1e-8, the same Newton counts
  timeout -k 5 90 "$cb" --sizes 20k --compare 20 > "$out/s9_compare_20k.log" 2>&1
  echo "S9 compare 20k: rc $?; $(grep -E 'agree' "$out/s9_compare_20k.log")"
  grep -E 'difference|Newton' "$out/s9_compare_20k.log"
  timeout -k 5 90 "$cb" --sizes 2k --compare 20 --compare-after 380 > "$out/s9_compare_2k_fold.log" 2>&1
  echo "S9 compare 2k in the fold: rc $?; $(grep -E 'agree' "$out/s9_compare_2k_fold.log")"
  grep -E 'difference|Newton' "$out/s9_compare_2k_fold.log"
  cat "$out/s9_cuda.md" "$out/newton_1e6_cuda.md" "$out/s9_cpu_200k.md" 2>/dev/null | head -60
  tail -5 "$out/s9_cuda.log" "$out/newton_1e6_cuda.log" "$out/s9_cpu_200k.log" | cut -c1-200
}

# one call for issues 20, 21 and 14 after run 11 (every timing alone on the GPU, then the
# correctness checks side by side, then racecheck's leftovers until the deadline): S8's solve
# forms and the CPU engine; S9 at 20k (as far as --max-seconds lets it fall), 200k and 670k on the
# GPU and the CPU's 200k step; then the GPU suite, V8, Python's device arrays, S9's backends side by
# side at 20k and in the fold at 2k; logs.tar.gz, summary.txt and tables.md in $OUT
stage_seventh() {
  local bb="$build/bench/slender_batch_bench" cb="$build/bench/slender_cloth_bench"
  local gt="$build/tests/gpu_tests" ct="$build/tests/cpu_backend_tests" logs=/tmp/gpu-seventh
  local deadline=$(($(date +%s) + ${GPU_DEADLINE_SECS:-540}))
  left() { local l=$((deadline - $(date +%s))); echo $((l > 5 ? l : 5)); }
  cap() { local l; l="$(left)"; echo $(($1 < l ? $1 : l)); }  # SECONDS, at most what is left
  rm -rf "$logs" && mkdir -p "$logs"
  device_header "$logs"
  local t0; t0=$(date +%s)
  mark() { echo "[$(($(date +%s) - t0)) s] $*"; }
  # 1. S8 timings, alone on the GPU
  local form lanes staged name
  for form in "1 0 warps" "1 1 staged" "0 0 threads"; do
    read -r lanes staged name <<< "$form"
    SLENDER_BATCH_LANES=$lanes SLENDER_BATCH_STAGED=$staged timeout -k 5 "$(cap 45)" "$bb" \
      --engine vectorized --backend cuda --sizes 1,64,1024,4096,16384 --steps 20 --repeats 3 \
      --markdown > "$logs/s8_$name.md" 2>&1
    mark "S8 cuda $name: rc $?"
  done
  for staged in 0 1; do
    SLENDER_BATCH_STAGED=$staged timeout -k 5 "$(cap 30)" "$bb" --engine vectorized \
      --backend cuda --sizes 65536 --steps 10 --repeats 3 --markdown \
      > "$logs/s8_65536_staged$staged.md" 2>&1
    mark "S8 cuda B = 65536 staged $staged: rc $?"
  done
  OMP_NUM_THREADS="$(nproc)" timeout -k 5 "$(cap 30)" "$bb" --sizes 1024,4096 --steps 20 \
    --repeats 3 --markdown > "$logs/s8_cpu.md" 2>&1
  mark "S8 cpu: rc $?"
  # 2. S9 timings, alone on the GPU
  timeout -k 5 "$(cap 75)" stdbuf -oL "$cb" --backend cuda --sizes 20k --steps 450 --repeats 1 \
    --max-seconds 55 --probe-every 10 --markdown "$logs/s9_cuda_20k.md" > "$logs/s9_cuda_20k.log" 2>&1
  mark "S9 cuda 20k: rc $?"
  timeout -k 5 "$(cap 90)" stdbuf -oL "$cb" --backend cuda --sizes 200k --steps 5 --repeats 1 \
    --max-seconds 50 --probe-every 1 --markdown "$logs/s9_cuda_200k.md" > "$logs/s9_cuda_200k.log" 2>&1
  mark "S9 cuda 200k: rc $?"
  timeout -k 5 "$(cap 75)" stdbuf -oL "$cb" --backend cuda --sizes 670k --steps 2 --repeats 1 \
    --probe-every 0 --markdown "$logs/s9_cuda_670k.md" > "$logs/s9_cuda_670k.log" 2>&1
  mark "S9 cuda 670k: rc $?"
  OMP_NUM_THREADS="$(nproc)" timeout -k 5 "$(cap 60)" stdbuf -oL "$cb" --backend cpu --solver pcg \
    --sizes 200k --steps 1 --repeats 1 --probe-every 1 --markdown "$logs/s9_cpu_200k.md" \
    > "$logs/s9_cpu_200k.log" 2>&1
  mark "S9 cpu 200k (pcg, 1 step): rc $?"
  # 3. correctness, side by side
  timeout -k 5 "$(cap 150)" stdbuf -oL "$gt" > "$logs/gpu-all.log" 2>&1 &
  timeout -k 5 "$(cap 150)" stdbuf -oL "$ct" \
    --gtest_filter='*DeviceStepper*/Cuda' > "$logs/stepper-cuda.log" 2>&1 &
  (
    timeout -k 5 "$(cap 90)" "$cb" --sizes 2k --compare 20 --compare-after 380 \
      > "$logs/s9_compare_2k_fold.log" 2>&1
    echo "rc $?" >> "$logs/s9_compare_2k_fold.log"
    timeout -k 5 "$(cap 90)" "$cb" --sizes 20k --compare 20 > "$logs/s9_compare_20k.log" 2>&1
    echo "rc $?" >> "$logs/s9_compare_20k.log"
  ) &
  if [ -d "$build/python/slender" ]; then
    PYTHONPATH="$build/python" timeout -k 5 "$(cap 90)" python3 bench/s8_python.py \
      --backend cuda --sizes 1,1024,4096,16384 --steps 20 --repeats 3 --check \
      > "$logs/s8_python.md" 2>&1
    echo "rc $?" >> "$logs/s8_python.md"
    PYTHONPATH="$build/python" timeout -k 5 "$(cap 60)" python3 apps/examples/snake_cem.py \
      --envs 256 --iterations 3 --seconds 1 --backend cuda --out "$logs/cem_cuda" \
      > "$logs/cem_cuda.log" 2>&1
    echo "rc $?" >> "$logs/cem_cuda.log"
  fi
  wait
  mark "correctness phase done"
  # 4. racecheck's leftovers, three at a time, until the deadline
  export sanitizer logs deadline SLENDER_TEST_MAX_STEPS=3
  {
    echo "memcheck $gt CudaBatch.StagedBandSolveGivesTheSameBits staged"
    echo "racecheck $gt CudaBatch.StagedBandSolveGivesTheSameBits staged"
    for t in SolverNamesTellTheExecutor TwoRunsAreBitIdentical LinearFallbacksAreCountedAsOnTheCpu \
      PcgAndCholeskyGiveTheSameNewtonIterates HostEvaluationsBetweenStepsLeaveTheDeviceStepsAlone \
      NonSymmetricJacobiansTakeBicgstab EverySceneMatchesTheCpuOver50Steps; do
      echo "racecheck $ct *DeviceStepper.$t/Cuda $t"
    done
  } | sanitizer_queue "${GPU_SANITIZE_JOBS:-3}" 15
  mark "sanitizers done"
  {
    for f in "$logs"/s8_*.md "$logs"/s9_*.md; do
      [ -f "$f" ] && { echo "## $(basename "$f")"; grep -E '^\||rror|^check' "$f"; }
    done
    for f in "$logs"/s9_*.log; do
      echo "## $(basename "$f")"; grep -E 'agree|difference|Newton|rror|rc |triangles' "$f" | head -12
    done
    echo "## cem"; tail -3 "$logs/cem_cuda.log" 2>/dev/null
  } > "$out/tables.md" 2>&1
  run_summary "$logs" seventh $(($(date +%s) - t0))
  cut -c1-220 "$out/tables.md" | head -150
}

# the clock of a stage that runs until a deadline (eighth, ninth; their locals deadline, t0 and
# logs): stage_clock starts it (GPU_DEADLINE_SECS from now) and makes the log folder; left: the
# seconds to the deadline (at least 5); cap S: S or what is left, the smaller; mark: a line with
# the seconds since the start, kept in marks.txt as well (the call's output keeps only its tail)
stage_clock() {
  deadline=$(($(date +%s) + ${GPU_DEADLINE_SECS:-540}))
  rm -rf "$logs" && mkdir -p "$logs"
  device_header "$logs"
  t0=$(date +%s)
}
left() { local l=$((deadline - $(date +%s))); echo $((l > 5 ? l : 5)); }
cap() { local l; l="$(left)"; echo $(($1 < l ? $1 : l)); }
mark() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$logs/marks.txt"; }

# the next run (after run 12): S9 at 20k through the fold with the pair search that follows each
# element's motion, and at 670k (10^6 DOF, the model built once) with its Newton iteration timed;
# S8 with the measured defaults (staged up to 2,048, warps up to 8,192) and ncu on its heavy
# kernels; the new CUDA cases (Kelvin-Voigt in the batch, the contact pipeline); then
# racecheck's leftovers two at a time until the deadline. One log folder, packed.
stage_eighth() {
  local bb="$build/bench/slender_batch_bench" cb="$build/bench/slender_cloth_bench"
  local gt="$build/tests/gpu_tests" ct="$build/tests/cpu_backend_tests" logs=/tmp/gpu-eighth
  local deadline t0
  stage_clock
  # 1. correctness of the code since run 12 first: the whole GPU suite (the one engine, its
  # batch, the families' tables, the contact pipeline, the caller's energies), then the engine
  # as the CUDA Simulator's stepper (V8 over every scene among its cases)
  timeout -k 5 "$(cap 120)" stdbuf -oL "$gt" > "$logs/gpu-new.log" 2>&1
  mark "gpu_tests (all): rc $?; $(gtest_counts "$logs/gpu-new.log")"
  timeout -k 5 "$(cap 150)" stdbuf -oL "$ct" --gtest_filter='*/Cuda' > "$logs/stepper-cuda.log" 2>&1
  mark "engine /Cuda cases: rc $?; $(gtest_counts "$logs/stepper-cuda.log")"
  # 2. S9, alone on the GPU: 20k through the fold (450 steps, cut at 150 s), 200k with block
  # Jacobi and with the multigrid, then 670k
  timeout -k 5 "$(cap 170)" stdbuf -oL "$cb" --backend cuda --sizes 20k --steps 450 --repeats 1 \
    --max-seconds 150 --probe-every 25 --markdown "$logs/s9_cuda_20k.md" > "$logs/s9_cuda_20k.log" 2>&1
  mark "S9 cuda 20k: rc $?; $(grep -m1 'run 1/1' "$logs/s9_cuda_20k.log" | cut -c1-160)"
  # the multigrid preconditioner (--solver amg) against block Jacobi at 200k, then at 670k
  for solver in pcg amg; do
    timeout -k 5 "$(cap 70)" stdbuf -oL "$cb" --backend cuda --sizes 200k --steps 2 --repeats 1 \
      --probe-every 0 --solver $solver --markdown "$logs/s9_cuda_200k_$solver.md" \
      > "$logs/s9_cuda_200k_$solver.log" 2>&1
    mark "S9 cuda 200k $solver: rc $?; $(grep -m1 'run 1/1' "$logs/s9_cuda_200k_$solver.log" | cut -c1-160)"
  done
  timeout -k 5 "$(cap 120)" stdbuf -oL "$cb" --backend cuda --sizes 670k --steps 2 --repeats 1 \
    --probe-every 0 --solver amg --markdown "$logs/s9_cuda_670k.md" > "$logs/s9_cuda_670k.log" 2>&1
  mark "S9 cuda 670k amg: rc $?; $(grep -m1 'run 1/1' "$logs/s9_cuda_670k.log" | cut -c1-160)"
  # 3. S8 with the defaults, alone, and ncu on the heavy kernels at 4096
  timeout -k 5 "$(cap 60)" "$bb" --engine vectorized --backend cuda \
    --sizes 1,64,1024,2048,4096,8192,16384,65536 --steps 20 --repeats 3 --markdown \
    > "$logs/s8_default.md" 2>&1
  mark "S8 cuda (defaults): rc $?"
  timeout -k 5 "$(cap 60)" "$bb" --engine vectorized --backend cuda --model plate-hinge \
    --sizes 256,4096 --steps 10 --repeats 3 --markdown > "$logs/s8_plate.md" 2>&1
  mark "S8 plate-hinge (dense) cuda: rc $?"
  OMP_NUM_THREADS="$(nproc)" timeout -k 5 "$(cap 40)" "$bb" --model plate-hinge --sizes 256,4096 \
    --steps 10 --repeats 3 --markdown > "$logs/s8_plate_cpu.md" 2>&1
  mark "S8 plate-hinge cpu: rc $?"
  if [ -n "$ncu_bin" ]; then
    timeout -k 5 "$(cap 60)" "$ncu_bin" --clock-control none --metrics gpu__time_duration.sum \
      --print-summary per-kernel --launch-skip 200 --launch-count 4000 "$bb" --engine vectorized \
      --backend cuda --sizes 4096 --steps 3 --repeats 1 > "$logs/s8_ncu.txt" 2>&1
    mark "S8 ncu: rc $?"
  fi
  # is Ray on the machine (issue 22 would measure the GPU batch inside an actor)?
  mark "Ray here: $(python3 -c 'import ray; print(ray.__version__)' 2>&1 | tail -1 | cut -c1-100)"
  # 4. memcheck on the multigrid case, racecheck's leftovers, both tools on the batch's
  # factorizations, two at a time, until the deadline
  export sanitizer logs deadline SLENDER_TEST_MAX_STEPS=3
  {
    echo "memcheck $ct *DeviceStepper.AmgAndCholeskyGiveTheSameNewtonIterates/Cuda Amg"
    for t in SolverNamesTellTheExecutor TwoRunsAreBitIdentical LinearFallbacksAreCountedAsOnTheCpu \
      PcgAndCholeskyGiveTheSameNewtonIterates NonSymmetricJacobiansTakeBicgstab \
      HostEvaluationsBetweenStepsLeaveTheDeviceStepsAlone EverySceneMatchesTheCpuOver50Steps; do
      echo "racecheck $ct *DeviceStepper.$t/Cuda $t"
    done
    echo "memcheck $ct *DeviceStepper.NonSymmetricJacobiansTakeBicgstab/Cuda NonSymmetric"
    for tool in memcheck racecheck; do
      echo "$tool $gt CudaBatch.FactorizationsOnWarps*:CudaBatch.StagedBandSolve* Factorizations"
    done
  } | sanitizer_queue "${GPU_SANITIZE_JOBS:-2}" 15
  mark "sanitizers done"
  {
    for f in "$logs"/s8_*.md "$logs"/s9_*.md; do
      [ -f "$f" ] && { echo "## $(basename "$f")"; grep -E '^\||rror' "$f"; }
    done
    echo "## ncu"; grep -E 'Kernel|gpu__time_duration' "$logs/s8_ncu.txt" 2>/dev/null | head -60
  } > "$out/tables.md" 2>&1
  run_summary "$logs" eighth $(($(date +%s) - t0))
  cut -c1-220 "$out/tables.md" | head -120
}

# the next run (after run 13): the whole GPU suite (the three tests whose own set-ups run 13
# found faulty, fixed in eac8d23 and a3b48d3, among them); S9 at 20k on into the fold (contact
# active from about step 380 at 2k), and at 670k (10^6 DOF) with block Jacobi beside the
# multigrid over 4 steps, its hierarchy built once and reused; then the sanitizers still owed,
# two at a time until the deadline, the shared-memory kernels' racecheck first.
stage_ninth() {
  local cb="$build/bench/slender_cloth_bench"
  local gt="$build/tests/gpu_tests" ct="$build/tests/cpu_backend_tests" logs=/tmp/gpu-ninth
  local deadline t0
  stage_clock
  # 1. the GPU suite (31 tests, 15 s in run 13)
  timeout -k 5 "$(cap 90)" stdbuf -oL "$gt" > "$logs/gpu-suite.log" 2>&1
  mark "gpu_tests (all): rc $?; $(gtest_counts "$logs/gpu-suite.log")"
  # 2. S9: 20k into the fold (run 13 reached step 339 of 450 in 150 s, no contact yet), then
  # 670k with block Jacobi (2 steps) and with the multigrid (4 steps: one build, reused)
  timeout -k 5 "$(cap 230)" stdbuf -oL "$cb" --backend cuda --sizes 20k --steps 520 --repeats 1 \
    --max-seconds 215 --probe-every 20 --markdown "$logs/s9_cuda_20k.md" \
    > "$logs/s9_cuda_20k.log" 2>&1
  mark "S9 cuda 20k: rc $?; $(grep -m1 'run 1/1' "$logs/s9_cuda_20k.log" | cut -c1-200)"
  local solver steps log
  for solver in pcg amg; do
    steps=2 && [ $solver = amg ] && steps=4
    log="$logs/s9_cuda_670k_$solver"
    timeout -k 5 "$(cap 75)" stdbuf -oL "$cb" --backend cuda --sizes 670k --steps $steps \
      --repeats 1 --probe-every 0 --solver $solver --markdown "$log.md" > "$log.log" 2>&1
    mark "S9 cuda 670k $solver: rc $?; $(grep -m1 'run 1/1' "$log.log" | cut -c1-200)"
  done
  mark "Ray here: $(python3 -c 'import ray; print(ray.__version__)' 2>&1 | tail -1 | cut -c1-100)"
  # 3. S8 at 4096 under nsys, where the machine has it: the CUDA API's time per call and the
  # kernels' summary, for the 40 % of run 13's step that ncu's kernel times leave out (the
  # report itself stays outside the logs)
  local nsys_bin
  nsys_bin="$(command -v nsys || ls /usr/local/cuda/bin/nsys \
    /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)"
  if [ -n "$nsys_bin" ]; then
    timeout -k 5 "$(cap 60)" "$nsys_bin" profile -o /tmp/s8_nsys --force-overwrite true \
      --stats=true "$build/bench/slender_batch_bench" --engine vectorized --backend cuda \
      --sizes 4096 --steps 5 --repeats 1 > "$logs/s8_nsys.txt" 2>&1
    mark "S8 nsys: rc $?"
  else
    mark "S8 nsys: no nsys on this machine"
  fi
  # 4. the sanitizers, two at a time: racecheck on the kernels with shared memory of our own
  # (the staged banded solve) and memcheck on the factorization forms first, at 3 steps
  export sanitizer logs deadline SLENDER_TEST_MAX_STEPS=3
  {
    echo "racecheck $gt CudaBatch.StagedBandSolve* Staged"
    echo "memcheck $gt CudaBatch.FactorizationsOnWarps*:CudaBatch.StagedBandSolve* Factorizations"
    echo "memcheck $gt CudaBatch.KelvinVoigt*:CudaUserEnergy.* KvUser"
    echo "memcheck $ct *DeviceStepper.NonSymmetricJacobiansTakeBicgstab/Cuda NonSymmetric"
    for t in TwoRunsAreBitIdentical PcgAndCholeskyGiveTheSameNewtonIterates \
      AmgAndCholeskyGiveTheSameNewtonIterates NonSymmetricJacobiansTakeBicgstab \
      LinearFallbacksAreCountedAsOnTheCpu HostEvaluationsBetweenStepsLeaveTheDeviceStepsAlone \
      EverySceneMatchesTheCpuOver50Steps; do
      echo "racecheck $ct *DeviceStepper.$t/Cuda $t"
    done
    echo "racecheck $gt CudaBatch.FactorizationsOnWarps* Factorizations"
  } | sanitizer_queue "${GPU_SANITIZE_JOBS:-2}" 20
  mark "sanitizers done"
  {
    for f in "$logs"/s9_*.md; do
      [ -f "$f" ] && { echo "## $(basename "$f")"; grep -E '^\||rror' "$f"; }
    done
    echo "## nsys"; grep -A14 -E 'cuda_api_sum|cuda_gpu_kern_sum' "$logs/s8_nsys.txt" 2>/dev/null
  } > "$out/tables.md" 2>&1
  run_summary "$logs" ninth $(($(date +%s) - t0))
  cat "$logs/marks.txt"
  cut -c1-220 "$out/tables.md" | head -60
}

case "${1:-all}" in
  build) stage_build ;;
  first) stage_first ;;
  second) stage_second ;;
  third) stage_third ;;
  fourth) stage_fourth ;;
  fifth) stage_fifth ;;
  sanitize4) stage_sanitize4 ;;
  sanitize3) stage_sanitize3 ;;
  test) stage_test ;;
  sanitize) stage_sanitize ;;
  sanitize2) stage_sanitize2 ;;
  bench) stage_bench ;;
  s9) stage_s9 ;;
  s9cpu) stage_s9cpu ;;
  s8prof) stage_s8prof ;;
  sixth) stage_sixth ;;
  s9b) stage_s9b ;;
  seventh) stage_seventh ;;
  eighth) stage_eighth ;;
  ninth) stage_ninth ;;
  all) stage_build && stage_test && stage_sanitize && stage_sanitize2 && stage_bench && stage_s9 && stage_s9cpu ;;
  *)
    stages="build|test|sanitize|sanitize2|sanitize3|sanitize4|bench|s9|s9cpu|s9b|s8prof"
    stages="$stages|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|all"
    echo "usage: $0 $stages" >&2
    exit 2
    ;;
esac
