#!/usr/bin/env bash
# test.sh - the one test command (README, CI). In order, each part timed:
#   deps      install missing dependencies (scripts/install-deps.sh)
#   release   build (Release, build/) and run every CTest test; the gpu
#             label only when a GPU answers 'nvidia-smi -L'
#   sanitize  clang AddressSanitizer + UndefinedBehaviorSanitizer build
#             (build-asan/, float-cast-overflow, no recovery) of the CPU
#             suite, the CLI bad-input tests included, and its run
#   fuzz      each libFuzzer harness for a short time (scripts/fuzz.sh)
# Every part runs even when an earlier test part failed; the exit status
# says whether all passed.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: scripts/test.sh [-h|--help] [--no-deps] [--no-sanitize] [--no-fuzz]
                       [--fuzz-time SEC] [--fuzz-seed N] [CTEST_ARG...]

What CI runs (no options): installs what is missing
(scripts/install-deps.sh), then
  release   builds sarbp (scripts/build.sh, into build/ or $SARBP_BUILD_DIR)
            and runs  ctest --test-dir build --output-on-failure -LE gpu
            or every test, the gpu label included, when 'nvidia-smi -L'
            lists a GPU;
  sanitize  builds the CPU code and tests with clang and
            -fsanitize=address,undefined,float-cast-overflow
            -fno-sanitize-recover=all (build-asan/, CUDA off) and runs
            ctest -LE gpu there: any sanitizer report fails the test that
            made it (leaks too, but those listed in tests/lsan.supp);
  fuzz      scripts/fuzz.sh --time SEC: every libFuzzer harness (readers,
            number parsers) for SEC seconds (default 60) from its seed
            corpus, with a fixed random seed (--fuzz-seed, default 1) so
            that every CI run tries the same inputs (long runs with new
            seeds are scripts/fuzz.sh's job); fails on a finding that is sarbp's or an upstream
            crash the CLI does not contain (see scripts/fuzz.sh --help).
Each part's time and result are printed at the end.

Further arguments go to both ctest runs, e.g. 'scripts/test.sh -R regression'
or '-L unit'. Labels: unit, slow (the Gotcha data and the batch script), gpu.
Tests run one at a time unless CTEST_PARALLEL_LEVEL is set. Extra cmake
configure arguments for the release build can be given in $SARBP_CMAKE_ARGS.

  --no-deps         skip the dependency check (no apt-get)
  --no-sanitize     skip the sanitizer build and run
  --no-fuzz         skip the fuzzing
  --fuzz-time SEC   seconds per fuzz harness (default 60)
  --fuzz-seed N     libFuzzer's seed for the fuzz part (default 1)
  -h, --help        show this help

A quick local run: scripts/test.sh --no-deps --no-sanitize --no-fuzz

exit codes: 0 every part passed (tests passed or skipped); 1 a part failed
(the summary says which); 2 usage error.
EOF
}

# the value $2 of option $1 (what $3 names), a whole number > 0; else exit 2
positive() {
    if [[ ! $2 =~ ^[0-9]+$ || $2 -eq 0 ]]; then
        echo "test.sh: $1 needs $3 > 0" >&2
        echo "Try 'scripts/test.sh --help' for more information." >&2
        exit 2
    fi
    echo "$2"
}

deps=1 sanitize=1 fuzz=1 fuzz_time=60 fuzz_seed=1
ctest_args=()
while [[ $# -gt 0 ]]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --no-deps) deps=0 ;;
    --no-sanitize) sanitize=0 ;;
    --no-fuzz) fuzz=0 ;;
    --fuzz-time) fuzz_time=$(positive "$1" "${2:-}" seconds) || exit 2; shift ;;
    --fuzz-seed) fuzz_seed=$(positive "$1" "${2:-}" "a number") || exit 2; shift ;;
    *) ctest_args+=("$1") ;;
    esac
    shift
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${SARBP_BUILD_DIR:-$root/build}
asan_dir=$root/build-asan
export SARBP_BUILD_DIR=$build_dir
jobs=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
start=$(date +%s)
summary=()
failed=0

# part NAME SECONDS STATUS DETAIL: records one line of the summary.
part() {
    local s
    s=$(printf '  %-9s %5d s  %-7s %s' "$1" "$2" "$3" "$4")
    summary+=("$s")
    echo "test.sh: part $1: $3 after $2 s${4:+ ($4)}"
    [[ $3 == passed || $3 == skipped ]] || failed=1
}

# run_ctest DIR LOG ARG...: runs ctest, tees the log, prints its summary
# line into $ctest_line and returns ctest's status.
run_ctest() {
    local dir=$1 log=$2 rc
    shift 2
    set +e
    ctest --test-dir "$dir" --output-on-failure "$@" ${ctest_args[@]+"${ctest_args[@]}"} 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    ctest_line=$(grep -E '^[0-9]+% tests passed' "$log" | tail -n 1 || true)
    return "$rc"
}

# ---- deps ------------------------------------------------------------------
if [[ $deps -eq 1 ]]; then
    t=$(date +%s)
    if "$root/scripts/install-deps.sh"; then
        part deps $(( $(date +%s) - t )) passed ""
    else
        part deps $(( $(date +%s) - t )) FAILED "scripts/install-deps.sh"
        printf '%s\n' "test.sh: summary:" "${summary[@]}"
        exit 1
    fi
fi

# ---- release ---------------------------------------------------------------
t=$(date +%s)
# shellcheck disable=SC2086 # SARBP_CMAKE_ARGS is a list of words on purpose
if ! "$root/scripts/build.sh" ${SARBP_CMAKE_ARGS:-}; then
    part release $(( $(date +%s) - t )) FAILED "build"
    printf '%s\n' "test.sh: summary:" "${summary[@]}"
    exit 1
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "test.sh: GPU found: running the gpu tests too"
    labels=()
else
    echo "test.sh: no GPU (nvidia-smi -L): skipping the gpu label"
    labels=(-LE gpu)
fi
if run_ctest "$build_dir" "$build_dir/ctest.log" ${labels[@]+"${labels[@]}"}; then
    part release $(( $(date +%s) - t )) passed "build and ctest: $ctest_line; log $build_dir/ctest.log"
else
    part release $(( $(date +%s) - t )) FAILED "ctest: ${ctest_line:-no summary}; log $build_dir/ctest.log"
fi

# ---- sanitize --------------------------------------------------------------
if [[ $sanitize -eq 1 ]]; then
    t=$(date +%s)
    if ! command -v clang >/dev/null 2>&1; then
        part sanitize $(( $(date +%s) - t )) FAILED "clang not found (scripts/install-deps.sh)"
    elif ! { CC=clang cmake -S "$root" -B "$asan_dir" -DSARBP_SANITIZE=ON -DSARBP_CUDA=OFF \
                 -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
             cmake --build "$asan_dir" --parallel "$jobs"; }; then
        part sanitize $(( $(date +%s) - t )) FAILED "build (build-asan/)"
    elif run_ctest "$asan_dir" "$asan_dir/ctest.log" -LE gpu; then
        part sanitize $(( $(date +%s) - t )) passed "ASan+UBSan ctest: $ctest_line; log $asan_dir/ctest.log"
    else
        part sanitize $(( $(date +%s) - t )) FAILED "ASan+UBSan ctest: ${ctest_line:-no summary}; log $asan_dir/ctest.log"
    fi
fi

# ---- fuzz ------------------------------------------------------------------
if [[ $fuzz -eq 1 ]]; then
    t=$(date +%s)
    if "$root/scripts/fuzz.sh" --time "$fuzz_time" --seed "$fuzz_seed" --cli "$build_dir/sarbp"; then
        part fuzz $(( $(date +%s) - t )) passed "$fuzz_time s per harness; logs in build-fuzz/logs"
    else
        part fuzz $(( $(date +%s) - t )) FAILED "findings: scripts/fuzz.sh's summary above; inputs in build-fuzz/artifacts"
    fi
fi

printf '%s\n' "test.sh: summary ($(( $(date +%s) - start )) s in all):" "${summary[@]}"
exit "$failed"
