#!/usr/bin/env python3
"""python-session-bench.py - issue 28's bar: N forms of a 1024^2 image from 1024 pulses inside
one sarbp.Session on one GPU, against the sum of their kernel times.

usage: tools/python-session-bench.py SARBP_EXE [N [THREADS]]

Simulates the pulses with 'sarbp simulate' (1024 pulses of 512 samples, clutter), measures the
kernel-only time of form's default kernel on the same sizes with 'sarbp bench --backend cuda'
(its bench scene: the time depends on the sizes only), then times N forms through
sarbp.form(..., session=s) from the arrays in memory inside a sarbp.Session(devices=[0]) (the
device starts when the session is made, with a small form that loads the kernels and cuFFT,
timed apart); the first form (this shape's cuFFT plans and buffers) is counted apart and with
the others; with THREADS > 1 the forms after the
first run in that many Python threads sharing the session (a thread pool's map), as a script
forming a series would. Prints one line per figure; the ratio is total / (N x kernel time).
Needs the sarbp package (pip install ./src/python, built with CUDA) and a GPU."""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import sarbp


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    exe = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    nthreads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    if n < 2 or nthreads < 1:
        print("N wants 2 or more forms, THREADS 1 or more")
        return 2
    tmp = tempfile.mkdtemp()
    sim = os.path.join(tmp, "s.h5")
    subprocess.run([exe, "simulate", "-o", sim, "--pulses", "1024", "--samples", "512",
                    "--clutter", "200", "--clutter-extent", "45"], check=True)
    out = subprocess.run([exe, "bench", "--backend", "cuda", "--grid", "1024x1024", "--pulses",
                          "1024", "--interp", "quadratic:8", "--precision", "fp32", "--variant",
                          "v3", "--reps", "9", "--json"], check=True, capture_output=True,
                         text=True).stdout
    kernel_ms = None
    for line in out.splitlines():
        if line.startswith("{") and '"variant":"v3"' in line.replace(" ", ""):
            row = json.loads(line)
            kernel_ms = row.get("fp32_ms") or row.get("ms")
    if kernel_ms is None:
        print(out)
        print("could not find the v3 fp32 kernel time in the bench output")
        return 1
    ph = sarbp.read(sim)
    kw = dict(grid=(1024, 1024), spacing=0.1, backend="cuda")
    times = []
    t_start = time.perf_counter()
    s = sarbp.Session(devices=[0])  # the device starts here, once
    start = time.perf_counter() - t_start
    t_all = time.perf_counter()
    last = [None]

    def one(_):
        t0 = time.perf_counter()
        last[0] = sarbp.form(ph, session=s, **kw)  # the one before is freed
        return time.perf_counter() - t0

    with s:
        times.append(one(0))
        if nthreads > 1:
            with concurrent.futures.ThreadPoolExecutor(nthreads) as pool:
                times += pool.map(one, range(1, n))
        else:
            times += [one(k) for k in range(1, n)]
        total = time.perf_counter() - t_all  # the session's close not counted
        rest = total - times[0]
    a = np.asarray(last[0])
    print(f"device: {sarbp.cuda_device_count()} CUDA device(s); image {a.shape}, peak {np.abs(a).max():.4g}")
    print(f"kernel-only time (sarbp bench, v3 quadratic 8x fp32, median of 9): {kernel_ms:.3f} ms")
    print(f"Session(devices=[0]), the device's start and warming form: {start * 1e3:.1f} ms")
    print(f"{n} forms in one Session, {nthreads} thread(s): {total * 1e3:.1f} ms in all; first "
          f"{times[0] * 1e3:.1f} ms (this shape's cuFFT plans and buffers), then "
          f"{rest * 1e3 / (n - 1):.3f} ms a form (each form's own time: median "
          f"{np.median(times[1:]) * 1e3:.3f} ms)")
    print(f"ratio to the sum of kernel times: {total * 1e3 / (n * kernel_ms):.2f} "
          f"(without the first form: {rest * 1e3 / ((n - 1) * kernel_ms):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
