package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/index"
	"canopy/compute/pipeline"
	"canopy/compute/raster"
)

// streamer is a CPU backend that streams jobs as the cuda backend does:
// Submit starts the job on a goroutine of its own and returns at once,
// jobs finish in any order (each sleeps a random while), Wait returns the
// oldest. It counts the jobs in flight at once and fails on request.
type streamer struct {
	compute.Backend
	mu                   sync.Mutex
	inFlight, most       int
	opened, closed       atomic.Int32
	failSubmit, failWait int // the job (1-based) whose Submit or Wait fails; 0 for none
	hint                 int // its StreamDepthHint (0: none)
	submitted            int
	depths               []int
	outs                 map[*float32]bool // the output planes' first pixels seen
}

func (s *streamer) RunJob(j *compute.Job) (compute.Timings, error) {
	return compute.RunJob(s.Backend, j)
}

func (s *streamer) StreamDepthHint() int { return s.hint }

func (s *streamer) StreamJobs(depth int) (compute.JobStream, error) {
	s.opened.Add(1)
	s.mu.Lock()
	s.depths = append(s.depths, depth)
	s.mu.Unlock()
	return &fakeStream{s: s, depth: depth, g: rand.New(rand.NewPCG(3, uint64(depth)))}, nil
}

type fakeStream struct {
	s     *streamer
	depth int
	g     *rand.Rand
	queue []chan error
}

func (f *fakeStream) Submit(j *compute.Job) error {
	if len(f.queue) == f.depth {
		return fmt.Errorf("%d jobs in flight", len(f.queue))
	}
	s := f.s
	s.mu.Lock()
	s.submitted++
	n := s.submitted
	if s.outs != nil {
		s.outs[&j.Out[0][0]] = true
	}
	s.inFlight++
	s.most = max(s.most, s.inFlight)
	s.mu.Unlock()
	if n == s.failSubmit {
		return errors.New("out of device memory")
	}
	done := make(chan error, 1)
	delay := time.Duration(f.g.IntN(3000)) * time.Microsecond
	go func() {
		time.Sleep(delay)
		_, err := compute.RunJob(s.Backend, j)
		if n == s.failWait {
			err = errors.New("an illegal memory access was encountered")
		}
		done <- err
	}()
	f.queue = append(f.queue, done)
	return nil
}

func (f *fakeStream) Wait() (compute.Timings, error) {
	if len(f.queue) == 0 {
		return compute.Timings{}, errors.New("nothing in flight")
	}
	err := <-f.queue[0]
	f.queue = f.queue[1:]
	f.s.mu.Lock()
	f.s.inFlight--
	f.s.mu.Unlock()
	return compute.Timings{Kernel: time.Microsecond, Total: time.Microsecond}, err
}

func (f *fakeStream) Close() error {
	for _, c := range f.queue {
		<-c
	}
	f.queue = nil
	f.s.closed.Add(1)
	return nil
}

// TestStreamedBlocks runs the pipeline on a backend that streams jobs, at
// several depths and pool sizes: the outputs equal the whole image's bit
// for bit and reach the sinks in order although the jobs finish in any
// order, the stream holds as many blocks as asked (so blocks do overlap),
// a failing Submit or Wait stops the run naming the block's rows, and the
// stream is closed once whatever happens.
func TestStreamedBlocks(t *testing.T) {
	const w, h = 53, 301
	specs := scene(t, w, h, 16)
	mask := make([]uint8, w*h)
	for i := range mask {
		if i%7 == 0 {
			mask[i] = 1
		}
	}
	ndvi, _ := index.Lookup("ndvi")
	evi, _ := index.Lookup("evi")
	names, exprs := []string{"ndvi", "evi"}, []*index.Expr{ndvi.Expr, evi.Expr}
	base, _ := compute.New(compute.NameGo)
	defer base.Close()
	want, err := whole(t, base, specs, mask, names, exprs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ depth, inFlight, hint, wantDepth int }{
		{0, 0, 0, pipeline.DefaultStreamDepth}, // 7 blocks in the pool
		{1, 0, 0, 0},                           // no stream
		{2, 0, 0, 2},
		{5, 0, 0, 5},
		{4, 3, 0, 2}, // a pool of 3 leaves one block for the decoder
		{8, 40, 0, 8},
		{0, 0, 2, 2}, // the backend's hint when none is asked
		{3, 0, 2, 3}, // what is asked before the hint
	} {
		be := &streamer{Backend: base, hint: c.hint}
		in, err := raster.OpenStored(roles, specs)
		if err != nil {
			t.Fatal(err)
		}
		col := &collect{t: t, w: w, h: h}
		in.Input.Mask = mask
		res, err := pipeline.Run(context.Background(), in.Input, pipeline.Options{Backend: be, Names: names, Exprs: exprs, Verify: true,
			BlockRows: 16, StreamDepth: c.depth, InFlight: c.inFlight}, col)
		in.Close()
		what := fmt.Sprintf("depth %d, %d in flight, hint %d", c.depth, c.inFlight, c.hint)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for o := range names {
			sameBits(t, what+" "+names[o], w, col.out[o], want.Out[o])
		}
		if !res.Reports[0].OK() || !res.Reports[1].OK() || col.blocks != 19 {
			t.Fatalf("%s: %d blocks, reports %v", what, col.blocks, res.Reports)
		}
		if c.wantDepth == 0 {
			if be.opened.Load() != 0 {
				t.Errorf("%s: a stream was opened", what)
			}
			continue
		}
		if be.opened.Load() != 1 || be.closed.Load() != 1 || be.depths[0] != c.wantDepth {
			t.Errorf("%s: streams opened %d, closed %d, depths %v (want one of depth %d)", what, be.opened.Load(), be.closed.Load(), be.depths, c.wantDepth)
		}
		if be.most != c.wantDepth {
			t.Errorf("%s: at most %d jobs were in flight, want %d", what, be.most, c.wantDepth)
		}
		if res.Timings.Kernel != 19*time.Microsecond {
			t.Errorf("%s: the blocks' kernel times sum to %v, want 19 µs", what, res.Timings.Kernel)
		}
	}

	// A second run of the same shape reuses the first one's blocks (their
	// memory is page-locked on a GPU); another shape makes its own.
	runs := func(be *streamer, names []string, exprs []*index.Expr) map[*float32]bool {
		be.outs = map[*float32]bool{}
		in, _ := raster.OpenStored(roles, specs)
		defer in.Close()
		if _, err := pipeline.Run(context.Background(), in.Input, pipeline.Options{Backend: be, Names: names, Exprs: exprs, BlockRows: 16}); err != nil {
			t.Fatal(err)
		}
		return be.outs
	}
	be := &streamer{Backend: base}
	first, again := runs(be, names, exprs), runs(be, names, exprs)
	for p := range again {
		if !first[p] {
			t.Fatalf("the second run of the same shape allocated new blocks (%d of its %d outputs are new)", len(again)-len(first), len(again))
		}
	}
	other := runs(be, names[:1], exprs[:1])
	for p := range other {
		if first[p] {
			t.Fatal("a run of another shape (one output) reused blocks of two outputs")
		}
	}

	for _, c := range []struct {
		submit, wait int
		msg          string
	}{{5, 0, "rows 64 to 80: go: out of device memory"}, {0, 7, "rows 96 to 112: go: an illegal memory access was encountered"}} {
		be := &streamer{Backend: base, failSubmit: c.submit, failWait: c.wait}
		in, _ := raster.OpenStored(roles, specs)
		var seen int
		_, err := pipeline.Run(context.Background(), in.Input, pipeline.Options{Backend: be, Names: names, Exprs: exprs, BlockRows: 16},
			pipeline.SinkFunc(func(b *pipeline.Block) error { seen++; return nil }))
		in.Close()
		if err == nil || err.Error() != c.msg {
			t.Fatalf("failing stream: %v, want %q", err, c.msg)
		}
		if be.closed.Load() != 1 {
			t.Errorf("failing stream closed %d times", be.closed.Load())
		}
		if seen > 6 {
			t.Errorf("after block %d failed, %d blocks reached the sink", max(c.submit, c.wait), seen)
		}
	}
}

// TestStreamedCUDA runs every catalogue index over the cuda backend's job
// stream (depths 2, 3 and 6) on odd sizes, uint16 bands with nodata, a
// mask and blocks not a multiple of the kernel's block, and compares the
// outputs bit for bit with one whole-image job on the same backend, and
// with the pipeline waiting for each block (depth 1). It needs an NVIDIA
// GPU: skipped without one, failed with CANOPY_EXPECT_GPU set.
func TestStreamedCUDA(t *testing.T) {
	be, err := compute.New(compute.NameCUDA)
	if err != nil {
		t.Fatal(err)
	}
	info := be.Info()
	computetest.SkipUnlessGPU(t, info.Available, "cuda: "+info.Reason)
	defer be.Close()
	streamedGPU(t, be)
}

// TestStreamedGL is TestStreamedCUDA on the gl backend's job stream (in
// CI on Mesa's llvmpipe; on the H200 host on the NVIDIA driver, where
// CANOPY_EXPECT_GPU makes a missing GL a failure).
func TestStreamedGL(t *testing.T) {
	be, err := compute.New(compute.NameGL)
	if err != nil {
		t.Fatal(err)
	}
	info := be.Info()
	computetest.SkipUnlessGPU(t, info.Available, "gl: "+info.Reason)
	defer be.Close()
	streamedGPU(t, be)
}

func streamedGPU(t *testing.T, be compute.Backend) {
	if _, ok := be.(compute.JobStreamer); !ok {
		t.Fatalf("the %s backend does not stream jobs", be.Name())
	}
	var names []string
	var exprs []*index.Expr
	for k, c := range index.Catalogue() {
		// -short is the race detector's run in make test, where the
		// verification's float64 reference is most of the time: every
		// third index of the catalogue (NDVI, the first, among them).
		if testing.Short() && k%3 != 0 {
			continue
		}
		if !slices.ContainsFunc(c.Roles, func(r string) bool { return !slices.Contains(roles, r) }) {
			names = append(names, c.Name)
			exprs = append(exprs, c.Expr)
		}
	}
	for _, size := range [][2]int{{1031, 517}, {1, 1}, {4097, 263}} {
		w, h := size[0], size[1]
		specs := scene(t, w, h, 16)
		mask := make([]uint8, w*h)
		for i := range mask {
			if i%11 == 3 {
				mask[i] = 1
			}
		}
		usable, ux := names, exprs
		want, err := whole(t, be, specs, mask, usable, ux)
		if err != nil {
			t.Fatal(err)
		}
		depths := []int{1, 2, 3, 6}
		if testing.Short() {
			// -short is the race detector's run in make test: one depth
			// without the stream and one with it.
			depths = []int{1, 3}
		}
		for _, depth := range depths {
			in, err := raster.OpenStored(roles, specs)
			if err != nil {
				t.Fatal(err)
			}
			in.Input.Mask = mask
			col := &collect{t: t, w: w, h: h}
			res, err := pipeline.Run(context.Background(), in.Input, pipeline.Options{Backend: be, Names: usable, Exprs: ux, Verify: true,
				BlockRows: 48, StreamDepth: depth}, col)
			in.Close()
			if err != nil {
				t.Fatalf("%d×%d depth %d: %v", w, h, depth, err)
			}
			for o := range usable {
				sameBits(t, fmt.Sprintf("%d×%d depth %d %s", w, h, depth, usable[o]), w, col.out[o], want.Out[o])
				if !res.Reports[o].OK() {
					t.Fatalf("%d×%d depth %d %s: %v", w, h, depth, usable[o], res.Reports[o])
				}
			}
			if depth > 1 && h > 48 && res.Timings.Upload <= 0 {
				t.Errorf("%d×%d depth %d: no upload time reported: %+v", w, h, depth, res.Timings)
			}
		}
	}
}
