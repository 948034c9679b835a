#!/usr/bin/env bash
# device-run-mixed.sh - the one device run that decides precision "mixed"
# (cubic bins with A, B in FP32 and C, D in FP16: 24 bytes a bin instead of
# 32), on a lent GPU machine, through scripts/device-run.sh.
set -uo pipefail

usage() {
    cat <<'EOF'
usage: scripts/device-run-mixed.sh [tests|bench|sanitize]...   (on the GPU machine,
                                                            from the repository root)

Runs, through scripts/device-run.sh (each step's log in $OUT/step-N.log):
  tests     test_mixed_pack (host packing), test_gpu_exact (mixed against the
            exact image on the test scenes, bar 70 dB, and against FP32 cubic,
            bar 80 dB), test_gpu_backproject (mixed against FP32 for every
            variant that reads it, v4's refusal, streamed, banded, scaled, chirp)
  bench     sarbp bench --backend cuda, cubic 4x, fp32, fp16 and mixed side by
            side: v3 at the dispatcher's register bound (16 blocks, as FP32
            cubic), without one (:-1) and at 12; then the wide problem with v3
  sanitize  compute-sanitizer memcheck of a banded and a chirp mixed form
No argument: all three. Build and pack first, on the build machine:
  scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 && scripts/device-pack.sh
then carry .devlibs in the device call.

exit codes: the number of failed steps (device-run.sh's).
EOF
}
case "${1:-}" in -h | --help) usage; exit 0 ;; esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
groups=("$@")
[[ ${#groups[@]} -gt 0 ]] || groups=(tests bench sanitize)

# The tests' compiled-in paths (sarbp, the Gotcha files under ../shared)
# name the tree where they were built: this branch's worktree.
for built in /work/wt-mixed /work/main; do
    [[ -e $built ]] || { mkdir -p /work && ln -s "$root" "$built"; }
done

steps=('nvidia-smi -L')
tmp=/tmp/device-mixed
for g in "${groups[@]}"; do
    case "$g" in
    tests)
        steps+=('build/tests/test_mixed_pack'
                'build/tests/test_gpu_exact'
                'build/tests/test_gpu_backproject') ;;
    bench)
        steps+=('sarbp bench --backend cuda --interp cubic:4 --precision fp32,fp16,mixed --variant v3,v3:16x32:8:-1,v3:16x32:8:12 --reps 7'
                'sarbp bench --backend cuda --problem wide --interp cubic:4 --precision fp32,fp16,mixed --variant v3 --reps 5') ;;
    sanitize)
        steps+=("mkdir -p $tmp && sarbp simulate -o $tmp/small.h5 --pulses 96 --samples 256 --clutter 200 --seed 7 -q && sarbp simulate -o $tmp/chirp.h5 --pulses 96 --samples 1024 --domain chirp --clutter 200 --seed 7 -q"
                "cs=\$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer); \$cs --tool memcheck --error-exitcode 9 sarbp form -i $tmp/small.h5 --backend cuda --precision mixed --grid 900x700 --gpu-mem 20M --pulse-block 40 -o $tmp/m_mixed.h5 -q && \$cs --tool memcheck --error-exitcode 9 sarbp form -i $tmp/chirp.h5 --backend cuda --precision mixed --grid 161x161 -o $tmp/c_mixed.h5 -q"
                "sarbp form -i $tmp/small.h5 --backend cuda --precision fp32 --grid 900x700 -o $tmp/m_fp32.h5 -q && sarbp compare $tmp/m_mixed.h5 $tmp/m_fp32.h5 --min-ser 80") ;;
    *) echo "device-run-mixed.sh: unknown group '$g' (tests, bench, sanitize)" >&2; exit 100 ;;
    esac
done
DEVICE_RUN_TAIL=${DEVICE_RUN_TAIL:-40} exec "$root/scripts/device-run.sh" "${steps[@]}"
