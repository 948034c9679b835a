#!/usr/bin/env bash
# test.sh - the one test command (README, CI): installs missing
# dependencies, builds (Release, build/), runs every CTest test. GPU tests
# (label gpu) run only when a GPU answers 'nvidia-smi -L'; tests whose data
# are absent (the Gotcha files) skip themselves. Exit status is ctest's.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: scripts/test.sh [-h|--help] [--no-deps] [CTEST_ARG...]

Installs what is missing (scripts/install-deps.sh), builds sarbp
(scripts/build.sh, into build/ or $SARBP_BUILD_DIR), then runs

  ctest --test-dir build --output-on-failure -LE gpu

or every test, the gpu label included, when 'nvidia-smi -L' lists a GPU.
Further arguments go to ctest, e.g. 'scripts/test.sh -R regression' or
'-L unit'. Labels: unit, slow (the Gotcha data and the batch script), gpu.
Tests run one at a time unless CTEST_PARALLEL_LEVEL is set. Extra cmake
configure arguments can be given in $SARBP_CMAKE_ARGS.

  --no-deps    skip the dependency check (no apt-get)
  -h, --help   show this help

exit codes: ctest's (0 when every test passed or skipped).
EOF
}

deps=1
ctest_args=()
for a in "$@"; do
    case "$a" in
    -h | --help) usage; exit 0 ;;
    --no-deps) deps=0 ;;
    *) ctest_args+=("$a") ;;
    esac
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${SARBP_BUILD_DIR:-$root/build}
export SARBP_BUILD_DIR=$build_dir
start=$(date +%s)

if [[ $deps -eq 1 ]]; then
    "$root/scripts/install-deps.sh"
fi
# shellcheck disable=SC2086 # SARBP_CMAKE_ARGS is a list of words on purpose
"$root/scripts/build.sh" ${SARBP_CMAKE_ARGS:-}

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "test.sh: GPU found: running the gpu tests too"
    labels=()
else
    echo "test.sh: no GPU (nvidia-smi -L): skipping the gpu label"
    labels=(-LE gpu)
fi

log="$build_dir/ctest.log"
set +e
ctest --test-dir "$build_dir" --output-on-failure ${labels[@]+"${labels[@]}"} ${ctest_args[@]+"${ctest_args[@]}"} 2>&1 |
    tee "$log"
rc=${PIPESTATUS[0]}
set -e

summary=$(grep -E '^[0-9]+% tests passed' "$log" | tail -n 1 || true)
echo "test.sh: ${summary:-ctest printed no summary}; ctest exit status $rc;" \
    "$(( $(date +%s) - start )) s in all (deps, build, tests); log in $log"
exit "$rc"
