#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite.
#   scripts/test.sh            normal build (build/)
#   scripts/test.sh --sanitize AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   MLFF_WERROR=1 scripts/test.sh   warnings are errors (as in CI)
#   CC=clang scripts/test.sh ...    another compiler (CI: gcc, then clang for --sanitize);
#                                   a build directory keeps the compiler it was set up with
set -euo pipefail
cd "$(dirname "$0")/.."

options=()
[ "${MLFF_WERROR:-0}" = 1 ] && options+=(-Dwerror=true)
# CI must build and test the OpenCL and Vulkan backends (on PoCL and
# lavapipe), never silently skip them.
[ "${CI:-}" = true ] && options+=(-Dopencl=enabled -Dvulkan=enabled)
# ... nor the LAMMPS pair style (not under the sanitizers: it runs inside
# Debian's uninstrumented lmp).
[ "${CI:-}" = true ] && [ "${1:-}" != --sanitize ] && options+=(-Dlammps=enabled)
# Both builds' tests share the kernel caches (tests/meson.build says why).
options+=(-Dtest_cache_dir="$PWD/build-test-cache")
build_dir=build
if [ "${1:-}" = --sanitize ]; then
    build_dir=build-asan
    # -O2: the sanitizers work as well there, and the suite runs 5x faster than at -O0.
    options+=(-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized)
    # verify_asan_link_order=0: the Vulkan tests preload lavapipe (tests/meson.build says why).
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:verify_asan_link_order=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    # intercept_tls_get_addr=0: with many PoCL kernel libraries loaded from its
    # cache, LeakSanitizer's own tracer crashes at exit while walking their
    # dynamic TLS ("Tracer caught signal 11", google/sanitizers#1322, #1353).
    export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:intercept_tls_get_addr=0
fi

scripts/setup.sh "$build_dir" "${options[@]}"
meson test -C "$build_dir" --print-errorlogs --num-processes 2 ${MESON_TEST_ARGS:-}
