#!/usr/bin/env bash
# Installs the Debian packages Slender's build needs (only what is missing, so a second run
# is quick). Needs root or sudo on a fresh machine.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config libeigen3-dev libcli11-dev libopenblas-dev
          libsuitesparse-dev googletest libgtest-dev python3-dev python3-pip)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all build dependencies present"
fi

# Python packages of the bindings (pybind11) and their tests (numpy, pytest), for the python3 on
# PATH (the one CMake builds the module for)
if ! python3 -c "import pybind11, numpy, pytest" 2>/dev/null; then
  echo "setup: installing pybind11, numpy and pytest with pip"
  python3 -m pip install --quiet --disable-pip-version-check pybind11 numpy pytest ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
      pybind11 numpy pytest
fi

# Ray, for the distributed layer (slender.distributed, slender.sweep) and its tests
# (tests/python/test_distributed.py, which run on a local Ray cluster)
if ! python3 -c "import ray" 2>/dev/null; then
  echo "setup: installing ray with pip"
  python3 -m pip install --quiet --disable-pip-version-check ray ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages ray
fi

# pictures and videos of runs (slender.render, slender.plot; docs/rendering.md) and their tests:
# matplotlib draws on its Agg canvas, imageio-ffmpeg brings its own ffmpeg (no display, no
# OpenGL, no Debian package)
if ! python3 -c "import matplotlib, PIL, imageio, imageio_ffmpeg" 2>/dev/null; then
  echo "setup: installing matplotlib, pillow, imageio and imageio-ffmpeg with pip"
  python3 -m pip install --quiet --disable-pip-version-check matplotlib pillow imageio \
    imageio-ffmpeg ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
      matplotlib pillow imageio imageio-ffmpeg
fi

# USD export's test (tests/python/test_usd.py) reads the files back with Pixar's usd-core
if ! python3 -c "import pxr" 2>/dev/null; then
  echo "setup: installing usd-core with pip"
  python3 -m pip install --quiet --disable-pip-version-check usd-core ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages usd-core
fi

# the FMU's build (the FMI 3.0 headers ship in FMPy's c-code folder) and its test
# (tests/python/test_fmu.py simulates the FMUs with FMPy). --no-deps: FMPy's dependency list
# brings pip's cmake, which would shadow the system's on PATH; its other dependencies by name
if ! python3 -c "import fmpy" 2>/dev/null; then
  echo "setup: installing fmpy with pip"
  fmpy_deps=(attrs jinja2 lark lxml msgpack nbformat numpy)
  { python3 -m pip install --quiet --disable-pip-version-check --no-deps fmpy &&
    python3 -m pip install --quiet --disable-pip-version-check "${fmpy_deps[@]}"; } ||
    { python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
        --no-deps fmpy &&
      python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
        "${fmpy_deps[@]}"; }
fi

# the reinforcement-learning stack (slender.rl, docs/rl.md) and its test
# (tests/python/test_rl.py): Gymnasium, and Stable-Baselines3 on torch. torch comes first, so
# that Stable-Baselines3 does not bring another: the CPU-only wheel from PyTorch's own index
# where that can be reached, else PyPI's (the CUDA build, which runs on the CPU too: 5 GB
# installed with its NVIDIA libraries and Triton, about 65 s for this block on a 2-core machine)
pip_install() {
  python3 -m pip install --quiet --disable-pip-version-check "$@" ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "$@"
}
# the notebooks' test (tests/python/test_notebooks.py, docs/notebooks.md) runs them in a Jupyter
# kernel through nbclient
if ! python3 -c "import nbclient, ipykernel" 2>/dev/null; then
  echo "setup: installing nbclient and ipykernel with pip"
  pip_install nbclient ipykernel
fi
if ! python3 -c "import gymnasium, stable_baselines3" 2>/dev/null; then  # (imports torch too)
  if ! python3 -c "import torch" 2>/dev/null; then
    echo "setup: installing torch with pip"
    pip_install --retries 0 --timeout 15 --index-url https://download.pytorch.org/whl/cpu torch \
      2>/dev/null || pip_install torch
  fi
  echo "setup: installing gymnasium and stable-baselines3 with pip"
  pip_install gymnasium stable-baselines3
fi
