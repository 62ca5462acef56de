#!/usr/bin/env bash
# Sets up, builds and runs the showcase scene; prints where its outputs are.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/build.sh"
cd "$root"
./build/slender run apps/scenes/showcase.json --out out/showcase "$@"
