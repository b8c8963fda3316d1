package compute

import (
	"canopy/compute/par"
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Phase summarises one timed phase over the repeats, in milliseconds.
type Phase struct {
	Median float64 `json:"median_ms"`
	Min    float64 `json:"min_ms"`
	Max    float64 `json:"max_ms"`
}

func phaseOf(ds []time.Duration) Phase {
	if len(ds) == 0 {
		return Phase{}
	}
	ms := make([]float64, len(ds))
	for i, d := range ds {
		ms[i] = float64(d) / 1e6
	}
	slices.Sort(ms)
	med := ms[len(ms)/2]
	if len(ms)%2 == 0 {
		med = (ms[len(ms)/2-1] + ms[len(ms)/2]) / 2
	}
	return Phase{Median: med, Min: ms[0], Max: ms[len(ms)-1]}
}

// BenchResult is one backend at one size: medians of every phase with their
// spread, bandwidths, the ceiling measured in the same run, and the
// verification of the output against the float64 reference. It is the JSON
// line `canopy bench --json` prints.
type BenchResult struct {
	Backend string `json:"backend"`
	// Index names the indices of the run ("ndvi", "ndvi,evi").
	Index  string `json:"index"`
	Mode   string `json:"mode,omitempty"`
	Device string `json:"device"`
	GPU    bool   `json:"gpu"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Repeat int    `json:"repeat"`
	// Batch is the number of runs averaged into each of the Repeat samples
	// (1 unless a run is shorter than MinSample).
	Batch int `json:"batch"`

	SetupMS    float64 `json:"setup_ms"`
	UploadMS   float64 `json:"upload_ms"`
	KernelMS   float64 `json:"kernel_ms"`
	DownloadMS float64 `json:"download_ms"`
	TotalMS    float64 `json:"total_ms"`

	Upload   Phase `json:"upload"`
	Kernel   Phase `json:"kernel"`
	Download Phase `json:"download"`
	Total    Phase `json:"total"`

	// KernelGBps is the bytes the job reads and writes (Job.Bytes) over
	// the median kernel time; TotalGBps the same over the median
	// end-to-end time.
	KernelGBps float64 `json:"kernel_gbps"`
	TotalGBps  float64 `json:"total_gbps"`
	// CeilingGBps is what this machine can do for the kernel's kind of
	// traffic, measured in the same run: a host memory copy for CPU
	// backends, a device-to-device copy for GPU backends.
	CeilingGBps float64 `json:"ceiling_gbps"`
	CeilingKind string  `json:"ceiling_kind"`
	// KernelPct is KernelGBps as a percentage of CeilingGBps.
	KernelPct float64 `json:"kernel_pct_of_ceiling"`
	// H2DGBps and D2HGBps are the pinned transfer ceilings (GPU only).
	H2DGBps float64 `json:"h2d_ceiling_gbps,omitempty"`
	D2HGBps float64 `json:"d2h_ceiling_gbps,omitempty"`
	// DuplexGBps is both directions at once (bytes moved both ways per
	// second), where the backend measures it.
	DuplexGBps float64 `json:"duplex_ceiling_gbps,omitempty"`
	// UploadGBps and DownloadGBps are the bytes moved (bands and mask up,
	// outputs down) over the median upload and download (GPU only).
	UploadGBps   float64 `json:"upload_gbps,omitempty"`
	DownloadGBps float64 `json:"download_gbps,omitempty"`

	Verified    bool    `json:"verified"`
	MaxAbsErr   float64 `json:"max_abs_err"`
	NaNMismatch int     `json:"nan_mismatch"`
	Error       string  `json:"error,omitempty"`
}

// MinSample is the shortest timed sample Bench takes: runs shorter than
// this are batched and averaged.
const MinSample = 20 * time.Millisecond

// MinWarmup is how long Bench keeps running untimed before it times.
const MinWarmup = 300 * time.Millisecond

// BenchOptions controls Bench.
type BenchOptions struct {
	// Repeat is the number of timed runs after the untimed warm-up (≥1).
	Repeat int
	// HostCeiling is the host copy bandwidth in GB/s measured in this run;
	// BenchJob measures it when zero.
	HostCeiling float64
	// Progress, when set, is told how far BenchJob is, in steps of
	// Repeat + 2: the warm-up, each timed sample, then the ceiling and
	// the verification (done == total when all is done).
	Progress func(done, total int)
}

// BenchJob times b on an index job: one untimed warm-up (which also does
// the setup, timed apart), Repeat timed runs into the job's outputs,
// medians with their spread, with the
// bandwidths of the bytes the job really moves (Job.Bytes: bands as stored,
// the mask, the outputs), the ceiling measured in the same run, and every
// output verified against the float64 truth. The job's Mode is the mode.
//
// Each run is RunJob over the whole job, the entry every block of the
// one road (source.Run's pipeline) goes through: the bench times that
// entry alone, with its phases apart (upload, kernel, download), not the
// pipeline's reading, block copies and overlapped transfers around it.
// A cancelled ctx stops it before its next run: the result's Error is
// then ctx's error.
func BenchJob(ctx context.Context, b Backend, j *Job, opt BenchOptions) BenchResult {
	info := b.Info()
	res := newResult(b.Name(), info, j, max(opt.Repeat, 1))
	if !info.Available {
		res.Error = info.Reason
		return res
	}
	steps := res.Repeat + 2
	step := func(done int) {
		if opt.Progress != nil {
			opt.Progress(done, steps)
		}
	}
	timeRuns(&res, func() (Timings, error) {
		if err := ctx.Err(); err != nil {
			return Timings{}, err
		}
		return RunJob(b, j)
	}, step)
	if res.Error != "" {
		return res
	}
	res.bandwidths(j)
	res.ceilings(b, info, opt, min(j.Bytes()/3, 1<<30))
	res.judge(VerifyJob(j))
	step(steps)
	return res
}

// RunResult is one run of j on b as a result of one sample (Repeat 1):
// t its phases, reps the verification of its outputs (one per index, as
// source.Run gives them), hostCeiling the host copy ceiling in GB/s that
// a CPU backend's kernel is set against (0: none; a GPU backend's device
// ceilings are BenchJob's to measure). The bandwidths and the verdict are
// BenchJob's.
func RunResult(b Backend, info Info, j *Job, t Timings, reps []Report, hostCeiling float64) BenchResult {
	res := newResult(b.Name(), info, j, 1)
	res.Batch = 1
	res.SetupMS = float64(t.Setup) / 1e6
	res.Upload, res.Kernel, res.Download, res.Total = phaseOf([]time.Duration{t.Upload}), phaseOf([]time.Duration{t.Kernel}),
		phaseOf([]time.Duration{t.Download}), phaseOf([]time.Duration{t.Total})
	res.UploadMS, res.KernelMS, res.DownloadMS, res.TotalMS = res.Upload.Median, res.Kernel.Median, res.Download.Median, res.Total.Median
	res.bandwidths(j)
	if hostCeiling > 0 && !info.GPU {
		res.CeilingGBps, res.CeilingKind, res.KernelPct = hostCeiling, "host-copy", 100*res.KernelGBps/hostCeiling
	}
	res.judge(reps)
	return res
}

// newResult is a result of b on j before any run: who, what and how big.
func newResult(name string, info Info, j *Job, repeat int) BenchResult {
	return BenchResult{Backend: name, Mode: j.Mode, Device: info.Device, GPU: info.GPU, Width: j.Width, Height: j.Height,
		Repeat: repeat, Index: strings.Join(j.Names, ",")}
}

// judge sets the verdict of the outputs' reports: verified when every one
// is, the worst error, the NaN mismatches, and the first failure as the
// error.
func (res *BenchResult) judge(reps []Report) {
	res.Verified = true
	for _, rep := range reps {
		res.Verified = res.Verified && rep.OK()
		res.MaxAbsErr = max(res.MaxAbsErr, rep.MaxAbsErr)
		res.NaNMismatch += rep.NaNMismatch
		if !rep.OK() && res.Error == "" {
			res.Error = rep.String()
		}
	}
}

// timeRuns is the timing protocol of BenchJob: one warm-up run
// (its setup counted), more untimed runs for MinWarmup, then Repeat timed
// samples, each the mean of enough runs to last MinSample; step (nil: none)
// is told 1 after the warm-up and 1+k after the k-th sample.
func timeRuns(res *BenchResult, run func() (Timings, error), step func(done int)) {
	if step == nil {
		step = func(int) {}
	}
	// Warm-up: first-call costs (page faults on out, JIT, caches) stay out.
	w, err := run()
	if err != nil {
		res.Error = err.Error()
		return
	}
	res.SetupMS += float64(w.Setup) / 1e6
	// More warm-up until the runs have gone on for MinWarmup: a machine
	// just busy generating the scene and measuring the ceiling needs a
	// moment (clocks, caches, the kernel's memory housekeeping) to settle.
	for t0 := time.Now(); time.Since(t0) < MinWarmup; {
		if _, err := run(); err != nil {
			res.Error = err.Error()
			return
		}
	}
	// Each timed sample is the mean of Batch runs, Batch chosen so that a
	// sample lasts at least MinSample: a sub-millisecond run is at the mercy
	// of one timer tick or one descheduled thread, a batch of them is not.
	batch := 1
	if w.Total > 0 && w.Total < MinSample {
		batch = int(min(MinSample/w.Total+1, 1000))
	}
	res.Batch = batch
	step(1)
	// A garbage collection cycle started by the scene's or the ceiling's
	// allocations would take a core away in the middle of the timed runs.
	runtime.GC()
	var up, k, down, tot []time.Duration
	for range res.Repeat {
		var sum Timings
		for range batch {
			t, err := run()
			if err != nil {
				res.Error = err.Error()
				return
			}
			sum.Upload, sum.Kernel, sum.Download, sum.Total = sum.Upload+t.Upload, sum.Kernel+t.Kernel, sum.Download+t.Download, sum.Total+t.Total
		}
		d := time.Duration(batch)
		up, k, down, tot = append(up, sum.Upload/d), append(k, sum.Kernel/d), append(down, sum.Download/d), append(tot, sum.Total/d)
		step(1 + len(tot))
	}
	res.Upload, res.Kernel, res.Download, res.Total = phaseOf(up), phaseOf(k), phaseOf(down), phaseOf(tot)
	res.UploadMS, res.KernelMS, res.DownloadMS, res.TotalMS = res.Upload.Median, res.Kernel.Median, res.Download.Median, res.Total.Median
}

// bandwidths fills the GB/s figures from the bytes j's kernel touches
// (Job.Bytes) and (GPU) the bytes each transfer moves: the bands and the
// mask up, the outputs down.
func (res *BenchResult) bandwidths(j *Job) {
	down := 4 * len(j.Out) * j.Pixels()
	kernelBytes, upBytes, downBytes := float64(j.Bytes()), float64(j.Bytes()-down), float64(down)
	if res.KernelMS > 0 {
		res.KernelGBps = kernelBytes / (res.KernelMS * 1e6)
	}
	if res.TotalMS > 0 {
		res.TotalGBps = kernelBytes / (res.TotalMS * 1e6)
	}
	if res.GPU {
		if res.UploadMS > 0 {
			res.UploadGBps = upBytes / (res.UploadMS * 1e6)
		}
		if res.DownloadMS > 0 {
			res.DownloadGBps = downBytes / (res.DownloadMS * 1e6)
		}
	}
}

// ceilings measures (or takes from opt) the ceiling for b's kind of
// traffic with buffers of the given size, and the kernel's share of it.
func (res *BenchResult) ceilings(b Backend, info Info, opt BenchOptions, bytes int) {
	if dc, ok := b.(DeviceCeilings); ok {
		c, err := dc.Ceilings(min(bytes, 1<<30))
		if err == nil {
			res.CeilingGBps, res.CeilingKind = c.DeviceCopy, "device-copy"
			res.H2DGBps, res.D2HGBps, res.DuplexGBps = c.H2D, c.D2H, c.Duplex
		}
	} else {
		res.CeilingGBps, res.CeilingKind = opt.HostCeiling, "host-copy"
		if res.CeilingGBps == 0 {
			res.CeilingGBps = HostCopyCeiling(0)
		}
	}
	if res.CeilingGBps > 0 {
		res.KernelPct = 100 * res.KernelGBps / res.CeilingGBps
	}
}

// HostCopier copies src into dst (same length). Go's copy is always
// measured; RegisterHostCopier adds another (the c backend adds a copy with
// streaming stores, the way its kernel writes), and the ceiling is the best.
type HostCopier func(dst, src []float32)

var (
	copierMu sync.Mutex
	copiers  = []HostCopier{func(d, s []float32) { copy(d, s) }}
)

// RegisterHostCopier adds a copy routine to those HostCopyCeiling tries.
func RegisterHostCopier(c HostCopier) {
	copierMu.Lock()
	defer copierMu.Unlock()
	copiers = append(copiers, c)
}

// HostCopyCeiling measures the host's memory-copy bandwidth in GB/s
// (bytes read plus bytes written, as NDVI's 12 bytes per pixel count them)
// by copying a buffer of the given size (0: 256 MiB, well past any cache)
// on all cores with every registered copier: the median of 7 runs after a
// warm-up (the statistic the backends are reported with), best copier.
func HostCopyCeiling(bytes int) float64 {
	return hostCopyStat(bytes, func(ds []time.Duration) time.Duration { return ds[len(ds)/2] })
}

// HostCopyPeak is HostCopyCeiling with the fastest of the 7 runs instead
// of their median: what the memory moves when nothing else on the machine
// gets in the way. It is the steadier figure while other work runs (the
// median of a small probe varies widely from one start of canopy to the
// next: docs/BENCHMARKS.md), which is why Auto decides with it.
func HostCopyPeak(bytes int) float64 {
	return hostCopyStat(bytes, func(ds []time.Duration) time.Duration { return ds[0] })
}

// hostCopyStat is the copy bandwidth of HostCopyCeiling with stat taken
// of each copier's sorted run times.
func hostCopyStat(bytes int, stat func([]time.Duration) time.Duration) float64 {
	if bytes <= 0 {
		bytes = 256 << 20
	}
	n := bytes / 4
	src := NewOutput(n)
	dst := NewOutput(n)
	for i := range src {
		src[i] = float32(i)
	}
	run := func(c HostCopier) time.Duration {
		t0 := time.Now()
		par.Copy(dst, src, 0, c)
		return time.Since(t0)
	}
	copierMu.Lock()
	cs := append([]HostCopier(nil), copiers...)
	copierMu.Unlock()
	best := time.Duration(1<<63 - 1)
	for _, c := range cs {
		run(c)
		ds := make([]time.Duration, 7)
		for i := range ds {
			ds[i] = run(c)
		}
		slices.Sort(ds)
		best = min(best, stat(ds))
	}
	return 2 * float64(n*4) / float64(best.Nanoseconds())
}
