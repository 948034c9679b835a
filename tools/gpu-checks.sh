#!/usr/bin/env bash
# gpu-checks.sh - the GPU checks that CI cannot run, by group, on a machine
# with one or two NVIDIA GPUs and a built tree (build/sarbp, the test
# programs). Each figure it prints goes into docs/benchmarks/2026-11-journal.md.
set -uo pipefail

usage() {
    cat <<'EOF'
usage: tools/gpu-checks.sh GROUP...

Groups (each prints what it measured; a failed check makes the exit 1):
  tests     ctest -L gpu (every GPU test program, the CUDA regression rows)
  sanitize  compute-sanitizer memcheck on test_gpu_partition and on banded
            forms (FP32, FP16, mixed; chirp data), racecheck on a small form,
            memcheck and racecheck on an FFBP form
  large     40000 x 40000 from 512 pulses: --gpu-mem 4G (banded) against
            one piece: time, peak RSS, SER between them
  multi     8192 x 8192 from 4096 pulses: --device 0 against --device 0,1
            (time, SER); bench --device all
  mpi       the same image with mpirun -n 2, one GPU a rank, against one
            process on one GPU
  mpi_big   16384 x 16384 from 4096 pulses: mpirun -n 1 and -n 2, and one
            process on both GPUs
  before    the same images from this build and from the build of an earlier
            commit ($BEFORE_SARBP, default .devlibs/before/sarbp): data/*.h5
            and the Gotcha files, FP32 and FP16, at least 150 dB apart
  bench     the (kernel, upsampling, precision) table: bench --backend cuda
  ffbp      fast factorized backprojection on the GPU: test_gpu_ffbp, bench
            --algorithm ffbp over sizes, form bp against ffbp at 4096^2
  ffbp_big  form bp against ffbp, 16384 x 16384 from 16384 pulses
Scratch files go to $GPU_CHECKS_DIR (default /tmp/gpu-checks).
EOF
}
case "${1:-}" in -h | --help | "") usage; exit 0 ;; esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sarbp=${SARBP:-$root/build/sarbp}
tmp=${GPU_CHECKS_DIR:-/tmp/gpu-checks}
mkdir -p "$tmp"
status=0
fail() { echo "gpu-checks: FAILED: $*"; status=1; }

# Runs a command and prints its wall time and peak RSS (of its children).
timed() {
    python3 - "$@" <<'EOF'
import resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.call(sys.argv[1:])
dt = time.monotonic() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
print(f"timed: {dt:.2f} s, peak RSS {rss:.0f} MiB, rc {rc}: {' '.join(sys.argv[1:])}", flush=True)
sys.exit(rc)
EOF
}

# compare TEST REF MIN_DB: the SER of TEST against REF must be at least MIN_DB.
ser_at_least() {
    "$sarbp" compare "$1" "$2" --min-ser "$3" || fail "$1 against $2 below $3 dB"
}

scene() { # scene FILE PULSES [simulate options]
    local f=$1 p=$2
    shift 2
    [[ -f $f ]] || "$sarbp" simulate -o "$f" --pulses "$p" --clutter 200 --seed 7 "$@" -q ||
        fail "simulate $f"
}

g_tests() {
    (cd "$root/build" && ctest -L gpu --output-on-failure --timeout 1500) || fail "ctest -L gpu"
}

g_sanitize() {
    local cs=compute-sanitizer
    command -v $cs >/dev/null || cs=/usr/local/cuda/bin/compute-sanitizer
    scene "$tmp/small.h5" 96 --samples 256
    scene "$tmp/chirp.h5" 96 --domain chirp --samples 1024
    $cs --tool memcheck --leak-check full --error-exitcode 9 "$root/build/tests/test_gpu_partition" ||
        fail "memcheck test_gpu_partition"
    for p in fp32 fp16 mixed; do
        $cs --tool memcheck --error-exitcode 9 "$sarbp" form -i "$tmp/small.h5" --backend cuda \
            --precision $p --grid 900x700 --gpu-mem 40M --pulse-block 40 -o "$tmp/m_$p.h5" -q ||
            fail "memcheck banded form $p"
        $cs --tool memcheck --error-exitcode 9 "$sarbp" form -i "$tmp/chirp.h5" --backend cuda \
            --precision $p --grid 161x161 -o "$tmp/c_$p.h5" -q || fail "memcheck chirp form $p"
        $cs --tool racecheck --error-exitcode 9 "$sarbp" form -i "$tmp/small.h5" --backend cuda \
            --precision $p --grid 300x200 -o "$tmp/r_$p.h5" -q || fail "racecheck form $p"
    done
    # v4 stages the default (quadratic) bins in shared memory
    $cs --tool memcheck --error-exitcode 9 "$sarbp" form -i "$tmp/small.h5" --backend cuda \
        --variant v4 --grid 300x200 -o "$tmp/v4.h5" -q || fail "memcheck v4 quadratic"
    $cs --tool racecheck --error-exitcode 9 "$sarbp" form -i "$tmp/small.h5" --backend cuda \
        --variant v4 --grid 300x200 -o "$tmp/v4.h5" -q || fail "racecheck v4 quadratic"
    $cs --tool memcheck --error-exitcode 9 "$sarbp" form -i "$tmp/small.h5" --backend cuda \
        --algorithm ffbp --grid 301x257 --spacing 0.1 -o "$tmp/f.h5" -q || fail "memcheck ffbp form"
    $cs --tool racecheck --error-exitcode 9 "$sarbp" form -i "$tmp/small.h5" --backend cuda \
        --algorithm ffbp --grid 301x257 --spacing 0.1 -o "$tmp/f.h5" -q || fail "racecheck ffbp form"
    "$sarbp" form -i "$tmp/small.h5" --backend cpu --precision fp64 --grid 900x700 -o "$tmp/m_ref.h5" -q
    ser_at_least "$tmp/m_fp32.h5" "$tmp/m_ref.h5" 70
}

g_large() {
    scene "$tmp/p512.h5" 512
    local grid=(--grid 40000x40000 --spacing 0.1 --backend cuda --precision fp32)
    timed "$sarbp" form -i "$tmp/p512.h5" "${grid[@]}" -o "$tmp/one.npy" -v || fail "large one piece"
    timed "$sarbp" form -i "$tmp/p512.h5" "${grid[@]}" --gpu-mem 4G -o "$tmp/band.npy" -v ||
        fail "large banded"
    ser_at_least "$tmp/band.npy" "$tmp/one.npy" 120
    rm -f "$tmp/one.npy" "$tmp/band.npy"
}

g_multi() {
    scene "$tmp/p4096.h5" 4096
    local grid=(--grid 8192x8192 --spacing 0.05 --backend cuda --precision fp32)
    for r in 1 2 3; do
        timed "$sarbp" form -i "$tmp/p4096.h5" "${grid[@]}" --device 0 -o "$tmp/d0.npy" -v ||
            fail "8192 one device"
        timed "$sarbp" form -i "$tmp/p4096.h5" "${grid[@]}" --device 0,1 -o "$tmp/d01.npy" -v ||
            fail "8192 two devices"
    done
    ser_at_least "$tmp/d01.npy" "$tmp/d0.npy" 120
    "$sarbp" bench --backend cuda --device all --grid 8192x8192 --pulses 4096 --interp cubic:4 \
        --precision fp32 --variant v3 --reps 5 || fail "bench --device all"
}

g_mpi() {
    scene "$tmp/p4096.h5" 4096
    local grid=(--grid 8192x8192 --spacing 0.05 --backend cuda --precision fp32)
    [[ -f $tmp/d0.npy ]] || "$sarbp" form -i "$tmp/p4096.h5" "${grid[@]}" --device 0 -o "$tmp/d0.npy" -q
    for r in 1 2 3; do
        timed mpirun --allow-run-as-root -n 1 "$sarbp" form -i "$tmp/p4096.h5" "${grid[@]}" \
            -o "$tmp/mpi1.npy" -v || fail "mpirun -n 1"
        timed mpirun --allow-run-as-root -n 2 "$sarbp" form -i "$tmp/p4096.h5" "${grid[@]}" \
            -o "$tmp/mpi2.npy" -v || fail "mpirun -n 2"
    done
    ser_at_least "$tmp/mpi2.npy" "$tmp/d0.npy" 120
    cmp "$tmp/mpi1.npy" "$tmp/d0.npy" && echo "mpirun -n 1: bit-identical to one process"
}

g_mpi_big() {
    scene "$tmp/p4096.h5" 4096
    local grid=(--grid 16384x16384 --spacing 0.025 --backend cuda --precision fp32)
    for r in 1 2; do
        timed mpirun --allow-run-as-root -n 1 "$sarbp" form -i "$tmp/p4096.h5" "${grid[@]}" \
            -o "$tmp/big1.npy" -v || fail "big mpirun -n 1"
        timed mpirun --allow-run-as-root -n 2 "$sarbp" form -i "$tmp/p4096.h5" "${grid[@]}" \
            -o "$tmp/big2.npy" -v || fail "big mpirun -n 2"
        timed "$sarbp" form -i "$tmp/p4096.h5" "${grid[@]}" --device 0,1 -o "$tmp/bigd.npy" -v ||
            fail "big two devices"
    done
    ser_at_least "$tmp/big2.npy" "$tmp/big1.npy" 120
    ser_at_least "$tmp/bigd.npy" "$tmp/big1.npy" 120
    rm -f "$tmp"/big*.npy
}

g_before() {
    local old=${BEFORE_SARBP:-$root/.devlibs/before/sarbp} d=$root/data
    [[ -x $old ]] || { fail "no earlier build at $old"; return; }
    local cases=(
        "pt|$d/point_targets.h5|--grid 201x201 --spacing 0.11"
        "cl|$d/clutter.h5|--grid 201x201 --spacing 0.25 --window hamming --az-window hamming"
        "st|$d/stripmap_chirp.h5|--grid 161x161 --spacing 0.125,0.8"
        "go|${SARBP_SHARED_DIR:-$root/../shared}/data/gotcha/pass1/HH|--grid 512x512 --spacing 0.2")
    for c in "${cases[@]}"; do
        IFS='|' read -r name input opts <<<"$c"
        for p in fp32 fp16; do
            # shellcheck disable=SC2086
            "$old" form -q -i "$input" $opts --backend cuda --precision $p -o "$tmp/old_$name$p.h5" &&
                "$sarbp" form -q -i "$input" $opts --backend cuda --precision $p \
                    -o "$tmp/new_$name$p.h5" || { fail "form $name $p"; continue; }
            echo "before/after $name $p:"
            "$sarbp" compare "$tmp/new_$name$p.h5" "$tmp/old_$name$p.h5" --min-ser 150 |
                grep -E '^SER|max' || fail "$name $p: the images differ by more than -150 dB"
        done
    done
}

g_ffbp() {
    "$root/build/tests/test_gpu_ffbp" || fail "test_gpu_ffbp"
    for n in 1024 2048 4096 8192 16384; do
        "$sarbp" bench --backend cuda --algorithm ffbp --grid ${n}x$n --pulses $((n / 2)) \
            --reps 5 || fail "bench ffbp $n"
    done
    "$sarbp" bench --backend cuda --algorithm ffbp --max-error-db -70 --reps 5 ||
        fail "bench ffbp -70 dB"
    scene "$tmp/p2048.h5" 2048
    local grid=(--grid 4096x4096 --spacing 0.025 --backend cuda)
    for a in bp ffbp bp ffbp; do
        timed "$sarbp" form -i "$tmp/p2048.h5" "${grid[@]}" --algorithm $a -o "$tmp/f_$a.npy" -v ||
            fail "form $a"
    done
    ser_at_least "$tmp/f_ffbp.npy" "$tmp/f_bp.npy" 60
}

g_ffbp_big() {
    scene "$tmp/p16384.h5" 16384 --clutter 20
    local grid=(--grid 16384x16384 --spacing 0.00625 --backend cuda)
    for a in ffbp bp; do
        timed "$sarbp" form -i "$tmp/p16384.h5" "${grid[@]}" --algorithm $a -o "$tmp/b_$a.npy" -v ||
            fail "form $a 16384"
    done
    ser_at_least "$tmp/b_ffbp.npy" "$tmp/b_bp.npy" 60
    rm -f "$tmp"/b_*.npy
}

g_bench() {
    "$sarbp" bench --backend cuda --interp quadratic:8,cubic:4 --precision fp32,fp16,mixed \
        --variant v3,v3:16x32:8:-1,v3:16x32:8:12,v4 --reps 7 || fail "bench narrow, defaults"
    "$sarbp" bench --backend cuda --interp linear:8,cubic:8,quadratic:16 --precision fp32,fp16,mixed \
        --variant v3 --reps 5 || fail "bench narrow"
    "$sarbp" bench --backend cuda --problem wide --interp quadratic:8,linear:8,cubic:4 \
        --precision fp32,fp16,mixed --variant v3 --reps 5 || fail "bench wide"
}

for g in "$@"; do
    case "$g" in
    tests | sanitize | large | multi | mpi | mpi_big | before | bench | ffbp | ffbp_big)
        echo "=== gpu-checks: $g"
        "g_$g" ;;
    *) echo "gpu-checks: unknown group '$g'" >&2; exit 2 ;;
    esac
done
exit $status
