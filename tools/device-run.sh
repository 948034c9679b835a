#!/usr/bin/env bash
# device-run.sh - on a lent GPU machine, unpacks what tools/device-pack.sh
# packed and runs the named steps, each step's output to $OUT/<step>.log.
set -uo pipefail

usage() {
    cat <<'EOF'
usage: tools/device-run.sh STEP...   (on the GPU machine, from the repository root)

Places the tree at the paths the build recorded (its CMake source directory
and ../shared beside it)
with symbolic links, unpacks .devlibs/build.tar.zst into build/, sets
LD_LIBRARY_PATH, then runs each STEP, a shell command line, with its output
to $OUT/step-N.log (and the last lines to stdout). Steps go on after a
failure; the exit status is the number of failed steps (at most 100).
Example:
  tools/device-run.sh 'nvidia-smi -L' 'cd build && ctest -L gpu --output-on-failure'
EOF
}
case "${1:-}" in -h | --help | "") usage; exit 0 ;; esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-/tmp/device-out}
mkdir -p "$out"
unzstd() { LD_LIBRARY_PATH="$root/.devlibs/bin/lib" "$root/.devlibs/bin/zstd" -q -d --long=27 -c "$1"; }
mkdir -p "$root/build"
unzstd "$root/.devlibs/build.tar.zst" | tar xf - -C "$root/build"
# The tests were built with absolute paths to the source tree and to
# ../shared beside it: make those paths lead here.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$root/build/CMakeCache.txt")
[[ -n $src ]] || { echo "device-run.sh: no source directory in build/CMakeCache.txt" >&2; exit 100; }
if [[ $(cd "$src" 2>/dev/null && pwd -P) != "$(cd "$root" && pwd -P)" ]]; then
    [[ ! -e $src || -L $src ]] || { echo "device-run.sh: $src exists" >&2; exit 100; }
    mkdir -p "$(dirname "$src")"
    rm -f "$src"
    ln -s "$root" "$src"
fi
shared=$(dirname "$src")/shared
[[ -d $shared/data ]] || { rm -f "$shared"; ln -s "$root/.devlibs/shared" "$shared"; }
mkdir -p "$root/build/tests/tmp"
[[ -d $root/.devlibs/lib ]] || unzstd "$root/.devlibs/lib.tar.zst" | tar xf - -C "$root/.devlibs"

cuda_lib=
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [[ -e $d/libcufft.so.12 ]] && { cuda_lib=$d; break; }
done
[[ -n $cuda_lib ]] || cuda_lib=$(dirname "$(find / -name 'libcufft.so.12' -print -quit 2>/dev/null)")
mpi_lib=
ldconfig -p | grep -q 'libmpi.so.40' || mpi_lib=":$root/.devlibs/lib-mpi"
export LD_LIBRARY_PATH="$root/.devlibs/lib:$cuda_lib$mpi_lib"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH="$root/build:$PATH"
echo "device-run.sh: cuFFT from $cuda_lib; MPI ${mpi_lib:+carried}${mpi_lib:-from the system}"

failed=0
n=0
for step in "$@"; do
    n=$((n + 1))
    log=$out/step-$n.log
    t0=$(date +%s%N)
    (cd "$root" && bash -c "$step") >"$log" 2>&1
    rc=$?
    t1=$(date +%s%N)
    printf '=== step %d rc=%d %d.%03d s: %s\n' "$n" "$rc" $(((t1 - t0) / 1000000000)) \
        $((((t1 - t0) / 1000000) % 1000)) "$step"
    tail -n "${DEVICE_RUN_TAIL:-15}" "$log"
    [[ $rc -eq 0 ]] || failed=$((failed + 1))
done
exit $((failed > 100 ? 100 : failed))
