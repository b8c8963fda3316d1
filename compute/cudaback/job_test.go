package cudaback

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/index"
)

// The conformance suite of the index engine: every catalogue index over
// every stored type, with and without a mask, each index alone, random
// formulas; against the float64 truth within the GPU error bound, NaN in
// exactly the same pixels.
func TestJobs(t *testing.T) {
	b := New()
	defer b.Close()
	computetest.RunJobs(t, b, false)
}

// The generated kernels use only correctly rounded operations, so they
// equal the float32 definition bit for bit (NaN aside) in every mode, host
// memory strategy, and with chunks small enough to leave tails.
func TestJobsExact(t *testing.T) {
	b := gpu(t)
	for _, cfg := range configs {
		for _, small := range []bool{false, true} {
			name := fmt.Sprintf("%s/%s", cfg.mode, cfg.host)
			if small {
				name += "/small-chunks"
			}
			t.Run(name, func(t *testing.T) {
				configure(t, b, cfg.mode, cfg.host)
				chunk := DefaultChunkPixels
				if small {
					chunk = 4 * ChunkAlign
				}
				if err := b.SetPipeline(chunk, DefaultStreams); err != nil {
					t.Fatal(err)
				}
				defer b.SetPipeline(DefaultChunkPixels, DefaultStreams)
				computetest.RunJobs(t, b, true)
			})
		}
	}
}

// evi3 is an EVI job over w×h float32 bands with random reflectances.
func evi3(w, h int, seed uint64, expr string) *compute.Job {
	g := rand.New(rand.NewPCG(seed, 1))
	var bands []compute.BandInput
	for _, role := range []string{"blue", "red", "nir"} {
		p := compute.NewPlane(compute.F32, w, h)
		for i, s := 0, p.F32(); i < len(s); i++ {
			s[i] = float32(g.Float64() * 0.6)
		}
		bands = append(bands, compute.BandInput{Role: role, Plane: p, Radiometry: compute.Identity(), Source: "test " + role})
	}
	j, err := compute.NewJob(bands, nil, []string{expr}, []*index.Expr{index.MustParse(expr)})
	if err != nil {
		panic(err)
	}
	return j
}

const eviFormula = "2.5 * (nir - red) / (nir + 6 * red - 7.5 * blue + 1)"

func verifyJob(t testing.TB, j *compute.Job) {
	t.Helper()
	for o, r := range compute.VerifyJob(j) {
		if !r.OK() {
			t.Fatalf("%s: %v", j.Names[o], r)
		}
	}
}

// A job's kernel is compiled once: the second run of the same program over
// bands of the same types sets nothing up, even on new data with other
// nodata and radiometry values; another program, or another band type,
// compiles again.
func TestJobCache(t *testing.T) {
	b := gpu(t)
	j := evi3(67, 31, 1, eviFormula)
	run := func(what string, j *compute.Job, wantJIT bool) compute.Timings {
		t.Helper()
		tm, err := compute.RunJob(b, j)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		verifyJob(t, j)
		st := b.LastJob()
		if st.JIT != wantJIT {
			t.Fatalf("%s: JIT %v, want %v", what, st.JIT, wantJIT)
		}
		t.Logf("%s: setup %v, generate %v, JIT %v (compiler %v), %d registers, %d bytes of PTX, %s",
			what, tm.Setup, st.Generate, st.Compile, st.JITWall, st.Registers, st.PTXBytes, st.Target)
		return tm
	}
	if tm := run("first", j, true); tm.Setup <= 0 {
		t.Errorf("first run: setup %v", tm.Setup)
	}
	if tm := run("again", j, false); tm.Setup != 0 {
		t.Errorf("second run of the same job: setup %v, want 0", tm.Setup)
	}
	if tm := run("new data", evi3(67, 31, 2, eviFormula), false); tm.Setup != 0 {
		t.Errorf("same program on new bands of the same size: setup %v, want 0", tm.Setup)
	}
	// Other radiometry and nodata values are parameters, not code.
	k := evi3(67, 31, 3, eviFormula)
	for i := range k.Bands {
		k.Bands[i].Radiometry = compute.Radiometry{Add: 0.01 * float64(i), Scale: 0.5, Offset: 0.02}
	}
	run("with radiometry", k, true)
	k.Bands[0].Radiometry.Scale = 0.25
	k.Bands[1].Radiometry.Offset = -1
	run("other radiometry values", k, false)
	run("another formula", evi3(67, 31, 4, "(nir - red) / (nir + red + 0.5)"), true)
	run("the first again", j, false)
}

// Generated PTX the driver refuses is one line naming the line and its
// text.
func TestJobBadPTX(t *testing.T) {
	b := gpu(t)
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := s.open(); err != nil {
		t.Fatal(err)
	}
	if err := s.ctx.SetCurrent(); err != nil {
		t.Fatal(err)
	}
	tgt, err := s.target()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := generate(everyOp(), kernelShape{Bands: []bandShape{f32Band(), f32Band()}}, tgt)
	if err != nil {
		t.Fatal(err)
	}
	k, err := s.compile(spec)
	if err != nil {
		t.Fatalf("the generated kernel does not compile: %v", err)
	}
	k.mod.Unload()
	// Break one instruction: a register that is not declared.
	lines := strings.Split(spec.PTX, "\n")
	bad := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "\tsqrt.rn.f32 ") {
			lines[i] = "\tsqrt.rn.f32 %f1, %undeclared;"
			bad = i + 1
			break
		}
	}
	_, err = s.compile(&kernelSpec{PTX: strings.Join(lines, "\n"), Params: spec.Params, Target: tgt})
	var je *JITError
	if !errors.As(err, &je) {
		t.Fatalf("broken PTX: %T %v, want *JITError", err, err)
	}
	msg := err.Error()
	t.Logf("%s", msg)
	if strings.Contains(msg, "\n") || je.Line != bad || !strings.Contains(msg, "sqrt.rn.f32 %f1, %undeclared;") || !strings.Contains(msg, fmt.Sprintf("line %d", bad)) {
		t.Errorf("error %q: line %d, want %d and the line's text", msg, je.Line, bad)
	}
}

// The job's mode is a per-run argument; an unknown one is refused before
// anything is set up, with or without a GPU.
func TestJobModes(t *testing.T) {
	b := New()
	defer b.Close()
	j := evi3(5, 3, 1, eviFormula)
	j.Mode = "parallel"
	if _, err := b.RunJob(j); err == nil || !strings.Contains(err.Error(), `"parallel"`) || !strings.Contains(err.Error(), ModeOverlapped) {
		t.Errorf("unknown mode: %v", err)
	}
	info := b.Info()
	computetest.SkipUnlessGPU(t, info.Available, "cuda: "+info.Reason)
	j = evi3(2053, 1027, 1, eviFormula)
	for _, m := range []string{ModeSequential, ModeOverlapped, ""} {
		j.Mode = m
		tm, err := compute.RunJob(b, j)
		if err != nil {
			t.Fatalf("mode %q: %v", m, err)
		}
		verifyJob(t, j)
		st := b.LastJob()
		want := m
		if m == "" {
			want = b.Mode()
		}
		if st.Mode != want || (want == ModeSequential) != (st.Chunks == 1) {
			t.Errorf("mode %q: ran %s in %d chunks", m, st.Mode, st.Chunks)
		}
		if want == ModeSequential {
			if sum := tm.Upload + tm.Kernel + tm.Download; sum > tm.Total {
				t.Errorf("sequential phases %v + %v + %v exceed the total %v", tm.Upload, tm.Kernel, tm.Download, tm.Total)
			}
		}
		if tm.Kernel <= 0 || tm.Upload <= 0 || tm.Download <= 0 {
			t.Errorf("mode %q: timings %+v", m, tm)
		}
		t.Logf("mode %q: %+v; %d chunks, direct %v, %s", m, tm, st.Chunks, st.Direct, st.Target)
	}
}

// NDVI jobs and EVI jobs on one backend, at different sizes, in turn:
// each resizes what it needs and the results stay right.
func TestJobAndRunInTurn(t *testing.T) {
	b := gpu(t)
	for _, size := range [][2]int{{33, 7}, {1031, 1033}, {5, 5}} {
		run(t, b, computetest.EdgeJob(size[0], size[1], 3, true))
		j := evi3(size[0], size[1], 5, eviFormula)
		if _, err := compute.RunJob(b, j); err != nil {
			t.Fatal(err)
		}
		verifyJob(t, j)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// After Close the kernels are compiled again.
	j := evi3(9, 9, 6, eviFormula)
	if _, err := compute.RunJob(b, j); err != nil {
		t.Fatal(err)
	}
	if !b.LastJob().JIT {
		t.Error("the kernel cache survived Close")
	}
	verifyJob(t, j)
}
