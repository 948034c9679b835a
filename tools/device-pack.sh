#!/usr/bin/env bash
# device-pack.sh - packs a CUDA build for a lent GPU machine that has the
# NVIDIA driver and the CUDA toolkit but none of the distribution's packages
# (see tools/device-run.sh, which unpacks and runs it there).
set -euo pipefail

usage() {
    cat <<'EOF'
usage: tools/device-pack.sh [--before BUILD_DIR] [-h|--help]

Writes .devlibs/ at the repository root (ignored by git):
  build.tar.zst  build/sarbp, every test program, the CTest files and
                 CMakeCache.txt (where the sources were)
  lib.tar.zst    lib/: the shared libraries they load that a bare machine
                 lacks (from ldd), except glibc, the NVIDIA driver, cuFFT
                 (the toolkit there has it) and Open MPI (lib-mpi/, used
                 there only when the machine has no Open MPI of its own)
  bin/zstd       to unpack them there (its own libraries in bin/lib/)
  shared/data/   the Gotcha files and the bad inputs from ../shared/data
  before/sarbp   with --before DIR: the sarbp of an earlier build (DIR/sarbp),
                 for tools/gpu-checks.sh before
Build first (scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 for an H100/H200),
then name .devlibs in the device call's carry and run tools/device-run.sh.

exit codes: 0 packed, 1 failure, 2 usage error.
EOF
}
before=
while [[ $# -gt 0 ]]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --before) [[ $# -ge 2 ]] || { echo "device-pack.sh: --before needs a build folder" >&2; exit 2; }
        before=$2; shift ;;
    *) echo "device-pack.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SARBP_BUILD_DIR:-$root/build}
out=$root/.devlibs
die() { echo "device-pack.sh: $*" >&2; exit 1; }

[[ -x $build/sarbp ]] || die "no build at '$build'; hint: scripts/build.sh first"
rm -rf "$out"
mkdir -p "$out/lib" "$out/lib-mpi" "$out/bin/lib" "$out/shared/data"

skip_re='^(linux-vdso|ld-linux[^ ]*|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libcuda|libnvidia-[^ ]*|libcufft)\.so'
mpi_re='^(libmpi|libopen-rte|libopen-pal|libhwloc|libevent[^ ]*)\.so'
for exe in "$build/sarbp" "$build"/tests/test_mpi /usr/bin/zstd; do
    while read -r name arrow path _; do
        [[ $arrow == "=>" && $path == /* ]] || continue
        [[ $name =~ $skip_re ]] && continue
        if [[ $name =~ $mpi_re ]]; then
            cp -Ln "$path" "$out/lib-mpi/$name"
        else
            cp -Ln "$path" "$out/lib/$name"
        fi
    done < <(ldd "$exe")
done
cp -L /usr/bin/zstd "$out/bin/zstd"
while read -r name arrow path _; do
    [[ $arrow == "=>" && $path == /* && ! $name =~ $skip_re ]] && cp -L "$path" "$out/bin/lib/$name"
done < <(ldd /usr/bin/zstd)
(cd "$out" && tar cf - lib lib-mpi | zstd -q -T0 -15 -o lib.tar.zst && rm -rf lib lib-mpi)

(cd "$build" && tar cf - sarbp tests/test_* CTestTestfile.cmake tests/CTestTestfile.cmake CMakeCache.txt) |
    zstd -q -T0 --long=27 -15 -o "$out/build.tar.zst"
if [[ -n $before ]]; then
    [[ -x $before/sarbp ]] || die "no sarbp in '$before'"
    mkdir -p "$out/before" && cp -L "$before/sarbp" "$out/before/sarbp"
fi
cp -r "$root/../shared/data/gotcha" "$root/../shared/data/bad-inputs" "$out/shared/data/"
echo "device-pack.sh: $(du -sh "$out" | cut -f1) in $out"
