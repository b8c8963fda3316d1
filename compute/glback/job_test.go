package glback

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/index"
)

// TestJobs runs the engine's conformance suite on generated shaders:
// every catalogue index together over bands of every stored type, with
// and without a mask, each index alone, and random formulas over NaN,
// ±Inf, zeros, tiny and huge values, at sizes that fit no work group.
//
// Without CANOPY_EXPECT_GPU (llvmpipe in CI) one large case stands for the large
// sizes: chunking, dispatches and transfers do not depend on the formula,
// and the small odd sizes cover every formula and type; on a GPU every
// large case runs.
func TestJobs(t *testing.T) {
	if computetest.ExpectGPU() {
		computetest.RunJobs(t, newBackend(t), false)
		return
	}
	computetest.RunJobsOneLarge(t, newBackend(t), false)
}

// modeBackend runs every job in one mode, so that the suites can run in
// each.
type modeBackend struct {
	*Backend
	mode string
}

func (m modeBackend) RunJob(j *compute.Job) (compute.Timings, error) {
	j.Mode = m.mode
	defer func() { j.Mode = "" }()
	return m.Backend.RunJob(j)
}

// referenceOutputs runs every short conformance job on a default gl
// backend (checked by TestJobs) and returns the cases with their outputs.
func referenceOutputs(t *testing.T) ([]computetest.JobCase, [][][]float32) {
	t.Helper()
	b := newBackend(t)
	cases := computetest.JobCases(true)
	outs := make([][][]float32, len(cases))
	for i, c := range cases {
		if _, err := compute.RunJob(b, c.Job); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for _, o := range c.Job.Out {
			outs[i] = append(outs[i], slices.Clone(o))
		}
	}
	return cases, outs
}

// sameOutputs runs the cases on b (outputs poisoned first) and requires
// the reference's bits: the same shader arithmetic on the same driver,
// whatever the buffers, grids and transfers. Cases over maxPixels are
// left out.
func sameOutputs(t *testing.T, b compute.Backend, cases []computetest.JobCase, want [][][]float32, maxPixels int) {
	t.Helper()
	for i, c := range cases {
		j := c.Job
		if j.Pixels() > maxPixels {
			continue
		}
		for _, o := range j.Out {
			for p := range o {
				o[p] = 12345
			}
		}
		if _, err := compute.RunJob(b, j); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for o := range j.Out {
			for p, got := range j.Out[o] {
				w := want[i][o][p]
				if math.Float32bits(got) != math.Float32bits(w) && !(got != got && w != w) {
					t.Fatalf("%s: %s pixel %d: got %g, the reference run gave %g", c.Name, j.Names[o], p, got, w)
				}
			}
		}
	}
}

// TestJobVariants runs the conformance jobs in the other transfer mode,
// on planes cut into parts of 4 and 1024 pixels (so that transfers and
// dispatches cross part boundaries), on a grid capped at 3×2 work groups
// (many dispatches per part, 2-D grids), and with other work per
// invocation and group sizes, and requires exactly the default run's
// results.
func TestJobVariants(t *testing.T) {
	cases, want := referenceOutputs(t)
	variants := []struct {
		name  string
		tu    func(*tuning)
		mode  string
		limit int
	}{
		{"mapped", func(*tuning) {}, ModeMapped, 1 << 30},
		{"subdata", func(*tuning) {}, ModeSubData, 1 << 30},
		{"part=4", func(tu *tuning) { tu.part, tu.memory = 4, MemoryGL }, "", 3000},
		{"part=1024/mapped", func(tu *tuning) { tu.part, tu.memory = 1024, MemoryGL }, ModeMapped, 1 << 30},
		{"part=1024/capped", func(tu *tuning) { tu.part, tu.memory, tu.groupsX, tu.groupsY = 1024, MemoryGL, 3, 2 }, ModeSubData, 1 << 30},
		{"capped", func(tu *tuning) { tu.groupsX, tu.groupsY = 3, 2 }, "", 1 << 30},
		// Other defines make other shaders, which llvmpipe compiles anew
		// (the others come from Mesa's shader cache): a minute for the
		// catalogue's, so the small shaders only.
		{"iters=3/local=64/small", func(tu *tuning) { tu.iters, tu.local = 3, 64 }, "", 1 << 30},
		{"local=1024/capped/small", func(tu *tuning) { tu.local, tu.groupsX, tu.groupsY = 1024, 2, 1 }, "", 1 << 30},
		{"vec4s=2/iters=2/small", func(tu *tuning) { tu.jobVec4s, tu.iters = 2, 2 }, "", 1 << 30},
		{"vec4s=4/capped/small", func(tu *tuning) { tu.jobVec4s, tu.groupsX, tu.groupsY = 4, 2, 1 }, "", 1 << 30},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			b := New()
			v.tu(&b.tu)
			defer b.Close()
			need(t, b)
			cs, ws := cases, want
			if strings.HasSuffix(v.name, "/small") {
				cs, ws = nil, nil
				for i, c := range cases {
					if !strings.HasPrefix(c.Name, "catalogue") {
						cs, ws = append(cs, c), append(ws, want[i])
					}
				}
			}
			sameOutputs(t, modeBackend{b, v.mode}, cs, ws, v.limit)
		})
	}
}

// evenJob is a w×h job of the named catalogue indices over uint16 bands
// (Sentinel-2 radiometry, DN 0 nodata).
func evenJob(t testing.TB, w, h int, mask bool, names ...string) *compute.Job {
	t.Helper()
	var bands []compute.BandInput
	for r, role := range index.Roles {
		s := make([]uint16, w*h)
		for i := range s {
			s[i] = uint16(1000 + (i*7919+r*104729)%9000)
			if i%97 == r {
				s[i] = 0
			}
		}
		bands = append(bands, compute.BandInput{Role: role, Plane: compute.PlaneOf(w, h, s),
			Radiometry: compute.Radiometry{Add: -1000, Scale: 1e-4}, NoData: 0, HasNoData: true, Source: "test " + role})
	}
	var m []uint8
	if mask {
		m = make([]uint8, w*h)
		for i := range m {
			if i%5 == 0 {
				m[i] = 1
			}
		}
	}
	var exprs []*index.Expr
	for _, n := range names {
		c, ok := index.Lookup(n)
		if !ok {
			t.Fatalf("no index %s", n)
		}
		exprs = append(exprs, c.Expr)
	}
	j, err := compute.NewJob(bands, m, names, exprs)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// runJob runs j on b and checks every output against the float32
// definition (computetest.Eval32Job), within a few ulp (the shader's
// division and square root are within an ulp of correctly rounded),
// with NaN in exactly the same pixels.
func runJob(t *testing.T, b *Backend, j *compute.Job) compute.Timings {
	t.Helper()
	tm, err := compute.RunJob(b, j)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]float32, len(j.Bands))
	regs := make([]float32, j.Program.NumRegs)
	want := make([]float32, len(j.Out))
	for i := range j.Pixels() {
		computetest.Eval32Job(j, i, in, regs, want)
		for o, w := range want {
			got := j.Out[o][i]
			if (got != got) != (w != w) || math.Abs(float64(got-w)) > 1e-6*math.Max(1, math.Abs(float64(w))) {
				t.Fatalf("%s pixel %d: got %g, want %g", j.Names[o], i, got, w)
			}
		}
	}
	return tm
}

// TestJobCache: the first run of a job compiles its shader (setup), the
// second of the same job sets up nothing; another formula, another band
// type or a mask compiles anew; other radiometry or nodata (uniforms) do
// not.
func TestJobCache(t *testing.T) {
	b := newBackend(t)
	j := evenJob(t, 300, 200, false, "ndvi", "evi")
	first := runJob(t, b, j)
	if first.Setup <= 0 {
		t.Errorf("first run reported no setup")
	}
	if again := runJob(t, b, j); again.Setup != 0 {
		t.Errorf("second run of the same job set up %v", again.Setup)
	}
	programs := func() int {
		var n int
		b.w.do(func(st *glState) error { n = len(st.progs); return nil })
		return n
	}
	if n := programs(); n != 1 {
		t.Errorf("%d programs cached, want 1", n)
	}
	// The same formulas over other radiometry and nodata: no compile.
	k := evenJob(t, 300, 200, false, "ndvi", "evi")
	for i := range k.Bands {
		k.Bands[i].Radiometry = compute.Radiometry{Scale: 2e-4, Offset: 0.05}
		k.Bands[i].NoData = 1001
	}
	if tm := runJob(t, b, k); tm.Setup != 0 {
		t.Errorf("other radiometry set up %v", tm.Setup)
	}
	// Another formula, a mask, another band type: each compiles.
	for name, other := range map[string]*compute.Job{
		"another formula": evenJob(t, 300, 200, false, "ndvi", "savi"),
		"a mask":          evenJob(t, 300, 200, true, "ndvi", "evi"),
	} {
		if tm := runJob(t, b, other); tm.Setup <= 0 {
			t.Errorf("%s: no setup", name)
		}
	}
	f := evenJob(t, 300, 200, false, "ndvi", "evi")
	for i, band := range f.Bands {
		s := make([]float32, band.Plane.Pixels())
		for p := range s {
			s[p] = float32(j.Value32(i, p))
		}
		f.Bands[i] = compute.BandInput{Role: band.Role, Plane: compute.PlaneOf(300, 200, s), Radiometry: compute.Identity()}
	}
	if tm := runJob(t, b, f); tm.Setup <= 0 {
		t.Errorf("float32 bands: no setup")
	}
	if n := programs(); n != 4 {
		t.Errorf("%d programs cached, want 4", n)
	}
	// Back to the first: cached still, only the buffers change size.
	if tm := runJob(t, b, j); tm.Setup <= 0 {
		t.Errorf("new buffer layout: no setup")
	}
	if tm := runJob(t, b, j); tm.Setup != 0 {
		t.Errorf("third run of the first job set up %v", tm.Setup)
	}
}

// TestJobCompileError breaks the generated shader through the hook: the
// run fails with the driver's log and the formulas named, and the backend
// keeps working for jobs and NDVI.
func TestJobCompileError(t *testing.T) {
	b := newBackend(t)
	b.tu.jobHook = func(src string) string {
		return strings.Replace(src, "void main() {", "void main() {\n\tundeclared_thing = 1;", 1)
	}
	j := evenJob(t, 33, 5, false, "ndvi", "nbr")
	_, err := compute.RunJob(b, j)
	if err == nil {
		t.Fatal("a broken shader compiled")
	}
	msg := err.Error()
	for _, want := range []string{"gl: ", "rejected the shader generated for ndvi, nbr", "undeclared_thing"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	b.tu.jobHook = nil
	if tm := runJob(t, b, j); tm.Setup <= 0 {
		t.Error("the repaired shader reported no compile")
	}
	check(t, b, noise(33, 5, 2))
}

// TestJobModes: mapped and subdata run jobs; modes gl does not have
// ("host", "zero-copy") are refused with the modes that work.
func TestJobModes(t *testing.T) {
	b := newBackend(t)
	j := evenJob(t, 1001, 3, true, "ndmi", "ndre")
	for _, m := range []string{"", ModeMapped, ModeSubData} {
		j.Mode = m
		runJob(t, b, j)
		if m == ModeMapped && (b.memcpyUp <= 0 || b.memcpyDown <= 0) {
			t.Errorf("mapped: no host copies into the staging (up %v, down %v)", b.memcpyUp, b.memcpyDown)
		}
	}
	for _, m := range []string{"host", "zero-copy"} {
		j.Mode = m
		_, err := compute.RunJob(b, j)
		if err == nil || !strings.Contains(err.Error(), ModeMapped) || !strings.Contains(err.Error(), m) {
			t.Errorf("mode %q: %v", m, err)
		}
	}
}

// TestJobStorageLimit: a job needing more storage buffers than the driver
// allows is a clear error, not a broken shader.
func TestJobStorageLimit(t *testing.T) {
	b := New()
	b.tu.blocks = 3
	defer b.Close()
	need(t, b)
	runJob(t, b, evenJob(t, 8, 8, false, "ndvi")) // red, nir, outputs
	_, err := compute.RunJob(b, evenJob(t, 8, 8, true, "ndvi"))
	if err == nil || !strings.Contains(err.Error(), "needs 4 storage buffers") || !strings.Contains(err.Error(), "allows a compute shader 3") {
		t.Errorf("over the limit: %v", err)
	}
}

// TestJobReusesBuffers: a job with fewer pixels than the last (a
// pipeline's last block) runs in the buffers already there, with no setup
// and right results, also when planes are cut into parts; a larger one
// allocates.
func TestJobReusesBuffers(t *testing.T) {
	for _, part := range []int{0, 4, 1024} {
		t.Run(fmt.Sprintf("part=%d", part), func(t *testing.T) {
			b := New()
			b.tu.part, b.tu.memory = part, MemoryGL
			defer b.Close()
			need(t, b)
			for mi, m := range []string{ModeSubData, ModeMapped} {
				w := 301 + 10*mi // each mode starts larger than the last
				big, small, odd := evenJob(t, w, 20, true, "nbr", "ndvi"), evenJob(t, 300, 7, true, "nbr", "ndvi"), evenJob(t, 5, 3, true, "nbr", "ndvi")
				big.Mode, small.Mode, odd.Mode = m, m, m
				runJob(t, b, big)
				for _, j := range []*compute.Job{small, odd, big} {
					if tm := runJob(t, b, j); tm.Setup != 0 {
						t.Errorf("%s %dx%d after %dx20: setup %v", m, j.Width, j.Height, w, tm.Setup)
					}
				}
				if tm := runJob(t, b, evenJob(t, w+1, 20, true, "nbr", "ndvi")); tm.Setup <= 0 {
					t.Errorf("%s: a larger job reported no setup", m)
				}
			}
		})
	}
}
