#!/usr/bin/env bash
# update-references.sh - regenerates the sample phase histories in data/ and
# their reference images, on purpose: the regression tests compare every back
# end against these files, so replacing them changes what "correct" means.
# The references are exact images (FP64 direct summation over every sample,
# --precision exact: no FFT, no interpolation), so every path is measured
# against the image itself, not against sarbp's own FP64 path. Reads the list
# from data/datasets.txt.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: scripts/update-references.sh --yes [--only NAME] [--sarbp PATH] [-h|--help]

For every line "NAME | SIMULATE_ARGS | FORM_ARGS" of data/datasets.txt:
  sarbp simulate -o NAME.h5 SIMULATE_ARGS
  sarbp form -i NAME.h5 FORM_ARGS --backend cpu --precision exact -o NAME_ref.h5
run inside a scratch folder (so the files record bare names), then moved into
data/ together once every data set succeeded. Each new reference is checked
before anything moves: the CPU FP32 image of the default path must reach
70 dB SER against it (the issue-11 bar), and the CPU FP64 image is reported.

Run this only when the simulation or the exact reference itself changed on
purpose (and say why in the commit); a regression test that fails is not a
reason to update the references.

  --yes          really replace the files in data/ (required)
  --only NAME    regenerate one data set
  --sarbp PATH   the sarbp executable (default: build/sarbp)
  -h, --help     show this help

exit codes: 0 updated, 1 failure (data/ unchanged), 2 usage error.
EOF
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data=$root/data
sarbp=${SARBP_BUILD_DIR:-$root/build}/sarbp
yes=0
only=

usage_error() {
    echo "update-references.sh: $*" >&2
    echo "Try 'scripts/update-references.sh --help' for more information." >&2
    exit 2
}
while [[ $# -gt 0 ]]; do
    case "$1" in
    --yes) yes=1 ;;
    --only) [[ $# -ge 2 ]] || usage_error "--only needs a data set name"; only=$2; shift ;;
    --sarbp) [[ $# -ge 2 ]] || usage_error "--sarbp needs a path"; sarbp=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
    esac
    shift
done
if [[ $yes -ne 1 ]]; then
    echo "update-references.sh: this replaces the reference data in data/; run it with --yes" >&2
    exit 2
fi
[[ -x $sarbp ]] || { echo "update-references.sh: no sarbp at '$sarbp'; hint: scripts/build.sh" >&2; exit 1; }
sarbp=$(cd "$(dirname "$sarbp")" && pwd)/$(basename "$sarbp")

scratch=$(mktemp -d "${TMPDIR:-/tmp}/sarbp-refs.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; s=${s%"${s##*[![:space:]]}"}; printf '%s' "$s"; }

names=()
sim_args=()
form_args=()
while IFS='|' read -r name sim form || [[ -n $name ]]; do
    name=$(trim "$name")
    [[ -z $name || $name == \#* ]] && continue
    [[ -n $only && $name != "$only" ]] && continue
    sim=$(trim "$sim")
    form=$(trim "$form")
    [[ $name =~ ^[A-Za-z0-9_-]+$ ]] || { echo "update-references.sh: bad data set name '$name'" >&2; exit 1; }
    # The arguments are written the way a shell reads them (quotes allowed);
    # data/datasets.txt is part of the repository, not outside input.
    eval "sim_args=($sim)"
    eval "form_args=($form)"
    echo "== $name"
    (
        cd "$scratch"
        set -x
        "$sarbp" simulate -q -o "$name.h5" "${sim_args[@]}"
        "$sarbp" form -q -i "$name.h5" "${form_args[@]}" --backend cpu --precision exact \
            -o "${name}_ref.h5"
        "$sarbp" form -q -i "$name.h5" "${form_args[@]}" --backend cpu --precision fp32 \
            -o "${name}_fp32.h5"
        "$sarbp" form -q -i "$name.h5" "${form_args[@]}" --backend cpu --precision fp64 \
            -o "${name}_fp64.h5"
        "$sarbp" compare "${name}_fp32.h5" "${name}_ref.h5" --min-ser 70 >"${name}_check.txt"
        "$sarbp" compare "${name}_fp64.h5" "${name}_ref.h5" >"${name}_check64.txt"
    ) || { echo "update-references.sh: '$name' failed; data/ is unchanged" >&2; exit 1; }
    grep -E '^SER' "$scratch/${name}_check.txt" | sed 's/^/   cpu fp32 vs new exact reference: /'
    grep -E '^SER' "$scratch/${name}_check64.txt" | sed 's/^/   cpu fp64 vs new exact reference: /'
    names+=("$name")
done <"$data/datasets.txt"

[[ ${#names[@]} -gt 0 ]] || { echo "update-references.sh: no data set matched" >&2; exit 1; }
for name in "${names[@]}"; do
    mv -f "$scratch/$name.h5" "$data/$name.h5"
    mv -f "$scratch/${name}_ref.h5" "$data/${name}_ref.h5"
done
echo "update-references.sh: updated with $("$sarbp" --version):"
for name in "${names[@]}"; do
    for f in "$data/$name.h5" "$data/${name}_ref.h5"; do
        printf '  %-40s %9d bytes\n' "$f" "$(wc -c <"$f")"
    done
done
du -sh "$data" | awk '{ print "  data/ in all: " $1 }'
