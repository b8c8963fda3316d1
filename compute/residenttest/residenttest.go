// Package residenttest is the conformance suite of resident sessions
// (compute.ResidentSession): every backend's session, and a GPU
// backend's kernels run through a simulator, must compute the planes the
// engine defines, the statistics package stats computes from them
// (histogram and class counts exact, min and max exact, mean and standard
// deviation within 1e-6 relative), the views compute.RenderView draws
// from them (at most one level per channel apart) and the pixels Probe
// reads (equal to the planes'), whatever the order of calls, and refuse what they cannot do with an error.
package residenttest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/index"
	"canopy/compute/stats"
)

// Opener opens a session on bands and mask (compute.Resident's
// OpenResident, or residentcpu.Open over an engine).
type Opener func(bands []compute.BandInput, mask []uint8) (compute.ResidentSession, compute.Timings, error)

// Options tune Check.
type Options struct {
	// Exact: the planes must equal the engine's float32 definition
	// exactly (computetest.Eval32Job), as on the CPU and with CUDA's
	// correctly rounded arithmetic; otherwise within the GPU error bound
	// VerifyJob accepts.
	Exact bool
	// Short leaves out the largest scene.
	Short bool
	// Light runs fewer statistics requests and views per plane (for a
	// slow simulator).
	Light bool
	// Tiny runs only the first two scenes of a few thousand pixels at
	// most (a float32 and a uint16 one: for a slow simulator under the
	// race detector, where the session's host side is what is looked at).
	Tiny bool
}

// Scene is a test scene.
type Scene struct {
	Name  string
	Bands []compute.BandInput
	Mask  []uint8
}

// StatsTolerance is the relative error Check accepts in the mean and the
// standard deviation.
const StatsTolerance = 1e-6

// s2Band is a Sentinel-2 L2A band (uint16, (DN - 1000) / 10000, DN 0
// nodata) that varies smoothly, as land does, with nodata and reflectance
// exactly 0 sprinkled in.
func s2Band(g *rand.Rand, role string, w, h int, phase float64) compute.BandInput {
	p := compute.NewPlane(compute.U16, w, h)
	s := p.U16()
	for y := range h {
		for x := range w {
			v := 3000 + 2500*math.Sin(float64(x)/17+phase)*math.Cos(float64(y)/11-phase) + 300*g.NormFloat64()
			switch g.IntN(40) {
			case 0:
				v = 0 // nodata
			case 1:
				v = 1000 // reflectance 0
			}
			s[y*w+x] = uint16(max(0, min(v, 65535)))
		}
	}
	return compute.BandInput{Role: role, Plane: p, Radiometry: compute.Radiometry{Add: -1000, Scale: 1e-4},
		NoData: 0, HasNoData: true, Source: "test " + role}
}

// f32Band is a float32 band with NaN, ±Inf, zeros, negative and tiny
// values.
func f32Band(g *rand.Rand, role string, w, h int) compute.BandInput {
	p := compute.NewPlane(compute.F32, w, h)
	s := p.F32()
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), -9999, 1e-30, 1e30}
	for i := range s {
		if g.IntN(15) == 0 {
			s[i] = special[g.IntN(len(special))]
		} else {
			s[i] = float32(g.Float64()*0.9 - 0.1)
		}
	}
	return compute.BandInput{Role: role, Plane: p, Radiometry: compute.Identity(), NoData: -9999, HasNoData: true, Source: "test " + role}
}

var sceneRoles = []string{"blue", "green", "red", "nir", "swir1", "swir2"}

// Scenes returns the conformance scenes: Sentinel-2 uint16 bands with a
// mask at a size no block, vector or work-group divides, float32 bands
// with every awkward value, tiny images, and (unless short) a large one.
func Scenes(short bool) []Scene {
	var out []Scene
	mk := func(name string, w, h int, f32 bool, masked bool, seed uint64) {
		g := rand.New(rand.NewPCG(seed, 16))
		var bands []compute.BandInput
		for i, r := range sceneRoles {
			if f32 {
				bands = append(bands, f32Band(g, r, w, h))
			} else {
				bands = append(bands, s2Band(g, r, w, h, float64(i)))
			}
		}
		var mask []uint8
		if masked {
			mask = make([]uint8, w*h)
			for i := range mask {
				if g.IntN(10) == 0 {
					mask[i] = uint8(1 + g.IntN(255))
				}
			}
		}
		out = append(out, Scene{Name: name, Bands: bands, Mask: mask})
	}
	mk("sentinel-2 uint16 257x131 masked", 257, 131, false, true, 1)
	mk("float32 61x37", 61, 37, true, false, 2)
	mk("uint16 3x1", 3, 1, false, false, 3)
	mk("float32 1x1", 1, 1, true, false, 4)
	if !short {
		mk("sentinel-2 uint16 1031x517", 1031, 517, false, false, 5)
	}
	return out
}

// indexSets are the index calls Check makes, in order: several indices
// at once, a change of index, formulas with wide, constant and offset
// results.
func indexSets() [][2][]string {
	return [][2][]string{
		{{"ndvi", "evi", "savi"}, nil},
		{{"ndwi"}, nil},
		{{"nir / red", "nir * 0 + 1234.5", "(nir - red) / (nir + red) * 1000 + 100000", "nir * 0.0001 + 1000"},
			{"ratio", "constant", "offset", "tiny spread"}},
	}
}

func exprsOf(t *testing.T, set [2][]string) (names []string, exprs []*index.Expr) {
	t.Helper()
	for i, s := range set[0] {
		if set[1] != nil {
			e, err := index.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			names, exprs = append(names, set[1][i]), append(exprs, e)
			continue
		}
		c, ok := index.Lookup(s)
		if !ok {
			t.Fatalf("no index %s", s)
		}
		names, exprs = append(names, s), append(exprs, c.Expr)
	}
	return names, exprs
}

// Check runs the suite on the sessions open makes.
func Check(t *testing.T, open Opener, opt Options) {
	tiny := 0
	for _, sc := range Scenes(opt.Short) {
		if opt.Tiny && (sc.Bands[0].Plane.Width*sc.Bands[0].Plane.Height > 4096 || tiny == 2) {
			continue
		}
		if opt.Tiny {
			tiny++
		}
		t.Run(sc.Name, func(t *testing.T) { checkScene(t, open, sc, opt) })
	}
	t.Run("errors", func(t *testing.T) { checkErrors(t, open) })
}

func checkScene(t *testing.T, open Opener, sc Scene, opt Options) {
	s, _, err := open(sc.Bands, sc.Mask)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	w, h := s.Size()
	if w != sc.Bands[0].Plane.Width || h != sc.Bands[0].Plane.Height {
		t.Fatalf("Size %dx%d, bands are %dx%d", w, h, sc.Bands[0].Plane.Width, sc.Bands[0].Plane.Height)
	}
	if _, _, err := s.Stats(0, compute.StatsRequest{}); err == nil {
		t.Error("Stats before any Index: no error")
	}
	if _, err := s.Probe(0, 0); err == nil {
		t.Error("Probe before any Index: no error")
	}
	for si, set := range indexSets() {
		names, exprs := exprsOf(t, set)
		if _, err := s.Index(names, exprs); err != nil {
			t.Fatalf("Index %v: %v", names, err)
		}
		planes := checkPlanes(t, s, sc, names, exprs, opt)
		checkProbes(t, s, names, planes, w, h)
		for o, p := range planes {
			full := si == 0 && o == 0 || !opt.Light
			checkStats(t, s, o, names[o], p, full)
			checkViews(t, s, o, names[o], p, w, h, full)
		}
		if _, _, err := s.Stats(len(names), compute.StatsRequest{}); err == nil {
			t.Errorf("Stats of plane %d of %d: no error", len(names), len(names))
		}
	}
}

// checkPlanes downloads every plane and compares it with the engine's
// definition.
func checkPlanes(t *testing.T, s compute.ResidentSession, sc Scene, names []string, exprs []*index.Expr, opt Options) [][]float32 {
	t.Helper()
	j, err := compute.NewJob(sc.Bands, sc.Mask, names, exprs)
	if err != nil {
		t.Fatal(err)
	}
	n := j.Pixels()
	for o := range j.Out {
		for i := range j.Out[o] {
			j.Out[o][i] = 12345 // poison
		}
		if _, err := s.Download(o, j.Out[o]); err != nil {
			t.Fatalf("Download %s: %v", names[o], err)
		}
	}
	if opt.Exact {
		in := make([]float32, len(j.Bands))
		regs := make([]float32, j.Program.NumRegs)
		want := make([]float32, len(j.Out))
		bad := 0
		for i := range n {
			computetest.Eval32Job(j, i, in, regs, want)
			for o := range j.Out {
				got := j.Out[o][i]
				if got != want[o] && (got == got || want[o] == want[o]) {
					if bad++; bad <= 3 {
						t.Errorf("%s pixel %d: %g, the engine defines %g", names[o], i, got, want[o])
					}
				}
			}
		}
	} else {
		for o, r := range compute.VerifyJob(j) {
			if !r.OK() {
				t.Errorf("%s: %s", names[o], r)
			}
		}
	}
	return j.Out
}

// checkProbes compares Probe at the corners, the centre and pixels
// spread over the image with the downloaded planes,
// bit for bit, and requires an error for pixels outside.
func checkProbes(t *testing.T, s compute.ResidentSession, names []string, planes [][]float32, w, h int) {
	t.Helper()
	g := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	pts := [][2]int{{0, 0}, {w - 1, 0}, {0, h - 1}, {w - 1, h - 1}, {w / 2, h / 2}}
	for range 40 {
		pts = append(pts, [2]int{g.IntN(w), g.IntN(h)})
	}
	for _, p := range pts {
		got, err := s.Probe(p[0], p[1])
		if err != nil {
			t.Errorf("Probe(%d, %d): %v", p[0], p[1], err)
			continue
		}
		if len(got) != len(planes) {
			t.Errorf("Probe(%d, %d): %d values for %d planes", p[0], p[1], len(got), len(planes))
			continue
		}
		for o, v := range got {
			want := planes[o][p[1]*w+p[0]]
			if math.Float32bits(v) != math.Float32bits(want) && (v == v || want == want) {
				t.Errorf("%s: Probe(%d, %d) = %g, the downloaded plane holds %g", names[o], p[0], p[1], v, want)
			}
		}
	}
	for _, p := range [][2]int{{-1, 0}, {0, -1}, {w, 0}, {0, h}} {
		if _, err := s.Probe(p[0], p[1]); err == nil {
			t.Errorf("Probe(%d, %d) of a %dx%d image: no error", p[0], p[1], w, h)
		}
	}
}

// requests are the statistics Check asks of a plane whose summary is sum:
// the default histogram with the NDVI classes, bins over the plane's own
// range (its maximum falls in the last bin by the closed upper bound),
// one bin over everything, none, more bins than a GPU block keeps in
// shared memory, a narrow range, classes with an empty one, the most
// classes allowed, and one class.
func requests(sum stats.Summary, full bool) []compute.StatsRequest {
	qs := []compute.StatsRequest{{Bins: 256, Lo: -1, Hi: 1, Classes: compute.NDVIClasses(), PixelAreaM2: 100}}
	if !full {
		return qs
	}
	if sum.Valid > 0 && sum.Min < sum.Max {
		qs = append(qs, compute.StatsRequest{Bins: 7, Lo: sum.Min, Hi: sum.Max})
	}
	inf := math.Inf(1)
	many := make([]compute.Class, compute.MaxResidentClasses)
	for i := range many {
		many[i] = compute.Class{Name: fmt.Sprint(i), Lo: -1 + 2*float64(i-1)/float64(len(many)-2), Hi: -1 + 2*float64(i)/float64(len(many)-2)}
	}
	many[0].Lo, many[len(many)-1].Hi = -inf, inf
	qs = append(qs,
		compute.StatsRequest{Bins: 1, Lo: -1e30, Hi: 1e30},
		compute.StatsRequest{},
		compute.StatsRequest{Bins: 10007, Lo: -1, Hi: 1, PixelAreaM2: math.NaN()},
		compute.StatsRequest{Bins: 2048, Lo: 0, Hi: 0.5},
		compute.StatsRequest{Classes: []compute.Class{{Name: "a", Lo: -inf, Hi: 0.1}, {Name: "empty", Lo: 0.1, Hi: 0.1}, {Name: "b", Lo: 0.1, Hi: 0.3}, {Name: "c", Lo: 0.3, Hi: inf}}, PixelAreaM2: 0.25},
		compute.StatsRequest{Classes: many, PixelAreaM2: 400},
		compute.StatsRequest{Bins: 3, Lo: 0.2, Hi: 0.2 + 1e-7, Classes: []compute.Class{{Name: "all", Lo: -inf, Hi: inf}}},
	)
	return qs
}

func relClose(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= StatsTolerance*math.Abs(want)+1e-300
}

// checkStats compares Stats with package stats on the downloaded plane.
func checkStats(t *testing.T, s compute.ResidentSession, o int, name string, plane []float32, full bool) {
	t.Helper()
	sum := stats.Summarize(plane)
	for qi, q := range requests(sum, full) {
		got, _, err := s.Stats(o, q)
		if err != nil {
			t.Errorf("%s request %d: %v", name, qi, err)
			continue
		}
		where := fmt.Sprintf("%s request %d (%d bins over [%g, %g], %d classes)", name, qi, q.Bins, q.Lo, q.Hi, len(q.Classes))
		if got.Valid != sum.Valid || got.Total != sum.Total {
			t.Errorf("%s: %d valid of %d, stats says %d of %d", where, got.Valid, got.Total, sum.Valid, sum.Total)
		}
		if !(got.Min == sum.Min || math.IsNaN(got.Min) && math.IsNaN(sum.Min)) || !(got.Max == sum.Max || math.IsNaN(got.Max) && math.IsNaN(sum.Max)) {
			t.Errorf("%s: min %g max %g, stats says %g %g", where, got.Min, got.Max, sum.Min, sum.Max)
		}
		if !relClose(got.Mean, sum.Mean) || !relClose(got.Std, sum.Std) {
			t.Errorf("%s: mean %.17g std %.17g, stats says %.17g %.17g", where, got.Mean, got.Std, sum.Mean, sum.Std)
		}
		if q.Bins > 0 {
			want := stats.Histogram(plane, q.Bins, q.Lo, q.Hi)
			if !slices.Equal(got.Histogram, want) {
				i := 0
				for i < min(len(want), len(got.Histogram)) && got.Histogram[i] == want[i] {
					i++
				}
				t.Errorf("%s: histogram differs from bin %d on (%d bins): got %v, stats says %v", where, i, len(got.Histogram),
					got.Histogram[i:min(i+5, len(got.Histogram))], want[i:min(i+5, len(want))])
			}
		} else if got.Histogram != nil {
			t.Errorf("%s: a histogram nobody asked for", where)
		}
		if len(q.Classes) > 0 {
			want := stats.ClassesOf(q.Classes, plane, q.PixelAreaM2)
			if len(got.Classes) != len(want) {
				t.Errorf("%s: %d classes, want %d", where, len(got.Classes), len(want))
				continue
			}
			for i, c := range want {
				g := got.Classes[i]
				if g.Pixels != c.Pixels || !same(g.Share, c.Share) || !same(g.Hectares, c.Hectares) {
					t.Errorf("%s: class %s: %d pixels (%g, %g ha), stats says %d (%g, %g ha)", where, c.Class.Name, g.Pixels, g.Share, g.Hectares, c.Pixels, c.Share, c.Hectares)
				}
			}
		} else if got.Classes != nil {
			t.Errorf("%s: classes nobody asked for", where)
		}
	}
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// Tables are colour tables Check renders with: a 4096-step ramp over
// [-1, 1], a narrow 255-step stretch, the NDVI classes with a NaN colour,
// and a class table of one class.
func Tables() []compute.ColorTable {
	g := rand.New(rand.NewPCG(3, 3))
	colours := func(n int) []uint32 {
		c := make([]uint32, n)
		for i := range c {
			c[i] = g.Uint32() | 0xff000000
		}
		return c
	}
	wide := colours(4097)
	wide[0] = 0
	narrow := colours(256)
	narrow[0] = 0
	classes := colours(6)
	classes[0] = 0x44332211
	one := colours(2)
	return []compute.ColorTable{
		{RGBA: wide, Lo: -1, Scale: 2048},
		{RGBA: narrow, Lo: 0.1, Scale: float32(255 / 0.3)},
		{RGBA: classes, Upper: []float32{0, 0.2, 0.4, 0.6}},
		{RGBA: one, Upper: []float32{}},
	}
}

// views are viewports of a w×h image: fitted, zoomed in, zoomed out by 2
// and 3 and more, panned past every edge, wider and narrower than the
// image, and not drawable.
func views(w, h int, full bool) []compute.View {
	fw, fh := float64(w), float64(h)
	vs := []compute.View{
		{X0: 0, Y0: 0, Zoom: 64 / fw, Width: 64, Height: 48},
		{X0: -3.5, Y0: -2.25, Zoom: 2.5, Width: 37, Height: 29},
	}
	if !full {
		return vs
	}
	return append(vs,
		compute.View{X0: fw * 0.3, Y0: fh * 0.6, Zoom: 1, Width: 50, Height: 40},
		compute.View{X0: -fw / 4, Y0: fh / 3, Zoom: 0.7, Width: 45, Height: 31},
		compute.View{X0: fw / 2, Y0: -fh / 2, Zoom: 0.45, Width: 80, Height: 60},
		compute.View{X0: -10, Y0: -10, Zoom: 0.2, Width: 71, Height: 33},
		compute.View{X0: 0, Y0: 0, Zoom: 0.05, Width: 17, Height: 9},
		compute.View{X0: fw - 1.5, Y0: fh - 0.5, Zoom: 3, Width: 20, Height: 20},
		compute.View{X0: 0, Y0: 0, Zoom: 1, Width: 1, Height: 1},
		compute.View{X0: 0, Y0: 0, Zoom: math.NaN(), Width: 8, Height: 8},
		compute.View{X0: 0, Y0: 0, Zoom: -1, Width: 8, Height: 8},
	)
}

// checkViews compares Render with compute.RenderView on the downloaded
// plane: at most one level per channel apart.
func checkViews(t *testing.T, s compute.ResidentSession, o int, name string, plane []float32, w, h int, full bool) {
	t.Helper()
	tables := Tables()
	if !full {
		tables = tables[:1]
		tables = append(tables, Tables()[2])
	}
	for ti, tab := range tables {
		for _, v := range views(w, h, full) {
			v.Table = tab
			want := make([]byte, 4*v.Width*v.Height)
			if err := compute.RenderView(want, plane, w, h, v); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(want))
			for i := range got {
				got[i] = 0x5A
			}
			if _, err := s.Render(o, v, got); err != nil {
				t.Errorf("%s table %d view (%g, %g) zoom %g %dx%d: %v", name, ti, v.X0, v.Y0, v.Zoom, v.Width, v.Height, err)
				continue
			}
			off := 0
			for i := range got {
				d := int(got[i]) - int(want[i])
				if d > 1 || d < -1 {
					t.Errorf("%s table %d view (%g, %g) zoom %g %dx%d: screen pixel (%d, %d) channel %d is %d, RenderView %d",
						name, ti, v.X0, v.Y0, v.Zoom, v.Width, v.Height, i/4%v.Width, i/4/v.Width, i%4, got[i], want[i])
					break
				}
				if d != 0 {
					off++
				}
			}
			if off > 0 {
				t.Logf("%s table %d view zoom %g: %d bytes one level off", name, ti, v.Zoom, off)
			}
		}
	}
}

// checkErrors: what a session cannot do is an error, and a closed session
// refuses every call.
func checkErrors(t *testing.T, open Opener) {
	sc := Scenes(true)[1]
	if _, _, err := open(nil, nil); err == nil {
		t.Error("no bands: no error")
	}
	short := sc.Bands[0]
	short.Plane.Height--
	short.Plane.Data = short.Plane.Data[:len(short.Plane.Data)-4*short.Plane.Width]
	if _, _, err := open([]compute.BandInput{sc.Bands[0], short}, nil); err == nil {
		t.Error("bands of two sizes: no error")
	}
	if _, _, err := open(sc.Bands, make([]uint8, 3)); err == nil {
		t.Error("a mask of the wrong size: no error")
	}
	s, _, err := open(sc.Bands[2:4], nil) // red and nir only
	if err != nil {
		t.Fatal(err)
	}
	evi, _ := index.Lookup("evi")
	var mr *compute.MissingRoleError
	if _, err := s.Index([]string{"evi"}, []*index.Expr{evi.Expr}); !errors.As(err, &mr) || mr.Role != "blue" {
		t.Errorf("evi without blue: %v", err)
	}
	ndvi, _ := index.Lookup("ndvi")
	if _, err := s.Index([]string{"ndvi"}, []*index.Expr{ndvi.Expr}); err != nil {
		t.Fatal(err)
	}
	w, h := s.Size()
	for _, q := range []compute.StatsRequest{{Bins: -1}, {Bins: 4, Lo: 1, Hi: 1}, {Bins: 4, Lo: 0, Hi: math.Inf(1)},
		{Classes: make([]compute.Class, compute.MaxResidentClasses+1)},
		{Classes: []compute.Class{{Hi: 0.5}, {Hi: 0.2}, {Hi: 0.1}}}} {
		if _, _, err := s.Stats(0, q); err == nil {
			t.Errorf("Stats %+v: no error", q)
		}
	}
	tab := Tables()[0]
	for _, v := range []compute.View{{Table: tab, Zoom: 1, Width: 0, Height: 5}, {Table: compute.ColorTable{RGBA: []uint32{0}}, Zoom: 1, Width: 5, Height: 5},
		{Table: compute.ColorTable{RGBA: []uint32{0, 1, 2}, Upper: []float32{0, 1}}, Zoom: 1, Width: 5, Height: 5}} {
		if _, err := s.Render(0, v, make([]byte, 100)); err == nil {
			t.Errorf("Render %+v: no error", v)
		}
	}
	if _, err := s.Render(0, compute.View{Table: tab, Zoom: 1, Width: 10, Height: 10}, make([]byte, 399)); err == nil {
		t.Error("Render into a short buffer: no error")
	}
	if _, err := s.Download(0, make([]float32, w*h-1)); err == nil {
		t.Error("Download into a short plane: no error")
	}
	if _, err := s.Download(1, make([]float32, w*h)); err == nil {
		t.Error("Download of plane 1 of 1: no error")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Index([]string{"ndvi"}, []*index.Expr{ndvi.Expr}); err == nil {
		t.Error("Index after Close: no error")
	}
	if _, err := s.Render(0, compute.View{Table: tab, Zoom: 1, Width: 10, Height: 10}, make([]byte, 400)); err == nil {
		t.Error("Render after Close: no error")
	}
	if _, err := s.Probe(0, 0); err == nil {
		t.Error("Probe after Close: no error")
	}
}
