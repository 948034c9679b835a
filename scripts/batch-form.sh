#!/usr/bin/env bash
# batch-form.sh - forms one image per azimuth window over whole data sets,
# several windows at a time, and writes a summary table (CSV and JSON).
#
# Plain bash + awk (no Python, no jq): it reads 'sarbp info --json' for each
# input's azimuth span, runs 'sarbp form --azimuth A0:A1' per window in
# parallel, and 'sarbp metrics --json' on each image for its grid, entropy
# and peak. A failed window is reported on stderr and in the summary; the
# others go on. Exit 0 only when every window succeeded.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: scripts/batch-form.sh [options] -o OUTDIR INPUT...

Forms one image per azimuth window of each INPUT (a Gotcha-style directory, a
glob in quotes, or a phase-history file readable by 'sarbp form'):
windows [A, A+W) degrees from the input's first azimuth, stepping S; the last
window is kept when at least half of it holds data. Per window it writes
OUTDIR/win_NNN.png and OUTDIR/win_NNN.h5 (NNN counts over all inputs) and a
log OUTDIR/win_NNN.log; at the end OUTDIR/summary.csv and OUTDIR/summary.json.

options:
  -o, --output OUTDIR   output folder (created; required)
  -j, --jobs N          windows formed at once (default: the number of cores;
                        each form call gets --threads cores/N, at least 1,
                        unless --form-args sets --threads)
      --window-deg W    window width in degrees (default 1)
      --step-deg S      step between window starts in degrees (default: W)
      --sarbp PATH      the sarbp executable (default: build/sarbp of this
                        repository, else sarbp on PATH)
      --form-args ARGS  more 'sarbp form' options, one string, split on
                        spaces, e.g. "--grid 512x512 --spacing 0.2 --backend cpu"
  -h, --help            show this help

summary columns (CSV header; the same keys in the JSON array of objects):
  index, input, az_start_deg, az_end_deg (the window), pulses, nx, ny, dx_m, dy_m
  (the grid), backend, precision, seconds (wall clock of the 'sarbp form' run,
  reading and writing included), mbps (pixel-pulse pairs per wall second / 1e6),
  entropy (nats, 'sarbp metrics'), peak (largest pixel magnitude), png, h5,
  status (ok or failed).

example:
  scripts/batch-form.sh -j 2 --window-deg 1 -o out/ ../shared/data/gotcha/pass1/HH

exit codes: 0 every window formed; 1 some window or input failed (the rest are
still formed and summarised); 2 usage error.
EOF
}

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$script_dir/.." && pwd)

usage_error() {
    echo "batch-form.sh: $*" >&2
    echo "Try 'scripts/batch-form.sh --help' for more information." >&2
    exit 2
}
is_number() { [[ $1 =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]]; }

ncores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
jobs=$ncores
win_deg=1
step_deg=
outdir=
sarbp=
form_args=
inputs=()

while [[ $# -gt 0 ]]; do
    case "$1" in
    -o | --output) [[ $# -ge 2 ]] || usage_error "$1 needs a folder"; outdir=$2; shift ;;
    -j | --jobs) [[ $# -ge 2 ]] || usage_error "$1 needs a number"; jobs=$2; shift ;;
    -j[0-9]*) jobs=${1#-j} ;;
    --window-deg) [[ $# -ge 2 ]] || usage_error "$1 needs degrees"; win_deg=$2; shift ;;
    --step-deg) [[ $# -ge 2 ]] || usage_error "$1 needs degrees"; step_deg=$2; shift ;;
    --sarbp) [[ $# -ge 2 ]] || usage_error "$1 needs a path"; sarbp=$2; shift ;;
    --form-args) [[ $# -ge 2 ]] || usage_error "$1 needs a string"; form_args=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; inputs+=("$@"); break ;;
    -*) usage_error "unknown option '$1'" ;;
    *) inputs+=("$1") ;;
    esac
    shift
done

[[ -n $outdir ]] || usage_error "no output folder: give -o OUTDIR"
[[ ${#inputs[@]} -gt 0 ]] || usage_error "no input: give a Gotcha directory or a phase-history file"
[[ $jobs =~ ^[0-9]+$ && $jobs -ge 1 && $jobs -le 1024 ]] ||
    usage_error "-j wants a number of jobs from 1 to 1024, not '$jobs'"
if ! is_number "$win_deg" || ! awk -v w="$win_deg" 'BEGIN { exit !(w > 0 && w <= 360) }'; then
    usage_error "--window-deg wants degrees in (0, 360], not '$win_deg'"
fi
step_deg=${step_deg:-$win_deg}
if ! is_number "$step_deg" || ! awk -v s="$step_deg" 'BEGIN { exit !(s > 0 && s <= 360) }'; then
    usage_error "--step-deg wants degrees in (0, 360], not '$step_deg'"
fi
if [[ -z $sarbp ]]; then
    if [[ -x ${SARBP_BUILD_DIR:-$root/build}/sarbp ]]; then
        sarbp=${SARBP_BUILD_DIR:-$root/build}/sarbp
    elif command -v sarbp >/dev/null 2>&1; then
        sarbp=$(command -v sarbp)
    else
        echo "batch-form.sh: no sarbp executable; hint: build it with scripts/build.sh or give --sarbp" >&2
        exit 1
    fi
fi
[[ -x $sarbp ]] || { echo "batch-form.sh: '$sarbp' is not an executable" >&2; exit 1; }
read -r -a extra_args <<<"$form_args"
threads_args=()
if [[ " $form_args " != *" --threads"* ]]; then
    threads_args=(--threads "$(( ncores / jobs > 0 ? ncores / jobs : 1 ))")
fi

mkdir -p "$outdir"
work=$outdir/.batch
rm -rf "$work"
mkdir -p "$work"

# The value of a top-level number key in 'sarbp info --json' / 'sarbp metrics
# --json' output (one key per call; first occurrence; empty when absent).
json_num() {
    awk -v key="\"$1\"" '
        { text = text $0 " " }
        END {
            i = index(text, key); if (!i) exit
            s = substr(text, i + length(key)); sub(/^[ \t]*:[ \t]*"?/, "", s)
            if (match(s, /^-?[0-9.]+([eE][-+]?[0-9]+)?|^-?inf|^null/)) print substr(s, 1, RLENGTH)
        }' "$2"
}

# ---- windows: one line per window "index<TAB>input<TAB>a0<TAB>a1<TAB>p0<TAB>p1"
# (a0, a1 the nominal window; p0, p1 what is passed to --azimuth: padded by
# 1e-6 degree at the data's two ends so rounding never drops an edge pulse).
windows=$work/windows.tsv
: >"$windows"
failed_inputs=0
k=0
for inp in "${inputs[@]}"; do
    k=$((k + 1))
    info=$work/info_$k.json
    if ! "$sarbp" info --json "$inp" >"$info" 2>"$work/info_$k.err"; then
        echo "batch-form.sh: cannot read '$inp': $(tail -n 1 "$work/info_$k.err")" >&2
        failed_inputs=$((failed_inputs + 1))
        continue
    fi
    amin=$(json_num azimuth_min_deg "$info")
    amax=$(json_num azimuth_max_deg "$info")
    if ! is_number "${amin#-}" || ! is_number "${amax#-}"; then
        echo "batch-form.sh: '$inp': no azimuth span in 'sarbp info --json'" >&2
        failed_inputs=$((failed_inputs + 1))
        continue
    fi
    first=$(wc -l <"$windows")
    awk -v lo="$amin" -v hi="$amax" -v w="$win_deg" -v s="$step_deg" -v input="$inp" \
        -v first="$first" '
        BEGIN {
            for (k = 0; ; k++) {
                a0 = lo + k * s
                if (k > 0 && a0 >= hi) break
                a1 = a0 + w
                cover = (a1 < hi ? a1 : hi) - a0
                if (k > 0 && cover < w / 2) break
                p0 = (k == 0) ? a0 - 1e-6 : a0
                p1 = (a1 >= hi) ? hi + 1e-6 : a1
                printf "%d\t%s\t%.6f\t%.6f\t%.7f\t%.7f\n", first + k, input, a0, a1, p0, p1
            }
        }' >>"$windows"
done

nwin=$(wc -l <"$windows")
if [[ $nwin -eq 0 ]]; then
    echo "batch-form.sh: no windows to form" >&2
    exit 1
fi
echo "batch-form.sh: $nwin windows of $win_deg deg (step $step_deg deg) from ${#inputs[@]} input(s), $jobs at a time" >&2

# ---- one window: form, then measure; writes OUTDIR/.batch/win_NNN.rec
# ("key=value" lines) whatever happens.
run_window() {
    local idx=$1 inp=$2 a0=$3 a1=$4 p0=$5 p1=$6
    local tag
    tag=$(printf 'win_%03d' "$idx")
    local png=$outdir/$tag.png h5=$outdir/$tag.h5 log=$outdir/$tag.log rec=$work/$tag.rec
    local status=ok t0 t1 secs pulses='' backend='' precision='' nx='' ny='' dx='' dy=''
    local entropy='' peak='' mbps=''
    t0=$(date +%s.%N)
    if ! "$sarbp" form -v -i "$inp" --azimuth "$p0:$p1" ${threads_args[@]+"${threads_args[@]}"} \
            ${extra_args[@]+"${extra_args[@]}"} -o "$png" -o "$h5" >"$log" 2>&1; then
        status=failed
    fi
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    # "sarbp: form: 117 pulses x 424 samples, grid ... back end cpu, fp32"
    local line
    line=$(grep -m 1 -E '[0-9]+ pulses x [0-9]+ samples' "$log" || true)
    if [[ $line =~ ([0-9]+)\ pulses\ x ]]; then pulses=${BASH_REMATCH[1]}; fi
    if [[ $line =~ back\ end\ ([A-Za-z0-9_]+),\ ([A-Za-z0-9_]+) ]]; then
        backend=${BASH_REMATCH[1]}
        precision=${BASH_REMATCH[2]}
    fi
    if [[ $status == ok ]]; then
        local mj=$work/$tag.metrics.json
        if "$sarbp" metrics --json "$h5" >"$mj" 2>>"$log"; then
            nx=$(json_num nx "$mj"); ny=$(json_num ny "$mj")
            dx=$(json_num dx "$mj"); dy=$(json_num dy "$mj")
            entropy=$(json_num entropy "$mj"); peak=$(json_num max_mag "$mj")
        else
            status=failed
        fi
    fi
    if [[ -n $pulses && -n $nx && -n $ny ]]; then
        mbps=$(awk -v p="$pulses" -v x="$nx" -v y="$ny" -v s="$secs" \
                   'BEGIN { if (s > 0) printf "%.1f", p * x * y / s / 1e6 }')
    fi
    if [[ $status != ok ]]; then
        rm -f "$png" "$h5"
        echo "batch-form.sh: window $tag ($a0:$a1 deg of '$inp') failed: $(grep -m 1 'sarbp:' "$log" | grep -v -e 'pulses x' -e 'using the cpu' || tail -n 1 "$log")" >&2
    else
        echo "batch-form.sh: $tag $a0:$a1 deg: ${pulses:-?} pulses, ${nx}x${ny}, $secs s" >&2
    fi
    {
        echo "index=$idx"; echo "input=$inp"; echo "az_start_deg=$a0"; echo "az_end_deg=$a1"
        echo "pulses=$pulses"; echo "nx=$nx"; echo "ny=$ny"; echo "dx_m=$dx"; echo "dy_m=$dy"
        echo "backend=$backend"; echo "precision=$precision"; echo "seconds=$secs"; echo "mbps=$mbps"
        echo "entropy=$entropy"; echo "peak=$peak"
        echo "png=$([[ $status == ok ]] && echo "$png")"; echo "h5=$([[ $status == ok ]] && echo "$h5")"
        echo "status=$status"
    } >"$rec.tmp"
    mv "$rec.tmp" "$rec"
}

# ---- run the windows, at most $jobs at a time
running=0
while IFS=$'\t' read -r idx inp a0 a1 p0 p1; do
    if [[ $running -ge $jobs ]]; then
        wait -n || true
        running=$((running - 1))
    fi
    run_window "$idx" "$inp" "$a0" "$a1" "$p0" "$p1" &
    running=$((running + 1))
done <"$windows"
wait || true

# ---- summary, in window order
keys=(index input az_start_deg az_end_deg pulses nx ny dx_m dy_m backend precision seconds mbps
      entropy peak png h5 status)
csv=$outdir/summary.csv json=$outdir/summary.json
nfail=0
{
    (IFS=,; echo "${keys[*]}")
} >"$csv.tmp"
echo "[" >"$json.tmp"
first=1
while IFS=$'\t' read -r idx inp _; do
    rec=$work/$(printf 'win_%03d' "$idx").rec
    if [[ ! -f $rec ]]; then # the window's job died before writing its record
        printf 'index=%s\ninput=%s\nstatus=failed\n' "$idx" "$inp" >"$rec"
    fi
    grep -q '^status=ok$' "$rec" || nfail=$((nfail + 1))
    awk -F= -v keys="${keys[*]}" -v first="$first" -v csvf="$csv.tmp" -v jsonf="$json.tmp" '
        { k = $1; sub(/^[^=]*=/, ""); v[k] = $0 }
        function csvq(s) { if (s ~ /[,"\n]/) { gsub(/"/, "\"\"", s); s = "\"" s "\"" } return s }
        function jsonq(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
        function isnum(s) { return s ~ /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/ }
        END {
            n = split(keys, K, " ")
            line = ""; obj = (first ? "  {" : ",\n  {")
            for (i = 1; i <= n; i++) {
                val = (K[i] in v) ? v[K[i]] : ""
                line = line (i > 1 ? "," : "") csvq(val)
                if (val == "") jv = "null"
                else if (isnum(val) && K[i] != "input") jv = val
                else jv = jsonq(val)
                obj = obj (i > 1 ? ", " : "") "\"" K[i] "\": " jv
            }
            print line >> csvf
            printf "%s}", obj >> jsonf
        }' "$rec"
    first=0
done <"$windows"
printf '\n]\n' >>"$json.tmp"
mv "$csv.tmp" "$csv"
mv "$json.tmp" "$json"

rm -rf "$work"
echo "batch-form.sh: $((nwin - nfail)) of $nwin windows formed; summary in $csv and $json" >&2
if [[ $nfail -gt 0 || $failed_inputs -gt 0 ]]; then
    echo "batch-form.sh: $nfail window(s) and $failed_inputs input(s) failed" >&2
    exit 1
fi
