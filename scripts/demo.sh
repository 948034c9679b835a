#!/usr/bin/env bash
# demo.sh - the first command on a fresh machine: installs what is missing,
# builds sarbp, forms an image from a sample phase history in data/ and
# measures its brightest point target.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: scripts/demo.sh [-i PHASE_HISTORY] [-o OUTDIR] [--no-deps] [-h|--help]

Installs missing build dependencies (scripts/install-deps.sh), builds sarbp
(scripts/build.sh), then runs

  build/sarbp form -i data/point_targets.h5 -o OUTDIR/demo.png -o OUTDIR/demo.h5
  build/sarbp metrics OUTDIR/demo.h5

and prints where the image is. Open demo.png with any image viewer.

  -i FILE      phase history to form (default: data/point_targets.h5); a
               Gotcha directory works too, e.g. ../shared/data/gotcha/pass1/HH
  -o OUTDIR    where the images go (default: build/demo)
  --no-deps    skip the dependency check (no apt-get)
  -h, --help   show this help

exit codes: 0 success, 1 failure, 2 usage error.
EOF
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${SARBP_BUILD_DIR:-$root/build}
input=$root/data/point_targets.h5
outdir=$build_dir/demo
deps=1

usage_error() {
    echo "demo.sh: $*" >&2
    echo "Try 'scripts/demo.sh --help' for more information." >&2
    exit 2
}
while [[ $# -gt 0 ]]; do
    case "$1" in
    -i) [[ $# -ge 2 ]] || usage_error "-i needs a file"; input=$2; shift ;;
    -o) [[ $# -ge 2 ]] || usage_error "-o needs a folder"; outdir=$2; shift ;;
    --no-deps) deps=0 ;;
    -h | --help) usage; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
    esac
    shift
done

if [[ $deps -eq 1 ]]; then
    "$root/scripts/install-deps.sh"
fi
SARBP_BUILD_DIR=$build_dir "$root/scripts/build.sh"

sarbp=$build_dir/sarbp
mkdir -p "$outdir"
echo
echo "demo.sh: forming an image from $input"
"$sarbp" info "$input" || true
start=$(date +%s.%N)
"$sarbp" form -v -i "$input" -o "$outdir/demo.png" -o "$outdir/demo.h5"
end=$(date +%s.%N)
echo
echo "demo.sh: point-target metrics of the brightest target"
"$sarbp" metrics "$outdir/demo.h5"
echo
awk -v s="$start" -v e="$end" 'BEGIN { printf "demo.sh: formed in %.2f s\n", e - s }'
echo "demo.sh: image written to"
echo "  $outdir/demo.png   (magnitude in dB, its display range chosen from the image, north up)"
echo "  $outdir/demo.h5    (complex64 with x, y coordinates; see 'sarbp metrics --help')"
