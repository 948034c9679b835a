#!/usr/bin/env python3
"""python-session-bench.py - issue 28's bar: N forms of a 1024^2 image from 1024 pulses inside
one sarbp.Session on one GPU, against the sum of their kernel times.

usage: tools/python-session-bench.py SARBP_EXE [N]

Simulates the pulses with 'sarbp simulate' (1024 pulses of 512 samples, clutter), measures the
kernel-only time of form's default kernel on the same sizes with 'sarbp bench --backend cuda'
(its bench scene: the time depends on the sizes only), then times N forms through
sarbp.form(..., session=s) from the arrays in memory inside a sarbp.Session(devices=[0]) (the
device starts when the session is made, timed apart); the first form (cuFFT plans, kernels
loaded, buffers pinned) is counted apart and with them. Prints one line per figure; the ratio
is total / (N x kernel time).
Needs the sarbp package (pip install ./src/python, built with CUDA) and a GPU."""
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
    with s:
        for _ in range(n):
            t0 = time.perf_counter()
            img = sarbp.form(ph, session=s, **kw)
            times.append(time.perf_counter() - t0)
        total = time.perf_counter() - t_all  # the session's close not counted
    a = np.asarray(img)
    print(f"device: {sarbp.cuda_device_count()} CUDA device(s); image {a.shape}, peak {np.abs(a).max():.4g}")
    print(f"kernel-only time (sarbp bench, v3 quadratic 8x fp32, median of 9): {kernel_ms:.3f} ms")
    print(f"Session(devices=[0]), the device's start: {start * 1e3:.1f} ms")
    print(f"{n} forms in one Session: {total * 1e3:.1f} ms in all; first {times[0] * 1e3:.1f} ms "
          f"(cuFFT plans, kernels loaded, buffers pinned), then median "
          f"{np.median(times[1:]) * 1e3:.3f} ms a form")
    print(f"ratio to the sum of kernel times: {total * 1e3 / (n * kernel_ms):.2f} "
          f"(without the first form: {sum(times[1:]) * 1e3 / ((n - 1) * kernel_ms):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
