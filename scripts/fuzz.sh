#!/usr/bin/env bash
# fuzz.sh - builds sarbp's libFuzzer harnesses (tests/fuzz, into build-fuzz/
# or $SARBP_FUZZ_BUILD_DIR) and runs each for a given time, going on past
# findings, then sorts every crash, timeout and out-of-memory it found into
# sarbp's own bugs and upstream ones (HDF5, matio), reported apart.
set -euo pipefail

HARNESSES=(phd_h5 phd_mat phd_cphd image_h5 image_npy cli_numbers)

usage() {
    cat <<EOF
usage: scripts/fuzz.sh [OPTION...] [HARNESS...]

Builds the libFuzzer harnesses (clang; CC=clang -DSARBP_FUZZ=ON into BUILD:
build-fuzz/, or \$SARBP_FUZZ_BUILD_DIR when set) and runs each named one,
or all of them:
  ${HARNESSES[*]}
(a 'fuzz_' prefix is accepted). Each starts from its seed corpus
(tests/fuzz/corpus/NAME, never written) plus a work corpus kept between runs
(BUILD/corpus/NAME), with its dictionary (tests/fuzz/NAME.dict). phd_cphd
also gets seeds made at run time by the tests' CPHD writer (tests/cphd_gen.c,
through BUILD/fuzz/cphd_seeds into BUILD/seeds/phd_cphd): a TOA-domain file
and an XML element of 2,000 attributes.

  --time SEC        fuzzing time per harness (default 60)
  --fork N          long runs: libFuzzer's fork mode with N jobs, going on
                    past crashes, timeouts and out-of-memory (default: one
                    in-process run, restarted from the work corpus after
                    each finding until the time is spent, however many
                    findings there are; an input of the work corpus that
                    stops a run as it is read is moved to
                    BUILD/quarantine/NAME, so that it cannot stop every
                    run; a seed that does so ends that harness early, said)
  --rss-limit MB    memory limit per process (default 2048)
  --timeout SEC     limit per input (default 10)
  --artifacts DIR   where crash/timeout/oom inputs go (default
                    BUILD/artifacts); one subdirectory per harness
  --cli PATH        the release sarbp executable used to check containment
                    (default build/sarbp, else BUILD/sarbp)
  --seed N          libFuzzer's random seed (run K of a harness uses N+K-1),
                    so that a run explores the same inputs every time, as CI's
                    does (scripts/test.sh); default: a new seed every run
  --no-build        run what is built
  -h, --help        show this help

Every finding is reproduced once and attributed by the first stack frame
outside the sanitizer runtime, libFuzzer and libc. An out-of-memory over
the RSS limit whose reproduction names no frame (its report lists what is
live when the limit is crossed, which need not be what grew) is attributed
by the live allocations of the run that found it, when those name an
upstream library:
  sarbp       a frame in sarbp (or no usable stack): a bug to fix.
  upstream    a frame in libhdf5, libmatio or a compression library they
              use. 'contained' when the CLI on the same file ('sarbp info'
              for phase histories, 'sarbp metrics' for images) exits 1 in
              the sanitizer build (BUILD/sarbp: the harness's
              allocator, where the crash does happen; sarbp's probe of HDF5
              opens is what turns it into exit 1) and the release CLI
              neither crashes nor runs away (exit 0 or 1 within 10 s and
              1000 MB); otherwise 'NOT contained'. A sanitizer-built CLI
              that reads the file (exit 0) instead is contained too when the
              release CLI behaves, and is said so ('did not recur in the
              CLI'): HDF5 reads uninitialised memory on some corrupt
              attribute tables, so the same file crashes in one process and
              not in the next.
  unreproduced
              a leak that libFuzzer's check saw after an input but that the
              same input run alone frees by exit (a library cache), or an
              upstream crash that happens only after earlier inputs (global
              state of HDF5 or matio; its in-process stack is used): listed,
              not counted as a failure. A finding of sarbp's that does not
              reproduce alone still counts. In fork mode (--fork) a finding
              that does not reproduce alone has no stack: unreproduced when
              both CLIs handle the file (exit 0 or 1 within the limits),
              else counted as sarbp's.
The harnesses turn the readers' probe off (tests/fuzz/fuzz_common.h), so
HDF5's own crashes do show up here, in-process.

Prints per harness: time, executions (and per second), coverage (cov:
edges, ft: features), corpus size, runs, and the findings: sarbp's own
first, each with its place, then the upstream ones (contained or not) and
the unreproduced. BUILD/logs/NAME/findings.txt lists every input, sarbp's
first; findings-sarbp.txt and findings-upstream.txt hold the two parts. The
summary ends with the totals of sarbp's own findings and of the upstream
ones, apart.

exit codes: 0 no finding that is sarbp's or uncontained; 1 otherwise, or a
build failure; 2 usage error.
EOF
}

die_usage() {
    echo "fuzz.sh: $1" >&2
    echo "Try 'scripts/fuzz.sh --help' for more information." >&2
    exit 2
}

time_s=60 fork=0 rss=2048 per_input=10 build=1 artifacts="" cli="" seed=""
names=()
while [[ $# -gt 0 ]]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --time) [[ $# -ge 2 && $2 =~ ^[0-9]+$ && $2 -gt 0 ]] || die_usage "--time needs seconds > 0"
        time_s=$2; shift ;;
    --fork) [[ $# -ge 2 && $2 =~ ^[0-9]+$ && $2 -gt 0 ]] || die_usage "--fork needs a job count > 0"
        fork=$2; shift ;;
    --rss-limit) [[ $# -ge 2 && $2 =~ ^[0-9]+$ && $2 -gt 0 ]] || die_usage "--rss-limit needs MB > 0"
        rss=$2; shift ;;
    --timeout) [[ $# -ge 2 && $2 =~ ^[0-9]+$ && $2 -gt 0 ]] || die_usage "--timeout needs seconds > 0"
        per_input=$2; shift ;;
    --artifacts) [[ $# -ge 2 ]] || die_usage "--artifacts needs a directory"
        artifacts=$2; shift ;;
    --cli) [[ $# -ge 2 ]] || die_usage "--cli needs a path"
        cli=$2; shift ;;
    --seed) [[ $# -ge 2 && $2 =~ ^[0-9]+$ && $2 -gt 0 ]] || die_usage "--seed needs a number > 0"
        seed=$2; shift ;;
    --no-build) build=0 ;;
    -*) die_usage "unknown option '$1'" ;;
    *) n=${1#fuzz_}
       [[ " ${HARNESSES[*]} " == *" $n "* ]] || die_usage "no harness '$1' (${HARNESSES[*]})"
       names+=("$n") ;;
    esac
    shift
done
[[ ${#names[@]} -gt 0 ]] || names=("${HARNESSES[@]}")

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bdir=${SARBP_FUZZ_BUILD_DIR:-$root/build-fuzz}
mkdir -p "$bdir"
bdir=$(cd "$bdir" && pwd)
artifacts=${artifacts:-$bdir/artifacts}
mkdir -p "$bdir" "$artifacts"
artifacts=$(cd "$artifacts" && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:symbolize=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [[ -f $root/tests/lsan.supp ]]; then
    export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tests/lsan.supp:print_suppressions=0}
fi

if [[ $build -eq 1 ]]; then
    command -v clang >/dev/null || { echo "fuzz.sh: clang not found (scripts/install-deps.sh)" >&2; exit 1; }
    jobs=$(nproc 2>/dev/null || echo 2)
    CC=clang cmake -S "$root" -B "$bdir" -DSARBP_FUZZ=ON -DSARBP_TESTS=OFF -DSARBP_CUDA=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$bdir/configure.log" 2>&1 ||
        { cat "$bdir/configure.log" >&2; echo "fuzz.sh: configure failed" >&2; exit 1; }
    cmake --build "$bdir" --parallel "$jobs" >"$bdir/build.log" 2>&1 ||
        { tail -n 40 "$bdir/build.log" >&2; echo "fuzz.sh: build failed" >&2; exit 1; }
fi
acli=$bdir/sarbp
if [[ -z $cli ]]; then
    cli=$root/build/sarbp
    [[ -x $cli ]] || cli=$acli
fi

# The CLI command that reads an input of harness $1, and the file suffix.
suffix_of() { case "$1" in phd_h5 | image_h5) echo .h5 ;; phd_mat) echo .mat ;; phd_cphd) echo .cphd ;; image_npy) echo .npy ;; *) echo "" ;; esac; }

# Prints "sarbp WHERE" or "upstream LIB WHERE" for a reproduction log: the
# first stack frame that is not the sanitizer runtime, libFuzzer, the
# harness's entry point or libc.
attribute() {
    local log=$1 frame
    frame=$(awk '
        /^ *#[0-9]+ 0x[0-9a-f]+ / {
            line = $0
            sub(/^ *#[0-9]+ 0x[0-9a-f]+ +/, "", line)
            sub(/ \(BuildId: [0-9a-f]+\)/, "", line)
            fn = ""
            if (line ~ /^in /) { fn = line; sub(/^in /, "", fn); sub(/ .*/, "", fn) }
            if (fn ~ /^(__asan|__interceptor|___interceptor|__sanitizer|__ubsan|__lsan|fuzzer::|__libc|__GI_|_start$|main$|LLVMFuzzerTestOneInput$)/) next
            if (fn ~ /^(malloc|calloc|realloc|free|posix_memalign|aligned_alloc|memcpy|memmove|memset|memcmp|strlen|strnlen|strcmp|strncmp|strcpy|strncpy|strdup|raise|abort|__restore_rt)$/) next
            if (fn ~ /^__(mem|str|wmem)[a-z]*_(avx|sse|evex|erms)/) next
            if (line ~ /(libc\.so|ld-linux|compiler-rt|libclang_rt|libpthread|libstdc\+\+|sysdeps\/)/) next
            print line
            exit
        }' "$log")
    if [[ -z $frame ]]; then
        frame=$(grep -m1 -E '^SUMMARY:' "$log" || true)
        frame=${frame#SUMMARY: }
        if [[ $frame == *"/src/"* || $frame == *"/tests/fuzz/"* ]]; then
            echo "sarbp $frame"
        else
            echo "sarbp (no usable stack) ${frame:-$(grep -m1 'ERROR' "$log" || true)}"
        fi
        return
    fi
    frame=${frame#in }
    case "$frame" in
    *libhdf5*) echo "upstream libhdf5 $frame" ;;
    *libmatio*) echo "upstream libmatio $frame" ;;
    *libz.so* | *libsz.so* | *libaec.so*) echo "upstream compression $frame" ;;
    *) echo "sarbp $frame" ;;
    esac
}

# "STATUS RSS_MB" of CLI $1 on input $3 of harness $2: killed after 10 s
# (status 137), under a 16 GB address-space safety net (not for a sanitizer
# build, whose shadow memory needs terabytes of address space); the peak
# resident memory comes from /usr/bin/time. Sanitizer reports abort (status
# 134), so a crash of the CLI's own process is never read as a clean exit 1.
cli_status() {
    local exe=$1 h=$2 f=$3 tmp rc rss
    tmp=$(mktemp -d)
    cp "$f" "$tmp/input$(suffix_of "$h")"
    case "$h" in
    phd_*) set -- info "$tmp/input$(suffix_of "$h")" ;;
    image_*) set -- metrics "$tmp/input$(suffix_of "$h")" ;;
    esac
    set +e
    local vlimit=16777216
    [[ $exe != "$acli" ]] || vlimit=unlimited
    (ulimit -v "$vlimit"; cd "$tmp" &&
        ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1 \
        exec /usr/bin/time -f '%M' -o "$tmp/rss" timeout -s KILL 10 "$exe" "$@" >/dev/null 2>&1) 2>/dev/null
    rc=$?
    set -e
    rss=$(tail -n 1 "$tmp/rss" 2>/dev/null | tr -dc 0-9)
    rm -rf "$tmp"
    echo "$rc $(( ${rss:-0} / 1024 ))"
}

overall=0 tot_own=0 tot_cont=0 tot_unc=0
report=()
for h in "${names[@]}"; do
    bin=$bdir/fuzz/fuzz_$h
    [[ -x $bin ]] || { echo "fuzz.sh: $bin is not built" >&2; exit 1; }
    work=$bdir/corpus/$h art=$artifacts/$h logdir=$bdir/logs/$h
    mkdir -p "$work" "$art" "$logdir"
    rm -f "$logdir"/*.log "$logdir"/findings*.txt
    seeds=("$root/tests/fuzz/corpus/$h")
    if [[ $h == phd_cphd ]]; then
        # made now by the tests' writer, so they follow it (cphd_seeds.c)
        gen=$bdir/seeds/$h
        rm -rf "$gen"
        mkdir -p "$gen"
        if [[ ! -x $bdir/fuzz/cphd_seeds ]]; then
            echo "fuzz.sh: $h: no generated seeds ($bdir/fuzz/cphd_seeds not built: cmocka missing?)" >&2
        elif "$bdir/fuzz/cphd_seeds" "$gen" >"$logdir/seeds.log" 2>&1; then
            seeds+=("$gen")
        else
            echo "fuzz.sh: $h: cphd_seeds failed (see $logdir/seeds.log)" >&2
            overall=1
        fi
    fi
    marker=$logdir/.start
    : >"$marker"
    opts=(-rss_limit_mb="$rss" -timeout="$per_input" -artifact_prefix="$art/" -print_final_stats=1)
    [[ -f $root/tests/fuzz/$h.dict ]] && opts+=(-dict="$root/tests/fuzz/$h.dict")
    echo "fuzz.sh: $h: fuzzing for $time_s s$([[ $fork -gt 0 ]] && echo " (fork mode, $fork jobs)")"
    t0=$(date +%s) execs=0 runs=0
    if [[ $fork -gt 0 ]]; then
        log=$logdir/fork.log
        set +e
        "$bin" "${opts[@]}" -fork="$fork" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
            -max_total_time="$time_s" "$work" "${seeds[@]}" >"$log" 2>&1
        set -e
        execs=$(grep -oE '^#[0-9]+: cov' "$log" | tail -n 1 | tr -dc 0-9 || true)
        runs=1
    else
        # In-process; after a finding, go on from the work corpus until the
        # time is spent, however many findings. libFuzzer reads the corpora
        # before it mutates: an input of the work corpus that stops a run
        # there would stop every run, so it goes to quarantine (named by its
        # SHA-1, as libFuzzer names corpus files and artifacts); a seed that
        # stops two runs ends this harness's fuzzing (seeds are not moved).
        seen=" "
        while :; do
            left=$(( time_s - ($(date +%s) - t0) ))
            [[ $left -gt 0 ]] || break
            runs=$((runs + 1))
            log=$logdir/run$runs.log
            set +e
            seedopt=()
            [[ -z $seed ]] || seedopt=(-seed=$((seed + runs - 1)))
            "$bin" "${opts[@]}" "${seedopt[@]}" -max_total_time="$left" "$work" "${seeds[@]}" >"$log" 2>&1
            rc=$?
            set -e
            n=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$log" | tr -dc 0-9 || true)
            [[ -n $n ]] || n=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -dc 0-9 || true)
            execs=$((execs + ${n:-0}))
            [[ $rc -ne 0 ]] || break
            unit=$(grep -oE 'Test unit written to [^ ]+' "$log" | tail -n 1 || true)
            unit=${unit#Test unit written to }
            if [[ -z $unit ]]; then
                echo "fuzz.sh: $h: run $runs ended with status $rc and no input (see $log)" >&2
                break
            fi
            sha=${unit##*-}
            if [[ -f $work/$sha ]]; then
                mkdir -p "$bdir/quarantine/$h"
                mv -f "$work/$sha" "$bdir/quarantine/$h/$sha"
                echo "fuzz.sh: $h: work-corpus input $sha stopped run $runs as it was read: moved to $bdir/quarantine/$h"
            elif [[ $seen == *" $sha "* ]]; then
                echo "fuzz.sh: $h: seed $sha (${unit##*/}) stops every run as it is read: fuzzing ends after $(( $(date +%s) - t0 )) s" >&2
                break
            fi
            seen+="$sha "
        done
    fi
    secs=$(( $(date +%s) - t0 ))
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 || true)
    corp=$(find "$work" -type f | wc -l)

    # Sort this run's findings.
    nsarbp=0 ncont=0 nunc=0 nunrep=0 where_own=() where_up=() where_unrep=()
    while IFS= read -r -d '' f; do
        kind=$(basename "$f"); kind=${kind%%-*}
        rlog=$f.log
        set +e
        "$bin" -rss_limit_mb="$rss" -timeout="$per_input" -runs=1 "$f" >"$rlog" 2>&1
        set -e
        who=$(attribute "$rlog")
        alone=1
        if [[ $kind == oom && $who == *"(no usable stack)"* ]]; then
            # Seen 2026-11-26 (phd_h5): HDF5 reallocated 1.96 GB in the run
            # that found the input; run alone, the report at the limit listed
            # only libFuzzer's own 24 MB. The finding run's live allocations
            # name the library that grew.
            src=$(grep -l -F "written to $f" "$logdir"/run*.log 2>/dev/null | head -n 1 || true)
            if [[ -n $src ]]; then
                grown=$(attribute "$src")
                [[ $grown != upstream* ]] || who=$grown
            fi
        fi
        if [[ $who == *"(no usable stack)"* ]] && ! grep -qE 'ERROR|SUMMARY|runtime error' "$rlog"; then
            # Not reproduced when run alone: the input needed the state that
            # earlier inputs left in the process. Take the stack from the
            # in-process run that wrote it.
            src=$(grep -l -F "written to $f" "$logdir"/run*.log "$logdir"/fork.log 2>/dev/null | head -n 1 || true)
            if [[ -n $src && $src != */fork.log ]]; then
                alone=0
                who=$(attribute "$src")
            else
                # fork mode: the job that found it kept no stack
                alone=0
                who="unknown (fork mode keeps no stack)"
            fi
        fi
        if [[ $h == cli_numbers || $h == image_npy ]]; then
            [[ $who == sarbp* || $who == unknown* ]] ||
                who="sarbp (no upstream library in this harness) ${who#upstream }"
        fi
        if [[ $kind == leak ]] && ! grep -q 'LeakSanitizer' "$rlog"; then
            # Seen by libFuzzer's check after an input, gone when the input
            # runs alone: the memory was still reachable at exit (a cache
            # that HDF5 or matio frees on close), not lost.
            nunrep=$((nunrep + 1)); verdict="unreproduced leak (freed by exit)"
            who="- (see the run logs in $logdir)"
        elif [[ $alone -eq 0 && $who == unknown* ]]; then
            # Found by a fork-mode job, not reproduced alone, no stack: listed
            # as unreproduced when both CLIs handle the file (exit 0 or 1 in
            # 10 s, < 1000 MB); otherwise counted as sarbp's.
            read -r st_a mb_a < <(cli_status "$acli" "$h" "$f")
            read -r st_r mb_r < <(cli_status "$cli" "$h" "$f")
            if [[ $st_a -le 1 && $st_r -le 1 && $mb_r -lt 1000 ]]; then
                nunrep=$((nunrep + 1))
                verdict="unreproduced $kind (fork mode, no stack; CLIs exit $st_a and $st_r, $mb_r MB)"
            else
                nsarbp=$((nsarbp + 1))
                verdict="sarbp $kind (fork mode, no stack; sanitizer CLI exits $st_a, release $st_r, $mb_r MB)"
            fi
        elif [[ $alone -eq 0 && $who == upstream* ]]; then
            # An upstream crash that needs earlier inputs' state in the same
            # process: no single file makes the CLI crash. Listed, with its
            # in-process stack, not counted as a failure.
            nunrep=$((nunrep + 1)); verdict="unreproduced upstream $kind (needs earlier inputs' state)"
        elif [[ $who == upstream* ]]; then
            # Contained: the sanitizer-built CLI (the harness's allocator,
            # where the crash does happen) exits 1, and the release CLI
            # neither crashes nor runs away (exit 0 or 1 in 10 s, < 1000 MB).
            read -r st_a mb_a < <(cli_status "$acli" "$h" "$f")
            read -r st_r mb_r < <(cli_status "$cli" "$h" "$f")
            if [[ $st_a -eq 1 && $st_r -le 1 && $mb_r -lt 1000 ]]; then
                ncont=$((ncont + 1)); verdict="contained upstream $kind"
            elif [[ $st_a -eq 0 && $st_r -le 1 && $mb_r -lt 1000 ]]; then
                ncont=$((ncont + 1)); verdict="contained upstream $kind (did not recur in the CLI: exit 0)"
            else
                nunc=$((nunc + 1))
                verdict="NOT contained upstream $kind (sanitizer CLI exits $st_a; release CLI exits $st_r, $mb_r MB)"
            fi
        else
            nsarbp=$((nsarbp + 1)); verdict="sarbp $kind"
            [[ $alone -eq 1 ]] || verdict+=" (not reproduced alone; stack from the run)"
            if [[ $h != cli_numbers ]]; then
                read -r st_r mb_r < <(cli_status "$cli" "$h" "$f")
                verdict+=" (release CLI exits $st_r, $mb_r MB)"
            fi
        fi
        place="$verdict at ${who#* }"
        if [[ $verdict == sarbp* ]]; then
            echo "fuzz.sh: $h: $verdict: $f" >>"$logdir/findings-sarbp.txt"
            where_own+=("$place")
        else
            echo "fuzz.sh: $h: $verdict: $f" >>"$logdir/findings-upstream.txt"
            if [[ $verdict == unreproduced* ]]; then where_unrep+=("$place"); else where_up+=("$place"); fi
        fi
    done < <(find "$art" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' \
                 -o -name 'leak-*' -o -name 'slow-unit-*' \) ! -name '*.log' -newer "$marker" -print0)
    nfind=$((nsarbp + ncont + nunc + nunrep))
    cat "$logdir/findings-sarbp.txt" "$logdir/findings-upstream.txt" >"$logdir/findings.txt" 2>/dev/null || true
    if [[ $nsarbp -gt 0 ]]; then
        echo "fuzz.sh: $h: sarbp's own findings, $nsarbp, by place (inputs in $logdir/findings-sarbp.txt):"
        printf '%s\n' "${where_own[@]}" | sort | uniq -c | sed 's/^/    /'
    fi
    if [[ $((ncont + nunc)) -gt 0 ]]; then
        echo "fuzz.sh: $h: upstream findings (HDF5, matio, compression), $((ncont + nunc)), by place (inputs in $logdir/findings-upstream.txt):"
        printf '%s\n' "${where_up[@]}" | sort | uniq -c | sed 's/^/    /'
    fi
    if [[ $nunrep -gt 0 ]]; then
        echo "fuzz.sh: $h: unreproduced, $nunrep (not counted):"
        printf '%s\n' "${where_unrep[@]}" | sort | uniq -c | sed 's/^/    /'
    fi
    tot_own=$((tot_own + nsarbp)) tot_cont=$((tot_cont + ncont)) tot_unc=$((tot_unc + nunc))
    rate=$(( secs > 0 ? execs / secs : execs ))
    line="$h: ${secs} s, $execs execs ($rate/s), ${cov:-cov: ? ft: ?}, corpus $corp, runs $runs;"
    line+=" findings $nfind (sarbp $nsarbp, contained upstream $ncont, uncontained upstream $nunc,"
    line+=" unreproduced $nunrep)"
    echo "fuzz.sh: $line"
    report+=("$line")
    [[ $((nsarbp + nunc)) -eq 0 ]] || overall=1
done

echo "fuzz.sh: summary (logs in $bdir/logs, findings in $artifacts):"
printf '  %s\n' "${report[@]}"
echo "fuzz.sh: sarbp's own findings: $tot_own (BUILD/logs/NAME/findings-sarbp.txt)"
echo "fuzz.sh: upstream findings: $((tot_cont + tot_unc)), $tot_cont contained, $tot_unc NOT contained (BUILD/logs/NAME/findings-upstream.txt)"
exit "$overall"
