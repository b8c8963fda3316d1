package cudaback

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/fake"
	"canopy/native/cuda"
)

// Run with: go test -run '^$' -bench . -benchtime 20x ./compute/cudaback
// Each benchmark reports the medians of its phases (CUDA events) and of the
// end-to-end time; ns/op is the host's wall clock per job, its mean.

var benchSizes = []int{2048, 10980}

// scene is NDVI of the textbook's noise image at size², over float32
// bands ("f32") or uint16 counts (reflectance × 10000, as Sentinel-2 L2A
// stores them: "u16"), one job per size and input kept for the run.
func scene(b *testing.B, size int, input string) *compute.Job {
	key := fmt.Sprint(size, input)
	if j, ok := scenes.Load(key); ok {
		return j.(*compute.Job)
	}
	j := computetest.NDVIJob(fake.Noise, size, size, 1)
	if input == "u16" {
		for k := range j.Bands {
			f := j.Bands[k].Plane.F32()
			p := compute.NewPlane(compute.U16, size, size)
			u := p.U16()
			for i := range u {
				u[i] = uint16(f[i] * 10000)
			}
			j.Bands[k].Plane = p
			j.Bands[k].Radiometry = compute.Radiometry{Scale: 1e-4}
		}
	}
	scenes.Store(key, j)
	return j
}

var scenes sync.Map // "size input" -> *compute.Job

var (
	ceilOnce sync.Once
	ceil     compute.Ceilings
)

// benchGPU returns one backend for all benchmarks, and the ceilings
// measured once in this run with a 10980² float32 band's bytes.
func benchGPU(b *testing.B) *Backend {
	b.Helper()
	be := sharedBackend()
	info := be.Info()
	computetest.SkipUnlessGPU(b, info.Available, "cuda: "+info.Reason)
	ceilOnce.Do(func() {
		var err error
		if ceil, err = be.Ceilings(10980 * 10980 * 4); err != nil {
			b.Fatal(err)
		}
	})
	return be
}

var sharedBackend = sync.OnceValue(New)

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// report adds the medians of ts and the kernel's bandwidth against the
// device copy ceiling.
func report(b *testing.B, ts []compute.Timings, setup time.Duration, pixels, bytesPerPixel int) {
	var up, k, down, tot []time.Duration
	for _, t := range ts {
		up, k, down, tot = append(up, t.Upload), append(k, t.Kernel), append(down, t.Download), append(tot, t.Total)
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	km := median(k)
	b.ReportMetric(ms(setup), "setup-ms")
	b.ReportMetric(ms(median(up)), "upload-ms")
	b.ReportMetric(ms(km), "kernel-ms")
	b.ReportMetric(ms(median(down)), "download-ms")
	b.ReportMetric(ms(median(tot)), "total-ms")
	gbps := float64(pixels*bytesPerPixel) / float64(km.Nanoseconds())
	b.ReportMetric(gbps, "kernel-GB/s")
	if ceil.DeviceCopy > 0 {
		b.ReportMetric(100*gbps/ceil.DeviceCopy, "kernel-%copy")
	}
}

// BenchmarkCeilings reports the device copy, pinned H2D and D2H, and
// both-ways bandwidths (GB/s) for a 10980² float32 band.
func BenchmarkCeilings(b *testing.B) {
	be := benchGPU(b)
	for range b.N {
		c, err := be.Ceilings(10980 * 10980 * 4)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(c.DeviceCopy, "copy-GB/s")
		b.ReportMetric(c.H2D, "h2d-GB/s")
		b.ReportMetric(c.D2H, "d2h-GB/s")
		b.ReportMetric(c.Duplex, "both-GB/s")
	}
}

// BenchmarkRun times NDVI in every mode × host memory × input type at
// 2048² and 10980², after an untimed warm-up run that does the set-up
// (reported as setup-ms), and verifies the last result.
func BenchmarkRun(b *testing.B) {
	be := benchGPU(b)
	be.SetPipeline(DefaultChunkPixels, DefaultStreams)
	for _, size := range benchSizes {
		for _, cfg := range configs {
			for _, input := range []string{"f32", "u16"} {
				b.Run(fmt.Sprintf("%s/%s/%s/%d", cfg.mode, cfg.host, input, size), func(b *testing.B) {
					configure(b, be, cfg.mode, cfg.host)
					runBench(b, be, scene(b, size, input))
				})
			}
		}
	}
}

// runBench times b.N runs of j after a warm-up and reports them.
func runBench(b *testing.B, be *Backend, j *compute.Job) {
	warm, err := compute.RunJob(be, j)
	if err != nil {
		b.Fatal(err)
	}
	ts := make([]compute.Timings, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t, err := compute.RunJob(be, j)
		if err != nil {
			b.Fatal(err)
		}
		ts = append(ts, t)
	}
	b.StopTimer()
	report(b, ts, warm.Setup, j.Pixels(), j.Bytes()/j.Pixels())
	b.ReportMetric(float64(be.LastJob().Chunks), "chunks")
	for _, rep := range compute.VerifyJob(j) {
		if !rep.OK() {
			b.Fatal(rep)
		}
	}
}

// BenchmarkHostMemory is the copy engines' speed on three kinds of host
// memory, one 10980² float32 band each way: memory the driver allocates
// page-locked (cuMemHostAlloc, what staging uses), and Go memory
// page-locked in place with cuMemHostRegister (what jobs do), with
// ordinary pages (make) and with transparent huge pages advised
// (compute.NewOutput); the registration's cost is reported too.
func BenchmarkHostMemory(b *testing.B) {
	be := benchGPU(b)
	const n = 10980 * 10980
	s := be.s
	s.mu.Lock()
	runtime.LockOSThread()
	err := s.open()
	if err == nil {
		err = s.ctx.SetCurrent()
	}
	var hp unsafe.Pointer
	var dev cuda.DevicePtr
	if err == nil {
		hp, err = s.drv.HostAlloc(4*n, 0)
	}
	if err == nil {
		dev, err = s.drv.MemAlloc(4 * n)
	}
	runtime.UnlockOSThread()
	s.mu.Unlock()
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		s.mu.Lock()
		runtime.LockOSThread()
		s.ctx.SetCurrent()
		s.drv.FreeHost(hp)
		s.drv.MemFree(dev)
		runtime.UnlockOSThread()
		s.mu.Unlock()
	}()
	pinned := unsafe.Slice((*float32)(hp), n)
	plain := make([]float32, n)
	huge := compute.NewOutput(n)
	for _, buf := range [][]float32{pinned, plain, huge} {
		for i := range buf {
			buf[i] = float32(i)
		}
	}
	for _, c := range []struct {
		name string
		buf  []float32
	}{{"hostalloc", pinned}, {"register-plain", plain}, {"register-huge", huge}} {
		b.Run(c.name, func(b *testing.B) {
			s.mu.Lock()
			defer s.mu.Unlock()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := s.ctx.SetCurrent(); err != nil {
				b.Fatal(err)
			}
			if err := s.ensureEvents(1); err != nil {
				b.Fatal(err)
			}
			p := unsafe.Pointer(&c.buf[0])
			if c.name != "hostalloc" {
				var pin runtime.Pinner
				pin.Pin(p)
				defer pin.Unpin()
				t0 := time.Now()
				if err := s.drv.HostRegister(p, 4*n, 0); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(time.Since(t0))/1e6, "register-ms")
				defer s.drv.HostUnregister(p)
			}
			d, ev, st := s.drv, s.events[0], s.streams[0]
			var up, down []time.Duration
			for range b.N + 1 {
				d.EventRecord(ev[0], st)
				d.MemcpyHtoDAsync(dev, p, 4*n, st)
				d.EventRecord(ev[1], st)
				d.MemcpyDtoHAsync(p, dev, 4*n, st)
				d.EventRecord(ev[2], st)
				if err := d.EventSynchronize(ev[2]); err != nil {
					b.Fatal(err)
				}
				u, _ := d.EventElapsed(ev[0], ev[1])
				w, _ := d.EventElapsed(ev[1], ev[2])
				up, down = append(up, u), append(down, w)
			}
			b.ReportMetric(4*n/float64(median(up[1:]).Nanoseconds()), "h2d-GB/s")
			b.ReportMetric(4*n/float64(median(down[1:]).Nanoseconds()), "d2h-GB/s")
		})
	}
}
