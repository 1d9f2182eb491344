#!/usr/bin/env bash
# ANI-2x molecular dynamics in LAMMPS through pair_style mlff: steps per
# second for water boxes of about 3k, 24k and 100k atoms, and the share of
# the time LAMMPS itself takes (its timing breakdown: Pair is mlff, the rest
# -- Neigh, Comm, Modify, Output, Other -- is LAMMPS).
#
#   bench/lammps_md.sh [--device cpu|opencl|vulkan|auto] [--ranks "1 2"] [--steps 10]
#                      [--warmup 3] [--sizes "3k 24k 100k"] [--precision float32|float64]
#                      [--members 8|1..7] [--lmp lmp] [--plugin PATH]
#                      [--options "pair_style keywords"] [--build DIR] [--serial]
#
# The boxes are tests/data/reference/water_box_64 (192 atoms, 12.4 A)
# replicated by LAMMPS: 3k = 2x2x4 (3072 atoms), 24k = 4x4x8 (24576),
# 100k = 8x8x8 (98304). Velocities for 300 K, NVE, 0.5 fs, neighbor skin 1 A.
# Each case runs --warmup steps (plans, kernels), then --steps measured.
# --members N: ANI-2x with the first N of its 8 ensemble members (converted
# from data/ani-2x by build/models/mlff-convert into the work folder), e.g. 1
# to compare with single-model figures (lammps-ani's 34.6 steps/s for 100k
# atoms on an A100 is one ANI model).
#
# Ranks: mpirun --bind-to none, and the style gives each rank the cores
# divided among the ranks (OMP_NUM_THREADS overrides); on GPUs each rank
# takes the GPU of its index on the node. --lmp and --plugin run another
# LAMMPS (one built with PKG_PLUGIN, lammps/CMakeLists.txt's mlffplugin.so);
# by default Debian's lmp with build/lammps/libmlff_lammps.so. --serial runs
# one rank without mpirun (a LAMMPS built without MPI, as carried to the
# GPU machine); --build DIR: mlff's build folder (default build).
set -euo pipefail
cd "$(dirname "$0")/.."

device=cpu
ranks="1 2"
steps=10
warmup=3
sizes="3k 24k 100k"
precision=float32
lmp=lmp
plugin=""
options=""
members=8
build=build
serial=0
while [ $# -gt 0 ]; do
    case "$1" in
        --device) device=$2; shift 2 ;;
        --ranks) ranks=$2; shift 2 ;;
        --steps) steps=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --precision) precision=$2; shift 2 ;;
        --lmp) lmp=$2; shift 2 ;;
        --plugin) plugin=$2; shift 2 ;;
        --options) options=$2; shift 2 ;;
        --members) members=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --serial) serial=1; ranks=1; shift ;;
        -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
        *) echo "lammps_md.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done

work=$(mktemp -d /tmp/mlff-lammps-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

examples/lammps/xyz2data.py tests/data/reference/water_box_64.extxyz "$work/water.data" \
    --elements "H O"
if [ "$members" != 8 ]; then
    ani=$PWD/data/ani-2x/ani-2x_8x
    printf '%s\n' "$ani/rHCNOSFCl-5.1R_16-3.5A_a8-4.params" "$ani/sae_linfit.dat" "$ani/train" \
        "$members" > "$work/ani-2x_${members}x.info"
    "$build/models/mlff-convert" --name "ANI-2x, members 1-$members" "$work/ani-2x_${members}x.info" \
        "$work/ani-2x_${members}x.mlff" >&2
    options="model $work/ani-2x_${members}x.mlff $options"
fi
if [ -n "$plugin" ]; then
    load=(-var mlff_load plugin -var mlff_lib "$(realpath "$plugin")")
else
    load=(-var mlff_lib "$(realpath "$build")/lammps/libmlff_lammps.so")
fi

# The registration lines of in.mlff, then the benchmark.
sed -n '/^# ---- mlff registration: begin/,/^# ---- mlff registration: end/p' \
    examples/lammps/in.mlff > "$work/in.bench"
cat >> "$work/in.bench" <<'EOF'
units metal
atom_style atomic
read_data ${data}
replicate ${nx} ${ny} ${nz}
neighbor 1.0 bin
neigh_modify every 1 delay 0 check yes
pair_style mlff device ${device} precision ${precision} ${options}
pair_coeff * * H O
velocity all create 300 4928459 mom yes rot no dist gaussian loop geom
fix nve all nve
timestep 0.0005
thermo_style custom step pe ke etotal press
thermo ${warmup}
run ${warmup}
thermo ${steps}
run ${steps}
EOF

echo "ANI-2x, $members ensemble member(s); $steps measured steps after $warmup"
printf '%-5s %7s %5s %-8s %-8s %9s %9s %8s %9s  %s\n' size atoms ranks device precision \
    steps/s ns/day Pair% LAMMPS% "device (rank 0)"
for size in $sizes; do
    case $size in
        3k) rep=(2 2 4) ;;
        24k) rep=(4 4 8) ;;
        100k) rep=(8 8 8) ;;
        *) echo "lammps_md.sh: size $size: 3k, 24k or 100k" >&2; exit 2 ;;
    esac
    for n in $ranks; do
        out="$work/out.$size.$n"
        launch=(mpirun --oversubscribe --bind-to none -np "$n")
        [ "$serial" = 1 ] && launch=()
        if ! "${launch[@]}" "$lmp" -in "$work/in.bench" -log none \
                "${load[@]}" -var data "$work/water.data" -var nx "${rep[0]}" -var ny "${rep[1]}" \
                -var nz "${rep[2]}" -var device "$device" -var precision "$precision" \
                -var options "$options" -var warmup "$warmup" -var steps "$steps" >"$out" 2>&1; then
            echo "lammps_md.sh: $size on $n rank(s) failed:" >&2
            tail -20 "$out" >&2
            exit 1
        fi
        # The measured run is the last one: its loop time and Pair's share of it.
        awk -v size="$size" -v n="$n" -v device="$device" -v precision="$precision" '
            /^pair mlff: / { sub(/^.* on /, ""); sub(/ \(rank 0 of.*$/, ""); where = $0 }
            /^Loop time of / { loop = $4; nsteps = $9; atoms = $12 }
            /^Pair +\|/ { split($0, f, "|"); pair = f[6] + 0 }
            END {
                sps = nsteps / loop
                printf "%-5s %7d %5d %-8s %-8s %9.3f %9.4f %8.2f %9.2f  %s\n", size, atoms, n,
                       device, precision, sps, sps * 0.0005 * 86400 / 1000, pair, 100 - pair, where
            }' "$out"
    done
done
