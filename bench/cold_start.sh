#!/usr/bin/env bash
# Time from process start to the first result (ANI-2x energy + forces of
# methane through the mlff command line) with empty caches (ours, PoCL's,
# Mesa's and NVIDIA's), then with the caches warm; median of 3 runs each.
#   bench/cold_start.sh BUILD_DIR DEVICE   (DEVICE: cpu, opencl, vulkan)
set -euo pipefail
build=${1:-build}
device=${2:-opencl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MLFF_CACHE_DIR=$tmp/mlff POCL_CACHE_DIR=$tmp/pocl MESA_SHADER_CACHE_DIR=$tmp/mesa \
    __GL_SHADER_DISK_CACHE_PATH=$tmp/nvidia
printf '5\nmethane\nC 0 0 0\nH 0.629 0.629 0.629\nH -0.629 -0.629 0.629\nH -0.629 0.629 -0.629\nH 0.629 -0.629 -0.629\n' > "$tmp/methane.xyz"

run() { # prints the seconds one process takes
    local t0 t1
    t0=$(date +%s.%N)
    "$build/tools/mlff" energy --device "$device" --forces "$tmp/methane.xyz" > /dev/null
    t1=$(date +%s.%N)
    awk "BEGIN { print $t1 - $t0 }"
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

cold=$(for k in 1 2 3; do rm -rf "$tmp"/*/; CUDA_CACHE_DISABLE=1 run; done | median)
warm=$(for k in 1 2 3; do run; done | median)
printf 'device %s: empty caches %.3f s, warm kernel cache %.3f s (median of 3; %s)\n' "$device" "$cold" "$warm" \
    "$("$build/tools/mlff" devices | grep "^$device 0" | head -1)"
