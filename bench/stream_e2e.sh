#!/usr/bin/env bash
# `mlff energy` end to end against compute alone (issue 56's goal: within
# 1.5x) on a generated file of FRAMES molecules of 3 to 30 atoms
# (tests/cli/gen_frames.py), for each DEVICE: compute alone is
# bench_stream's best of 3 (every frame in memory, only the library calls
# timed); end to end is `mlff energy --forces FILE -o OUT`, process start to
# exit, best of 3, with the default reader and writer threads and with one
# (--io-threads 1), and what --verbose says of the best run (the time in
# the library and in the pipeline: the rest is the process's start, the
# model and device opened, and the output closed). Then bench_xyz_io:
# parsing and formatting per atom on this host's cores.
#   bench/stream_e2e.sh BUILD_DIR FRAMES DEVICE... [-- mlff energy options...]
# e.g. bench/stream_e2e.sh build 100000 opencl vulkan cpu
set -euo pipefail
build=$1 frames=$2
shift 2
devices=()
while (($#)) && [ "$1" != "--" ]; do
    devices+=("$1")
    shift
done
[ "${1:-}" = "--" ] && shift
# The options bench_stream shares with mlff energy.
shared=()
args=("$@")
for ((k = 0; k + 1 < ${#args[@]}; k++)); do
    case ${args[k]} in --model | --batch-atoms) shared+=("${args[k]}" "${args[k + 1]}") ;; esac
done
here=$(dirname "$0")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
input=$work/frames.xyz
/usr/bin/python3 "$here/../tests/cli/gen_frames.py" "$frames" 1 >"$input"
echo "frames $frames ($(stat -c %s "$input") bytes); $(nproc) CPUs online"

# Best of 3 wall times of a command, in seconds; its --verbose summary into $work/summary.
best_of_3() {
    local best=""
    for _ in 1 2 3; do
        local start end t
        start=$(date +%s.%N)
        "$@" >/dev/null 2>"$work/err" || {
            cat "$work/err" >&2
            exit 1
        }
        end=$(date +%s.%N)
        t=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.4f", b - a}')
        if [ -z "$best" ] || awk -v t="$t" -v b="$best" 'BEGIN {exit !(t < b)}'; then
            best=$t
            grep -E "frames, .* atoms, evaluated" "$work/err" >"$work/summary" || true
        fi
    done
    echo "$best"
}

for device in "${devices[@]}"; do
    compute=$("$build/bench/bench_stream" "$input" --device "$device" --repeat 3 "${shared[@]}" | awk '/^best:/ {print $2}')
    default=$(best_of_3 "$build/tools/mlff" energy --device "$device" --forces --verbose "$@" "$input" -o "$work/out.xyz")
    summary=$(cat "$work/summary")
    one=$(best_of_3 "$build/tools/mlff" energy --device "$device" --forces --verbose --io-threads 1 "$@" "$input" -o "$work/out.xyz")
    printf "%-7s compute alone %.3f s; end to end %.3f s (%.2fx), with --io-threads 1 %.3f s (%.2fx)\n" "$device" \
        "$compute" "$default" "$(awk -v a="$default" -v b="$compute" 'BEGIN {print a / b}')" "$one" "$(awk -v a="$one" -v b="$compute" 'BEGIN {print a / b}')"
    echo "        default threads: $summary"
    echo "        --io-threads 1:  $(cat "$work/summary")"
done
threads=$(( $(nproc) / 4 ))
((threads < 1)) && threads=1
((threads > 8)) && threads=8
"$build/bench/bench_xyz_io" "$input" --threads "$threads"
