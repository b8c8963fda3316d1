#!/usr/bin/env python3
"""Reads JSON lines from `canopy bench --json` and the peer scripts (stdin or
files) and prints one Markdown table per image size: each contender's median
kernel-only and with-transfers times with their spread, GB/s at 12 bytes per
pixel, % of the ceiling measured in the same run, and the ratio to the
fastest peer (NumPy, numba, CuPy) on the same measure."""
import json
import sys

PEERS = ("numpy", "numba", "cupy")


def normalise(r):
    """Maps a cupy_peers.py row ({"peer", "median_ms", ...}) onto the shape of
    `canopy bench --json`; kernel-only peers get no with-transfers time and
    transfer peers no kernel-only time. Ceiling rows become None."""
    if "peer" not in r:
        return r
    name = r["peer"]
    if name.endswith("ceiling") or "median_ms" not in r:
        return None
    phase = {"median_ms": r["median_ms"], "min_ms": r["min_ms"], "max_ms": r["max_ms"]}
    out = {"backend": name, "width": r["width"], "height": r["height"], "gpu": True,
           "verified": r.get("max_abs_err", 1) <= 1e-6 and r.get("nan_mismatch", 1) == 0,
           "max_abs_err": r.get("max_abs_err", float("nan")), "kernel_ms": 0, "total_ms": 0}
    if name.endswith("-kernel"):
        out["kernel_ms"], out["kernel"] = r["median_ms"], phase
    else:
        out["total_ms"], out["total"] = r["median_ms"], phase
    return out


def rows(lines):
    for line in lines:
        line = line.strip()
        if line.startswith("{"):
            try:
                r = normalise(json.loads(line))
            except json.JSONDecodeError:
                continue
            if r is not None:
                yield r


def spread(r, key):
    p = r.get(key) or {}
    if "min_ms" in p:
        return f"{p['median_ms']:.3f} [{p['min_ms']:.3f}–{p['max_ms']:.3f}]"
    v = r.get(key + "_ms", 0)
    return f"{v:.3f}" if v else "—"


def main():
    srcs = [open(p) for p in sys.argv[1:]] or [sys.stdin]
    rs = [r for s in srcs for r in rows(s)]
    host = max((r.get("ceiling_gbps", 0) for r in rs if r.get("ceiling_kind") == "host-copy"), default=0)
    dev = max((r.get("ceiling_gbps", 0) for r in rs if r.get("ceiling_kind") == "device-copy"), default=0)
    for size in sorted({(r["width"], r["height"]) for r in rs}):
        group = [r for r in rs if (r["width"], r["height"]) == size and not r.get("error")]
        px = size[0] * size[1]
        peers = [r for r in group if r["backend"].startswith(PEERS)]

        def best(key, gpu):
            return min((r[key] for r in peers if r[key] and bool(r.get("gpu")) == gpu), default=0)
        print(f"\n### {size[0]}x{size[1]} ({px/1e6:.1f} Mpixel)\n")
        print("| contender | kernel ms, median [min–max] | with transfers ms | kernel GB/s | % of ceiling | kernel vs best peer | total vs best peer | verified |")
        print("|---|---|---|---|---|---|---|---|")
        for r in sorted(group, key=lambda r: r["total_ms"] or r["kernel_ms"]):
            name = r["backend"] + (":" + r["mode"] if r.get("mode") else "")
            gbps = 12 * px / (r["kernel_ms"] * 1e6) if r["kernel_ms"] else 0
            ceil = r.get("ceiling_gbps") or (dev if r.get("gpu") else host)
            pct = f"{100 * gbps / ceil:.0f}% of {ceil:.0f}" if ceil else ""
            best_k, best_t = best("kernel_ms", bool(r.get("gpu"))), best("total_ms", bool(r.get("gpu")))
            vk = f"{best_k / r['kernel_ms']:.2f}x" if best_k and r["kernel_ms"] else ""
            vt = f"{best_t / r['total_ms']:.2f}x" if best_t and r["total_ms"] else ""
            print(f"| {name} | {spread(r, 'kernel')} | {spread(r, 'total')} | {gbps:.1f} | {pct} | {vk} | {vt} | "
                  f"{'yes' if r.get('verified') else 'NO'} (max err {r.get('max_abs_err', 0):.2g}) |")
    print("\nRatios compare CPU contenders with the fastest CPU peer (NumPy, numba) and GPU contenders with the\n"
          "fastest GPU peer (CuPy, numba.cuda) on the same measure; above 1x is faster.")


if __name__ == "__main__":
    main()
