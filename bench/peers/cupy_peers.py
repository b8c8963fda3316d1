#!/usr/bin/env python3
"""cupy_peers.py: the peers Canopy's cuda backend is measured against, on the
same GPU in the same run (scripts/gpu-check runs it after the Go benchmarks).

For a size x size NDVI of the chapter's noise image (red uniform in
[0.05, 0.40), NIR in [0.20, 0.60), float32) it times, with CUDA events or a
synchronised host clock, median of --repeat runs after a warm-up:

  copy-ceiling      device-to-device copy of one band (bytes read + written)
  h2d/d2h-ceiling   pinned host<->device copy of one band
  cupy-kernel       CuPy ElementwiseKernel on device-resident bands
  numba-kernel      numba.cuda kernel on device-resident bands
  cupy-pageable     asarray(red), asarray(nir), kernel, asnumpy: from NumPy
  cupy-pinned       the same from and to pinned buffers, one stream
  cupy-overlapped   pinned buffers, chunks over 4 streams (as Canopy's
                    overlapped mode does)

Every result is checked against a float64 NumPy reference. Prints one JSON
object per line, then a table. Needs numpy and cupy; numba is optional.
"""
import argparse
import json
import math
import sys
import time

import numpy as np

try:
    import cupy as cp
except ImportError as e:  # pragma: no cover - the GPU machine has CuPy
    sys.exit(f"cupy_peers.py: CuPy is not installed: {e}")

NDVI_SRC = """
    float s = n + r;
    o = (s == 0.0f) ? __int_as_float(0x7fc00000) : (n - r) / s;
"""


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def events_ms(fn, repeat, stream=None):
    """Median milliseconds of fn() between two CUDA events, after a warm-up."""
    stream = stream or cp.cuda.get_current_stream()
    fn()
    stream.synchronize()
    ts = []
    for _ in range(repeat):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record(stream)
        fn()
        b.record(stream)
        b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b))
    return median(ts), min(ts), max(ts)


def wall_ms(fn, repeat):
    """Median milliseconds of fn() on the host clock, device synchronised."""
    fn()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        cp.cuda.Device().synchronize()
        ts.append((time.perf_counter() - t0) * 1e3)
    return median(ts), min(ts), max(ts)


def pinned_empty(shape, dtype):
    mem = cp.cuda.alloc_pinned_memory(int(np.prod(shape)) * np.dtype(dtype).itemsize)
    return np.frombuffer(mem, dtype, int(np.prod(shape))).reshape(shape)


def max_err(out, ref):
    out = np.asarray(out, dtype=np.float64)
    nan_out, nan_ref = np.isnan(out), np.isnan(ref)
    mism = int(np.count_nonzero(nan_out != nan_ref))
    ok = ~nan_ref & ~nan_out
    err = float(np.max(np.abs(out[ok] - ref[ok]))) if ok.any() else 0.0
    return err, mism


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=10980)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--chunk", type=int, default=1 << 20, help="pixels per chunk in cupy-overlapped")
    args = ap.parse_args()
    n = args.size * args.size
    nbytes = n * 4
    rows = []
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]

    def emit(peer, med, lo, hi, kind, bytes_moved=None, err=None, mism=None, note=""):
        row = {"peer": peer, "width": args.size, "height": args.size, "median_ms": round(med, 4),
               "min_ms": round(lo, 4), "max_ms": round(hi, 4), "timing": kind, "device": name}
        if bytes_moved:
            row["gbps"] = round(bytes_moved / (med * 1e6), 1)
        if err is not None:
            row["max_abs_err"], row["nan_mismatch"] = err, mism
        if note:
            row["note"] = note
        print(json.dumps(row), flush=True)
        rows.append(row)

    rng = np.random.default_rng(1)
    red = rng.uniform(0.05, 0.40, n).astype(np.float32)
    nir = rng.uniform(0.20, 0.60, n).astype(np.float32)
    r64, n64 = red.astype(np.float64), nir.astype(np.float64)
    ref = (n64 - r64) / (n64 + r64)
    del r64, n64

    # Ceilings, one band's bytes.
    d_a = cp.asarray(red)
    d_b = cp.empty_like(d_a)
    h_in = pinned_empty((n,), np.float32)
    h_in[:] = red
    h_out = pinned_empty((n,), np.float32)
    rt = cp.cuda.runtime
    s = cp.cuda.get_current_stream()
    med, lo, hi = events_ms(lambda: rt.memcpyAsync(d_b.data.ptr, d_a.data.ptr, nbytes, rt.memcpyDeviceToDevice, s.ptr), args.repeat)
    emit("copy-ceiling", med, lo, hi, "events", 2 * nbytes)
    med, lo, hi = events_ms(lambda: rt.memcpyAsync(d_b.data.ptr, h_in.ctypes.data, nbytes, rt.memcpyHostToDevice, s.ptr), args.repeat)
    emit("h2d-ceiling", med, lo, hi, "events", nbytes)
    med, lo, hi = events_ms(lambda: rt.memcpyAsync(h_out.ctypes.data, d_b.data.ptr, nbytes, rt.memcpyDeviceToHost, s.ptr), args.repeat)
    emit("d2h-ceiling", med, lo, hi, "events", nbytes)

    # Kernel only.
    kern = cp.ElementwiseKernel("float32 r, float32 n", "float32 o", NDVI_SRC, "canopy_ndvi")
    d_r, d_n = d_a, cp.asarray(nir)
    d_o = cp.empty_like(d_r)
    med, lo, hi = events_ms(lambda: kern(d_r, d_n, d_o), args.repeat)
    err, mism = max_err(cp.asnumpy(d_o), ref)
    emit("cupy-kernel", med, lo, hi, "events", 12 * n, err, mism, "ElementwiseKernel, device-resident")

    try:
        if not hasattr(np, "row_stack"):
            # NumPy 2.5 removed row_stack (an alias of vstack); the
            # numba-cuda on the GPU machine's image still imports it.
            np.row_stack = np.vstack
        from numba import cuda as ncuda

        @ncuda.jit
        def numba_ndvi(r, nn, o):
            i = ncuda.grid(1)
            if i < o.size:
                s_ = nn[i] + r[i]
                o[i] = (nn[i] - r[i]) / s_ if s_ != 0 else math.nan

        nr, nn_, no = ncuda.as_cuda_array(d_r), ncuda.as_cuda_array(d_n), ncuda.as_cuda_array(d_o)
        threads = 256
        blocks = (n + threads - 1) // threads
        med, lo, hi = events_ms(lambda: numba_ndvi[blocks, threads](nr, nn_, no), args.repeat)
        err, mism = max_err(cp.asnumpy(d_o), ref)
        emit("numba-kernel", med, lo, hi, "events", 12 * n, err, mism, "numba.cuda.jit, device-resident, first call excluded")
    except Exception as e:  # numba-cuda missing or incompatible: say so, go on
        print(json.dumps({"peer": "numba-kernel", "error": f"{type(e).__name__}: {e}"}), flush=True)

    # With transfers from pageable NumPy memory (the chapter's CuPy code).
    def pageable():
        o = kern(cp.asarray(red), cp.asarray(nir), cp.empty(n, cp.float32))
        return cp.asnumpy(o)

    med, lo, hi = wall_ms(pageable, max(3, args.repeat // 4))
    err, mism = max_err(pageable(), ref)
    emit("cupy-pageable", med, lo, hi, "wall", 12 * n, err, mism, "asarray + kernel + asnumpy from NumPy arrays")

    # From pinned buffers, sequential on one stream.
    h_r, h_n = h_in, pinned_empty((n,), np.float32)
    h_n[:] = nir

    def pinned_seq():
        rt.memcpyAsync(d_r.data.ptr, h_r.ctypes.data, nbytes, rt.memcpyHostToDevice, s.ptr)
        rt.memcpyAsync(d_n.data.ptr, h_n.ctypes.data, nbytes, rt.memcpyHostToDevice, s.ptr)
        kern(d_r, d_n, d_o)
        rt.memcpyAsync(h_out.ctypes.data, d_o.data.ptr, nbytes, rt.memcpyDeviceToHost, s.ptr)

    med, lo, hi = wall_ms(pinned_seq, args.repeat)
    err, mism = max_err(h_out, ref)
    emit("cupy-pinned", med, lo, hi, "wall", 12 * n, err, mism, "pinned host buffers, upload, kernel, download on one stream")

    # From pinned buffers, chunks over 4 streams.
    streams = [cp.cuda.Stream(non_blocking=True) for _ in range(4)]
    chunk = args.chunk

    def pinned_overlapped():
        for k, lo_ in enumerate(range(0, n, chunk)):
            hi_ = min(lo_ + chunk, n)
            st = streams[k % len(streams)]
            b0, nb = lo_ * 4, (hi_ - lo_) * 4
            rt.memcpyAsync(d_r.data.ptr + b0, h_r.ctypes.data + b0, nb, rt.memcpyHostToDevice, st.ptr)
            rt.memcpyAsync(d_n.data.ptr + b0, h_n.ctypes.data + b0, nb, rt.memcpyHostToDevice, st.ptr)
            with st:
                kern(d_r[lo_:hi_], d_n[lo_:hi_], d_o[lo_:hi_])
            rt.memcpyAsync(h_out.ctypes.data + b0, d_o.data.ptr + b0, nb, rt.memcpyDeviceToHost, st.ptr)
        for st in streams:
            st.synchronize()

    h_out[:] = 12345
    med, lo, hi = wall_ms(pinned_overlapped, args.repeat)
    err, mism = max_err(h_out, ref)
    emit("cupy-overlapped", med, lo, hi, "wall", 12 * n, err, mism, f"pinned host buffers, {chunk}-pixel chunks over 4 streams")

    print(f"\n{name}, {args.size}x{args.size} float32, median of {args.repeat} (pageable: {max(3, args.repeat // 4)})")
    print(f"{'peer':18s} {'median ms':>10s} {'min':>9s} {'max':>9s} {'GB/s':>8s}  {'max err':>8s}  timing")
    for r in rows:
        print(f"{r['peer']:18s} {r['median_ms']:10.3f} {r['min_ms']:9.3f} {r['max_ms']:9.3f} {r.get('gbps', 0):8.1f}  "
              f"{r.get('max_abs_err', float('nan')):8.2g}  {r['timing']}")


if __name__ == "__main__":
    main()
