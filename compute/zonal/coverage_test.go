package zonal

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"
)

// The reference for coverage: clip each ring against each cell with
// Sutherland–Hodgman (exact for a convex clip window, whatever the ring)
// and take the shoelace area, shells minus holes. Independent of the
// accumulation the package uses.

func clipRing(r []orb.Point, x0, y0, x1, y1 float64) []orb.Point {
	type edgeFn struct {
		in  func(p orb.Point) bool
		cut func(a, b orb.Point) orb.Point
	}
	lerpX := func(a, b orb.Point, x float64) orb.Point {
		t := (x - a[0]) / (b[0] - a[0])
		return orb.Point{x, a[1] + t*(b[1]-a[1])}
	}
	lerpY := func(a, b orb.Point, y float64) orb.Point {
		t := (y - a[1]) / (b[1] - a[1])
		return orb.Point{a[0] + t*(b[0]-a[0]), y}
	}
	fns := []edgeFn{
		{func(p orb.Point) bool { return p[0] >= x0 }, func(a, b orb.Point) orb.Point { return lerpX(a, b, x0) }},
		{func(p orb.Point) bool { return p[0] <= x1 }, func(a, b orb.Point) orb.Point { return lerpX(a, b, x1) }},
		{func(p orb.Point) bool { return p[1] >= y0 }, func(a, b orb.Point) orb.Point { return lerpY(a, b, y0) }},
		{func(p orb.Point) bool { return p[1] <= y1 }, func(a, b orb.Point) orb.Point { return lerpY(a, b, y1) }},
	}
	out := r
	for _, f := range fns {
		in := out
		out = nil
		n := len(in)
		for i := 0; i < n; i++ {
			a, b := in[i], in[(i+1)%n]
			ina, inb := f.in(a), f.in(b)
			switch {
			case ina && inb:
				out = append(out, b)
			case ina && !inb:
				out = append(out, f.cut(a, b))
			case !ina && inb:
				out = append(out, f.cut(a, b), b)
			}
		}
		if len(out) == 0 {
			return nil
		}
	}
	return out
}

func shoelace(r []orb.Point) float64 {
	if len(r) == 0 {
		return 0
	}
	// Relative to the first point, so that map coordinates of millions of
	// metres lose no precision.
	ox, oy := r[0][0], r[0][1]
	var s float64
	n := len(r)
	for i := range r {
		j := (i + 1) % n
		s += (r[i][0]-ox)*(r[j][1]-oy) - (r[j][0]-ox)*(r[i][1]-oy)
	}
	return math.Abs(s) / 2
}

// refCoverage is the covered fraction of pixel (c, r) of a north-up grid.
func refCoverage(g orb.Geometry, gt [6]float64, c, r int) float64 {
	x0, x1 := gt[0]+float64(c)*gt[1], gt[0]+float64(c+1)*gt[1]
	y1, y0 := gt[3]+float64(r)*gt[5], gt[3]+float64(r+1)*gt[5]
	var area float64
	for _, p := range asMulti(g) {
		for ri, ring := range p {
			a := shoelace(clipRing(ring, x0, y0, x1, y1))
			if ri > 0 {
				a = -a
			}
			area += a
		}
	}
	return area / math.Abs(gt[1]*gt[5])
}

func geomArea(g orb.Geometry) float64 {
	var a float64
	for _, p := range asMulti(g) {
		for ri, r := range p {
			s := shoelace(r)
			if ri > 0 {
				s = -s
			}
			a += s
		}
	}
	return a
}

func regular(cx, cy, rad float64, n int, phase float64) orb.Ring {
	r := make(orb.Ring, 0, n+1)
	for i := 0; i < n; i++ {
		t := phase + 2*math.Pi*float64(i)/float64(n)
		r = append(r, orb.Point{cx + rad*math.Cos(t), cy + rad*math.Sin(t)})
	}
	return append(r, r[0])
}

func reversed(r orb.Ring) orb.Ring {
	o := make(orb.Ring, len(r))
	for i := range r {
		o[i] = r[len(r)-1-i]
	}
	return o
}

// star: a non-convex ring with random radii.
func star(rng *rand.Rand, cx, cy, rad float64, n int) orb.Ring {
	r := make(orb.Ring, 0, n+1)
	for i := 0; i < n; i++ {
		t := 2 * math.Pi * float64(i) / float64(n)
		q := rad * (0.3 + 0.7*rng.Float64())
		r = append(r, orb.Point{cx + q*math.Cos(t), cy + q*math.Sin(t)})
	}
	return append(r, r[0])
}

var testGT = [6]float64{600000, 10, 0, 5800000, 0, -10}

func TestCoverageKnownShapes(t *testing.T) {
	const X, Y = 600000.0, 5800000.0
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := map[string]orb.Geometry{
		"triangle":                          orb.Polygon{{{X + 13.7, Y - 5.2}, {X + 187.3, Y - 41.9}, {X + 61.1, Y - 233.3}, {X + 13.7, Y - 5.2}}},
		"circle (720-gon)":                  orb.Polygon{regular(X+150.3, Y-150.7, 97.77, 720, 0.1)},
		"square at 45°":                     orb.Polygon{regular(X+100, Y-100, 70.710678, 4, math.Pi/4)},
		"square at 45°, on cell corners":    orb.Polygon{{{X + 100, Y - 30}, {X + 170, Y - 100}, {X + 100, Y - 170}, {X + 30, Y - 100}, {X + 100, Y - 30}}},
		"polygon with a hole":               orb.Polygon{regular(X+120, Y-120, 90, 9, 0.3), reversed(regular(X+115, Y-118, 40, 7, 0.2))},
		"hole with the shell's orientation": orb.Polygon{regular(X+120, Y-120, 90, 9, 0.3), regular(X+115, Y-118, 40, 7, 0.2)},
		"multipolygon":                      orb.MultiPolygon{{regular(X+50, Y-50, 30, 5, 0)}, {reversed(regular(X+200, Y-60, 25.5, 11, 1))}},
		"random star":                       orb.Polygon{star(rng, X+140, Y-140, 120, 57)},
		"sliver inside one pixel":           orb.Polygon{{{X + 31.1, Y - 31.2}, {X + 38.8, Y - 32.9}, {X + 33.3, Y - 38.7}, {X + 31.1, Y - 31.2}}},
		"clockwise rectangle on edges":      orb.Polygon{{{X + 20, Y - 20}, {X + 20, Y - 80}, {X + 90, Y - 80}, {X + 90, Y - 20}, {X + 20, Y - 20}}},
	}
	for name, g := range shapes {
		cg, err := Coverage(g, testGT, 40, 40)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var total float64
		maxErr := 0.0
		for r := 0; r < cg.H; r++ {
			for c := 0; c < cg.W; c++ {
				f := cg.Frac[r*cg.W+c]
				if f < 0 || f > 1 {
					t.Fatalf("%s: fraction %v out of [0, 1]", name, f)
				}
				total += f
				maxErr = math.Max(maxErr, math.Abs(f-refCoverage(g, testGT, cg.X0+c, cg.Y0+r)))
			}
		}
		want := geomArea(g) / 100
		if rel := math.Abs(total-want) / want; rel > 1e-9 {
			t.Errorf("%s: total coverage %.12f pixels, area %.12f (relative error %.2g)", name, total, want, rel)
		}
		if maxErr > 1e-9 {
			t.Errorf("%s: a cell's coverage differs from clipping by %.3g", name, maxErr)
		}
	}
}

func TestCoverageRandomStars(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for k := 0; k < 40; k++ {
		cx, cy := 600000+rng.Float64()*400, 5800000-rng.Float64()*400
		g := orb.Polygon{star(rng, cx, cy, 5+rng.Float64()*150, 3+rng.IntN(60))}
		if k%2 == 1 {
			g[0] = reversed(g[0])
		}
		cg, err := Coverage(g, testGT, 45, 45)
		if err != nil {
			t.Fatal(err)
		}
		var total float64
		for r := 0; r < cg.H; r++ {
			for c := 0; c < cg.W; c++ {
				f := cg.Frac[r*cg.W+c]
				total += f
				if d := math.Abs(f - refCoverage(g, testGT, cg.X0+c, cg.Y0+r)); d > 1e-9 {
					t.Fatalf("star %d: cell (%d, %d) coverage %v, clipping %v", k, cg.X0+c, cg.Y0+r, f, refCoverage(g, testGT, cg.X0+c, cg.Y0+r))
				}
			}
		}
		// Clipped to the 45×45 raster, the total equals the clipped area.
		clipped := shoelace(clipRing(g[0], 600000, 5800000-450, 600000+450, 5800000)) / 100
		if math.Abs(total-clipped) > 1e-9*math.Max(1, clipped) {
			t.Fatalf("star %d: total %v, clipped area %v", k, total, clipped)
		}
	}
}

func TestCoverageRotatedGrid(t *testing.T) {
	// A grid rotated by 30° with 10 m pixels: an affine map keeps straight
	// edges straight, so the covered pixels still add up to the area.
	th := math.Pi / 6
	gt := [6]float64{600000, 10 * math.Cos(th), -10 * math.Sin(th), 5800000, -10 * math.Sin(th), -10 * math.Cos(th)}
	g := orb.Polygon{regular(600109.8, 5799590.2, 60, 13, 0.4)} // around pixel (30, 30)
	cg, err := Coverage(g, gt, 60, 60)
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, f := range cg.Frac {
		total += f
	}
	want := geomArea(g) / 100
	if math.Abs(total-want) > 1e-9*want {
		t.Fatalf("rotated grid: %v pixels, want %v", total, want)
	}
	if _, err := Coverage(g, [6]float64{0, 1, 2, 0, 2, 4}, 10, 10); err == nil {
		t.Fatal("singular geotransform accepted")
	}
}

func TestCoveragePartlyOutside(t *testing.T) {
	// A 100 m square centred on the raster's top-left corner: a quarter of
	// it is inside.
	g := orb.Polygon{{{599950, 5800050}, {600050, 5800050}, {600050, 5799950}, {599950, 5799950}, {599950, 5800050}}}
	cg, err := Coverage(g, testGT, 20, 20)
	if err != nil {
		t.Fatal(err)
	}
	if cg.X0 != 0 || cg.Y0 != 0 || cg.W != 5 || cg.H != 5 {
		t.Fatalf("window %+v", cg)
	}
	for i, f := range cg.Frac {
		if f != 1 {
			t.Fatalf("cell %d: %v, want 1", i, f)
		}
	}
	out, err := Coverage(orb.Polygon{regular(0, 0, 5, 6, 0)}, testGT, 20, 20)
	if err != nil || out.W != 0 || len(out.Frac) != 0 {
		t.Fatalf("outside: %+v %v", out, err)
	}
}
