#!/usr/bin/env python3
"""cupy_peers.py: CuPy's obvious version of the season models, the GPU peer
of Canopy's cuda and gl season kernels, on the cube bench/season wrote
(DIR/cube.f32: dates x pixels float32, date-major, NaN missing; DIR/dates.txt
with the split and the harmonics). bench/season/gpu runs it in the same
invocation as the Go benchmarks and the CPU peers (peers.py).

With the cube already on the card it times, with CUDA events, median of
REPEAT runs after a warm-up (min and max beside):

  harmonic   least squares per pixel (intercept, K harmonics, as
             bench/season's) over every date with the missing ones left out,
             and its RMSE: the normal equations by einsum, cupy.linalg.solve
             batched, the residuals by a matrix product
  median     cupy.nanmedian over the dates
  mosum      BFAST-monitor (bfastmonitor's defaults: 3 harmonics and a
             trend fitted on the dates before the split): residuals of every
             date, the MOSUM of the last floor(0.25 n) valid residuals scaled
             by sigma sqrt(n) against crit sqrt(2 log+(i/n)), the first
             crossing, the median of the monitoring residuals
  upload     the cube's host-to-device copy from pinned memory (the PCIe
             ceiling) and from pageable NumPy memory (cupy.asarray)

Each is checked against Canopy's first backend's plane (DIR/MODEL.f32) where
bench/season wrote it. One JSON object per line.

usage: cupy_peers.py DIR [REPEAT]
"""
import json
import math
import os
import sys

import numpy as np

try:
    import cupy as cp
except ImportError as e:  # pragma: no cover
    sys.exit(f"cupy_peers.py: CuPy is not installed: {e}")

# strucchange's critical value for h = 0.25, end 10, level 0.05
# (compute/season's table; bfastmonitor's defaults).
CRIT_H025_END10_05 = 1.34182451007628


def read(d):
    dates, split, harm = [], None, 6
    for line in open(os.path.join(d, "dates.txt")):
        line = line.strip()
        if line.startswith("#"):
            f = line[1:].split()
            for i in range(0, len(f) - 1, 2):
                if f[i] == "split":
                    split = float(f[i + 1])
                elif f[i] == "harmonics":
                    harm = int(f[i + 1])
        elif line:
            dates.append(float(line))
    t = np.array(dates)
    cube = np.fromfile(os.path.join(d, "cube.f32"), dtype="<f4").reshape(len(t), -1)
    return t, cube, split, harm


def design(t, k, trend=False, origin=0.0):
    cols = [np.ones_like(t)]
    if trend:
        cols.append(t - origin)
    frac = t - np.floor(t)
    for j in range(1, k + 1):
        a = 2 * np.pi * np.mod(j * frac, 1)
        cols += [np.cos(a), np.sin(a)]
    return np.stack(cols, axis=1)


def events_ms(fn, repeat):
    fn()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(repeat):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b))
    ts.sort()
    return ts[len(ts) // 2], ts[0], ts[-1]


def harmonic(Y, X):
    """beta (N x p) and RMSE (N) of the masked least squares fit."""
    valid = ~cp.isnan(Y)
    W = valid.astype(cp.float32)
    Y0 = cp.where(valid, Y, cp.float32(0))
    G = cp.einsum("ti,tj,tn->nij", X, X, W)
    n = W.sum(axis=0)
    ok = n >= X.shape[1]
    G[~ok] = cp.eye(X.shape[1], dtype=cp.float32)  # too few dates: NaN below
    b = (X.T @ Y0).T
    beta = cp.linalg.solve(G, b[:, :, None])[:, :, 0]
    beta[~ok] = cp.nan
    fit = X @ beta.T
    res = cp.where(valid, Y - fit, cp.float32(0))
    rmse = cp.sqrt((res * res).sum(axis=0) / n)
    return beta, rmse


def monitor(Y, Xall, hist, dates32, h=0.25, lam=CRIT_H025_END10_05):
    """Break index (-1: none), MOSUM at the break and magnitude."""
    T, N = Y.shape
    valid = ~cp.isnan(Y)
    Yh, Xh = Y[:hist], Xall[:hist]
    beta, _ = harmonic(Yh, Xh)
    fit = Xall @ beta.T
    r = cp.where(valid, Y - fit, cp.float32(0))
    vh = valid[:hist]
    n = vh.sum(axis=0).astype(cp.float32)
    sigma = cp.sqrt((r[:hist] * r[:hist]).sum(axis=0) / (n - Xall.shape[1]))
    hn = cp.maximum(cp.floor(h * n), 1).astype(cp.int32)
    cnt = cp.cumsum(valid, axis=0, dtype=cp.int32)  # valid obs up to and with t
    csum = cp.cumsum(r, axis=0)
    # cumulative residual sum by valid count: S[k] = sum of the first k residuals
    S = cp.zeros((T + 1, N), cp.float32)
    idx = cp.where(valid, cnt, 0)
    cp.put_along_axis(S, idx, cp.where(valid, csum, 0), axis=0)
    S[0] = 0
    back = cp.maximum(cnt - hn[None, :], 0)
    mosum = (cp.take_along_axis(S, cnt, axis=0) - cp.take_along_axis(S, back, axis=0)) / (sigma * cp.sqrt(n))[None, :]
    x = (cnt.astype(cp.float32)) / n[None, :]  # (k+1)/n, k the 0-based index
    lp = cp.where(x <= math.e, cp.float32(1), cp.log(cp.maximum(x, 1e-30)))
    bound = lam * cp.sqrt(2 * lp)
    mon = valid & (cp.arange(T)[:, None] >= hist)
    cross = mon & (cp.abs(mosum) > bound)
    first = cp.where(cross.any(axis=0), cp.argmax(cross, axis=0), -1)
    brk = cp.where(first >= 0, dates32[cp.maximum(first, 0)], cp.nan)
    mag = cp.nanmedian(cp.where(mon, r, cp.nan)[hist:], axis=0)
    return brk, mag


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: cupy_peers.py DIR [REPEAT]")
    d = sys.argv[1]
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    t, host, split, K = read(d)
    T, N = host.shape
    dev = cp.cuda.Device()
    name = cp.cuda.runtime.getDeviceProperties(dev.id)["name"].decode()
    base = {"peer": "cupy", "dates": T, "pixels": N, "device": name}

    def emit(model, ms, extra=None):
        r = dict(base, model=model, ms=ms[0], min_ms=ms[1], max_ms=ms[2], series_per_s=N / (ms[0] / 1e3))
        if extra:
            r.update(extra)
        print(json.dumps(r), flush=True)

    def agree(model, got):
        """Share of pixels equal to Canopy's plane within 1e-4 (NaN with NaN)."""
        f = os.path.join(d, model + ".f32")
        if not os.path.exists(f):
            return {}
        want = np.fromfile(f, dtype="<f4")
        got = cp.asnumpy(got).astype(np.float32)
        same = (np.isnan(want) & np.isnan(got)) | (np.abs(want - got) <= 1e-4 * np.maximum(1, np.abs(want)))
        return {"agree_with_canopy": float(same.mean())}

    Y = cp.empty((T, N), cp.float32)
    mem = cp.cuda.alloc_pinned_memory(host.nbytes)
    pinned = np.frombuffer(mem, np.float32, host.size).reshape(host.shape)
    pinned[...] = host
    ms = events_ms(lambda: Y.set(pinned), repeat)
    emit("upload-pinned", ms, {"bytes": host.nbytes, "gb_per_s": host.nbytes / (ms[0] / 1e3) / 1e9})
    ms = events_ms(lambda: Y.set(host), max(3, repeat // 3))
    emit("upload-pageable", ms, {"bytes": host.nbytes, "gb_per_s": host.nbytes / (ms[0] / 1e3) / 1e9})

    X = cp.asarray(design(t, K), cp.float32)
    _, rmse = harmonic(Y, X)
    ms = events_ms(lambda: harmonic(Y, X), repeat)
    emit("harmonic", ms, dict({"harmonics": K}, **agree("harmonic", rmse)))

    med = cp.nanmedian(Y, axis=0)
    ms = events_ms(lambda: cp.nanmedian(Y, axis=0), repeat)
    emit("median", ms, agree("median", med))

    hist = int(np.searchsorted(t, split))
    Xm = cp.asarray(design(t, 3, True, t[:hist].mean()), cp.float32)
    d32 = cp.asarray(t.astype(np.float32))
    brk, _ = monitor(Y, Xm, hist, d32)
    ms = events_ms(lambda: monitor(Y, Xm, hist, d32), max(3, repeat // 2))
    emit("mosum", ms, dict({"harmonics": 3, "history_dates": hist}, **agree("mosum", brk)))


if __name__ == "__main__":
    main()
