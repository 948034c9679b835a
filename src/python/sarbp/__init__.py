"""sarbp: SAR image formation by backprojection, from Python.

The sarbp library (C, CUDA) behind a small numpy interface:

    import numpy as np, sarbp
    ph = sarbp.read("data/point_targets.h5")          # a PhaseHistory
    img = sarbp.form(ph, grid=(256, 256), backend="cpu")
    a = np.asarray(img)                                # complex64 [ny][nx], row 0 south
    img.save("image.h5")
    print(sarbp.metrics(img)["cuts"][0]["pslr_db"])

form() takes the options of 'sarbp form' under the same names (--az-window
is az_window) and the same defaults, and gives the CLI's image bit for bit.
Errors raise sarbp.Error with the library's message, naming the file or
argument. See docs/python.md.
"""

import os
import threading

import numpy as np

from . import _sarbp

__all__ = ["Error", "PhaseHistory", "Image", "Session", "read", "read_image", "form", "compare",
           "metrics", "cuda_device_count", "__version__"]

#: The library's version, the CLI's ``sarbp --version`` (CMake's project version).
__version__ = _sarbp.version

#: Whether this build has the CUDA back end (nvcc was found when it was built).
have_cuda = bool(_sarbp.have_cuda)

Error = _sarbp.Error
Error.__module__ = "sarbp"


def cuda_device_count():
    """The usable CUDA devices (0 without the CUDA back end or a GPU)."""
    return _sarbp.cuda_device_count()


def _fail(message):
    err = Error(message)
    err.status = 4  # SARBP_ERR_INVALID
    err.reason = "invalid argument or data"
    return err


def _path(p, what):
    if isinstance(p, (str, os.PathLike)):
        s = os.fspath(p)
        if isinstance(s, bytes):
            s = os.fsdecode(s)
        return s
    raise _fail(f"{what}: wants a path, not {type(p).__name__}")


def _paths(source, what):
    if isinstance(source, (str, os.PathLike)):
        return [_path(source, what)]
    if isinstance(source, (list, tuple)):
        if not source:
            raise _fail(f"{what}: the list of paths is empty")
        return [_path(p, what) for p in source]
    raise _fail(f"{what}: wants a path, a list of paths or a sarbp.PhaseHistory, "
                f"not {type(source).__name__}")


def _real_array(x, what, shape):
    """x as C-contiguous float64 of shape (a tuple; None for any length)."""
    a = np.asarray(x)
    if a.dtype == object or not (np.issubdtype(a.dtype, np.floating)
                                 or np.issubdtype(a.dtype, np.integer)):
        raise _fail(f"{what}: wants real numbers, not dtype {a.dtype}")
    if a.ndim != len(shape) or any(n is not None and n != m for n, m in zip(shape, a.shape)):
        want = "(" + ", ".join("N" if n is None else str(n) for n in shape) + \
            ("," if len(shape) == 1 else "") + ")"
        raise _fail(f"{what}: wants shape {want}, not {a.shape}")
    return np.ascontiguousarray(a, dtype=np.float64)


def _per_pulse(x, what, npulses):
    """A scalar or one value a pulse, as float64 [npulses]."""
    a = np.asarray(x)
    if a.ndim == 0:
        a = np.full(npulses, _real_array(a.reshape(1), what, (1,))[0])
    return _real_array(a, what, (npulses,))


def _complex_image(x, what):
    a = np.asarray(x)
    if not np.issubdtype(a.dtype, np.complexfloating):
        raise _fail(f"{what}: wants a complex image (complex64), not dtype {a.dtype}")
    if a.ndim != 2:
        raise _fail(f"{what}: wants a 2-D image [ny][nx], not {a.ndim}-D")
    return np.ascontiguousarray(a, dtype=np.complex64)


class PhaseHistory:
    """Pulses in memory: per-pulse metadata and their samples.

    PhaseHistory(samples, pos, r0, f0, df, th=None, phi=None, r_correct=None,
    ph_correct=None) builds one from arrays (frequency domain, the scene frame,
    metres and Hz, as include/sarbp/phd.h):

      samples     [npulses][nsamples] complex (complex64; complex128 is converted)
      pos         [npulses][3] antenna phase centre x, y, z (m)
      r0          [npulses] range from the antenna to the scene origin (m)
      f0, df      first frequency and step (Hz): one a pulse, or a scalar for all
      th, phi     azimuth and elevation (deg), optional
      r_correct, ph_correct  the Gotcha autofocus corrections (m, rad), optional

    Other dtypes are converted (integers to float64), other layouts copied to
    C order; a wrong shape or a non-numeric dtype raises sarbp.Error. The
    arrays are copied and checked: NaN or Inf (samples, positions, ...) and
    implausible metadata are refused with the library's message.

    The arrays read back (read-only views of the library's copy) as .samples,
    .pos, .r0, .f0, .df, .th, .phi, .r_correct, .ph_correct (None when absent).
    """

    def __init__(self, samples, pos, r0, f0, df, th=None, phi=None, r_correct=None,
                 ph_correct=None):
        s = np.asarray(samples)
        if not np.issubdtype(s.dtype, np.complexfloating):
            raise _fail(f"samples: wants complex samples (complex64), not dtype {s.dtype}")
        if s.ndim != 2:
            raise _fail(f"samples: wants shape (npulses, nsamples), not {s.shape}")
        if s.size == 0:
            raise _fail(f"samples: wants at least one pulse and one sample, not shape {s.shape}")
        s = np.ascontiguousarray(s, dtype=np.complex64)
        n = s.shape[0]
        opt = [None if v is None else _real_array(v, name, (n,))
               for v, name in ((th, "th"), (phi, "phi"), (r_correct, "r_correct"),
                               (ph_correct, "ph_correct"))]
        self._h = _sarbp.phd_from_arrays(s, _real_array(pos, "pos", (n, 3)),
                                         _real_array(r0, "r0", (n,)), _per_pulse(f0, "f0", n),
                                         _per_pulse(df, "df", n), *opt)

    @classmethod
    def _wrap(cls, handle):
        self = cls.__new__(cls)
        self._h = handle
        return self

    def _field(self, name):
        a = self._h.field(name)
        return None if a is None else np.asarray(a)

    npulses = property(lambda self: self._h.npulses, doc="number of pulses")
    nsamples = property(lambda self: self._h.nsamples, doc="samples per pulse")
    domain = property(lambda self: self._h.domain,
                      doc="'freq' (frequency samples, as Gotcha) or 'chirp' (raw fast time)")
    files = property(lambda self: None if self._h.origin is None else self._h.origin.split(";"),
                     doc="the files it was read from, in azimuth order (None: built from arrays)")
    samples = property(lambda self: self._field("samples"), doc="[npulses][nsamples] complex64")
    pos = property(lambda self: self._field("pos"), doc="[npulses][3] antenna positions (m)")
    r0 = property(lambda self: self._field("r0"), doc="[npulses] range to the origin (m)")
    f0 = property(lambda self: self._field("f0"), doc="[npulses] first frequency (Hz)")
    df = property(lambda self: self._field("df"), doc="[npulses] frequency step (Hz)")
    th = property(lambda self: self._field("th"), doc="[npulses] azimuth (deg) or None")
    phi = property(lambda self: self._field("phi"), doc="[npulses] elevation (deg) or None")
    r_correct = property(lambda self: self._field("r_correct"),
                         doc="[npulses] Gotcha r0 correction (m) or None")
    ph_correct = property(lambda self: self._field("ph_correct"),
                          doc="[npulses] Gotcha phase correction (rad) or None")

    @property
    def chirp(self):
        """Chirp-domain scalars (fs, chirp_rate, pulse_len, fc, t0); zeros for 'freq'."""
        return self._h.chirp()

    def summary(self):
        """Derived figures, as 'sarbp info': band, resolutions, alias-free extent."""
        return self._h.summary()

    def save(self, path):
        """Writes sarbp's own HDF5 phase-history file (what 'sarbp form -i' reads)."""
        self._h.save(_path(path, "path"))

    def __repr__(self):
        return f"<sarbp.PhaseHistory {self.npulses} pulses x {self.nsamples} samples, {self.domain}>"


def read(path, channel=None, polarisation=None):
    """Reads a phase history into memory: a file, a directory (every .mat/.h5
    in it), a glob, or a list of them (sarbp .h5, Gotcha .mat/.h5, CPHD), in
    azimuth order. channel: the CPHD channel (default the first);
    polarisation: 'HH', 'VV', 'HV' or 'VH' keeps only those inputs."""
    paths = _paths(path, "path")
    return PhaseHistory._wrap(_sarbp.read_phd(paths, channel, polarisation))


class Image:
    """A complex image on a ground grid.

    np.asarray(img) is the complex64 image [ny][nx] (rows = y, row 0 south,
    as the CLI's .npy), a view of the library's memory (writing to it changes
    the image). .x and .y are the pixel-centre coordinates (m), .attrs the
    provenance the .h5 image carries, .save(path) writes it."""

    def __init__(self, data, spacing=None, center=(0.0, 0.0, 0.0)):
        """An image from a complex array [ny][nx]; spacing (dx, dy) m and center
        (x, y[, z]) m place it on a grid (None: unit spacing, no coordinates,
        as a .npy reads)."""
        a = _complex_image(data, "data")
        c = tuple(float(v) for v in center) + (0.0,) * (3 - len(center))
        if spacing is None:
            self._h = _sarbp.image_from_array(a, 1.0, 1.0, c[0], c[1], c[2], False)
        else:
            dx, dy = (spacing, spacing) if np.ndim(spacing) == 0 else spacing
            self._h = _sarbp.image_from_array(a, float(dx), float(dy), c[0], c[1], c[2], True)
        self._arr = self._h.data()

    @classmethod
    def _wrap(cls, handle):
        self = cls.__new__(cls)
        self._h = handle
        self._arr = handle.data()
        return self

    @property
    def __array_interface__(self):
        return self._arr.__array_interface__

    @property
    def data(self):
        """The pixels as a numpy array (a view; same as np.asarray(img))."""
        return np.asarray(self._arr)

    shape = property(lambda self: (self._h.grid["ny"], self._h.grid["nx"]))
    nx = property(lambda self: self._h.grid["nx"])
    ny = property(lambda self: self._h.grid["ny"])
    grid = property(lambda self: self._h.grid,
                    doc="nx, ny, dx, dy (m), xc, yc, zc (m): the grid's centre")
    spacing = property(lambda self: (self._h.grid["dx"], self._h.grid["dy"]))
    center = property(lambda self: (self._h.grid["xc"], self._h.grid["yc"], self._h.grid["zc"]))
    has_grid_coords = property(lambda self: self._h.has_grid_coords)

    @property
    def x(self):
        """x of each column's pixel centres (m), float64 [nx]."""
        return np.asarray(self._h.coords()[0])

    @property
    def y(self):
        """y of each row's pixel centres (m), float64 [ny]; row 0 is the smallest y."""
        return np.asarray(self._h.coords()[1])

    @property
    def attrs(self):
        """The image's attributes (str values): the provenance 'sarbp form' records."""
        return self._h.attrs()

    @property
    def autofocus_phase(self):
        """The autofocus phase applied per pulse (rad), or None."""
        a = self._h.af_phase()
        return None if a is None else np.asarray(a)

    @property
    def autofocus_range(self):
        """The autofocus range applied per pulse (m; sample at f times
        exp(+j 4 pi f range / c)), or None."""
        a = self._h.af_range()
        return None if a is None else np.asarray(a)

    def save(self, path, db_range=None, complex=False):
        """Writes the image through the library's writers, the format from the
        name: .h5, .npy, .png, .nitf/.ntf/.sicd, .tif/.tiff, .kmz; a list of
        paths writes them all or none. db_range: the dB shown by the 8-bit quick
        looks (default: chosen from the image); complex: .tif holds complex
        float32 instead of dB. Geolocated formats need a scene reference
        (form(..., scene_ref=...) for Gotcha), a SICD pulse times too."""
        paths = _paths(path, "path")
        if db_range is None:
            dbr = -1.0  # SARBP_DB_RANGE_AUTO
        else:
            dbr = float(db_range)
            if not 1e-3 <= dbr <= 1000:
                raise _fail(f"db_range: wants a number of dB in (0, 1000], not {db_range}")
        self._h.save(paths, dbr, bool(complex))

    def __repr__(self):
        g = self._h.grid
        return (f"<sarbp.Image {g['nx']} x {g['ny']} at {g['dx']:g} x {g['dy']:g} m, "
                f"centre ({g['xc']:g}, {g['yc']:g}, {g['zc']:g})>")


def read_image(path):
    """Reads an image file (.h5, .npy, SICD .nitf) into a sarbp.Image."""
    return Image._wrap(_sarbp.image_read(_path(path, "path")))


class Session:
    """What forms reuse: devices, plans, pinned buffers (sarbp_session).

    with sarbp.Session(devices=[0]) as s:
        for ph in histories:
            img = sarbp.form(ph, session=s, ...)

    devices: the CUDA devices its forms use when they name none (an int, a
    list, or 'all'), started here, side by side, when this build and
    machine have CUDA, and warmed by a small form that loads the kernels
    and cuFFT (a quarter of a second or more each, paid once: the first
    form then pays only its shape's cuFFT plans and buffers, a few ms); threads: the copier's host threads (0: the
    default); device_budget, host_budget: bytes its plans may hold per
    device and on the host (0: the defaults). close() (or leaving the with
    block) frees it, waiting for the forms using it. Forms in several
    threads may share a session and run side by side: on one GPU, two
    threads forming image after image keep it busy while each one's
    pulses go up and image comes back."""

    def __init__(self, devices=None, threads=0, device_budget=0, host_budget=0):
        self.devices = _devices(devices)
        self._cv = threading.Condition()
        self._active = 0  # forms using it now
        self._h = _sarbp.Session(threads=_int(threads, "threads", 0, 4096),
                                 device_budget=_int(device_budget, "device_budget", 0, 2**63),
                                 host_budget=_int(host_budget, "host_budget", 0, 2**63))
        if self.devices and cuda_device_count() > 0:
            self._h.start(list(self.devices))

    def close(self):
        """Frees everything the session holds (waits for the forms using it)."""
        with self._cv:
            self._cv.wait_for(lambda: self._active == 0)
            self._h.close()

    @property
    def closed(self):
        return self._h.closed

    def memory(self, device=-1):
        """What the session's plans hold (bytes): budget, used, peak, kept;
        device -1 is the host."""
        return self._h.memory(_int(device, "device", -1, 1024))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"<sarbp.Session{' closed' if self.closed else ''}>"


def _int(v, what, lo, hi):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise _fail(f"{what}: wants a whole number, not {v!r}")
    if not lo <= int(v) <= hi:
        raise _fail(f"{what}: wants a whole number from {lo} to {hi}, not {v}")
    return int(v)


def _devices(device):
    if device is None:
        return None
    if isinstance(device, str):
        if device != "all":
            raise _fail(f"device: wants a device number, a list of them or 'all', not {device!r}")
        n = cuda_device_count()
        return list(range(n)) if n > 1 else [0]
    if isinstance(device, (int, np.integer)) and not isinstance(device, bool):
        return [_int(device, "device", 0, 1024)]
    if isinstance(device, (list, tuple)):
        return [_int(d, "device", 0, 1024) for d in device]
    raise _fail(f"device: wants a device number, a list of them or 'all', not {device!r}")


def _pair(v, what, number=float):
    if v is None:
        return None
    if np.ndim(v) == 0:
        v = (v, v)
    t = tuple(v)
    if len(t) != 2:
        raise _fail(f"{what}: wants two numbers, not {v!r}")
    try:
        return tuple(number(x) for x in t)
    except (TypeError, ValueError):
        raise _fail(f"{what}: wants numbers, not {v!r}") from None


def _choice(v, what, choices):
    if not isinstance(v, str) or v not in choices:
        raise _fail(f"{what}: wants one of {', '.join(choices)}, not {v!r}")
    return v


def _call_text(source, kw):
    """The command_line attribute: the call, as Python would write it."""
    if isinstance(source, PhaseHistory):
        src = repr(source)
    else:
        src = repr(source if isinstance(source, (list, tuple)) else os.fspath(source))
    defaults = dict(backend="auto", precision="fp32", algorithm="bp", window="none",
                    az_window="none", autofocus="none")
    args = [src] + [f"{k}={v!r}" for k, v in kw.items()
                    if v is not None and not (isinstance(v, str) and v == defaults.get(k))]
    return f"sarbp.form({', '.join(args)})"[:970]


def _heights(h):
    """heights= as the C layer takes it: None, a file spec, or a C-contiguous float64 2-D array."""
    if h is None or isinstance(h, str):
        return h
    if isinstance(h, os.PathLike):
        return os.fspath(h)
    try:
        a = np.ascontiguousarray(h, dtype=np.float64)
    except (TypeError, ValueError):
        raise _fail(f"heights: wants a float array [ny][nx] or a file name, not {type(h).__name__}") from None
    if a.ndim != 2:
        raise _fail(f"heights: wants 2 dimensions [ny][nx], not {a.ndim}")
    return a


def form(source, grid=None, spacing=None, center=None, backend="auto", precision="fp32",
         algorithm="bp", interp=None, window="none", az_window="none", autofocus="none",
         device=None, session=None, *, upsample=None, threads=None, pulses=None, azimuth=None,
         channel=None, polarisation=None, max_error_db=-60.0, gpu_mem=None, scene_ref=None,
         prf=None, collect_start=None, raw_fp16=False, autofocus_range=False, heights=None):
    """Forms a complex image by backprojection: 'sarbp form' from Python.

    source: a path (file, directory, glob), a list of paths, or a PhaseHistory.
    Every option is the CLI's of the same name with its default:
      grid (nx, ny) pixels; spacing d or (dx, dy) m; center (x, y[, z]) m;
        default: the alias-free scene at half-resolution spacing
      backend 'auto' | 'cpu' | 'cuda'; precision 'fp32' | 'fp64' | 'exact' |
        'fp16' | 'mixed'; algorithm 'bp' | 'ffbp' | 'auto', max_error_db (ffbp);
        interp 'quadratic' | 'cubic' | 'linear' (default for the precision);
        upsample 1..64; window, az_window 'none' | 'hamming' | 'hann' |
        'taylor[:NBAR:SLL]'
      autofocus 'none' | 'file' (apply the Gotcha corrections the input
        carries) | 'estimate' (a phase per pulse that maximises the image's
        sharpness: the most accurate) | 'pga' (phase gradient autofocus);
        autofocus_range: with 'estimate', a range per pulse too. The image
        carries the estimate (Image.autofocus_phase, .autofocus_range)
      heights: terrain, the z (m, scene frame) of every pixel: a float64
        array [ny][nx] on the grid (rows = y, as the image), or a file
        'FILE.npy' / 'FILE.h5[:/DSET]' (as 'sarbp form --heights'); direct
        backprojection only (not algorithm='ffbp')
      device: CUDA device, list or 'all' (default: the session's, else 0);
        threads: CPU threads (default all cores); gpu_mem: bytes per device
      pulses (i0, i1) or azimuth (a0, a1) deg: a selection; channel,
        polarisation: which inputs; scene_ref 'LAT,LON,HEIGHT[,HEADING]', prf,
        collect_start: what geolocated outputs need (Image.save)
      session: a sarbp.Session to reuse (default: one for this form)
    Returns a sarbp.Image. The GIL is released while forming."""
    kw = dict(grid=grid, spacing=spacing, center=center, backend=backend, precision=precision,
              algorithm=algorithm, interp=interp, window=window, az_window=az_window,
              autofocus=autofocus, device=device, upsample=upsample, threads=threads,
              pulses=pulses, azimuth=azimuth, channel=channel, polarisation=polarisation,
              max_error_db=max_error_db if max_error_db != -60.0 else None, gpu_mem=gpu_mem,
              scene_ref=scene_ref, prf=prf, collect_start=collect_start,
              raw_fp16=raw_fp16 or None, autofocus_range=autofocus_range or None,
              heights=heights if heights is None or isinstance(heights, str) else "array")
    if isinstance(source, PhaseHistory):
        src = source._h
    else:
        src = _paths(source, "source")
    nx = ny = 0
    if grid is not None:
        if isinstance(grid, str):
            parts = grid.lower().split("x")
            if len(parts) != 2:
                raise _fail(f"grid: wants (nx, ny) or 'NXxNY', not {grid!r}")
            grid = parts
        try:
            nx, ny = _pair(grid, "grid", int)
        except Error:
            raise _fail(f"grid: wants (nx, ny) pixels, not {grid!r}") from None
        if not (1 <= nx <= 2**31 and 1 <= ny <= 2**31):
            raise _fail(f"grid: wants positive sizes of at most 2^31, not {grid!r}")
    sp = _pair(spacing, "spacing")
    if sp is not None and not all(0 < d <= 1e6 for d in sp):
        raise _fail(f"spacing: wants D or (DX, DY) in metres (> 0, at most 1e+06), not {spacing!r}")
    if center is not None:
        c = tuple(center)
        if len(c) not in (2, 3):
            raise _fail(f"center: wants (x, y) or (x, y, z) in metres, not {center!r}")
        try:
            center = tuple(float(v) for v in c)
        except (TypeError, ValueError):
            raise _fail(f"center: wants numbers, not {center!r}") from None
    _choice(backend, "backend", ("auto", "cpu", "cuda"))
    _choice(precision, "precision", ("fp32", "fp64", "fp16", "mixed", "exact"))
    _choice(algorithm, "algorithm", ("bp", "ffbp", "auto"))
    if interp is not None:
        _choice(interp, "interp", ("quadratic", "cubic", "linear"))
    if autofocus is True:
        autofocus = "file"
    elif autofocus is False or autofocus is None:
        autofocus = "none"
    _choice(autofocus, "autofocus", ("none", "file", "estimate", "pga"))
    if autofocus_range and autofocus != "estimate":
        raise _fail("autofocus_range: goes with autofocus='estimate'")
    for name, w in (("window", window), ("az_window", az_window)):
        if w is None:
            continue
        if not isinstance(w, str):
            raise _fail(f"{name}: wants a window name such as 'hamming', not {w!r}")
    s_h = None
    devs = _devices(device)
    if session is not None:
        if not isinstance(session, Session):
            raise _fail(f"session: wants a sarbp.Session, not {type(session).__name__}")
        if devs is None:
            devs = session.devices
        s_h = session._h
    up = 0 if upsample is None else _int(upsample, "upsample", 1, 64)
    th = 0 if threads is None else _int(threads, "threads", 1, 4096)
    gm = 0 if gpu_mem is None else _int(gpu_mem, "gpu_mem", 1, 2**62)
    if pulses is not None:
        p = _pair(pulses, "pulses", int)
        if not 0 <= p[0] < p[1]:
            raise _fail(f"pulses: wants (I0, I1), whole numbers with 0 <= I0 < I1, not {pulses!r}")
        pulses = p
    az = _pair(azimuth, "azimuth")
    for name, v in (("channel", channel), ("polarisation", polarisation),
                    ("scene_ref", scene_ref), ("collect_start", collect_start)):
        if v is not None and not isinstance(v, str):
            raise _fail(f"{name}: wants a string, not {v!r}")
    args = dict(nx=nx, ny=ny, spacing=sp, center=center, backend=backend, precision=precision,
                algorithm=algorithm, interp=interp, upsample=up, window=window or "none",
                az_window=az_window or "none", autofocus=autofocus, devices=devs, threads=th,
                session=s_h, gpu_mem=gm, pulses=pulses, azimuth=az, channel=channel,
                polarisation=polarisation, max_error_db=float(max_error_db), scene_ref=scene_ref,
                prf=0.0 if prf is None else float(prf), collect_start=collect_start,
                raw_fp16=bool(raw_fp16), call=_call_text(source, kw),
                autofocus_range=bool(autofocus_range), heights=_heights(heights))
    if session is None:
        return Image._wrap(_sarbp.form(src, **args))
    with session._cv:  # counted, so that close() waits for it
        session._active += 1
    try:
        return Image._wrap(_sarbp.form(src, **args))
    finally:
        with session._cv:
            session._active -= 1
            session._cv.notify_all()


def _as_image(x, what):
    if isinstance(x, Image):
        return x, None
    if isinstance(x, (str, os.PathLike)):
        p = _path(x, what)
        return read_image(p), p
    return Image(x), None


def compare(test, ref, window=32, min_ser=None, min_window_ser=None):
    """'sarbp compare TEST REF --json' as a dict (the CLI's JSON keys; undefined
    figures None, infinite ones float('inf')). test and ref: Images, complex
    arrays or image files. 'pass' is whether min_ser and min_window_ser (dB,
    when given) hold."""
    t, tp = _as_image(test, "test")
    r, rp = _as_image(ref, "ref")
    d = _sarbp.compare(t._h, r._h, _int(window, "window", 1, 1 << 20))
    ok = True
    if min_ser is not None:
        ok = ok and d["ser_db"] is not None and d["ser_db"] >= float(min_ser)
    if min_window_ser is not None:
        ok = ok and d["window_ser_db"] is not None and d["window_ser_db"] >= float(min_window_ser)
    out = {"test": tp, "ref": rp}
    out.update(d)
    out["pass"] = ok
    return out


_metrics_lock = threading.Lock()


def metrics(img, target=None, cut_angle=0.0, plot=None):
    """'sarbp metrics IMG --json' as a dict: the point target nearest target
    (x, y) m (default the brightest pixel), cuts at cut_angle and +90 deg
    (IRW, PSLR, ISLR), whole-image figures. img: an Image, a complex array or
    an image file. plot: also write the cuts as a PNG (not yet: None only)."""
    if plot is not None:
        raise _fail("plot: not yet offered by the Python package (use 'sarbp metrics --plot')")
    im, p = _as_image(img, "img")
    t = None if target is None else _pair(target, "target")
    with _metrics_lock:  # FFTW plans: one thread at a time
        d = _sarbp.metrics(im._h, t, float(cut_angle))
    out = {"image": p}
    out.update(d)
    return out
