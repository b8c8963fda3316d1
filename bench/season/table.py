#!/usr/bin/env python3
"""table.py LOG: the Markdown table of bench/season/gpu's JSON lines: each
peer's pixel series per second per model (median, and the spread of the
runs where the peer reports it), the ratios cuda/CuPy and gl/cuda."""
import json
import sys


def main():
    rows = []
    for line in open(sys.argv[1]):
        line = line.strip()
        if line.startswith("{"):
            rows.append(json.loads(line))
    print("| peer | model | dates | pixels | median ms | min–max ms | series/s | note |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    rate = {}
    for r in rows:
        ms = r.get("ms", r.get("median_ms"))
        lo = r.get("min_ms", r.get("best_ms"))
        hi = r.get("max_ms", "")
        sps = r.get("series_per_s")
        if sps is None and ms:
            sps = r["pixels"] / (ms / 1e3)
        note = []
        for k in ("gb_per_s", "h2d_ceiling_gb_per_s", "memory_ceiling_series_per_s", "agree_with_canopy", "threads", "max_err_bounds"):
            if k in r:
                v = r[k]
                note.append(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}")
        rate[(r["peer"], r["model"])] = sps
        span = f"{lo:.3g}–{hi:.3g}" if hi != "" else (f"best {lo:.3g}" if lo is not None else "")
        print(f"| {r['peer']} | {r['model']} | {r['dates']} | {r['pixels']} | {ms:.4g} | {span} | {sps:.3g} | {'; '.join(note)} |")
    print()
    for m in ("harmonic", "median", "mosum"):
        cu, cp_, gl = rate.get(("canopy cuda kernel", m)), rate.get(("cupy", m)), rate.get(("canopy gl kernel", m))
        if cu and cp_:
            print(f"- {m}: cuda kernel / CuPy = {cu / cp_:.1f}x")
        if cu and gl:
            print(f"- {m}: gl / cuda = {gl / cu:.2f}")


if __name__ == "__main__":
    main()
