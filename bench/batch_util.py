#!/usr/bin/env python3
"""Core and GPU utilisation during `canopy batch` (issue 19), for a host
without GDAL or bc (the GPU machine): the scenes are copies of one
multi-band GeoTIFF (red=1, nir=2) made elsewhere (bench/batch-throughput
makes them with GDAL).

For each backend and --jobs K it runs the batch over the copies (a fresh
output folder each time), samples /proc/stat (busy share of all cores) and,
when nvidia-smi is there, the GPU's utilisation every 100 ms, and prints one
JSON object per run: wall seconds, scenes/s, mean and peak core use, mean
and peak GPU use. The same copies are then computed one by one with
`canopy compute` (a process per scene, as a shell loop would) for the ratio.

usage: bench/batch_util.py CANOPY SCENE.tif [--copies N] [--backends c,cuda] [--jobs 1,2,4,8]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def cpu_times():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v), idle


class Sampler:
    def __init__(self):
        self.cpu, self.gpu, self.stop = [], [], threading.Event()
        self.smi = shutil.which("nvidia-smi")

    def run(self):
        last = cpu_times()
        proc = None
        if self.smi:
            proc = subprocess.Popen([self.smi, "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                                     "-lms", "100"], stdout=subprocess.PIPE, text=True)
            threading.Thread(target=self.read_gpu, args=(proc,), daemon=True).start()
        while not self.stop.wait(0.1):
            now = cpu_times()
            dt, di = now[0] - last[0], now[1] - last[1]
            if dt > 0:
                self.cpu.append(100.0 * (dt - di) / dt)
            last = now
        if proc:
            proc.terminate()
            proc.wait()

    def read_gpu(self, proc):
        for line in proc.stdout:
            try:
                self.gpu.append(float(line.split(",")[0]))
            except ValueError:
                pass


def measured(cmd_runs):
    s = Sampler()
    t = threading.Thread(target=s.run)
    t.start()
    t0 = time.perf_counter()
    for cmd in cmd_runs:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            sys.exit("batch_util: %s failed: %s" % (" ".join(cmd), p.stderr.strip()))
    wall = time.perf_counter() - t0
    s.stop.set()
    t.join()
    res = {"wall_s": wall,
           "cpu_mean_pct": statistics.mean(s.cpu) if s.cpu else None,
           "cpu_peak_pct": max(s.cpu) if s.cpu else None}
    if s.gpu:
        res["gpu_mean_pct"], res["gpu_peak_pct"] = statistics.mean(s.gpu), max(s.gpu)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("canopy")
    ap.add_argument("scene")
    ap.add_argument("--copies", type=int, default=16)
    ap.add_argument("--backends", default="c,cuda")
    ap.add_argument("--jobs", default="1,2,4,8")
    ap.add_argument("--one-by-one", action="store_true", help="also time canopy compute per scene")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    try:
        scenes = []
        for i in range(a.copies):
            p = os.path.join(tmp, "scene%02d.tif" % i)
            shutil.copyfile(a.scene, p)
            scenes.append(p)
        for be in a.backends.split(","):
            if a.one_by_one:
                out = os.path.join(tmp, "one")
                os.makedirs(out, exist_ok=True)
                runs = [[a.canopy, "compute", "--band", "red=%s:1" % s, "--band", "nir=%s:2" % s,
                         "--backend", be, "--tif", os.path.join(out, os.path.basename(s))] for s in scenes]
                r = measured(runs)
                shutil.rmtree(out)
                r.update({"backend": be, "mode": "one-by-one", "scenes": a.copies,
                          "scenes_per_s": a.copies / r["wall_s"], "cores": os.cpu_count()})
                print(json.dumps(r), flush=True)
            for k in a.jobs.split(","):
                out = os.path.join(tmp, "out")
                r = measured([[a.canopy, "batch", "--out", out, "--bands", "red=1,nir=2", "--index", "ndvi",
                               "--backend", be, "--jobs", k, "--progress", "off"] + scenes])
                shutil.rmtree(out)
                r.update({"backend": be, "mode": "batch", "jobs": int(k), "scenes": a.copies,
                          "scenes_per_s": a.copies / r["wall_s"], "cores": os.cpu_count()})
                print(json.dumps(r), flush=True)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
