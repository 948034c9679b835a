#!/usr/bin/env bash
# test_install.sh - installs a sarbp build into a temporary prefix and builds
# tests/install/consumer.c against it four times, the ways a user would: with
# 'pkg-config --cflags --libs --static sarbp' (libsarbp is a static
# library) and as a CMake project doing find_package(sarbp); then against the
# CPU-only library, with 'pkg-config ... sarbp-cpu' and with
# find_package(sarbp COMPONENTS cpu) where CMake can find neither CUDA nor
# MPI; those two programs must not depend on cudart, cuFFT or MPI. Every
# program must link and run. The prefix is moved after installing, so the
# package files must find it from where they lie. Run by CTest (test_install).
#
# usage: test_install.sh BUILD_DIR VERSION LIBDIR CMAKE CC [FLAGS]
#   LIBDIR  CMAKE_INSTALL_LIBDIR (lib, lib64, lib/x86_64-linux-gnu)
#   FLAGS   extra compile and link flags (the sanitizer build's)
# exit codes: 0 pass, 1 fail, 77 skipped (no pkg-config or no C compiler).
set -euo pipefail

if [[ $# -lt 5 ]]; then
    echo "usage: test_install.sh BUILD_DIR VERSION LIBDIR CMAKE CC [FLAGS]" >&2
    exit 2
fi
build=$1 version=$2 libdir=$3 cmake=$4 cc=$5
read -r -a flags <<<"${6:-}"

if ! command -v pkg-config >/dev/null 2>&1; then
    echo "test_install: skipped: no pkg-config (scripts/install-deps.sh installs it)"
    exit 77
fi
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "test_install: skipped: no C compiler '$cc'"
    exit 77
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarbp-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "test_install: FAIL: $*" >&2
    exit 1
}
# Runs a step quietly; on failure shows its output.
step() {
    local name=$1
    shift
    if ! "$@" >"$tmp/$name.log" 2>&1; then
        cat "$tmp/$name.log" >&2
        fail "$name: '$*' failed"
    fi
}

step install "$cmake" --install "$build" --prefix "$tmp/staged"
mv "$tmp/staged" "$tmp/prefix"
prefix=$tmp/prefix
for f in "$libdir/libsarbp.a" "$libdir/libsarbp_cpu.a" include/sarbp/sarbp.h include/sarbp/version.h \
         include/sarbp/form.h "$libdir/cmake/sarbp/sarbpConfig.cmake" \
         "$libdir/cmake/sarbp/sarbpConfigVersion.cmake" \
         "$libdir/cmake/sarbp/sarbpTargets.cmake" "$libdir/pkgconfig/sarbp.pc" \
         "$libdir/pkgconfig/sarbp-cpu.pc" bin/sarbp; do
    [[ -f $prefix/$f ]] || fail "not installed: $f"
done
cli_version=$("$prefix/bin/sarbp" --version) || fail "the installed sarbp --version failed"
[[ $cli_version == "sarbp $version "* ]] ||
    fail "the installed sarbp says '$cli_version', expected version '$version'"
if grep -q '@[A-Za-z_]*@' "$prefix/include/sarbp/version.h" "$prefix/$libdir/pkgconfig/sarbp.pc" \
        "$prefix/$libdir/pkgconfig/sarbp-cpu.pc"; then
    fail "an unsubstituted @VAR@ in version.h, sarbp.pc or sarbp-cpu.pc"
fi

# 1. pkg-config
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pc_version=$(pkg-config --modversion sarbp) || fail "pkg-config cannot read sarbp.pc"
[[ $pc_version == "$version" ]] || fail "sarbp.pc says version '$pc_version', expected '$version'"
read -r -a pc_flags <<<"$(pkg-config --cflags --libs --static sarbp)" ||
    fail "pkg-config --cflags --libs --static sarbp failed"
pc_include=$(pkg-config --variable=includedir sarbp)
[[ $(cd "$pc_include" && pwd -P) == $(cd "$prefix/include" && pwd -P) ]] ||
    fail "sarbp.pc's includedir '$pc_include' is not the prefix's"
step pkgconfig-build "$cc" -std=c11 "${flags[@]}" "$here/consumer.c" -o "$tmp/consumer_pc" \
    "${pc_flags[@]}"
"$tmp/consumer_pc" "$version" || fail "the pkg-config program failed"

# 2. find_package(sarbp), with the version the build has (EXACT)
step cmake-configure "$cmake" -S "$here" -B "$tmp/consumer" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${flags[*]}" \
    -DCMAKE_EXE_LINKER_FLAGS="${flags[*]}" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
    -DSARBP_EXPECT_VERSION="$version"
found=$(sed -n 's/^sarbp_DIR:PATH=//p' "$tmp/consumer/CMakeCache.txt")
[[ $found == "$prefix/$libdir/cmake/sarbp" ]] ||
    fail "find_package(sarbp) found '$found', not the installed prefix"
step cmake-build "$cmake" --build "$tmp/consumer"
"$tmp/consumer/consumer" "$version" || fail "the find_package(sarbp) program failed"

# The CPU-only library: no CUDA, cuFFT or MPI on the link line, none among
# the program's shared libraries (readelf, where there is one, reads them).
gpu_mpi='cudart|cufft|libmpi|-lmpi|ompi|nvidia|/cuda'
no_gpu_mpi() {
    local prog=$1 what=$2
    if command -v readelf >/dev/null 2>&1; then
        local needed
        needed=$(readelf -d "$prog" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
        if grep -Eq "$gpu_mpi" <<<"$needed"; then
            fail "$what needs $(grep -E "$gpu_mpi" <<<"$needed" | tr '\n' ' ')"
        fi
    fi
}
# 3. pkg-config sarbp-cpu
cpu_pc=$(pkg-config --cflags --libs --static sarbp-cpu) ||
    fail "pkg-config --cflags --libs --static sarbp-cpu failed"
if grep -Eq "$gpu_mpi" <<<"$cpu_pc"; then
    fail "sarbp-cpu.pc names CUDA or MPI: $cpu_pc"
fi
read -r -a cpu_flags <<<"$cpu_pc"
step pkgconfig-cpu-build "$cc" -std=c11 "${flags[@]}" "$here/consumer.c" -o "$tmp/consumer_cpu_pc" \
    "${cpu_flags[@]}"
no_gpu_mpi "$tmp/consumer_cpu_pc" "the sarbp-cpu.pc program"
"$tmp/consumer_cpu_pc" "$version" || fail "the sarbp-cpu.pc program failed"

# 4. find_package(sarbp COMPONENTS cpu), CUDA and MPI unfindable
step cmake-cpu-configure "$cmake" -S "$here" -B "$tmp/consumer_cpu" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${flags[*]}" \
    -DCMAKE_EXE_LINKER_FLAGS="${flags[*]}" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
    -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON \
    -DSARBP_EXPECT_VERSION="$version" -DSARBP_CONSUMER_CPU=ON
step cmake-cpu-build "$cmake" --build "$tmp/consumer_cpu"
no_gpu_mpi "$tmp/consumer_cpu/consumer" "the find_package(sarbp COMPONENTS cpu) program"
"$tmp/consumer_cpu/consumer" "$version" || fail "the find_package(sarbp COMPONENTS cpu) program failed"

echo "test_install: pass: installed into a temporary prefix; pkg-config and find_package(sarbp)" \
     "programs built and ran, with sarbp and with the CPU-only sarbp-cpu / sarbp::sarbp_cpu"
