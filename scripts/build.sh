#!/usr/bin/env bash
# Configures and builds Slender (Release) into build/. CUDA is built when nvcc is found; set
# SLENDER_CUDA=OFF to skip it, CUDA_ARCH to change the architecture list (default 90). Without a
# visible GPU the device code is compiled at NVVM -O1 and ptxas -O0 (SLENDER_CUDA_QUICK_DEVICE),
# unless SLENDER_DEVICE_OPT=full, and the GPU suites are not built, unless SLENDER_GPU_TESTS=ON.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/setup.sh"
extra=()
if [ -n "${SLENDER_CUDA:-}" ]; then extra+=("-DSLENDER_WITH_CUDA=${SLENDER_CUDA}"); fi
if [ -n "${CI:-}" ]; then extra+=("-DSLENDER_WERROR=ON"); fi
# device code no GPU here will run is compiled quickly (NVVM -O1, ptxas -O0, CMakeLists.txt);
# with a GPU visible, or SLENDER_DEVICE_OPT=full, at full optimisation. The GPU suites, which
# only a GPU runs, are left out of the build without one unless SLENDER_GPU_TESTS=ON
quick=OFF
gpu_tests="${SLENDER_GPU_TESTS:-ON}"
if ! nvidia-smi -L >/dev/null 2>&1; then
  if [ "${SLENDER_DEVICE_OPT:-}" != full ]; then quick=ON; fi
  gpu_tests="${SLENDER_GPU_TESTS:-OFF}"
fi
extra+=("-DSLENDER_CUDA_QUICK_DEVICE=${quick}" "-DSLENDER_BUILD_GPU_TESTS=${gpu_tests}")
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" "${extra[@]}" >/dev/null
cmake --build build -j "$(nproc)"
