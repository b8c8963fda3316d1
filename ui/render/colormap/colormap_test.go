package colormap

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

var nan = float32(math.NaN())

// near reports whether two colours differ by at most tol in every channel.
func near(a, b color.NRGBA, tol int) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) <= tol && int(y)-int(x) <= tol }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && a.A == b.A
}

func mustNew(t testing.TB, ramp string, lo, hi float64) *LUT {
	t.Helper()
	l, err := New(ramp, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestNewErrors(t *testing.T) {
	if _, err := New("jet", -1, 1); err == nil {
		t.Error("unknown ramp accepted")
	}
	for _, s := range []Stretch{{1, -1}, {0, 0}, {math.NaN(), 1}, {-1, math.Inf(1)}} {
		if _, err := New(RampRdYlGn, s.Lo, s.Hi); err == nil {
			t.Errorf("stretch %v accepted", s)
		}
	}
	// Classes ignore the stretch, even a bad one.
	if _, err := New(RampClasses, 1, -1); err != nil {
		t.Errorf("classes with ignored stretch: %v", err)
	}
	l := mustNew(t, "", -1, 1)
	if l.Ramp() != DefaultRamp || l.Ramp() != Ramps()[0] {
		t.Errorf("default ramp is %q, Ramps()[0] %q", l.Ramp(), Ramps()[0])
	}
	for _, r := range Ramps() {
		if Describe(r) == "" {
			t.Errorf("ramp %s has no description", r)
		}
	}
}

func TestRampEndsAndClamp(t *testing.T) {
	rd := mustNew(t, RampRdYlGn, -1, 1)
	for _, c := range []struct {
		v    float32
		want string
	}{{-1, "#a50026"}, {0, "#ffffbf"}, {1, "#006837"}, {-7, "#a50026"}, {7, "#006837"},
		{float32(math.Inf(-1)), "#a50026"}, {float32(math.Inf(1)), "#006837"}} {
		if got := rd.Color(c.v); !near(got, hex(c.want), 2) {
			t.Errorf("rdylgn(%g) = %v, want about %s", c.v, got, c.want)
		}
	}
	// A stretch moves the ramp: viridis over [0, 0.5].
	vi := mustNew(t, RampViridis, 0, 0.5)
	for _, c := range []struct {
		v    float32
		want string
	}{{0, "#440154"}, {0.25, "#21918c"}, {0.5, "#fde725"}, {-1, "#440154"}} {
		if got := vi.Color(c.v); !near(got, hex(c.want), 2) {
			t.Errorf("viridis[0,0.5](%g) = %v, want about %s", c.v, got, c.want)
		}
	}
	// Along rdylgn, green rises from -1 to 0 and red falls from 0 to 1.
	for v := float32(-1); v < 0; v += 0.05 {
		if a, b := rd.Color(v), rd.Color(v+0.05); b.G < a.G {
			t.Errorf("rdylgn green falls from %g (%v) to %g (%v)", v, a, v+0.05, b)
		}
	}
	for v := float32(0); v < 1; v += 0.05 {
		if a, b := rd.Color(v), rd.Color(v+0.05); b.R > a.R {
			t.Errorf("rdylgn red rises from %g (%v) to %g (%v)", v, a, v+0.05, b)
		}
	}
}

func TestNaNTransparent(t *testing.T) {
	for _, r := range Ramps() {
		l := mustNew(t, r, -1, 1)
		if c := l.Color(nan); c.A != 0 {
			t.Errorf("%s: Color(NaN) = %v, want transparent", r, c)
		}
		if i := l.Index(nan); i != IndexNaN {
			t.Errorf("%s: Index(NaN) = %d", r, i)
		}
		if _, _, _, a := l.Palette()[IndexNaN].RGBA(); a != 0 {
			t.Errorf("%s: palette[IndexNaN] not transparent", r)
		}
		if c := l.Color(0.3); c.A != 0xff {
			t.Errorf("%s: Color(0.3) = %v, want opaque", r, c)
		}
		img := l.Image([]float32{0.5, nan, -0.5, nan}, 2, 2)
		if img.Pix[1] != IndexNaN || img.Pix[3] != IndexNaN || img.Pix[0] == IndexNaN || img.Pix[2] == IndexNaN {
			t.Errorf("%s: Image indices %v", r, img.Pix)
		}
		dst := image.NewNRGBA(image.Rect(0, 0, 2, 2))
		l.RenderView(dst, []float32{0.5, nan, -0.5, nan}, 2, 2, 0, 0, 1)
		if dst.NRGBAAt(1, 0).A != 0 || dst.NRGBAAt(1, 1).A != 0 || dst.NRGBAAt(0, 0).A != 0xff {
			t.Errorf("%s: RenderView alpha wrong: %v", r, dst.Pix)
		}
	}
}

func TestClassBoundaries(t *testing.T) {
	below := func(v float32) float32 { return math.Nextafter32(v, float32(math.Inf(-1))) }
	cases := []struct {
		v    float32
		want int
	}{
		{nan, -1}, {float32(math.Inf(-1)), 0}, {-1, 0}, {below(0), 0},
		{0, 1}, {0.1, 1}, {below(0.2), 1},
		{0.2, 2}, {below(0.4), 2},
		{0.4, 3}, {below(0.6), 3},
		{0.6, 4}, {1, 4}, {float32(math.Inf(1)), 4},
	}
	lut := mustNew(t, RampClasses, 0, 0)
	classes := Classes()
	for _, c := range cases {
		if got := ClassOf(c.v); got != c.want {
			t.Errorf("ClassOf(%.9g) = %d, want %d", c.v, got, c.want)
		}
		if c.want < 0 {
			continue
		}
		if got := lut.Color(c.v); got != classes[c.want].Color {
			t.Errorf("classes Color(%.9g) = %v, want %s %v", c.v, got, classes[c.want].Name, classes[c.want].Color)
		}
		if got := lut.Palette()[lut.Index(c.v)]; got != classes[c.want].Color {
			t.Errorf("classes palette colour of %.9g = %v, want %v", c.v, got, classes[c.want].Color)
		}
	}
	// The LUT's fast class table agrees with ClassOf everywhere, especially
	// within a few thousand float32 steps of every bound.
	check := func(v float32) {
		if c := ClassOf(v); lut.Color(v) != classes[c].Color || int(lut.Index(v)) != c+1 {
			t.Fatalf("classes LUT disagrees with ClassOf(%.9g) = %d: %v, index %d", v, c, lut.Color(v), lut.Index(v))
		}
	}
	for _, b := range []float32{-1, 0, 0.2, 0.4, 0.6, 1} {
		v, u := b, b
		for range 5000 {
			v, u = math.Nextafter32(v, -2), math.Nextafter32(u, 2)
			check(v)
			check(u)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100_000 {
		check(float32(rng.Float64()*2.2 - 1.1))
	}
	// The table is contiguous, covers every number, and Classes is a copy.
	if !math.IsInf(classes[0].Lo, -1) || !math.IsInf(classes[len(classes)-1].Hi, 1) {
		t.Error("class table does not cover all numbers")
	}
	for i := 1; i < len(classes); i++ {
		if classes[i].Lo != classes[i-1].Hi {
			t.Errorf("gap between %s and %s", classes[i-1].Name, classes[i].Name)
		}
	}
	classes[0].Name = "changed"
	if Classes()[0].Name == "changed" {
		t.Error("Classes returned the table itself")
	}
	if got := []string{classes[0].Bounds(), classes[1].Bounds(), classes[4].Bounds()}; !slices.Equal(got, []string{"< 0", "0 – 0.2", "≥ 0.6"}) {
		t.Errorf("bounds labels %q", got)
	}
}

func TestMinMaxAndPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]float32, 200_000)
	var finite []float64
	for i := range data {
		switch i % 97 {
		case 0:
			data[i] = nan
		case 1:
			data[i] = float32(math.Inf(1))
		default:
			v := float32(rng.Float64()*1.6 - 0.7)
			data[i] = v
			finite = append(finite, float64(v))
		}
	}
	slices.Sort(finite)
	mm, ok := MinMax(data)
	if !ok || mm.Lo != finite[0] || mm.Hi != finite[len(finite)-1] {
		t.Errorf("MinMax = %v %v, want [%g, %g]", mm, ok, finite[0], finite[len(finite)-1])
	}
	p, ok := Percentiles(data, 2, 98)
	tol := (mm.Hi-mm.Lo)/percentileBins + 1e-9
	wantLo, wantHi := finite[len(finite)*2/100], finite[len(finite)*98/100]
	if !ok || math.Abs(p.Lo-wantLo) > tol || math.Abs(p.Hi-wantHi) > tol {
		t.Errorf("Percentiles(2, 98) = %v, want about [%g, %g] ±%g", p, wantLo, wantHi, tol)
	}
	if s, err := StretchFor("percentile", data); err != nil || s != p {
		t.Errorf("StretchFor(percentile) = %v, %v", s, err)
	}
	if s, err := StretchFor("minmax", data); err != nil || s != mm {
		t.Errorf("StretchFor(minmax) = %v, %v", s, err)
	}
	if _, err := StretchFor("auto-magic", data); err == nil {
		t.Error("unknown stretch accepted")
	}

	// All NaN, empty: no stretch.
	if _, ok := MinMax([]float32{nan, nan}); ok {
		t.Error("MinMax of all NaN reported ok")
	}
	if _, ok := Percentiles(nil, 2, 98); ok {
		t.Error("Percentiles of nothing reported ok")
	}
	if s, err := StretchFor("minmax", []float32{nan}); err != nil || s != Full {
		t.Errorf("StretchFor on all NaN = %v, %v, want Full", s, err)
	}
	// A constant image still gives a usable range around its value.
	c, ok := MinMax([]float32{0.3, 0.3, nan})
	if !ok || !c.Valid() || c.Lo >= 0.3 || c.Hi <= 0.3 {
		t.Errorf("MinMax of constant = %v", c)
	}
	if _, err := New(RampViridis, c.Lo, c.Hi); err != nil {
		t.Errorf("constant stretch unusable: %v", err)
	}
}

// plane returns a w×h plane whose values are distinct and ordered by pixel
// index, spread over [-1, 1].
func plane(w, h int) []float32 {
	p := make([]float32, w*h)
	for i := range p {
		p[i] = -1 + 2*float32(i)/float32(len(p)-1)
	}
	return p
}

func TestRenderViewCoordinates(t *testing.T) {
	const w, h = 40, 30
	ndvi := plane(w, h)
	l := mustNew(t, RampViridis, -1, 1)
	// Hand-worked cases: screen pixel -> image pixel (or -1, -1 outside).
	hand := []struct {
		x0, y0, zoom float64
		sx, sy       int
		ix, iy       int
	}{
		{0, 0, 1, 0, 0, 0, 0},
		{0, 0, 1, 39, 29, 39, 29},
		{0, 0, 1, 40, 0, -1, -1},
		{10, 5, 2, 0, 0, 10, 5},
		{10, 5, 2, 1, 1, 10, 5},
		{10, 5, 2, 2, 3, 11, 6},
		{-3, -2, 1, 0, 0, -1, -1},
		{-3, -2, 1, 3, 2, 0, 0},
		{-3, -2, 1, 2, 2, -1, -1},
		{-1.5, 0, 4, 5, 0, -1, -1}, // -1.5 + 5.5/4 = -0.125
		{-1.5, 0, 4, 6, 0, 0, 0},   // -1.5 + 6.5/4 = 0.125
		{38.75, 28.5, 8, 9, 3, 39, 28},
		{38.75, 28.5, 8, 10, 3, -1, -1},
	}
	for _, c := range hand {
		dst := image.NewNRGBA(image.Rect(0, 0, 64, 40))
		l.RenderView(dst, ndvi, w, h, c.x0, c.y0, c.zoom)
		got := dst.NRGBAAt(c.sx, c.sy)
		var want color.NRGBA
		if c.ix >= 0 {
			want = l.Color(ndvi[c.iy*w+c.ix])
		}
		if got != want {
			t.Errorf("view (%g,%g)×%g pixel (%d,%d) = %v, want image pixel (%d,%d) %v", c.x0, c.y0, c.zoom, c.sx, c.sy, got, c.ix, c.iy, want)
		}
		if ix, iy := ViewPixel(c.sx, c.sy, c.x0, c.y0, c.zoom); c.ix >= 0 && (ix != c.ix || iy != c.iy) {
			t.Errorf("ViewPixel(%d,%d, %g,%g, %g) = %d,%d, want %d,%d", c.sx, c.sy, c.x0, c.y0, c.zoom, ix, iy, c.ix, c.iy)
		}
	}
	// Every screen pixel at several zooms ≥ 1 and offsets, on a sub-image
	// destination whose Rect does not start at the origin.
	for _, zoom := range []float64{1, 1.5, 2, 3.7, 16} {
		for _, off := range [][2]float64{{0, 0}, {7.25, 3.5}, {-5, -4}, {35, 27}} {
			big := image.NewNRGBA(image.Rect(0, 0, 60, 50))
			dst := big.SubImage(image.Rect(5, 7, 55, 47)).(*image.NRGBA)
			l.RenderView(dst, ndvi, w, h, off[0], off[1], zoom)
			for sy := range 40 {
				for sx := range 50 {
					ix := int(math.Floor(off[0] + (float64(sx)+0.5)/zoom))
					iy := int(math.Floor(off[1] + (float64(sy)+0.5)/zoom))
					var want color.NRGBA
					if ix >= 0 && ix < w && iy >= 0 && iy < h {
						want = l.Color(ndvi[iy*w+ix])
					}
					if got := dst.NRGBAAt(5+sx, 7+sy); got != want {
						t.Fatalf("zoom %g offset %v: screen (%d,%d) = %v, want image (%d,%d) %v", zoom, off, sx, sy, got, ix, iy, want)
					}
				}
			}
			// Nothing outside the sub-image was touched.
			if big.NRGBAAt(4, 7).A != 0 || big.NRGBAAt(5, 6).A != 0 || big.NRGBAAt(55, 20).A != 0 {
				t.Fatalf("RenderView wrote outside dst.Rect")
			}
		}
	}
}

func TestRenderViewZoomedOut(t *testing.T) {
	l := mustNew(t, RampRdYlGn, -1, 1)
	// A one-pixel checkerboard of -1 and +1 seen at zoom 1/2 is the mean, 0
	// (yellow), not an aliased field of red or of green.
	const n = 64
	board := make([]float32, n*n)
	for y := range n {
		for x := range n {
			board[y*n+x] = float32(1 - 2*((x+y)%2))
		}
	}
	dst := image.NewNRGBA(image.Rect(0, 0, n/2, n/2))
	l.RenderView(dst, board, n, n, 0, 0, 0.5)
	want := l.Color(0)
	for y := range n / 2 {
		for x := range n / 2 {
			if got := dst.NRGBAAt(x, y); got != want {
				t.Fatalf("checkerboard at zoom 1/2: pixel (%d,%d) = %v, want the mean's colour %v", x, y, got, want)
			}
		}
	}
	// Blocks of 12×12 equal values at zoom 1/3 and 1/6: each screen pixel
	// inside a block shows the block's colour; NaN blocks stay transparent;
	// half-NaN footprints show the finite half.
	const b = 12
	blocks := make([]float32, 4*b*4*b)
	for y := range 4 * b {
		for x := range 4 * b {
			v := float32(x/b+4*(y/b))/8 - 1
			if x/b == 3 && y/b == 3 {
				v = nan
			}
			blocks[y*4*b+x] = v
		}
	}
	for _, zoom := range []float64{1.0 / 3, 1.0 / 6} {
		f := int(math.Round(1 / zoom)) // image pixels per screen pixel
		size := 4 * b / f
		dst := image.NewNRGBA(image.Rect(0, 0, size+2, size+2))
		l.RenderView(dst, blocks, 4*b, 4*b, 0, 0, zoom)
		for sy := range size {
			for sx := range size {
				bx, by := sx*f/b, sy*f/b
				want := l.Color(blocks[(by*b)*4*b+bx*b])
				if got := dst.NRGBAAt(sx, sy); got != want {
					t.Fatalf("blocks at zoom %.3g: screen (%d,%d) = %v, want block (%d,%d) %v", zoom, sx, sy, got, bx, by, want)
				}
			}
		}
		if dst.NRGBAAt(size, 0).A != 0 || dst.NRGBAAt(0, size+1).A != 0 {
			t.Errorf("zoom %.3g: area beyond the image not transparent", zoom)
		}
	}
	// A footprint straddling the image's right edge averages only the
	// samples inside: a constant image stays its colour up to the edge.
	flat := make([]float32, 10*10)
	for i := range flat {
		flat[i] = 0.7
	}
	dst = image.NewNRGBA(image.Rect(0, 0, 4, 4))
	l.RenderView(dst, flat, 10, 10, 0, 0, 0.3) // screen pixel 2 covers image x 6.67..10.
	if got, want := dst.NRGBAAt(2, 2), l.Color(0.7); got != want {
		t.Errorf("edge footprint = %v, want %v", got, want)
	}
	// Bad zoom: all transparent, no panic.
	for _, z := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		dst := image.NewNRGBA(image.Rect(0, 0, 3, 3))
		for i := range dst.Pix {
			dst.Pix[i] = 0xff
		}
		l.RenderView(dst, flat, 10, 10, 0, 0, z)
		if dst.NRGBAAt(1, 1).A != 0 {
			t.Errorf("zoom %g: view not cleared", z)
		}
	}
}

func TestImageIndices(t *testing.T) {
	const w, h = 37, 23
	ndvi := plane(w, h)
	ndvi[5] = nan
	for _, r := range Ramps() {
		l := mustNew(t, r, -0.5, 0.5)
		img := l.Image(ndvi, w, h)
		idx := make([]uint8, len(ndvi))
		l.Indices(idx, ndvi)
		for i, v := range ndvi {
			if idx[i] != l.Index(v) || img.Pix[i] != idx[i] {
				t.Fatalf("%s: value %g: Indices %d, Image %d, Index %d", r, v, idx[i], img.Pix[i], l.Index(v))
			}
		}
		if img.Bounds() != image.Rect(0, 0, w, h) || len(img.Palette) != 256 {
			t.Fatalf("%s: image %v with %d colours", r, img.Bounds(), len(img.Palette))
		}
		for i, v := range ndvi {
			got := img.Palette[img.Pix[i]].(color.NRGBA)
			want := l.Color(v)
			// The palette has 239 steps, the screen table 4096: allow one
			// palette step of colour difference on continuous ramps.
			tol := 0
			if !l.Discrete() {
				tol = 12
			}
			if !near(got, want, tol) {
				t.Fatalf("%s: pixel %d (%g): palette colour %v, screen colour %v", r, i, v, got, want)
			}
		}
	}
	// Palette steps: the ends of the stretch reach the first and last step.
	l := mustNew(t, RampRdYlGn, -0.5, 0.5)
	if l.Index(-0.5) != 1 || l.Index(-3) != 1 || l.Index(0.5) != RampSteps || l.Index(3) != RampSteps {
		t.Errorf("ramp ends: %d %d %d %d", l.Index(-0.5), l.Index(-3), l.Index(0.5), l.Index(3))
	}
}

// TestRenderViewMeanRule checks zoomed-out rendering against a plain
// float64 implementation of the documented rule, with the view hanging
// over every edge of the image.
func TestRenderViewMeanRule(t *testing.T) {
	const w, h = 50, 40
	rng := rand.New(rand.NewPCG(9, 9))
	ndvi := make([]float32, w*h)
	for i := range ndvi {
		ndvi[i] = float32(rng.Float64()*2 - 1)
		if rng.IntN(10) == 0 {
			ndvi[i] = nan
		}
	}
	l := mustNew(t, RampViridis, -1, 1)
	for _, zoom := range []float64{0.9, 0.5, 0.3, 0.2, 0.1} {
		s := min(int(math.Ceil(1/zoom-1e-9)), 3)
		for _, off := range [][2]float64{{-7.3, -5.1}, {3, 2}, {30, 20}, {-100, -100}} {
			dst := image.NewNRGBA(image.Rect(0, 0, 40, 30))
			l.RenderView(dst, ndvi, w, h, off[0], off[1], zoom)
			for sy := range 30 {
				for sx := range 40 {
					sum, n := 0.0, 0
					for j := range s {
						iy := int(math.Floor(off[1] + (float64(sy)+(float64(j)+0.5)/float64(s))/zoom))
						for k := range s {
							ix := int(math.Floor(off[0] + (float64(sx)+(float64(k)+0.5)/float64(s))/zoom))
							if ix < 0 || ix >= w || iy < 0 || iy >= h || math.IsNaN(float64(ndvi[iy*w+ix])) {
								continue
							}
							sum += float64(ndvi[iy*w+ix])
							n++
						}
					}
					got := dst.NRGBAAt(sx, sy)
					if n == 0 {
						if got.A != 0 {
							t.Fatalf("zoom %g offset %v: screen (%d,%d) = %v, want transparent", zoom, off, sx, sy, got)
						}
						continue
					}
					m := sum / float64(n)
					if got != l.Color(float32(m)) && got != l.Color(float32(m-2e-6)) && got != l.Color(float32(m+2e-6)) {
						t.Fatalf("zoom %g offset %v: screen (%d,%d) = %v, want the colour of mean %g of %d samples, %v", zoom, off, sx, sy, got, m, n, l.Color(float32(m)))
					}
				}
			}
		}
	}
}
