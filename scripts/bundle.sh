#!/usr/bin/env bash
# bundle.sh - packs the built sarbp with the shared libraries it needs that
# a bare machine may lack, so it runs on a GPU node that has the NVIDIA
# driver but no development packages. Never bundles the C library (glibc
# must match the node's loader) nor the driver (libcuda, libnvidia-*).
set -euo pipefail

usage() {
    cat <<'EOF'
usage: scripts/bundle.sh [-o DIR] [--sarbp PATH] [-h|--help]

Copies sarbp and the shared libraries it loads (from ldd: FFTW, HDF5, matio,
libpng, the CUDA runtime and cuFFT when built with CUDA, libstdc++/libgcc_s
and their own dependencies) into DIR/lib, and writes the launcher DIR/sarbp,
which sets LD_LIBRARY_PATH to DIR/lib and runs the real binary. Copy DIR to
the target machine and run DIR/sarbp there (it may be symlinked onto PATH).

Build with -DSARBP_NATIVE=OFF for a bundle that runs on other CPUs (the
default build tunes for this machine's CPU with -march=native; the script
warns). Left out: glibc's libraries (libc, libm, libpthread, libdl, librt, ld-linux,
...), which must come from the target system, and the NVIDIA driver
(libcuda.so, libnvidia-*), which must match the node's kernel module.

  -o, --output DIR   bundle folder (default: bundle/ at the repository root);
                     its previous contents are replaced
      --sarbp PATH   the executable to bundle (default: build/sarbp)
  -h, --help         show this help

exit codes: 0 bundle written and checked, 1 failure, 2 usage error.
EOF
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$root/bundle
exe=${SARBP_BUILD_DIR:-$root/build}/sarbp

die() { echo "bundle.sh: $*" >&2; exit 1; }
usage_error() {
    echo "bundle.sh: $*" >&2
    echo "Try 'scripts/bundle.sh --help' for more information." >&2
    exit 2
}

while [[ $# -gt 0 ]]; do
    case "$1" in
    -o | --output) [[ $# -ge 2 ]] || usage_error "$1 needs a folder"; out=$2; shift ;;
    --sarbp) [[ $# -ge 2 ]] || usage_error "$1 needs a path"; exe=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
    esac
    shift
done

[[ -x $exe ]] || die "no executable at '$exe'; hint: build it with scripts/build.sh"
command -v ldd >/dev/null 2>&1 || die "ldd not found"
cache=$(dirname "$exe")/CMakeCache.txt
if [[ -f $cache ]] && grep -q '^SARBP_NATIVE:BOOL=ON' "$cache"; then
    echo "bundle.sh: warning: '$exe' was built with -march=native for this machine's CPU;" >&2
    echo "hint: for other machines build with 'scripts/build.sh -DSARBP_NATIVE=OFF' first" >&2
fi

# glibc (loaded from the target system, must match its ld.so) and the driver.
skip_re='^(linux-vdso|linux-gate|ld-linux[^ ]*|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libnsl|libutil|libanl|libBrokenLocale|libcuda|libnvidia-[^ ]*)\.so'

ldd_out=$(ldd "$exe") || die "ldd failed on '$exe'"
if grep -q 'not found' <<<"$ldd_out"; then
    grep 'not found' <<<"$ldd_out" >&2
    die "'$exe' needs libraries that are not found here"
fi

out=$(mkdir -p "$out" && cd "$out" && pwd)
[[ $out != / && $out != "$root" ]] || die "refusing to use '$out' as the bundle folder"
rm -rf "${out:?}/lib" "${out:?}/sarbp" "${out:?}/MANIFEST.txt"
mkdir -p "$out/lib"
cp -L "$exe" "$out/lib/sarbp"

manifest=$out/MANIFEST.txt
{
    echo "sarbp bundle made $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
    echo "binary: $("$exe" --version 2>/dev/null || echo unknown)"
    echo "libraries (soname <- source):"
} >"$manifest"

n=0
# Lines look like "libfoo.so.1 => /usr/lib/.../libfoo.so.1 (0x...)".
while read -r name arrow path _; do
    [[ $arrow == "=>" && $path == /* ]] || continue
    if [[ $name =~ $skip_re ]]; then
        continue
    fi
    cp -L "$path" "$out/lib/$name"
    echo "  $name <- $path" >>"$manifest"
    n=$((n + 1))
done <<<"$ldd_out"

cat >"$out/sarbp" <<'EOF'
#!/bin/sh
# Launcher of a bundled sarbp (scripts/bundle.sh): the libraries beside it
# first, then the system's (glibc, the NVIDIA driver).
here=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec "$here/lib/sarbp" "$@"
EOF
chmod +x "$out/sarbp" "$out/lib/sarbp"

# Check: with only the bundle on the library path, everything resolves.
check=$(env LD_LIBRARY_PATH="$out/lib" ldd "$out/lib/sarbp")
if grep -q 'not found' <<<"$check"; then
    grep 'not found' <<<"$check" >&2
    die "the bundled binary does not resolve all of its libraries"
fi
"$out/sarbp" --version >/dev/null || die "the bundled sarbp does not run"

size=$(du -sh "$out" | cut -f1)
echo "bundle.sh: $out: sarbp + $n libraries ($size); run $out/sarbp"
