#!/usr/bin/env bash
# Peak resident memory and wall time of `mlff energy --forces` on generated
# frames (molecules of 3 to 30 atoms, tests/cli/gen_frames.py), piped in so
# that no file of that size is written, the output thrown away.
#   bench/stream_memory.sh MLFF FRAMES [mlff energy options...]
# e.g. bench/stream_memory.sh build/tools/mlff 1000000 --device cpu
set -euo pipefail
mlff=$1 frames=$2
shift 2
here=$(dirname "$0")
start=$(date +%s.%N)
/usr/bin/python3 "$here/../tests/cli/gen_frames.py" "$frames" 3 |
    /usr/bin/time -f "%M" -o /tmp/stream_memory.$$ "$mlff" energy --forces --verbose "$@" - -o /dev/null 2>/tmp/stream_memory_err.$$ || {
    cat /tmp/stream_memory_err.$$ >&2
    exit 1
}
end=$(date +%s.%N)
summary=$(grep -E "frames, .* atoms" /tmp/stream_memory_err.$$ || true)
echo "frames $frames: peak RSS $(cat /tmp/stream_memory.$$) KB, wall $(echo "$end - $start" | bc) s; $summary"
rm -f /tmp/stream_memory.$$ /tmp/stream_memory_err.$$
