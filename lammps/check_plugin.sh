#!/usr/bin/env bash
# Checks pair_style mlff the two ways clusters use it, with a LAMMPS built here
# the way they build it (CMake, PKG_PLUGIN, MPI, shared library):
#   1. the plugin (lammps/CMakeLists.txt) loaded with `plugin load`;
#   2. pair_mlff.{h,cpp} copied into that LAMMPS's src/ and built in.
# Each runs examples/lammps/in.mlff on 2 ranks (float64, CPU) on the periodic
# triclinic reference box and must give mlff energy's potential energy within
# 1e-6 eV and the same thermo line as Debian's lmp through the python route.
# Not part of CI: the LAMMPS build takes about 5 minutes on 2 cores.
#
#   lammps/check_plugin.sh [WORKDIR] [LAMMPS_SOURCE_TREE]
#
# WORKDIR (default /tmp/mlff-check-plugin) holds everything. The LAMMPS
# source defaults to Debian's source package of the installed LAMMPS
# (lammps/fetch_debian_source.sh; 29 Sep 2021 on Debian 12); any LAMMPS tree
# with cmake/ and src/ will do (the check copies it first). mlff must be
# built in build/ (scripts/setup.sh); MLFF_BUILD=DIR names another.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=${1:-/tmp/mlff-check-plugin}
source_tree=${2:-}
mlff_build=$(cd "${MLFF_BUILD:-build}" && pwd)
jobs=$(nproc)
log() { echo "check_plugin: $*" >&2; }

mkdir -p "$work"
work=$(cd "$work" && pwd)
if [ -z "$source_tree" ]; then
    source_tree=$(lammps/fetch_debian_source.sh "$work/debian-source")
fi
[ -d "$source_tree/cmake" ] && [ -d "$source_tree/src" ] || { log "$source_tree is not a LAMMPS tree"; exit 1; }
[ -x "$mlff_build/tools/mlff" ] || { log "no mlff build in $mlff_build (run scripts/setup.sh)"; exit 1; }

mpirun_args=(--oversubscribe -np 2)
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMP_NUM_THREADS=1

# A private copy of the tree: step 2 adds files to its src/.
lammps_src="$work/lammps"
if [ ! -f "$work/lammps.copied" ] || [ "$(cat "$work/lammps.copied")" != "$source_tree" ]; then
    rm -rf "$lammps_src"
    cp -a "$source_tree" "$lammps_src"
    echo "$source_tree" > "$work/lammps.copied"
fi
rm -f "$lammps_src/src/pair_mlff.h" "$lammps_src/src/pair_mlff.cpp"

lmp_build="$work/lammps-build"
log "building LAMMPS from $source_tree with PKG_PLUGIN in $lmp_build ($jobs jobs)"
start=$(date +%s)
# mlff's include path and library from the start, for step 2 (liblammps then
# links libmlff without needing it yet): changing the flags later would
# rebuild all of LAMMPS.
cmake -S "$lammps_src/cmake" -B "$lmp_build" -D CMAKE_BUILD_TYPE=Release -D PKG_PLUGIN=on \
    -D BUILD_MPI=on -D BUILD_SHARED_LIBS=on -D BUILD_OMP=off -D LAMMPS_EXCEPTIONS=off \
    -D CMAKE_CXX_FLAGS="-I$root/api" \
    -D CMAKE_CXX_STANDARD_LIBRARIES="-L$mlff_build/api -Wl,-rpath,$mlff_build/api -lmlff" >/dev/null
nice cmake --build "$lmp_build" -j "$jobs" >"$work/lammps-build.log" 2>&1 ||
    { tail -30 "$work/lammps-build.log"; exit 1; }
log "LAMMPS built in $(( $(date +%s) - start )) s: $lmp_build/lmp"

# The structure and its reference.
data="$work/water_box_64_triclinic.data"
examples/lammps/xyz2data.py tests/data/reference/water_box_64_triclinic.extxyz "$data" --elements "H O"
reference=$("$mlff_build/tools/mlff" energy --precision float64 --device cpu \
    tests/data/reference/water_box_64_triclinic.extxyz | sed -n 2p | sed 's/.*energy=\([^ ]*\).*/\1/')
log "mlff energy: $reference eV"

run_in_mlff() {   # LMP VARIABLES... -> the thermo line of step 0
    local lmp=$1
    shift
    mpirun "${mpirun_args[@]}" "$lmp" -in examples/lammps/in.mlff -log none -var data "$data" \
        -var elements "H O" -var precision float64 -var device cpu -var thermo_format %20.15g "$@" \
        >"$work/last.out" 2>&1 || { tail -20 "$work/last.out" >&2; return 1; }
    awk '/^ *Step /{getline; print; exit}' "$work/last.out"
}

check_line() {   # NAME LINE
    local pe
    pe=$(echo "$2" | awk '{print $2}')
    if ! awk -v a="$pe" -v b="$reference" 'BEGIN { d = a - b; exit !(d < 1e-6 && d > -1e-6) }'; then
        log "FAIL: $1: pe $pe, mlff energy $reference"
        exit 1
    fi
    # the same numbers (another LAMMPS may lay the line out differently)
    if ! awk -v a="$2" -v b="$debian_line" 'BEGIN {
            n = split(a, x); m = split(b, y); if (n != m) exit 1
            for (i = 1; i <= n; i++) { d = x[i] - y[i]; s = (x[i] < 0 ? -x[i] : x[i]) + 1
                                       if (d > 1e-12 * s || -d > 1e-12 * s) exit 1 }
            exit 0 }'; then
        log "FAIL: $1 and Debian's lmp differ:"
        echo "$2" >&2
        echo "$debian_line" >&2
        exit 1
    fi
    log "$1: pe $pe eV (mlff energy $reference), the same thermo numbers as Debian's lmp"
}

debian_line=$(run_in_mlff lmp -var mlff_lib "$mlff_build/lammps/libmlff_lammps.so")
log "Debian's lmp (python route): $debian_line"

# 1. The plugin.
plugin_build="$work/plugin-build"
rm -rf "$plugin_build"
PKG_CONFIG_PATH="$mlff_build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
    cmake -S lammps -B "$plugin_build" -D LAMMPS_HEADER_DIR="$lammps_src/src" \
    -D CMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
nice cmake --build "$plugin_build" >"$work/plugin-build.log" 2>&1 || { cat "$work/plugin-build.log"; exit 1; }
line=$(run_in_mlff "$lmp_build/lmp" -var mlff_load plugin -var mlff_lib "$plugin_build/mlffplugin.so")
grep -q "Loading plugin: mlff" "$work/last.out" || { log "FAIL: no 'Loading plugin' line"; exit 1; }
check_line "plugin load (LAMMPS $(grep -m1 '^LAMMPS (' "$work/last.out"))" "$line"

# 2. Copied into src/ and built in (liblammps links libmlff).
cp lammps/pair_mlff.h lammps/pair_mlff.cpp "$lammps_src/src/"
log "rebuilding LAMMPS with pair_mlff.cpp in its src/"
start=$(date +%s)
cmake -S "$lammps_src/cmake" -B "$lmp_build" >/dev/null
nice cmake --build "$lmp_build" -j "$jobs" >"$work/lammps-build.log" 2>&1 ||
    { tail -30 "$work/lammps-build.log"; exit 1; }
log "rebuilt in $(( $(date +%s) - start )) s"
styles=$("$lmp_build/lmp" -h)
grep -Eq "(^| )mlff( |$)" <<<"$styles" || { log "FAIL: mlff is not among the built-in pair styles"; exit 1; }
line=$(run_in_mlff "$lmp_build/lmp" -var mlff_load builtin)
check_line "built in (copied into src/)" "$line"
log "all checks passed"
