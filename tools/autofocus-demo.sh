#!/usr/bin/env bash
# autofocus-demo.sh - the README's autofocus picture: the Gotcha pass-1 HH
# files with a smooth phase error injected (6 rad quadratic, 2.5 rad cubic
# over the aperture, through sarbp form --phase-csv) formed as they are and
# with --autofocus estimate: OUT_DIR/autofocus-before.png and
# OUT_DIR/autofocus-after.png.
# usage: tools/autofocus-demo.sh SARBP GOTCHA_DIR OUT_DIR
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: tools/autofocus-demo.sh SARBP GOTCHA_DIR OUT_DIR" >&2; exit 2; }
sarbp=$1 in=$2 out=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=$("$sarbp" info "$in" | awk '/^pulses:/ {print $2}')
# the samples times exp(j phase): phase = -error
awk -v n="$n" 'BEGIN { print "pulse,phase_rad";
    for (j = 0; j < n; j++) { t = 2 * j / (n - 1) - 1; printf "%d,%.17g\n", j, -(6 * t * t + 2.5 * t * t * t) } }' \
    >"$tmp/error.csv"
common=(-i "$in" --grid 384x384 --spacing 0.25 --backend cpu --db-range 40 --phase-csv "$tmp/error.csv")
"$sarbp" form "${common[@]}" -o "$out/autofocus-before.png" -q
"$sarbp" form "${common[@]}" --autofocus estimate -o "$out/autofocus-after.png" -q
echo "autofocus-demo.sh: wrote $out/autofocus-before.png and $out/autofocus-after.png"
