package stats

import (
	"math"
	"slices"
	"testing"

	"canopy/compute"
)

func TestStreamEqualsWholePlane(t *testing.T) {
	const n = 1<<18 + 12345
	p, _ := randomPlane(n, 3)
	p[0], p[n-1] = 1, -1 // the range's ends, counted in the first and last bins
	table := compute.NDVIClasses()
	for _, cut := range []int{1, 777, 1 << 16, n} {
		s := NewStream(100, -1, 1, table, 100)
		for lo := 0; lo < n; lo += cut {
			s.Add(p[lo:min(lo+cut, n)])
		}
		got, want := s.Summary(), Summarize(p)
		if got.Valid != want.Valid || got.Total != want.Total || got.Min != want.Min || got.Max != want.Max || got.ValidShare != want.ValidShare {
			t.Errorf("blocks of %d: summary %+v, whole plane %+v", cut, got, want)
		}
		if math.Abs(got.Mean-want.Mean) > 1e-12 || math.Abs(got.Std-want.Std) > 1e-12 {
			t.Errorf("blocks of %d: mean %v std %v, whole plane %v %v", cut, got.Mean, got.Std, want.Mean, want.Std)
		}
		if h, wh := s.Histogram(), Histogram(p, 100, -1, 1); !slices.Equal(h, wh) {
			t.Errorf("blocks of %d: histogram %v, whole plane %v", cut, h, wh)
		}
		gc, wc := s.Classes(), ClassesOf(table, p, 100)
		if len(gc) != len(wc) {
			t.Fatalf("blocks of %d: %d classes, want %d", cut, len(gc), len(wc))
		}
		for i := range gc {
			if gc[i] != wc[i] {
				t.Errorf("blocks of %d: class %d %+v, whole plane %+v", cut, i, gc[i], wc[i])
			}
		}
	}
}

func TestStreamEmptyAndWithout(t *testing.T) {
	s := NewStream(0, 0, 0, nil, 0)
	if s.Histogram() != nil || s.Classes() != nil {
		t.Error("a stream asked for no histogram and no classes returned some")
	}
	if sm := s.Summary(); sm.Total != 0 || !math.IsNaN(sm.Mean) {
		t.Errorf("empty stream: %+v", sm)
	}
	s.Add([]float32{float32(math.NaN()), 2})
	if sm := s.Summary(); sm.Valid != 1 || sm.Total != 2 || sm.Mean != 2 || sm.Std != 0 {
		t.Errorf("one valid value of two: %+v", sm)
	}
}
