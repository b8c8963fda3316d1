package vector

import (
	"fmt"
	"math"
	"sort"

	"github.com/paulmach/orb"
)

// maxValidateChecks bounds the segment pairs Validate compares, so that a
// pathological geometry cannot take unbounded time; past it the geometry
// is reported valid as far as it was checked.
const maxValidateChecks = 50_000_000

// Validate reports the first problem that makes a stand geometry invalid
// for area computations, or nil: a coordinate that is not finite, a ring
// with fewer than three distinct points, or two edges (of any rings or
// parts) that cross each other. Touching at a vertex, rings inside the
// wrong shell and overlapping parts are not reported.
func Validate(g orb.Geometry) error {
	mp := asMultiPolygon(g)
	type seg struct {
		a, b       orb.Point
		minx, maxx float64
	}
	var segs []seg
	for pi, p := range mp {
		for ri, r := range p {
			distinct := 0
			for i, pt := range r {
				if math.IsNaN(pt[0]) || math.IsInf(pt[0], 0) || math.IsNaN(pt[1]) || math.IsInf(pt[1], 0) {
					return fmt.Errorf("point %d of %s is not finite", i, ringName(len(mp), pi, ri))
				}
				if i == 0 || pt != r[i-1] {
					distinct++
				}
			}
			if len(r) > 1 && r[0] == r[len(r)-1] {
				distinct--
			}
			if distinct < 3 {
				return fmt.Errorf("%s has %d distinct points; a ring needs 3", ringName(len(mp), pi, ri), distinct)
			}
			n := len(r)
			for i := 0; i < n; i++ {
				a, b := r[i], r[(i+1)%n]
				if a == b {
					continue
				}
				segs = append(segs, seg{a: a, b: b, minx: math.Min(a[0], b[0]), maxx: math.Max(a[0], b[0])})
			}
		}
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].minx < segs[j].minx })
	checks := 0
	for i := range segs {
		s := segs[i]
		miny, maxy := math.Min(s.a[1], s.b[1]), math.Max(s.a[1], s.b[1])
		for j := i + 1; j < len(segs) && segs[j].minx <= s.maxx; j++ {
			if checks++; checks > maxValidateChecks {
				return nil
			}
			t := segs[j]
			if math.Max(t.a[1], t.b[1]) < miny || math.Min(t.a[1], t.b[1]) > maxy {
				continue
			}
			if crosses(s.a, s.b, t.a, t.b) {
				x, y := crossing(s.a, s.b, t.a, t.b)
				return fmt.Errorf("edges cross each other near (%.10g, %.10g) (self-intersection)", x, y)
			}
		}
	}
	return nil
}

func ringName(parts, pi, ri int) string {
	r := "the outer ring"
	if ri > 0 {
		r = fmt.Sprintf("hole %d", ri)
	}
	if parts > 1 {
		r += fmt.Sprintf(" of part %d", pi+1)
	}
	return r
}

func orient(a, b, c orb.Point) float64 {
	return (b[0]-a[0])*(c[1]-a[1]) - (b[1]-a[1])*(c[0]-a[0])
}

// crosses reports whether segments ab and cd cross at a point interior to
// both.
func crosses(a, b, c, d orb.Point) bool {
	o1, o2 := orient(a, b, c), orient(a, b, d)
	o3, o4 := orient(c, d, a), orient(c, d, b)
	return ((o1 > 0 && o2 < 0) || (o1 < 0 && o2 > 0)) && ((o3 > 0 && o4 < 0) || (o3 < 0 && o4 > 0))
}

func crossing(a, b, c, d orb.Point) (float64, float64) {
	o1, o2 := orient(a, b, c), orient(a, b, d)
	t := o1 / (o1 - o2)
	return c[0] + t*(d[0]-c[0]), c[1] + t*(d[1]-c[1])
}
