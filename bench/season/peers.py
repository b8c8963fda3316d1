#!/usr/bin/env python3
"""The peers of compute/season's models on the cube bench/season wrote
(cube.f32: dates x pixels float32, date-major, NaN missing; dates.txt):
NumPy's obvious version and numba @njit(parallel=True), the same models as
`go run ./bench/season`: the harmonic fit with its RMSE over every date,
the median composite, the MOSUM monitor (numba only: its per-pixel logic
is sequential). Timed as the Go command times: one untimed run (numba's
compilation), then REPEAT runs, best and median; each checked against
Canopy's first backend's plane (MODEL.f32) where the command wrote it.
One JSON object per line.

usage: peers.py DIR [REPEAT]
"""
import json
import math
import os
import sys
import time

import numpy as np

try:
    import numba
    from numba import njit, prange
except ImportError:
    numba = None


def design(dates, harmonics, trend, origin):
    cols = [np.ones_like(dates)]
    if trend:
        cols.append(dates - origin)
    frac = dates - np.floor(dates)
    for k in range(1, harmonics + 1):
        a = 2 * np.pi * np.mod(k * frac, 1)
        cols += [np.cos(a), np.sin(a)]
    return np.stack(cols, axis=1)  # T x k


def harmonic_numpy(Y, X):
    # The obvious version: masked normal equations for every pixel at once,
    # NumPy's batched solve, the RMSE over the valid dates.
    W = ~np.isnan(Y)
    Yz = np.where(W, Y, 0).astype(np.float32)
    Wf = W.astype(np.float32)
    A = np.einsum("tj,tk,tp->pjk", X, X, Wf, optimize=True)
    b = np.einsum("tj,tp->pj", X, Yz, optimize=True)
    n = Wf.sum(axis=0)
    ok = n >= X.shape[1]
    A[~ok] = np.eye(X.shape[1], dtype=np.float32)
    with np.errstate(all="ignore"):
        beta = np.linalg.solve(A, b[:, :, None])[:, :, 0]
        r = (Yz - X @ beta.T) * Wf
        rmse = np.sqrt((r * r).sum(axis=0) / n)
    rmse[~ok] = np.nan
    return rmse.astype(np.float32)


def median_numpy(Y):
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.nanmedian(Y, axis=0).astype(np.float32)


CHUNK = 1024  # pixels per numba task: the scratch arrays are made once per chunk

if numba is not None:

    @njit(cache=False, fastmath=False)
    def _fit(Y, X, p, role, a, b):
        T, k = X.shape
        for i in range(k * k):
            a[i] = 0.0
        for i in range(k):
            b[i] = 0.0
        n = 0
        for t in range(T):
            v = Y[t, p]
            if v != v or role[t] != 1:
                continue
            n += 1
            for r in range(k):
                xr = X[t, r]
                for q in range(r + 1):
                    a[r * k + q] += xr * X[t, q]
                b[r] += xr * v
        if n < k:
            return n, False
        for c in range(k):
            d = a[c * k + c]
            for q in range(c):
                d -= a[c * k + q] * a[c * k + q]
            if not d > 0:
                return n, False
            d = np.float32(math.sqrt(d))
            a[c * k + c] = d
            for r in range(c + 1, k):
                v = a[r * k + c]
                for q in range(c):
                    v -= a[r * k + q] * a[c * k + q]
                a[r * k + c] = v / d
        for r in range(k):
            v = b[r]
            for q in range(r):
                v -= a[r * k + q] * b[q]
            b[r] = v / a[r * k + r]
        for r in range(k - 1, -1, -1):
            v = b[r]
            for q in range(r + 1, k):
                v -= a[q * k + r] * b[q]
            b[r] = v / a[r * k + r]
        return n, True

    @njit(parallel=True)
    def harmonic_numba(Y, X):
        T, P = Y.shape
        k = X.shape[1]
        out = np.full(P, np.nan, dtype=np.float32)
        role = np.ones(T, dtype=np.uint8)
        for c in prange((P + CHUNK - 1) // CHUNK):
          a = np.empty(k * k, dtype=np.float32)  # scratch once per chunk
          b = np.empty(k, dtype=np.float32)
          for p in range(c * CHUNK, min(P, (c + 1) * CHUNK)):
            n, ok = _fit(Y, X, p, role, a, b)
            if not ok:
                continue
            rss = np.float32(0)
            for t in range(T):
                v = Y[t, p]
                if v != v:
                    continue
                f = np.float32(0)
                for q in range(k):
                    f += X[t, q] * b[q]
                r = v - f
                rss += r * r
            out[p] = math.sqrt(rss / n)
        return out

    @njit(parallel=True)
    def median_numba(Y):
        T, P = Y.shape
        out = np.full(P, np.nan, dtype=np.float32)
        for p in prange(P):
            v = np.empty(T, dtype=np.float32)
            n = 0
            for t in range(T):
                if Y[t, p] == Y[t, p]:
                    v[n] = Y[t, p]
                    n += 1
            if n == 0:
                continue
            s = np.sort(v[:n])
            if n % 2 == 1:
                out[p] = s[n // 2]
            else:
                out[p] = s[n // 2 - 1] + (s[n // 2] - s[n // 2 - 1]) / 2
        return out

    @njit(parallel=True)
    def mosum_numba(Y, X, role, dates32, h, critval):
        T, P = Y.shape
        k = X.shape[1]
        out = np.full(P, np.nan, dtype=np.float32)  # the break date
        for c in prange((P + CHUNK - 1) // CHUNK):
          a = np.empty(k * k, dtype=np.float32)  # scratch once per chunk
          b = np.empty(k, dtype=np.float32)
          e = np.empty(T, dtype=np.float32)
          when = np.empty(T, dtype=np.int64)
          for p in range(c * CHUNK, min(P, (c + 1) * CHUNK)):
            n, ok = _fit(Y, X, p, role, a, b)
            if not ok:
                continue
            rss = np.float32(0)
            ne = 0
            for t in range(T):
                v = Y[t, p]
                if v != v or role[t] == 0:
                    continue
                f = np.float32(0)
                for q in range(k):
                    f += X[t, q] * b[q]
                r = v - f
                e[ne] = r
                when[ne] = t
                ne += 1
                if role[t] == 1:
                    rss += r * r
            K = int(math.floor(h * n))
            nm = ne - n
            if n <= k or K <= 1 or nm == 0:
                continue
            sigma = np.float32(math.sqrt(rss / (n - k)))
            if not sigma > 0:
                continue
            norm = sigma * np.float32(math.sqrt(n))
            s = np.float32(0)
            for i in range(n - K, n):
                s += e[i]
            for i in range(nm):
                kk = n + i
                s += e[kk] - e[kk - K]
                x = np.float32(kk + 1) / np.float32(n)
                lp = np.float32(1) if x <= math.e else np.float32(math.log(x))
                bound = critval * np.float32(math.sqrt(2 * lp))
                if abs(s / norm) > bound:
                    out[p] = dates32[when[kk]]
                    break
        return out


def timed(f, repeat):
    out = f()  # untimed: numba compiles here
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return out, ts[0], ts[len(ts) // 2]


def main():
    d = sys.argv[1]
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    lines = open(os.path.join(d, "dates.txt")).read().split("\n")
    dates = np.array([float(s) for s in lines if s and not s.startswith("#")])
    meta = [s for s in lines if s.startswith("#")][0].split()
    P, K, split = int(meta[2]), int(meta[4]), float(meta[6])
    T = len(dates)
    Y = np.fromfile(os.path.join(d, "cube.f32"), dtype="<f4").reshape(T, P)
    Xh = design(dates, K, False, 0).astype(np.float32)
    hist = dates < split
    Xm = design(dates, 3, True, dates[hist].mean()).astype(np.float32)
    role = np.where(hist, 1, 2).astype(np.uint8)
    dates32 = dates.astype(np.float32)
    # strucchange's critical value for h = 0.25, end 10, alpha 0.05.
    critval = np.float32(1.3418246226806900)
    threads = numba.get_num_threads() if numba else 1
    runs = [("numpy", "harmonic", lambda: harmonic_numpy(Y, Xh), 1),
            ("numpy", "median", lambda: median_numpy(Y), 1)]
    if numba is not None:
        runs += [("numba parallel", "harmonic", lambda: harmonic_numba(Y, Xh), threads),
                 ("numba parallel", "median", lambda: median_numba(Y), threads),
                 ("numba parallel", "mosum", lambda: mosum_numba(Y, Xm, role, dates32, 0.25, critval), threads)]
    for peer, model, f, th in runs:
        out, best, med = timed(f, repeat)
        check = None
        ref = os.path.join(d, model + ".f32")
        if os.path.exists(ref):
            c = np.fromfile(ref, dtype="<f4")
            both = ~np.isnan(c) & ~np.isnan(out)
            same_nan = float(np.mean(np.isnan(c) == np.isnan(out)))
            check = {"same_nan_share": same_nan,
                     "max_abs_diff": float(np.max(np.abs(c[both] - out[both]))) if both.any() else 0.0}
        print(json.dumps({"peer": peer, "model": model, "pixels": P, "dates": T,
                          "harmonics": K if model == "harmonic" else (3 if model == "mosum" else 0),
                          "threads": th, "best_ms": best * 1e3, "median_ms": med * 1e3,
                          "series_per_s": P / best, "vs_canopy": check}), flush=True)


if __name__ == "__main__":
    main()
