#!/usr/bin/env bash
# install-deps.sh - installs the distribution packages sarbp needs to build
# and test, and only those that are missing (Debian/Ubuntu, apt-get).
#
# Idempotent: when everything is installed it changes nothing and needs no
# root. Uses sudo only when not root. Does not install CUDA: the build finds
# nvcc by itself when the toolkit is there, and builds the CPU back end alone
# when it is not.
set -euo pipefail

# clang, its sanitizer and libFuzzer runtimes (libclang-rt-dev) and llvm
# (llvm-symbolizer for readable sanitizer stacks) serve the sanitizer build
# and the fuzzing in scripts/test.sh; time (/usr/bin/time) is used by
# scripts/fuzz.sh to measure the CLI's memory on a finding. Open MPI
# (libopenmpi-dev, openmpi-bin: mpicc's headers and libraries, mpiexec) builds
# and tests 'mpirun sarbp form' and 'sarbp batch' across ranks (-DSARBP_MPI).
# libxml2 (the XML of CPHD and SICD), libtiff and libgeotiff (GeoTIFF quick
# looks) are optional for the build: without them those formats are off and
# their tests skip. gdal-bin (gdalinfo, gdal_translate, ogrinfo) is for the
# tests only: GDAL reads back sarbp's SICD, GeoTIFF and KMZ
# (tests/test_geo_outputs.c skips those checks without it). python3-dev and
# python3-venv build the Python package (pip install src/python: Python.h, a
# venv to install it in; docs/python.md) and run its tests (test_python).
PACKAGES=(build-essential cmake pkg-config libfftw3-dev libhdf5-dev libpng-dev
          libcmocka-dev libmatio-dev zlib1g-dev clang llvm libclang-rt-dev time
          libopenmpi-dev openmpi-bin libxml2-dev libtiff-dev libgeotiff-dev
          gdal-bin python3-dev python3-venv)

usage() {
    cat <<EOF
usage: scripts/install-deps.sh [-n|--dry-run] [-h|--help]

Installs what sarbp needs to build and test, with apt-get, only when missing:
  ${PACKAGES[*]}
Runs 'apt-get update' first when something has to be installed. Uses sudo
when not run as root. The CUDA toolkit is not installed: the build uses it
when /usr/local/cuda (or nvcc on PATH) is there.

  -n, --dry-run   say what is missing and would be installed; change nothing
  -h, --help      show this help

On systems without apt-get it checks for cmake, pkg-config, a C compiler
and the pkg-config modules fftw3 fftw3f hdf5 libpng cmocka matio, and says
what is missing.

exit codes: 0 everything installed (or nothing missing), 1 failure, 2 usage error.
EOF
}

dry_run=0
while [[ $# -gt 0 ]]; do
    case "$1" in
    -n | --dry-run) dry_run=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$1'" >&2
       echo "Try 'scripts/install-deps.sh --help' for more information." >&2
       exit 2 ;;
    esac
    shift
done

is_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
    # Not Debian-like: check what the build needs and say what is missing.
    missing=()
    for tool in cmake pkg-config cc clang llvm-symbolizer; do
        command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
    done
    if command -v pkg-config >/dev/null 2>&1; then
        for mod in fftw3 fftw3f libpng cmocka matio; do
            pkg-config --exists "$mod" || missing+=("$mod (pkg-config)")
        done
    fi
    if [[ ${#missing[@]} -gt 0 ]]; then
        echo "install-deps.sh: no apt-get here; install these with your package manager:" >&2
        printf '  %s\n' "${missing[@]}" "HDF5 C library and headers" >&2
        exit 1
    fi
    echo "install-deps.sh: no apt-get here; build tools and libraries look present" >&2
    exit 0
fi

missing=()
for p in "${PACKAGES[@]}"; do
    is_installed "$p" || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-deps.sh: all build dependencies are installed"
    exit 0
fi

echo "install-deps.sh: installing ${missing[*]}"
if [[ $dry_run -eq 1 ]]; then
    exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install-deps.sh: not root and no sudo: install ${missing[*]} as root" >&2
        exit 1
    fi
    SUDO=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends "${missing[@]}"

for p in "${missing[@]}"; do
    if ! is_installed "$p"; then
        echo "install-deps.sh: '$p' is still not installed" >&2
        exit 1
    fi
done
echo "install-deps.sh: done"
