#!/usr/bin/env bash
# build.sh - configures and builds sarbp (Release) into build/ with all cores.
# Extra arguments go to the cmake configure step unchanged.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: scripts/build.sh [-h|--help] [CMAKE_ARG...]

Configures sarbp with CMake (Release unless a CMAKE_BUILD_TYPE is given) and
builds it with one job per core. The build directory is build/ at the
repository root, or $SARBP_BUILD_DIR. Every argument is passed to the
configure step, for example:

  scripts/build.sh -DSARBP_CUDA=OFF          # CPU back end only
  scripts/build.sh -DSARBP_SANITIZE=ON       # address/undefined sanitizers
  scripts/build.sh -DCMAKE_BUILD_TYPE=Debug

The executable is build/sarbp. Does not install dependencies
(scripts/install-deps.sh does).

exit codes: 0 built, otherwise cmake's failure status.
EOF
}

for a in "$@"; do
    case "$a" in
    -h | --help) usage; exit 0 ;;
    esac
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${SARBP_BUILD_DIR:-$root/build}
jobs=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)

build_type=(-DCMAKE_BUILD_TYPE=Release)
for a in "$@"; do
    case "$a" in
    -DCMAKE_BUILD_TYPE=* | -DCMAKE_BUILD_TYPE:*=*) build_type=() ;;
    esac
done

cmake -S "$root" -B "$build_dir" ${build_type[@]+"${build_type[@]}"} "$@"
cmake --build "$build_dir" --parallel "$jobs"
echo "build.sh: built $build_dir/sarbp"
