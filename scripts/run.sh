#!/usr/bin/env bash
# The main job: set up, build, then compute ANI-2x energies and forces of the
# example molecules on the best device present (a GPU if mlff can use one,
# else the CPU). Extra arguments go to `mlff energy`.
#   scripts/run.sh [mlff energy options...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
exec build/tools/mlff energy --device auto --forces --verbose "$@" examples/molecules.xyz
