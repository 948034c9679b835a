#!/usr/bin/env bash
# batch-form.sh - forms one image per azimuth window over whole data sets,
# several windows at a time, and writes a summary table (CSV and JSON).
#
# A thin wrapper kept for the scripts that call it: the work is 'sarbp batch'
# (src/cli/cmd_batch.c), with the same options, windows, files, summary
# columns and exit codes ('sarbp batch --help'). This wrapper only finds the
# executable: --sarbp PATH, else build/sarbp of this repository (or
# $SARBP_BUILD_DIR/sarbp), else sarbp on PATH; --sarbp is passed on, so each
# window is formed by 'PATH form ...' as before.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$script_dir/.." && pwd)

sarbp=
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
    --sarbp) [[ $((i + 1)) -lt ${#args[@]} ]] && sarbp=${args[i + 1]} ;;
    --sarbp=*) sarbp=${args[i]#--sarbp=} ;;
    --) break ;;
    esac
done
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
exec "$sarbp" batch "$@"
