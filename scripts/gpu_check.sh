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
# Each stage prints a one-line verdict; the logs hold the details.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-$root/gpu-logs}"
mkdir -p "$out"
jobs="$(nproc)"
build=build-gpu

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
    --probe-every 1000 --markdown "$out/newton_1e6_cuda.md" > "$out/newton_1e6_cuda.log" 2>&1
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

case "${1:-all}" in
  build) stage_build ;;
  test) stage_test ;;
  sanitize) stage_sanitize ;;
  sanitize2) stage_sanitize2 ;;
  bench) stage_bench ;;
  s9) stage_s9 ;;
  s9cpu) stage_s9cpu ;;
  all) stage_build && stage_test && stage_sanitize && stage_sanitize2 && stage_bench && stage_s9 && stage_s9cpu ;;
  *) echo "usage: $0 build|test|sanitize|bench|s9|s9cpu|all" >&2; exit 2 ;;
esac
