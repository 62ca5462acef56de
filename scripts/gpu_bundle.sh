#!/usr/bin/env bash
# On the development machine, before a GPU session: build the GPU binaries here (nvcc 13.0, as on
# the GPU machine) and pack them, with the source they were built from, into .gpubin/ (git-ignored),
# which a device call carries (`run` with carry: [".gpubin"]); there, scripts/gpu_check.sh unpacks
# it and runs its stages without building (saves the build minutes of device time on every run).
#
# The test programs have the source folder's absolute path compiled in (scenes, test data), so the
# build is made from a snapshot of the working tree at a fixed path, $SLENDER_GPU_SRC
# (default /tmp/slender-src), and unpacked at that same path on the GPU machine. SuiteSparse is
# off: the GPU machine lacks Debian's libraries. The Python module is built for the GPU
# machine's Python 3.12 when one with pybind11 is here (below), and goes along in
# build-gpu/python.
# The C++ runtime libraries (libstdc++, libgcc_s, libgomp) go along in lib/ as a fallback, used
# there only when the machine's own do not load the programs.
#   scripts/gpu_bundle.sh            build the tests, benches and CLI; pack .gpubin/bundle.tar.gz
#   SLENDER_GPU_SYNC_CHECK=ON ...    the same with SLENDER_CUDA_SYNC_CHECK (a fault names its launch)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="${SLENDER_GPU_SRC:-/tmp/slender-src}"
jobs="$(nproc)"
cd "$root"

# the snapshot: tracked files and untracked ones git does not ignore (what a device call sends)
mkdir -p "$src"
find "$src" -mindepth 1 -maxdepth 1 ! -name build-gpu -exec rm -rf {} +
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$src"
# the Python module, for the GPU machine's Python (3.12, with numpy and torch there): built when
# a Python 3.12 with its headers and pybind11 is at hand here ($SLENDER_GPU_PYTHON, or pyenv's)
gpu_py="${SLENDER_GPU_PYTHON:-$(ls "$HOME"/.pyenv/versions/3.12*/bin/python3.12 2>/dev/null | head -1)}"
py_flags=(-DSLENDER_WITH_PYTHON=OFF)
if [ -n "$gpu_py" ] && "$gpu_py" -c "import pybind11" 2>/dev/null; then
  py_flags=(-DSLENDER_WITH_PYTHON=ON -DPython_EXECUTABLE="$gpu_py"
            -Dpybind11_DIR="$("$gpu_py" -m pybind11 --cmakedir)")
  echo "gpu_bundle: the Python module for $("$gpu_py" --version)"
else
  echo "gpu_bundle: no Python 3.12 with pybind11 here (SLENDER_GPU_PYTHON): no Python module"
fi
cmake -S "$src" -B "$src/build-gpu" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSLENDER_CUDA_QUICK_DEVICE=OFF -DSLENDER_BUILD_GPU_TESTS=ON \
  -DSLENDER_WITH_CUDA=ON -DSLENDER_WITH_CHOLMOD=OFF "${py_flags[@]}" \
  -DSLENDER_CUDA_SYNC_CHECK="${SLENDER_GPU_SYNC_CHECK:-OFF}" > /dev/null
cmake --build "$src/build-gpu" -j "$jobs"

# stage: the source snapshot plus stripped programs under build-gpu/, runtime libraries in lib/
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$stage"
mkdir -p "$stage/build-gpu/tests" "$stage/build-gpu/bench" "$stage/lib"
for exe in "$src"/build-gpu/tests/*_tests; do strip -o "$stage/build-gpu/tests/$(basename "$exe")" "$exe"; done
for exe in "$src"/build-gpu/bench/slender_*bench; do strip -o "$stage/build-gpu/bench/$(basename "$exe")" "$exe"; done
strip -o "$stage/build-gpu/slender" "$src/build-gpu/slender"
if [ -d "$src/build-gpu/python/slender" ]; then  # the Python package, its module stripped
  mkdir -p "$stage/build-gpu/python/slender"
  for f in "$src"/build-gpu/python/slender/*; do
    case "$f" in
      *.so) strip --strip-unneeded -o "$stage/build-gpu/python/slender/$(basename "$f")" "$f" ;;
      *) cp "$f" "$stage/build-gpu/python/slender/" ;;
    esac
  done
fi
# libslender_host.so, libslender_base.so beneath it, and the CUDA module libslender_cuda.so that
# it loads on first use
for lib in "$src"/build-gpu/libslender_*.so; do
  strip --strip-unneeded -o "$stage/build-gpu/$(basename "$lib")" "$lib"
done
for lib in libstdc++.so.6 libgcc_s.so.1 libgomp.so.1; do
  cp -L "$(ldd "$src/build-gpu/tests/gpu_tests" | awk -v l="$lib" '$1 == l {print $3}')" "$stage/lib/$lib"
done
# what the programs need beyond the CUDA libraries and the C/C++ runtime (must be empty)
extra="$(ldd "$stage"/build-gpu/tests/* "$stage"/build-gpu/bench/* "$stage/build-gpu/slender" \
  "$stage"/build-gpu/libslender_*.so $(ls "$stage"/build-gpu/python/slender/*.so 2>/dev/null) |
  awk '/=>/ {print $1}' | sort -u |
  grep -vE '^(linux-vdso|libc\.|libm\.|libdl\.|libpthread\.|librt\.|ld-linux|libstdc\+\+|libgcc_s|libgomp|libcu|libnvJitLink|libslender_)' || true)"
if [ -n "$extra" ]; then echo "gpu_bundle: the programs need libraries the GPU machine lacks: $extra" >&2; exit 1; fi
git rev-parse HEAD > "$stage/build-gpu/COMMIT"
git status --porcelain >> "$stage/build-gpu/COMMIT"
mkdir -p .gpubin
tar -czf .gpubin/bundle.tar.gz -C "$stage" .
grep -qx '/.gpubin/' .gitignore || echo '/.gpubin/' >> .gitignore
echo "gpu_bundle: .gpubin/bundle.tar.gz ($(du -h .gpubin/bundle.tar.gz | cut -f1)), to unpack at $src"
