#!/usr/bin/env python3
"""The chapter's own CPU stack on Canopy's fake bands: NumPy, numba @njit and
numba @njit(parallel=True), timed the way `canopy bench` times (one untimed
warm-up that includes numba's compilation, then K runs; median, min, max),
with the output verified against a float64 NumPy reference. Prints one JSON
object per line, in the shape of `canopy bench --json`.

usage: cpu_peers.py RED.tif NIR.tif [--repeat K]
       cpu_peers.py --size N [--repeat K]   (no GDAL: draw the chapter's noise
                                            with NumPy, same distributions)
"""
import json
import sys
import time

import numpy as np

try:
    from osgeo import gdal
except ImportError:  # machines without GDAL use --size
    gdal = None

try:
    import numba
    from numba import njit, prange
except ImportError:  # numba is optional; NumPy still runs
    numba = None


def load(path):
    ds = gdal.Open(path)
    if ds is None:
        sys.exit(f"cpu_peers: cannot open {path}")
    return ds.GetRasterBand(1).ReadAsArray().astype(np.float32, copy=False)


def ndvi_numpy(red, nir):
    # The chapter's one-liner. 0/0 gives NaN with a warning, as in the book.
    with np.errstate(divide="ignore", invalid="ignore"):
        return (nir - red) / (nir + red)


if numba is not None:
    @njit(cache=False)
    def ndvi_njit_chapter(red, nir, out):
        # The chapter's loop as printed: numba's Python error model checks
        # every division for zero, which keeps LLVM from vectorising it.
        for i in range(red.shape[0]):
            for j in range(red.shape[1]):
                out[i, j] = (nir[i, j] - red[i, j]) / (nir[i, j] + red[i, j])

    @njit(cache=False)
    def ndvi_njit(red, nir, out):
        # Canopy's rule (NaN where the sum is zero) written as a select:
        # no division by zero can happen, and LLVM vectorises the loop.
        for i in range(red.shape[0]):
            for j in range(red.shape[1]):
                s = nir[i, j] + red[i, j]
                out[i, j] = (nir[i, j] - red[i, j]) / s if s != 0 else np.nan

    @njit(parallel=True, cache=False)
    def ndvi_njit_par(red, nir, out):
        for i in prange(red.shape[0]):
            for j in range(red.shape[1]):
                s = nir[i, j] + red[i, j]
                out[i, j] = (nir[i, j] - red[i, j]) / s if s != 0 else np.nan


def timeit(fn, repeat):
    t0 = time.perf_counter()
    fn()  # warm-up: compilation, page faults
    warm = (time.perf_counter() - t0) * 1e3
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort()
    return warm, ts


def main():
    args = sys.argv[1:]
    repeat = 5
    if "--repeat" in args:
        k = args.index("--repeat")
        repeat = int(args[k + 1])
        del args[k:k + 2]
    if len(args) == 2 and args[0] == "--size":
        n = int(args[1])
        rng = np.random.default_rng(1)
        red = rng.uniform(0.05, 0.40, (n, n)).astype(np.float32)
        nir = rng.uniform(0.20, 0.60, (n, n)).astype(np.float32)
    elif len(args) == 2 and gdal is not None:
        red, nir = load(args[0]), load(args[1])
    else:
        sys.exit(__doc__)
    h, w = red.shape
    r64, n64 = red.astype(np.float64), nir.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = (n64 - r64) / (n64 + r64)
    del r64, n64
    out = np.empty_like(red)
    peers = [("numpy", lambda: ndvi_numpy(red, nir))]
    if numba is not None:
        peers += [("numba-njit-chapter", lambda: ndvi_njit_chapter(red, nir, out)),
                  ("numba-njit", lambda: ndvi_njit(red, nir, out)),
                  ("numba-njit-parallel", lambda: ndvi_njit_par(red, nir, out))]
    for name, fn in peers:
        warm, ts = timeit(fn, repeat)
        got = fn() if name == "numpy" else out
        err = np.nanmax(np.abs(got.astype(np.float64) - ref))
        nan_mismatch = int(np.count_nonzero(np.isnan(got) != np.isnan(ref)))
        med = ts[len(ts) // 2] if len(ts) % 2 else (ts[len(ts) // 2 - 1] + ts[len(ts) // 2]) / 2
        print(json.dumps({
            "backend": name, "width": w, "height": h, "repeat": repeat,
            "setup_ms": warm - med, "upload_ms": 0, "kernel_ms": med, "download_ms": 0,
            "total_ms": med, "kernel": {"median_ms": med, "min_ms": ts[0], "max_ms": ts[-1]},
            "kernel_gbps": 12 * w * h / (med * 1e6),
            "max_abs_err": float(err), "nan_mismatch": nan_mismatch,
            "verified": bool(err <= 1e-6 and nan_mismatch == 0),
            "threads": numba.get_num_threads() if (numba is not None and "parallel" in name) else 1,
            "version": np.__version__ if name == "numpy" else numba.__version__,
        }), flush=True)


if __name__ == "__main__":
    main()
