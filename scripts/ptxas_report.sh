#!/usr/bin/env bash
# ptxas's registers, stack frame and spills of every kernel of the CUDA module (kernels/*.cu),
# for the build's architecture: each file compiled again with `-Xptxas -v` by the build's own
# nvcc command (no GPU needed; cuda_engine.cu takes minutes). Issue 47, item 4: a kernel that
# grows its registers or spills shows here before a device run does.
#   scripts/ptxas_report.sh [BUILD]                  the table (markdown) on standard output
#   scripts/ptxas_report.sh [BUILD] --check FILE     the same, then fails if a kernel of FILE's
#                                                    table now uses more registers, stack or
#                                                    spills (a results file: bench/results/)
# BUILD is a configured build folder with CUDA (default build/). Issue 47's target for the
# bend-twist evaluation (at most 128 registers, no spills) is reported and enforced (met since
# 2026-11-30; CI checks that kernel alone: tests/cuda/ptxas_bend_twist.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="build"
check=""
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check="$2"; shift 2 ;;
    *) build="$1"; shift ;;
  esac
done
[ -f "$build/build.ninja" ] || { echo "ptxas_report: $build is not a configured Ninja build" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
commands="$(ninja -C "$build" -t commands slender_cuda)"
for cu in "$root"/kernels/*.cu; do
  name="$(basename "$cu" .cu)"
  cmd="$(grep -F "kernels/$name.cu" <<< "$commands" | grep -F ' -c ' | head -1)"
  [ -n "$cmd" ] || { echo "ptxas_report: no compile command for $name.cu in $build" >&2; exit 2; }
  # the build's command without ccache, dependency files, its object or the quick device code
  # of a build without a GPU (SLENDER_CUDA_QUICK_DEVICE), with ptxas's report
  cmd="$(sed -E 's/^ccache //; s/ -Xcicc -O1//; s/ -Xptxas -O0//; s/ -MD -MT [^ ]+ -MF [^ ]+//; s/ -o [^ ]+/ -o '"${tmp//\//\\/}"'\/'"$name"'.o/' <<< "$cmd")"
  (cd "$build" && eval "$cmd -Xptxas -v") > "$tmp/$name.log" 2>&1 ||
    { echo "ptxas_report: $name.cu failed to compile" >&2; tail -20 "$tmp/$name.log" >&2; exit 1; }
done
cat "$tmp"/*.log | python3 "$root/scripts/ptxas_table.py" ${check:+--check "$check"}
