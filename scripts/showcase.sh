#!/usr/bin/env bash
# Sets up, builds and runs the showcase scene, then renders it headless (docs/rendering.md):
# prints where its outputs are, and last the paths of its video and of a still of its last frame.
# Arguments go to `slender run` (e.g. --duration 1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/build.sh"
cd "$root"
./build/slender run apps/scenes/showcase.json --out out/showcase "$@"

# pictures (slender.render, slender.plot: matplotlib, imageio-ffmpeg and Pillow, which
# scripts/setup.sh installs)
export PYTHONPATH="$root/build/python${PYTHONPATH:+:$PYTHONPATH}"
if ! python3 -c "import matplotlib, imageio, imageio_ffmpeg, PIL" 2>/dev/null; then
  echo "showcase: no pictures: python3 -m pip install matplotlib imageio imageio-ffmpeg pillow" >&2
  exit 1
fi
echo "rendering out/showcase ..."
video=$(python3 -m slender.render out/showcase --scene apps/scenes/showcase.json \
          --out out/showcase/showcase.mp4 -q)
still=$(python3 -m slender.render out/showcase --scene apps/scenes/showcase.json \
          --stills out/showcase/stills --frame -1 -q)
python3 -m slender.plot out/showcase --out out/showcase/plots >/dev/null
echo "plots: $root/out/showcase/plots/"
echo "video: $video"
echo "still: $still"
