#!/usr/bin/env bash
# On the development machine, before a GPU session: the shared offline dependencies
# (../shared/gpu/pack-deps.sh: Eigen, CLI11, GoogleTest) plus pybind11 (for the Python module
# and its tests) into .devdeps/, which travels with the tree (`run` with carry: [".devdeps"]).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/../shared/gpu/pack-deps.sh"
python3 -c "import pybind11" 2>/dev/null || python3 -m pip install --quiet pybind11
src="$(python3 -c 'import os, pybind11; print(os.path.dirname(pybind11.__file__))')"
rm -rf .devdeps/pybind11
cp -r "$src" .devdeps/pybind11
echo "packed pybind11 from $src"
du -sh .devdeps
