#!/usr/bin/env bash
# Runs the libFuzzer targets (README.md here), each on its seed corpus and
# the inputs found before (regressions/) plus fresh mutations:
#   tests/fuzz/run.sh [SECONDS] [TARGET...]
# SECONDS per target (default 60); targets: xyz model_file neurochem tuning
# api_cpu api_opencl (default: all). Builds them first in $FUZZ_BUILD_DIR
# (default build-fuzz: clang, ASan and UBSan, -Dfuzz=true). A crash,
# sanitizer report, leak, hang (-timeout) or out-of-memory (-rss_limit_mb)
# fails the run; the input is kept in $FUZZ_BUILD_DIR/fuzz-findings/ and
# printed in base64. FUZZ_RUNS=N runs N inputs a target instead of for
# SECONDS (the long campaigns of README.md). FUZZ_JOBS targets run at once
# (default 2: libFuzzer runs one thread, PoCL's device as run here one too,
# so two fill CI's two cores and each target still gets its SECONDS of
# one core; 1 for the long campaigns' timings).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(xyz model_file neurochem tuning api_cpu api_opencl)
build=${FUZZ_BUILD_DIR:-build-fuzz}

# libFuzzer needs clang; Debian's clang is clang 14.
cc=${CC:-clang}
case "$($cc --version 2>/dev/null | head -1)" in
*clang*) ;;
*) echo "fuzz: $cc is not clang (CC=clang tests/fuzz/run.sh)" >&2; exit 2 ;;
esac
# CI must fuzz the OpenCL target too (on PoCL), never silently skip it.
opencl=auto
[ "${CI:-}" = true ] && opencl=enabled
if [ ! -f "$build/build.ninja" ]; then
    CC=$cc meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
        -Dbuildtype=debugoptimized -Dopencl=$opencl -Dvulkan=disabled -Dwerror=true \
        -Dtest_cache_dir="$root/build-test-cache" >&2
fi
# A build folder from before a target was added learns of it here.
ninja -C "$build" build.ninja >&2
exes=()
built=()
for t in "${targets[@]}"; do
    if grep -q "tests/fuzz/fuzz_$t:" "$build/build.ninja"; then
        exes+=("tests/fuzz/fuzz_$t")
        built+=("$t")
    elif [ "${CI:-}" = true ]; then
        echo "fuzz: no target $t in $build (no OpenCL?)" >&2
        exit 1
    else
        echo "fuzz $t: skipped (not built: no OpenCL?)"
    fi
done
targets=("${built[@]}")
ninja -C "$build" "${exes[@]}" data/ani-2x.mlff >&2

findings=$build/fuzz-findings
mkdir -p "$findings"
cache=$root/build-test-cache
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# PoCL and the LLVM it compiles with keep memory for good (tests/lsan.supp);
# intercept_tls_get_addr=0: tests/meson.build says why.
export LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:intercept_tls_get_addr=0
# PoCL as the api_opencl target's corpus test runs it (tests/meson.build,
# opencl_unoptimized_env): its caches then hold the corpus's kernels.
export POCL_CACHE_DIR=$cache/pocl-cache-unoptimized MLFF_CACHE_DIR=$cache/kernel-cache-unoptimized \
    POCL_DEVICES=basic POCL_EXTRA_BUILD_FLAGS=-cl-opt-disable

# One target: its line of the summary in $findings/$t.summary, its exit
# status (0, or 1 for a failure) in $findings/$t.status.
run_target() {
    local t=$1 inputs opts work log start status stats f
    case $t in
    xyz) inputs=xyz; opts=(-max_len=4096 -timeout=10 -rss_limit_mb=2048) ;;
    model_file) inputs=model_file; opts=(-max_len=70000 -timeout=30 -rss_limit_mb=2048) ;;
    neurochem) inputs=neurochem; opts=(-max_len=16384 -timeout=30 -rss_limit_mb=2048) ;;
    tuning) inputs=tuning; opts=(-max_len=2048 -timeout=10 -rss_limit_mb=2048) ;;
    # The CPU's budget is 2 GiB at most (backends/common/memory_limits.h),
    # ANI-2x's plans and ASan's quarantine come on top.
    api_cpu) inputs=api; opts=(-max_len=512 -timeout=60 -rss_limit_mb=3584) ;;
    api_opencl) inputs=api; opts=(-max_len=512 -timeout=120 -rss_limit_mb=3584) ;;
    *) echo "fuzz: no target $t"; return 2 ;;
    esac
    # A copy: what the run adds to its corpus stays out of the repository.
    work=$(mktemp -d)
    for f in "tests/fuzz/corpus/$inputs"/* "tests/fuzz/regressions/$inputs"/*; do
        if [ -f "$f" ]; then cp "$f" "$work/"; fi
    done
    if [ -n "${FUZZ_RUNS:-}" ]; then
        opts+=(-runs="$FUZZ_RUNS")
    else
        opts+=(-max_total_time="$seconds")
    fi
    log=$findings/$t.log
    start=$(date +%s)
    status=0
    "$build/tests/fuzz/fuzz_$t" "${opts[@]}" -dict="tests/fuzz/dict/$inputs.dict" -print_final_stats=1 -error_exitcode=86 -timeout_exitcode=87 \
        -artifact_prefix="$findings/$t-" "$work" >"$log" 2>&1 || status=$?
    rm -rf "$work"
    stats=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)
    if [ "$status" = 77 ] && [ "${CI:-}" != true ]; then
        echo "fuzz $t: skipped (no device)"
        return 0
    fi
    if [ "$status" != 0 ]; then
        echo "fuzz $t: FAILED (exit $status) after $(($(date +%s) - start)) s; the last of $log:"
        grep -E 'FUZZ FINDING|ERROR|runtime error|SUMMARY|^    #[0-9]+ ' "$log" | grep -v 'in fuzzer::' | head -30 || true
        for f in "$findings/$t"-*; do
            [ -f "$f" ] || continue
            case $f in *.log | *.summary | *.status) continue ;; esac
            echo "input $f (base64): $(base64 -w0 "$f")"
        done
        return 1
    fi
    echo "fuzz $t: ok in $(($(date +%s) - start)) s: ${stats:-see $log}"
}

jobs=${FUZZ_JOBS:-2}
running=0
for t in "${targets[@]}"; do
    if ((running >= jobs)); then
        wait -n || true
        running=$((running - 1))
    fi
    rm -f "$findings/$t.status"
    { status=0; run_target "$t" >"$findings/$t.summary" 2>&1 || status=$?; echo "$status" >"$findings/$t.status"; } &
    running=$((running + 1))
done
wait
# The summaries in the order of the targets, whichever finished first.
failed=0
for t in "${targets[@]}"; do
    cat "$findings/$t.summary"
    [ "$(cat "$findings/$t.status" 2>/dev/null)" = 0 ] || failed=1
done
exit $failed
