"""Tests of the Python package sarbp (src/python), run by CTest through
tests/python/run_tests.sh: a venv under the build directory, the package
pip-installed from the source tree, then pytest.

Environment: SARBP_EXE (the CLI of the same build: its images are the
reference, bit for bit), SARBP_DATA_DIR (data/), SARBP_GOTCHA_DIR (the Gotcha
pass1 HH files; tests skip without them). Images from the CLI and from Python
are compared byte for byte on the CPU in FP32 (same build, same code); the
GPU test compares by SER with a stated tolerance."""

import json
import os
import resource
import subprocess
import threading

import numpy as np
import pytest

import sarbp

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("SARBP_DATA_DIR", os.path.join(HERE, "..", "..", "data"))
PT = os.path.join(DATA, "point_targets.h5")
GOTCHA = os.environ.get("SARBP_GOTCHA_DIR",
                        os.path.join(HERE, "..", "..", "..", "shared", "data", "gotcha", "pass1",
                                     "HH"))
EXE = os.environ.get("SARBP_EXE")

need_cli = pytest.mark.skipif(not EXE or not os.access(EXE, os.X_OK),
                              reason="SARBP_EXE (the sarbp CLI) not given")
need_gotcha = pytest.mark.skipif(not os.path.isdir(GOTCHA), reason=f"no Gotcha data in {GOTCHA}")

SMALL = dict(grid=(96, 80), spacing=0.15, backend="cpu")  # a quick form of point_targets


def cli(*args, check=True):
    r = subprocess.run([EXE, *args], capture_output=True, text=True,
                       env=dict(os.environ, SARBP_PROGRESS_INTERVAL="86400"))
    if check and r.returncode != 0:
        raise AssertionError(f"sarbp {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r


def cli_image(tmp_path, inputs, *opts):
    out = str(tmp_path / "cli.npy")
    args = ["form", "-q", "-o", out]
    for i in ([inputs] if isinstance(inputs, str) else inputs):
        args += ["-i", i]
    cli(*args, *opts)
    return np.load(out)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.fixture(scope="module")
def ph():
    return sarbp.read(PT)


# ---- the package ---------------------------------------------------------------------


@need_cli
def test_version_is_the_clis():
    out = cli("--version").stdout.split()
    assert out[0] == "sarbp" and out[1] == sarbp.__version__


def test_error_is_an_exception():
    assert issubclass(sarbp.Error, Exception)
    assert sarbp.Error.__module__ == "sarbp"


# ---- phase histories -----------------------------------------------------------------


def test_read(ph):
    assert ph.npulses == 256 and ph.nsamples == 256 and ph.domain == "freq"
    assert ph.samples.shape == (256, 256) and ph.samples.dtype == np.complex64
    assert ph.pos.shape == (256, 3) and ph.r0.shape == (256,)
    assert ph.f0.shape == (256,) and ph.df.shape == (256,)
    assert ph.files == [PT]
    assert not ph.samples.flags.writeable  # the library's copy, validated once
    s = ph.summary()
    assert s["bandwidth"] > 0 and s["range_res"] > 0


def test_read_missing_file_names_it(tmp_path):
    missing = str(tmp_path / "nothing-here.h5")
    with pytest.raises(sarbp.Error, match="nothing-here.h5") as e:
        sarbp.read(missing)
    assert e.value.status == 2  # SARBP_ERR_IO


def test_read_bad_file_names_it(tmp_path):
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"this is not HDF5" * 10)
    with pytest.raises(sarbp.Error, match="bad.h5"):
        sarbp.read(str(bad))


def test_from_arrays_round_trip(ph, tmp_path):
    p = sarbp.PhaseHistory(ph.samples, ph.pos, ph.r0, ph.f0, ph.df, th=ph.th)
    assert p.npulses == ph.npulses and p.files is None
    assert same_bits(p.samples, ph.samples) and same_bits(p.pos, ph.pos)
    assert np.array_equal(p.th, ph.th) and p.phi is None and p.r_correct is None
    path = tmp_path / "round.h5"
    p.save(path)
    q = sarbp.read(path)
    assert same_bits(q.samples, ph.samples) and np.array_equal(q.r0, ph.r0)


def test_from_arrays_converts(ph):
    ref = np.asarray(sarbp.form(ph, **SMALL))
    conv = [
        dict(samples=ph.samples.astype(np.complex128)),     # wider dtype
        dict(samples=np.asfortranarray(ph.samples)),         # other strides
        dict(samples=np.ascontiguousarray(ph.samples[::-1])[::-1]),  # negative strides
        dict(f0=float(ph.f0[0]), df=float(ph.df[0])),        # scalars for all pulses
        dict(pos=ph.pos.tolist(), r0=list(ph.r0)),           # lists
        dict(pos=np.asfortranarray(ph.pos), r0=ph.r0.astype(">f8")),  # layout, byte order
    ]
    for c in conv:
        a = dict(samples=ph.samples, pos=ph.pos, r0=ph.r0, f0=ph.f0, df=ph.df)
        a.update(c)
        img = sarbp.form(sarbp.PhaseHistory(**a), **SMALL)
        assert same_bits(img, ref), list(c)
    # integers are converted to float64
    p = sarbp.PhaseHistory(ph.samples, np.rint(ph.pos).astype(np.int64),
                           np.rint(ph.r0).astype(np.int32), ph.f0, ph.df)
    assert p.pos.dtype == np.float64 and np.array_equal(p.pos, np.rint(ph.pos))


def test_from_arrays_refuses(ph):
    base = dict(samples=ph.samples, pos=ph.pos, r0=ph.r0, f0=ph.f0, df=ph.df)
    cases = [
        (dict(samples=np.abs(ph.samples)), "samples: wants complex"),
        (dict(samples=ph.samples.real.astype(np.int32)), "samples: wants complex"),
        (dict(samples=ph.samples[0]), "samples: wants shape"),
        (dict(samples=ph.samples[:, :, None]), "samples: wants shape"),
        (dict(samples=np.zeros((0, 4), np.complex64)), "samples"),
        (dict(pos=ph.pos[:, :2]), r"pos: wants shape \(256, 3\)"),
        (dict(pos=ph.pos[:10]), r"pos: wants shape"),
        (dict(r0=ph.r0[:-1]), r"r0: wants shape \(256,\)"),
        (dict(r0=ph.r0.astype(complex)), "r0: wants real numbers"),
        (dict(f0=np.array(["a"] * 256)), "f0: wants real numbers"),
        (dict(df=ph.df[:3]), "df: wants shape"),
        (dict(r0=-ph.r0), "r0 of pulse 0"),
        (dict(df=np.zeros(256)), "frequency step"),
    ]
    for c, msg in cases:
        a = dict(base)
        a.update(c)
        with pytest.raises(sarbp.Error, match=msg):
            sarbp.PhaseHistory(**a)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, complex(0, np.nan)])
def test_nonfinite_samples_refused(ph, bad):
    s = ph.samples.copy()
    s[7, 11] = bad
    with pytest.raises(sarbp.Error, match="sample 11 of pulse 7 is NaN or Inf"):
        sarbp.PhaseHistory(s, ph.pos, ph.r0, ph.f0, ph.df)
    pos = ph.pos.copy()
    pos[3, 1] = np.nan
    with pytest.raises(sarbp.Error, match="antenna positions contain NaN or Inf"):
        sarbp.PhaseHistory(ph.samples, pos, ph.r0, ph.f0, ph.df)


def test_buffer_layer_checks(ph):
    # the C layer below the Python conversions checks format, shape and layout itself
    from sarbp import _sarbp
    with pytest.raises(sarbp.Error, match="complex64"):
        _sarbp.phd_from_arrays(ph.samples.astype(np.complex128), ph.pos, ph.r0, ph.f0, ph.df,
                               None, None, None, None)
    with pytest.raises(sarbp.Error, match="C-contiguous"):
        _sarbp.phd_from_arrays(np.asfortranarray(ph.samples), ph.pos, ph.r0, ph.f0, ph.df,
                               None, None, None, None)
    with pytest.raises(sarbp.Error, match="float64"):
        _sarbp.phd_from_arrays(ph.samples, ph.pos.astype(np.float32), ph.r0, ph.f0, ph.df,
                               None, None, None, None)
    with pytest.raises(sarbp.Error, match=r"pos: wants shape \(256, 3\)"):
        _sarbp.phd_from_arrays(ph.samples, ph.pos.T.copy(), ph.r0, ph.f0, ph.df,
                               None, None, None, None)
    with pytest.raises(sarbp.Error, match="C-contiguous"):
        _sarbp.phd_from_arrays(ph.samples, ph.pos, "not an array", ph.f0, ph.df,
                               None, None, None, None)


# ---- form: bit for bit with the CLI -------------------------------------------------

# (python keyword arguments, the same as CLI options)
CASES = [
    (dict(backend="cpu"), ["--backend", "cpu"]),
    (dict(backend="cpu", grid=(200, 150), spacing=(0.12, 0.1), center=(1.5, -2.0)),
     ["--backend", "cpu", "--grid", "200x150", "--spacing", "0.12,0.1", "--center", "1.5,-2"]),
    (dict(backend="cpu", grid=(128, 128), window="hamming", az_window="taylor:5:-30",
          interp="cubic", upsample=4, pulses=(10, 200)),
     ["--backend", "cpu", "--grid", "128x128", "--window", "hamming", "--az-window",
      "taylor:5:-30", "--interp", "cubic", "--upsample", "4", "--pulses", "10:200"]),
    (dict(backend="cpu", grid=(100, 100), interp="linear", azimuth=(-1.0, 1.0), threads=1),
     ["--backend", "cpu", "--grid", "100x100", "--interp", "linear", "--azimuth", "-1:1",
      "--threads", "1"]),
    (dict(backend="cpu", grid=(64, 64), precision="fp64"),
     ["--backend", "cpu", "--grid", "64x64", "--precision", "fp64"]),
    (dict(backend="cpu", grid=(256, 256), algorithm="ffbp"),
     ["--backend", "cpu", "--grid", "256x256", "--algorithm", "ffbp"]),
    (dict(backend="cpu", grid=(256, 256), algorithm="auto", max_error_db=-50),
     ["--backend", "cpu", "--grid", "256x256", "--algorithm", "auto", "--max-error-db", "-50"]),
]


@need_cli
@pytest.mark.parametrize("kw,opts", CASES, ids=[str(i) for i in range(len(CASES))])
def test_form_equals_cli(tmp_path, ph, kw, opts):
    ref = cli_image(tmp_path, PT, *opts)
    from_path = sarbp.form(PT, **kw)
    assert same_bits(from_path, ref)
    # from numpy arrays: the same pulses built anew
    arrays = sarbp.PhaseHistory(np.array(ph.samples), np.array(ph.pos), np.array(ph.r0),
                                np.array(ph.f0), np.array(ph.df), th=np.array(ph.th))
    assert same_bits(sarbp.form(arrays, **kw), ref)
    assert same_bits(sarbp.form(ph, **kw), ref)


@need_cli
def test_exact_equals_cli(tmp_path, ph):
    kw = dict(backend="cpu", grid=(24, 20), spacing=0.3, precision="exact")
    ref = cli_image(tmp_path, PT, "--backend", "cpu", "--grid", "24x20", "--spacing", "0.3",
                    "--precision", "exact")
    assert same_bits(sarbp.form(PT, **kw), ref)
    assert same_bits(sarbp.form(ph, **kw), ref)


@need_cli
@need_gotcha
def test_gotcha_equals_cli(tmp_path):
    files = sorted(os.path.join(GOTCHA, f) for f in os.listdir(GOTCHA))
    ref = cli_image(tmp_path, GOTCHA, "--backend", "cpu")
    img = sarbp.form(GOTCHA, backend="cpu")
    assert same_bits(img, ref)
    assert np.asarray(img).shape == ref.shape
    ph = sarbp.read(GOTCHA)
    assert ph.files == files
    arrays = sarbp.PhaseHistory(ph.samples, ph.pos, ph.r0, ph.f0, ph.df,
                                r_correct=ph.r_correct, ph_correct=ph.ph_correct)
    assert same_bits(sarbp.form(arrays, backend="cpu"), ref)
    # the file's autofocus corrections, from the files and from memory
    ref_af = cli_image(tmp_path, GOTCHA, "--backend", "cpu", "--grid", "300x300",
                       "--autofocus", "file", "--polarisation", "HH")
    kw = dict(backend="cpu", grid=(300, 300), autofocus="file")
    img_af = sarbp.form(files, polarisation="HH", **kw)
    assert same_bits(img_af, ref_af)
    assert img_af.attrs["autofocus"] == "applied (Gotcha r0 and phase corrections)"
    assert same_bits(sarbp.form(arrays, **kw), ref_af)
    assert not same_bits(img_af, sarbp.form(files, backend="cpu", grid=(300, 300)))


@need_cli
@pytest.mark.parametrize("mode,extra", [("estimate", False), ("pga", False), ("estimate", True)],
                         ids=["estimate", "pga", "estimate-range"])
def test_autofocus_equals_cli(tmp_path, ph, mode, extra):
    """autofocus='estimate'/'pga' (and the range) as 'sarbp form --autofocus M', bit for bit,
    from the file and from the arrays, the estimate carried by the image."""
    opts = ["--backend", "cpu", "--grid", "96x96", "--spacing", "0.4", "--autofocus", mode]
    if extra:
        opts.append("--autofocus-range")
    ref = cli_image(tmp_path, PT, *opts)
    kw = dict(backend="cpu", grid=(96, 96), spacing=0.4, autofocus=mode, autofocus_range=extra)
    img = sarbp.form(PT, **kw)
    assert same_bits(img, ref)
    assert img.autofocus_phase is not None and img.autofocus_phase.shape == (ph.npulses,)
    assert (img.autofocus_range is not None) == extra
    assert img.attrs["autofocus"].startswith("estimated by " + ("pga" if mode == "pga" else "sharpness"))
    assert same_bits(sarbp.form(ph, **kw), ref)


@need_cli
def test_heights_equals_cli(tmp_path, ph):
    """heights= (terrain) as 'sarbp form --heights', bit for bit, from a file and from an array;
    bad heights refused with the argument named."""
    ny, nx, d = 80, 96, 0.4
    x = (np.arange(nx) - (nx - 1) / 2) * d
    y = (np.arange(ny) - (ny - 1) / 2) * d
    h = 5.0 * np.exp(-(x[None, :] ** 2 + y[:, None] ** 2) / (2 * 6.0 ** 2)) + 0.1 * x[None, :]
    f = str(tmp_path / "h.npy")
    np.save(f, h)
    ref = cli_image(tmp_path, PT, "--backend", "cpu", "--grid", f"{nx}x{ny}", "--spacing", str(d),
                    "--heights", f)
    kw = dict(backend="cpu", grid=(nx, ny), spacing=d)
    from_file = sarbp.form(PT, heights=f, **kw)
    assert same_bits(from_file, ref)
    assert from_file.attrs["heights_source"] == f
    from_array = sarbp.form(ph, heights=h, **kw)
    assert same_bits(from_array, ref)
    h32 = sarbp.form(ph, heights=np.asfortranarray(h.astype(np.float32)), **kw)  # converted
    assert np.asarray(h32).shape == (ny, nx)
    assert from_array.attrs["heights_source"] == "array"
    assert not same_bits(from_array, sarbp.form(ph, **kw))
    from_array.save(str(tmp_path / "t.h5"))  # the heights it borrows live with the image
    del from_array
    for bad, msg in ((h[:-1], "heights"), (np.full((ny, nx), np.nan), "heights"), (h[0], "heights"),
                     ("nothing.npy", "nothing.npy")):
        with pytest.raises((sarbp.Error, OSError), match=msg):
            sarbp.form(ph, heights=bad, **kw)
    with pytest.raises(sarbp.Error, match="FFBP forms on a plane"):
        sarbp.form(ph, heights=h, algorithm="ffbp", **kw)


# ---- form: arguments -----------------------------------------------------------------


def test_form_image(ph, tmp_path):
    img = sarbp.form(ph, grid=(40, 30), spacing=(0.2, 0.25), center=(1, 2, 0.5), backend="cpu")
    a = np.asarray(img)
    assert a.shape == (30, 40) and a.dtype == np.complex64 and img.shape == (30, 40)
    assert np.allclose(img.x, 1 + (np.arange(40) - 19.5) * 0.2)
    assert np.allclose(img.y, 2 + (np.arange(30) - 14.5) * 0.25)
    assert img.center == (1.0, 2.0, 0.5) and img.spacing == (0.2, 0.25)
    at = img.attrs
    for k in ("backend", "precision", "interp", "upsample", "algorithm", "selection", "autofocus",
              "device", "sarbp_version", "command_line"):
        assert k in at, k
    assert at["backend"] == "cpu" and at["sarbp_version"] == sarbp.__version__
    assert at["selection"] == "all 256 pulses"
    assert at["command_line"].startswith("sarbp.form(")


def test_save_formats(ph, tmp_path):
    img = sarbp.form(ph, **SMALL)
    a = np.asarray(img)
    img.save(tmp_path / "i.npy")
    assert same_bits(np.load(tmp_path / "i.npy"), a)
    img.save([str(tmp_path / "i.h5"), str(tmp_path / "i.png")], db_range=50)
    back = sarbp.read_image(tmp_path / "i.h5")
    assert same_bits(back, a)
    assert np.array_equal(back.x, img.x) and np.array_equal(back.y, img.y)
    assert back.attrs["command_line"] == img.attrs["command_line"]
    assert (tmp_path / "i.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(sarbp.Error, match=r"i\.kmz"):  # needs a scene reference
        img.save(tmp_path / "i.kmz")
    assert not (tmp_path / "i.kmz").exists()
    with pytest.raises(sarbp.Error, match="i.bogus"):
        img.save(tmp_path / "i.bogus")
    with pytest.raises(sarbp.Error, match="nodir"):
        img.save(tmp_path / "nodir" / "i.npy")
    with pytest.raises(sarbp.Error, match="db_range"):
        img.save(tmp_path / "i.png", db_range=-3)


def test_save_geolocated(tmp_path):
    img = sarbp.form(PT, scene_ref="34.0,-117.0,100", prf=100.0,
                     collect_start="2008-06-01T12:00:00Z", **SMALL)
    assert "scene_ref" in img.attrs and img.attrs["collect_start"] == "2008-06-01T12:00:00Z"
    img.save(tmp_path / "g.kmz")
    assert (tmp_path / "g.kmz").stat().st_size > 0
    try:
        img.save([tmp_path / "g.tif", tmp_path / "g.nitf"])
    except sarbp.Error as e:  # a build without libtiff/libxml2 says so
        assert e.status == 5, str(e)  # SARBP_ERR_UNSUPPORTED
    else:
        assert sarbp.read_image(tmp_path / "g.nitf").shape == img.shape


def test_image_from_array_and_repr(tmp_path):
    z = (np.arange(12, dtype=np.float64).reshape(3, 4) * (1 + 1j))
    img = sarbp.Image(z, spacing=(0.5, 0.25), center=(1, 2))
    assert np.asarray(img).dtype == np.complex64 and img.shape == (3, 4)
    assert np.array_equal(np.asarray(img), z.astype(np.complex64))
    assert "4 x 3" in repr(img)
    with pytest.raises(sarbp.Error, match="complex"):
        sarbp.Image(np.zeros((3, 4)))
    with pytest.raises(sarbp.Error, match="2-D"):
        sarbp.Image(np.zeros(3, complex))


def test_array_outlives_image(ph):
    a = np.asarray(sarbp.form(ph, **SMALL))  # the Image object is gone
    b = np.asarray(sarbp.form(ph, **SMALL))
    assert same_bits(a, b) and np.abs(a).max() > 0
    s = sarbp.read(PT).samples  # likewise a phase history's arrays
    assert same_bits(s, ph.samples)


def test_form_arguments(ph):
    f = lambda **kw: sarbp.form(ph, **dict(SMALL, **kw))  # noqa: E731
    assert f(grid="64x48").shape == (48, 64)
    assert f(spacing=0.2).spacing == (0.2, 0.2)
    assert f(center=(1, 1)).center == (1.0, 1.0, 0.0)
    assert f(window="hann").attrs["range_window"] == "hann"
    assert f(az_window="hamming").attrs["azimuth_window"] == "hamming"
    assert f(interp="cubic").attrs["interp"] == "cubic"
    assert f(upsample=16).attrs["upsample"] == "16"
    assert f(threads=1).attrs["device"] == "cpu, 1 threads"
    assert f(pulses=(0, 100)).attrs["selection"] == "pulses 0:100 of 256"
    assert f(azimuth=(-0.5, 0.5)).attrs["selection"].startswith("azimuth -0.5:0.5 deg")
    assert f(autofocus="file").attrs["autofocus"].startswith("not applied (asked")
    assert f(autofocus=False).attrs["autofocus"] == "not applied"
    assert f(precision="fp64").attrs["precision"] == "fp64"
    assert f(algorithm="ffbp", grid=(128, 128)).attrs["algorithm"] == "ffbp"
    assert f(gpu_mem=1 << 30).shape == (80, 96)
    assert f(spacing=np.array([0.2, 0.1]), center=np.zeros(3)).spacing == (0.2, 0.1)
    assert f(grid=np.array([8, 6])).shape == (6, 8)
    assert sarbp.form(PT, polarisation=None, channel=None, **SMALL).shape == (80, 96)
    assert sarbp.form([PT], **SMALL).shape == (80, 96)
    assert sarbp.form(PT, backend="auto", grid=(8, 8)).shape == (8, 8)


BAD_ARGS = [
    (dict(backend="gpu"), "backend"),
    (dict(precision="fp8"), "precision"),
    (dict(algorithm="fast"), "algorithm"),
    (dict(interp="sinc"), "interp"),
    (dict(window="bogus"), "window"),
    (dict(az_window="taylor:x"), "az_window"),
    (dict(window=3), "window"),
    (dict(autofocus="maybe"), "autofocus"),
    (dict(autofocus="file", autofocus_range=True), "autofocus_range"),
    (dict(grid=(0, 5)), "grid"),
    (dict(grid="axb"), "grid"),
    (dict(grid=(1, 2, 3)), "grid"),
    (dict(spacing=-1), "spacing"),
    (dict(spacing=(0.1, 0.1, 0.1)), "spacing"),
    (dict(spacing="x"), "spacing"),
    (dict(center=(1,)), "center"),
    (dict(center=("a", "b")), "center"),
    (dict(upsample=100), "upsample"),
    (dict(upsample=2.5), "upsample"),
    (dict(threads=0), "threads"),
    (dict(pulses=(5, 2)), "pulses"),
    (dict(pulses=(0, 100000)), "pulses 0:100000 is outside the 256 pulses"),
    (dict(pulses=(0, 10), azimuth=(0, 1)), "exclude each other"),
    (dict(azimuth=(1, 0)), "azimuth"),
    (dict(azimuth=(50, 60)), "azimuth"),
    (dict(device="x"), "device"),
    (dict(device=[0, 0]), "twice"),
    (dict(device=-1), "device"),
    (dict(session="s"), "session"),
    (dict(precision="fp16"), "fp16.*needs backend='cuda'"),
    (dict(precision="mixed"), "cuda"),
    (dict(algorithm="ffbp", precision="fp64"), "ffbp.*fp32"),
    (dict(algorithm="ffbp", interp="quadratic"), "ffbp"),
    (dict(raw_fp16=True), "raw_fp16"),
    (dict(max_error_db=0), "max_error_db"),
    (dict(polarisation="XX"), "polarisation"),
    (dict(scene_ref="north pole"), "scene_ref"),
    (dict(collect_start="yesterday"), "collect_start"),
    (dict(prf=-1.0), "prf"),
    (dict(spacing=(0.1, 2e6)), "spacing"),
]


@pytest.mark.parametrize("kw,msg", BAD_ARGS, ids=[str(i) for i in range(len(BAD_ARGS))])
def test_form_bad_arguments(kw, msg):
    with pytest.raises(sarbp.Error, match=msg):
        sarbp.form(PT, **dict(SMALL, **kw))


def test_form_bad_sources(tmp_path):
    with pytest.raises(sarbp.Error, match="missing.h5"):
        sarbp.form(str(tmp_path / "missing.h5"), backend="cpu")
    with pytest.raises(sarbp.Error, match="missing.mat"):
        sarbp.form([PT, str(tmp_path / "missing.mat")], backend="cpu")
    with pytest.raises(sarbp.Error, match="source"):
        sarbp.form(42)
    with pytest.raises(sarbp.Error, match="empty"):
        sarbp.form([])
    with pytest.raises(sarbp.Error, match="scene_ref"):
        sarbp.form(sarbp.read(PT), scene_ref="34,-117,0", **SMALL)


# ---- sessions, threads, memory -------------------------------------------------------


def test_session(ph):
    ref = sarbp.form(ph, **SMALL)
    with sarbp.Session(threads=2, host_budget=1 << 30) as s:
        assert not s.closed
        for _ in range(3):
            assert same_bits(sarbp.form(ph, session=s, **SMALL), ref)
        assert same_bits(sarbp.form(PT, session=s, **SMALL), ref)
        m = s.memory()
        assert m["budget"] == 1 << 30 and m["peak"] > 0
    assert s.closed
    with pytest.raises(sarbp.Error, match="closed"):
        sarbp.form(ph, session=s, **SMALL)
    s.close()  # twice is fine
    with pytest.raises(sarbp.Error, match="host_budget"):
        sarbp.Session(host_budget=-1)
    with pytest.raises(sarbp.Error, match="budget"):  # a budget too small for one band
        with sarbp.Session(host_budget=1000) as tiny:
            sarbp.form(ph, session=tiny, **SMALL)


def run_threads(fn, n=2):
    out, errs = [None] * n, []

    def work(i):
        try:
            out[i] = fn(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errs.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errs, errs
    return out


def test_two_threads(ph):
    kw = dict(grid=(256, 256), backend="cpu")
    ref = np.asarray(sarbp.form(ph, **kw))
    for a in run_threads(lambda i: np.asarray(sarbp.form(ph if i else PT, **kw)), 4):
        assert same_bits(a, ref)


def test_two_threads_one_session(ph):
    kw = dict(grid=(256, 256), backend="cpu")
    ref = np.asarray(sarbp.form(ph, **kw))
    with sarbp.Session() as s:
        res = run_threads(lambda i: [np.asarray(sarbp.form(ph, session=s, **kw))
                                     for _ in range(3)], 3)
    for r in res:
        for a in r:
            assert same_bits(a, ref)


def test_gil_released(ph):
    # a form in one thread lets Python run in another
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)

    t = threading.Thread(target=count)
    t.start()
    try:
        sarbp.form(ph, grid=(400, 400), backend="cpu", threads=1)
    finally:
        done.set()
        t.join()
    assert len(ticks) > 5


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_memory_does_not_grow(ph, tmp_path):
    kw = dict(grid=(256, 256), backend="cpu")  # 512 KiB an image

    def one(i, s):
        a = np.asarray(sarbp.form(ph if i % 2 else PT, session=s if i % 3 else None, **kw))
        assert a.shape == (256, 256)
        p = sarbp.PhaseHistory(ph.samples, ph.pos, ph.r0, ph.f0, ph.df)
        assert p.npulses == 256
        for bad in (dict(backend="gpu"), dict(pulses=(0, 10**6))):
            with pytest.raises(sarbp.Error):
                sarbp.form(PT, **bad)
        with pytest.raises(sarbp.Error):
            sarbp.read(str(tmp_path / "missing.h5"))

    with sarbp.Session() as s:
        for i in range(100):
            one(i, s)
        peak0, rss0 = peak_rss_mib(), rss_mib()
        for i in range(20):
            one(i, s)
        peak1, rss1 = peak_rss_mib(), rss_mib()
    print(f"\npeak RSS {peak0:.1f} MiB after 100 forms, {peak1:.1f} MiB after 20 more "
          f"(+{peak1 - peak0:.1f} MiB; limit 64); RSS now {rss0:.1f} -> {rss1:.1f} MiB "
          f"(+{rss1 - rss0:.1f}; limit 8)")
    assert peak1 - peak0 < 64
    assert rss1 - rss0 < 8  # 20 leaked images would be 10 MiB


# ---- compare and metrics -------------------------------------------------------------


@need_cli
def test_compare_keys_and_values(ph, tmp_path):
    a = sarbp.form(ph, **SMALL)
    b = sarbp.form(ph, window="hamming", **SMALL)
    a.save(tmp_path / "a.npy")
    b.save(tmp_path / "b.npy")
    ref = json.loads(cli("compare", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"),
                         "--json").stdout)
    d = sarbp.compare(tmp_path / "a.npy", tmp_path / "b.npy")
    assert set(d) == set(ref)
    for k, v in ref.items():
        if isinstance(v, float):
            assert d[k] == pytest.approx(v, rel=1e-5), k
    # arrays and Images give the same figures
    d2 = sarbp.compare(np.asarray(a), b)
    assert d2["ser_db"] == pytest.approx(d["ser_db"], rel=1e-12)
    same = sarbp.compare(a, a, min_ser=100)
    assert same["ser_db"] == float("inf") and same["pass"]
    assert not sarbp.compare(a, b, min_ser=1000)["pass"]
    with pytest.raises(sarbp.Error, match="grid|nx|size|same"):
        sarbp.compare(a, sarbp.form(ph, grid=(10, 10), backend="cpu"))
    with pytest.raises(sarbp.Error, match="nope.npy"):
        sarbp.compare(tmp_path / "nope.npy", a)


@need_cli
def test_metrics_keys_and_values(tmp_path):
    img = sarbp.form(PT, grid=(256, 256), backend="cpu")
    img.save(tmp_path / "m.h5")
    ref = json.loads(cli("metrics", str(tmp_path / "m.h5"), "--json", "-q").stdout)
    d = sarbp.metrics(img)
    assert set(d) == set(ref)
    assert set(d["cuts"][0]) == set(ref["cuts"][0])
    assert set(d["image_stats"]) == set(ref["image_stats"])
    assert d["peak"]["ix"] == ref["peak"]["ix"] and d["peak"]["iy"] == ref["peak"]["iy"]
    assert d["cuts"][0]["pslr_db"] == pytest.approx(ref["cuts"][0]["pslr_db"], rel=1e-6)
    t = sarbp.metrics(str(tmp_path / "m.h5"), target=(0, 0), cut_angle=30)
    assert t["cuts"][0]["angle_deg"] == 30
    with pytest.raises(sarbp.Error, match="cut_angle"):
        sarbp.metrics(img, cut_angle=1000)
    with pytest.raises(sarbp.Error, match="not yet"):
        sarbp.metrics(img, plot="x.png")


# ---- GPU -----------------------------------------------------------------------------


@pytest.mark.skipif(not sarbp.have_cuda or sarbp.cuda_device_count() == 0,
                    reason="no CUDA back end in this build or no GPU")
def test_gpu_matches_cpu(ph):
    kw = dict(grid=(256, 256))
    cpu = sarbp.form(ph, backend="cpu", **kw)
    gpu = sarbp.form(ph, backend="cuda", device=0, **kw)
    ser = sarbp.compare(gpu, cpu)["ser_db"]
    print(f"cuda against cpu: SER {ser:.1f} dB (at least 60 asked)")
    assert ser > 60
    with sarbp.Session(devices=[0]) as s:
        assert sarbp.form(ph, backend="cuda", session=s, **kw).attrs["device"] == "cuda device 0"


@pytest.mark.skipif(not sarbp.have_cuda or sarbp.cuda_device_count() == 0,
                    reason="no CUDA back end in this build or no GPU")
def test_gpu_threads_one_session(ph):
    # forms of several shapes from three threads side by side on one device,
    # each the same bits as the same form alone without a session
    shapes = [dict(grid=(256, 256)), dict(grid=(320, 192), precision="fp16"),
              dict(grid=(128, 128), interp="linear")]
    refs = [np.asarray(sarbp.form(ph, backend="cuda", device=0, **kw)) for kw in shapes]
    with sarbp.Session(devices=[0]) as s:
        res = run_threads(lambda i: [np.asarray(sarbp.form(ph, backend="cuda", session=s,
                                                           **shapes[(i + k) % 3]))
                                     for k in range(6)], 3)
        assert s.memory(0)["peak"] > 0
    for i, r in enumerate(res):
        for k, a in enumerate(r):
            assert same_bits(a, refs[(i + k) % 3])
