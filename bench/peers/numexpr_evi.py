#!/usr/bin/env python3
"""EVI on numexpr against Canopy's c and go-parallel block programs, on the
same arrays, in one run.

numexpr (Debian python3-numexpr, its default number of threads) computes
EVI = 2.5 * (nir - red) / (nir + 6 * red - 7.5 * blue + 1) in float32 into
a float32 array (the constants passed as float32 scalars, so that numexpr
does not widen to float64; --float64 also times the literal formula, which
numexpr computes and returns in float64) on three N x N float32
reflectance bands drawn the way compute/cback/bench_test.go draws them (a
murmur3 hash of the pixel index, so both sides hold the same bits), timed
as the median of K runs after one warm-up. Then the script runs the Go
benchmarks on the same size (BenchmarkEVI/f32: c and go-parallel,
-benchtime=5x, -count=C), takes their medians and prints one JSON object
with every median and the ratios numexpr / backend.

usage: bench/peers/numexpr_evi.py [--size N] [--repeat K] [--count C] [--float64] [--no-go]
                                  [--go-test BINARY]
       (from the repository root; Go at /usr/local/go/bin or on PATH)
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np
import numexpr as ne

EVI = "2.5 * (nir - red) / (nir + 6 * red - 7.5 * blue + 1)"
# The same formula with its constants as float32 scalars.
EVI32 = "k25 * (nir - red) / (nir + k6 * red - k75 * blue + one)"
K32 = {"k25": np.float32(2.5), "k6": np.float32(6), "k75": np.float32(7.5), "one": np.float32(1)}

# role, seed, lowest reflectance, span: as bandDefs in bench_test.go.
BANDS = [("blue", 1, 0.01, 0.15), ("red", 2, 0.02, 0.25), ("nir", 3, 0.1, 0.5)]


def reflectance(n, seed, lo, span):
    """lo + span * u in float32, u the top 24 bits of murmur3's finaliser of
    i * 0x9E3779B1 + seed * 0x85EBCA77 (uint32 arithmetic)."""
    with np.errstate(over="ignore"):
        h = np.arange(n, dtype=np.uint32)
        h *= np.uint32(0x9E3779B1)
        h += np.uint32((seed * 0x85EBCA77) & 0xFFFFFFFF)
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    h >>= np.uint32(8)
    u = h.astype(np.float32)
    del h
    u *= np.float32(2.0 ** -24)
    u *= np.float32(span)
    u += np.float32(lo)
    return u


def timed(expr, arrs, out, repeat):
    ne.evaluate(expr, local_dict=arrs, out=out)  # warm-up: compile, page faults
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        ne.evaluate(expr, local_dict=arrs, out=out)
        ts.append((time.perf_counter() - t0) * 1e3)
    return ts


def stats(ts):
    return {"median": statistics.median(ts), "min": min(ts), "max": max(ts), "runs": len(ts)}


def time_numexpr(size, repeat, float64):
    n = size * size
    arrs = {role: reflectance(n, seed, lo, span) for role, seed, lo, span in BANDS}
    res = {"first_pixel": {k: float(arrs[k][0]) for k in ("blue", "red", "nir")}}
    out = np.empty(n, dtype=np.float32)
    res["numexpr_ms"] = stats(timed(EVI32, dict(arrs, **K32), out, repeat))
    # A few pixels against float64, so that a wrong formula shows.
    b, r, v = (arrs[k][:1000].astype(np.float64) for k in ("blue", "red", "nir"))
    ref = 2.5 * (v - r) / (v + 6 * r - 7.5 * b + 1)
    res["numexpr_max_abs_err"] = float(np.max(np.abs(out[:1000] - ref)))
    del out
    if float64:
        out64 = np.empty(n, dtype=np.float64)
        res["numexpr_float64_ms"] = stats(timed(EVI, arrs, out64, repeat))
    return res


def go_bin():
    for g in ("/usr/local/go/bin/go", shutil.which("go")):
        if g and os.path.exists(g):
            return g
    sys.exit("numexpr_evi: no go binary (install Go or put it on PATH)")


def time_go(size, count, binary=None):
    """Per-run times (ms) of BenchmarkEVI/f32 in compute/cback, by backend:
    through go test, or through a test binary built elsewhere (go test -c;
    the GPU machine has no Go)."""
    env = dict(os.environ, CANOPY_BENCH_SIZE=str(size), CGO_ENABLED="1", GOEXPERIMENT="simd")
    if binary:
        cmd = [binary, "-test.run", "^$", "-test.bench", "^BenchmarkEVI$/^f32$", "-test.benchtime=5x",
               f"-test.count={count}"]
    else:
        cmd = [go_bin(), "test", "-run", "^$", "-bench", "^BenchmarkEVI$/^f32$", "-benchtime=5x",
               f"-count={count}", "./compute/cback"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("numexpr_evi: go test failed:\n" + p.stdout + p.stderr)
    runs = {}
    for m in re.finditer(r"^BenchmarkEVI/f32/(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op", p.stdout, re.M):
        runs.setdefault(m.group(1), []).append(float(m.group(2)) / 1e6)
    if not runs:
        sys.exit("numexpr_evi: no benchmark lines in:\n" + p.stdout)
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=10980)
    ap.add_argument("--repeat", type=int, default=10, help="numexpr runs after the warm-up")
    ap.add_argument("--count", type=int, default=5, help="go test -count (each a mean of 5 runs)")
    ap.add_argument("--float64", action="store_true",
                    help="also time the literal formula, which numexpr computes in float64")
    ap.add_argument("--no-go", action="store_true", help="time numexpr only")
    ap.add_argument("--go-test", metavar="BINARY",
                    help="compute/cback's test binary (go test -c) instead of go test")
    a = ap.parse_args()

    res = {
        "index": "evi", "width": a.size, "height": a.size, "type": "float32",
        "cores": os.cpu_count(), "numexpr": ne.__version__, "numexpr_threads": ne.nthreads,
        "numexpr_vml": ne.use_vml,
    }
    res.update(time_numexpr(a.size, a.repeat, a.float64))
    if not a.no_go:
        for name, ms in sorted(time_go(a.size, a.count, a.go_test).items()):
            res[name + "_ms"] = stats(ms)
            res["numexpr_over_" + name] = res["numexpr_ms"]["median"] / statistics.median(ms)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
