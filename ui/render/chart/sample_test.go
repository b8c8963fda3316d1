package chart

import (
	"canopy/compute"
)

// result builds a plausible BenchResult for a w×w image from phase medians
// (ms); minima and maxima spread 5 % and 20 % around them.
func result(backend, mode string, gpu bool, w int, setup, up, kern, down float64) compute.BenchResult {
	dev := "AMD EPYC 9V84 96-Core Processor (2 threads, linux/amd64)"
	kind, ceil := "host-copy", 20.0
	if backend == compute.NameGo {
		dev = "AMD EPYC 9V84 96-Core Processor (1 threads, linux/amd64)"
	}
	if gpu {
		dev, kind, ceil = "NVIDIA H200", "device-copy", 3900
	}
	ph := func(m float64) compute.Phase { return compute.Phase{Median: m, Min: m * 0.95, Max: m * 1.2} }
	tot := up + kern + down
	bytes := float64(w*w) * bytesPerPixel
	r := compute.BenchResult{
		Backend: backend, Mode: mode, Device: dev, GPU: gpu, Width: w, Height: w, Repeat: 9,
		SetupMS: setup, UploadMS: up, KernelMS: kern, DownloadMS: down, TotalMS: tot,
		Upload: ph(up), Kernel: ph(kern), Download: ph(down), Total: ph(tot),
		KernelGBps: bytes / (kern * 1e6), TotalGBps: bytes / (tot * 1e6),
		CeilingGBps: ceil, CeilingKind: kind, Verified: true, MaxAbsErr: 5.96e-8,
	}
	r.KernelPct = 100 * r.KernelGBps / ceil
	if gpu {
		r.H2DGBps, r.D2HGBps = 50, 52
	}
	return r
}

// benchAt returns the five backends at one size w×w with times that scale
// with the pixel count, the GPU ones paying PCIe transfers.
func benchAt(w int) []compute.BenchResult {
	px := float64(w * w)
	return []compute.BenchResult{
		result(compute.NameGo, "", false, w, 0, 0, 2.0e-6*px, 0),
		result(compute.NameGoParallel, "", false, w, 0.05, 0, 1.1e-6*px+0.02, 0),
		result(compute.NameC, "", false, w, 0, 0, 0.6e-6*px+0.004, 0),
		result(compute.NameGL, "", true, w, 180, 0.16e-6*px+0.05, 0.012e-6*px+0.03, 0.09e-6*px+0.05),
		result(compute.NameCUDA, "overlap", true, w, 350, 0.16e-6*px+0.02, 0.004e-6*px+0.008, 0.08e-6*px+0.02),
	}
}
