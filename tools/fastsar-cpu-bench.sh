#!/usr/bin/env bash
# fastsar-cpu-bench.sh - sarbp's CPU FFBP against FastSAR's (PyPI `fastsar`) on
# one problem (issue 30): a 1024 x 1024 image at 0.1 m from 512 pulses of 512
# samples (sarbp simulate's Gotcha-like circular aperture, 204 point targets),
# on 1 and 2 threads, both against sarbp's exact image (--precision exact).
#
#   tools/fastsar-cpu-bench.sh [SARBP_BINARY]      (default build/sarbp)
#
# Environment: ROUNDS (default 3: rounds of every configuration, interleaved:
# each round runs every sarbp and FastSAR configuration once, so that load from
# other processes falls on all of them alike; the medians are printed),
# THREADS (default "1 2"), DBS (sarbp --max-error-db values, default
# "-50 -55 -60 -65"), TIGHT (default 1; 0: FastSAR's default setting only,
# without the tighter ones, which take seconds a run), FASTSAR_VENV (default /tmp/sarbp-fastsar-venv: a venv
# made here with fastsar, numpy and h5py from PyPI), WORK (default a temporary
# directory). FastSAR's code is only installed into that venv, never copied.
#
# Timing: sarbp's is `sarbp form -v`'s total less its read (range compression,
# the factorization's choice and the FFBP; a fresh process each run); FastSAR's
# is one call of an ImageFormer built beforehand (its planning and compilation
# are left out), threads set through OpenMP. FastSAR sums over the samples
# where sarbp averages: its image is divided by K (the number of samples) and
# transposed ([nx][ny] against sarbp's rows = y). Both grids put pixel i at
# (i - 512) 0.1 m (sarbp: --center -0.05,-0.05). Accuracy: SER against the
# exact image on every 4th pixel of each axis (256 x 256 pixels over the whole
# image, formed by `sarbp form --precision exact` on a 0.4 m grid).
#
# FastSAR's settings: default (T auto, pmax 0.4), and tighter ones (T 16 with
# pmax 0.1, and T 16 with pmax 0.05, the most accurate measured, 2026-11-28).
# Exits 0 with a message when FastSAR cannot be had (no network, no g++).
set -euo pipefail

SARBP=${1:-build/sarbp}
[ -x "$SARBP" ] || { echo "fastsar-cpu-bench: no sarbp binary at '$SARBP'" >&2; exit 2; }
SARBP=$(cd "$(dirname "$SARBP")" && pwd)/$(basename "$SARBP")
VENV=${FASTSAR_VENV:-/tmp/sarbp-fastsar-venv}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-1 2}
DBS=${DBS:--50 -55 -60 -65}
WORK=${WORK:-$(mktemp -d /tmp/fastsar-bench.XXXXXX)}
mkdir -p "$WORK"

skip() {
    echo "fastsar-cpu-bench: skipped: $*"
    exit 0
}

if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV" >/dev/null 2>&1 || skip "cannot make a venv at $VENV (python3 -m venv)"
fi
if ! "$VENV/bin/python" -c 'import fastsar, numpy, h5py' >/dev/null 2>&1; then
    "$VENV/bin/pip" install -q fastsar numpy h5py >/dev/null 2>&1 ||
        skip "cannot install fastsar, numpy and h5py from PyPI into $VENV"
fi
command -v g++ >/dev/null || skip "FastSAR's CPU kernels need g++"

echo "sarbp: $SARBP ($("$SARBP" --version 2>/dev/null | head -1))"
echo "fastsar: $("$VENV/bin/python" -c 'import fastsar; print(fastsar.__version__)')"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

"$SARBP" simulate -o "$WORK/scene.h5" --pulses 512 --samples 512 --clutter 200 \
    --clutter-extent 45 --seed 11 --targets '0,0,0,10;20,10,0,5;-33.3,21.7,0,8;40.1,-44.4,0,3' -q
"$SARBP" form -i "$WORK/scene.h5" -o "$WORK/exact.npy" --backend cpu --precision exact \
    --grid 256x256 --spacing 0.4 --center 0,0 -q

export SARBP WORK ROUNDS THREADS DBS TIGHT=${TIGHT:-1}
"$VENV/bin/python" - <<'EOF'
import ctypes, ctypes.util, os, re, subprocess, time, warnings
import numpy as np, h5py
import fastsar

warnings.simplefilter('ignore')
sarbp, work = os.environ['SARBP'], os.environ['WORK']
rounds = int(os.environ['ROUNDS'])
threads = [int(t) for t in os.environ['THREADS'].split()]
dbs = os.environ['DBS'].split()
exact = np.load(f'{work}/exact.npy')


def ser(img):  # img: rows = y, 1024 x 1024; against the exact image on every 4th pixel
    t = img[2::4, 2::4]
    return 10 * np.log10(np.sum(abs(exact) ** 2) / np.sum(abs(exact - t) ** 2))


with h5py.File(f'{work}/scene.h5', 'r') as f:
    S = np.ascontiguousarray(f['samples'][...].astype(np.complex64))
    pos, f0, df = f['pos'][...], f['f0'][...], f['df'][...]
assert np.all(f0 == f0[0]) and np.all(df == df[0])
K = S.shape[1]

# FastSAR's OpenMP loops follow omp_set_num_threads of this (the calling) thread
gomp = ctypes.CDLL(ctypes.util.find_library('gomp') or 'libgomp.so.1')
fs_cfgs = [('default', {})]
if os.environ['TIGHT'] != '0':
    fs_cfgs += [('T16 pmax0.1', dict(T=16, pmax=0.1)), ('T16 pmax0.05', dict(T=16, pmax=0.05))]
formers = {}
for name, kw in fs_cfgs:
    formers[name] = fastsar.ImageFormer(pos, float(f0[0]), float(df[0]), K, 1024, 1024, 0.1, 0.1,
                                        backend='cpu', window=False, **kw)
    formers[name](S)  # warm: compiles and pages in its buffers


def run_sarbp(db, nt):
    out = f'{work}/sarbp_{db}_{nt}.npy'
    r = subprocess.run([sarbp, 'form', '-i', f'{work}/scene.h5', '-o', out, '--backend', 'cpu',
                        '--algorithm', 'ffbp', '--grid', '1024x1024', '--spacing', '0.1',
                        '--center', '-0.05,-0.05', '--threads', str(nt), '--max-error-db', db, '-v'],
                       capture_output=True, text=True, check=True)
    m = re.search(r'form: ([0-9.]+) s \(.*read ([0-9.]+) s\)', r.stderr)
    fac = re.search(r'ffbp: (base [^;]*);', r.stderr)
    return float(m.group(1)) - float(m.group(2)), out, fac.group(1) if fac else ''


times, sers, notes = {}, {}, {}
for rnd in range(rounds):
    for nt in threads:
        for db in dbs:
            t, out, fac = run_sarbp(db, nt)
            times.setdefault(('sarbp', f'--max-error-db {db}', nt), []).append(t)
            if rnd == 0:
                sers[('sarbp', f'--max-error-db {db}', nt)] = ser(np.load(out))
                notes[('sarbp', f'--max-error-db {db}', nt)] = fac
        gomp.omp_set_num_threads(nt)
        for name, _ in fs_cfgs:
            t0 = time.perf_counter()
            img = np.asarray(formers[name](S))
            times.setdefault(('fastsar', name, nt), []).append(time.perf_counter() - t0)
            if rnd == 0:
                sers[('fastsar', name, nt)] = ser(img.T / K)

print(f'{"impl":8} {"setting":22} {"threads":>7} {"median s":>9} {"per-core eff":>12} {"SER exact dB":>12}  runs (s)')
for key in sorted(times, key=lambda k: (k[0], k[1], k[2])):
    impl, setting, nt = key
    med = float(np.median(times[key]))
    one = times.get((impl, setting, 1))
    eff = f'{100 * np.median(one) / (nt * med):.0f}%' if one and nt > 1 else ''
    runs = ' '.join(f'{t:.3f}' for t in times[key])
    print(f'{impl:8} {setting:22} {nt:7d} {med:9.3f} {eff:>12} {sers[key]:12.2f}  {runs}  {notes.get(key, "")}')
EOF
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
