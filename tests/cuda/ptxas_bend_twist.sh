#!/usr/bin/env bash
# Issue 47, item 4, in CI: the bend-twist evaluation kernel (tests/cuda/ptxas_bend_twist.cu)
# compiled by the build's nvcc at full optimisation for one architecture, and ptxas's report
# checked by scripts/ptxas_table.py: at most 128 registers, no spill stores or loads. No GPU
# needed; about 5 s.
#   ptxas_bend_twist.sh NVCC ARCH SOURCE_DIR BUILD_DIR [FLAG...]
# FLAG...: the build's CUDA flags without the quick device code's (CMakeLists.txt,
# SLENDER_CUDA_FULL_FLAGS)
set -euo pipefail
nvcc="$1" arch="$2" src="$3" build="$4"
shift 4
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$nvcc" -std=c++17 -O3 -DNDEBUG "$@" \
  -I"$src/kernels" -I"$src/include" -I"$build/generated" \
  --generate-code="arch=compute_$arch,code=sm_$arch" -Xptxas -v \
  -x cu -c "$src/tests/cuda/ptxas_bend_twist.cu" -o "$tmp/k.o" > "$tmp/log" 2>&1 ||
  { cat "$tmp/log"; echo "ptxas_bend_twist: the kernel did not compile" >&2; exit 1; }
python3 "$src/scripts/ptxas_table.py" --target-only < "$tmp/log"
