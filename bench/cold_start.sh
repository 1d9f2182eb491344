#!/usr/bin/env bash
# Time from process start to the first result (ANI-2x energy + forces of
# methane through the mlff command line: when its output reaches the pipe),
# and to the process's exit (after the device is released), with empty
# caches (ours, PoCL's, Mesa's and NVIDIA's), then with the caches warm;
# median of 3 runs each.
#   bench/cold_start.sh BUILD_DIR DEVICE   (DEVICE: cpu, opencl, vulkan)
set -euo pipefail
build=${1:-build}
device=${2:-opencl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MLFF_CACHE_DIR=$tmp/mlff POCL_CACHE_DIR=$tmp/pocl MESA_SHADER_CACHE_DIR=$tmp/mesa \
    __GL_SHADER_DISK_CACHE_PATH=$tmp/nvidia
printf '5\nmethane\nC 0 0 0\nH 0.629 0.629 0.629\nH -0.629 -0.629 0.629\nH -0.629 0.629 -0.629\nH 0.629 -0.629 -0.629\n' > "$tmp/methane.xyz"

run() { # prints the seconds to the first result and to the exit of one process
    local t0 t1 t2
    t0=$(date +%s.%N)
    "$build/tools/mlff" energy --device "$device" --forces "$tmp/methane.xyz" |
        { IFS= read -r _; date +%s.%N > "$tmp/first"; cat > /dev/null; }
    t2=$(date +%s.%N)
    t1=$(cat "$tmp/first")
    awk "BEGIN { print $t1 - $t0, $t2 - $t0 }"
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

cold=$(for k in 1 2 3; do rm -rf "$tmp"/*/; CUDA_CACHE_DISABLE=1 run; done)
warm=$(for k in 1 2 3; do run; done)
printf 'device %s (median of 3; %s):\n' "$device" "$("$build/tools/mlff" devices | grep "^$device 0" | head -1)"
printf '  empty caches: first result %.3f s, exit %.3f s\n' "$(cut -d' ' -f1 <<<"$cold" | median)" \
    "$(cut -d' ' -f2 <<<"$cold" | median)"
printf '  warm caches:  first result %.3f s, exit %.3f s\n' "$(cut -d' ' -f1 <<<"$warm" | median)" \
    "$(cut -d' ' -f2 <<<"$warm" | median)"
