#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks, then configures and builds
# mlff into BUILD_DIR (default: build). Extra meson options may follow.
#   scripts/setup.sh [BUILD_DIR] [meson options...]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential meson ninja-build pkg-config libbz2-dev zlib1g-dev liblzma-dev python3 python3-numpy python3-ase python3-setuptools python3-wheel python3-venv python3-torch
          # stb_ds (growable arrays, hash maps), XXH3 (kernel cache keys), SHA-256 (model files)
          libstb-dev libxxhash-dev nettle-dev
          # LAPACK's symmetric eigensolver: mlff hessian's normal modes
          liblapack-dev
          # clang, its sanitizer and libFuzzer runtimes and llvm-symbolizer: CI's second build and the fuzz targets
          clang libclang-rt-14-dev llvm
          # OpenCL: loader, headers, CLBlast, and PoCL so that a machine without a GPU runs it too
          ocl-icd-opencl-dev opencl-headers libclblast-dev pocl-opencl-icd clinfo
          # Vulkan: loader, headers, shaderc (static, with glslang and SPIRV-Tools), and
          # lavapipe and the validation layers so that a machine without a GPU tests it too
          libvulkan-dev libshaderc-dev glslang-dev spirv-tools mesa-vulkan-drivers
          vulkan-validationlayers vulkan-tools
          # LAMMPS (Debian's lmp, 29 Sep 2021) and Open MPI for pair_style mlff; dpkg-dev
          # unpacks the source package that supplies the headers liblammps-dev lacks
          lammps liblammps-dev openmpi-bin libopenmpi-dev dpkg-dev)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

build_dir=${1:-build}
shift || true
if [ -f "$build_dir/build.ninja" ]; then
    meson configure "$build_dir" "$@" >/dev/null
else
    meson setup "$build_dir" "$@" >&2
fi
ninja -C "$build_dir" >&2
