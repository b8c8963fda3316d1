package layout

import (
	"math"
	"testing"
)

func TestReducer(t *testing.T) {
	w, h := 10, 6
	plane := make([]float32, w*h)
	for i := range plane {
		plane[i] = float32(i)
	}
	plane[0] = float32(math.NaN())
	r, err := NewReducer(w, h, 5)
	if err != nil {
		t.Fatal(err)
	}
	// In blocks of 4, 2 rows.
	for _, b := range [][2]int{{0, 4}, {4, 2}} {
		if err := r.WriteRows(b[0], b[1], plane[b[0]*w:(b[0]+b[1])*w]); err != nil {
			t.Fatal(err)
		}
	}
	m, err := r.Map(utm(500000, 5500000, 10))
	if err != nil {
		t.Fatal(err)
	}
	if m.Width != 5 || m.Height != 3 {
		t.Fatalf("reduced to %d×%d", m.Width, m.Height)
	}
	// Pixel (0,0): the mean of the finite of 1, 10, 11 (0 is NaN).
	if v := m.Plane[0]; v != (1+10+11)/3.0 {
		t.Errorf("box (0,0) = %g", v)
	}
	// Pixel (4,2): rows 4–5, columns 8–9.
	if v, want := m.Plane[2*5+4], float32(48+49+58+59)/4; v != want {
		t.Errorf("box (4,2) = %g, want %g", v, want)
	}
	// The georeferencing follows the larger pixels: 20 m.
	x, y, _ := m.Geo.PixelToMap(0, 0)
	if x != 500010 || y != 5499990 {
		t.Errorf("reduced pixel (0,0) centre at (%g, %g)", x, y)
	}
	// A small plane is kept whole; rows out of order are refused.
	r, _ = NewReducer(w, h, 100)
	if err := r.WriteRows(2, 1, plane); err == nil {
		t.Error("rows out of order accepted")
	}
	if _, err := r.Map(nil); err == nil {
		t.Error("an unfinished plane accepted")
	}
	r.WriteRows(0, h, plane)
	if m, _ := r.Map(nil); m.Width != w || m.Height != h || m.Plane[5] != 5 {
		t.Errorf("small plane %d×%d", m.Width, m.Height)
	}
}

func TestNiceLength(t *testing.T) {
	for max, want := range map[float64]float64{1234: 1000, 999: 500, 450: 200, 199: 100, 7.5: 5, 0.3: 0.2, 25000: 20000, 0: 0} {
		if got := NiceLength(max); math.Abs(got-want) > 1e-12*want {
			t.Errorf("NiceLength(%g) = %g, want %g", max, got, want)
		}
	}
}
