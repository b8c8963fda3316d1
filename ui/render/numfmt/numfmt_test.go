package numfmt

import (
	"math"
	"testing"
)

func TestTicksAreRound(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		n      int
		want   []float64
		step   float64
	}{
		{-1, 1, 4, []float64{-1, -0.5, 0, 0.5, 1}, 0.5},
		{0.12, 0.87, 5, []float64{0.2, 0.4, 0.6, 0.8}, 0.2},
		{0, 10, 4, []float64{0, 2.5, 5, 7.5, 10}, 2.5},
		{3, 3, 4, []float64{3}, 0},
	} {
		got, step := Ticks(c.lo, c.hi, c.n)
		if step != c.step || len(got) != len(c.want) {
			t.Errorf("Ticks(%g, %g, %d) = %v step %g, want %v step %g", c.lo, c.hi, c.n, got, step, c.want, c.step)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-12 {
				t.Errorf("Ticks(%g, %g, %d) = %v, want %v", c.lo, c.hi, c.n, got, c.want)
			}
		}
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Tick(-0.5, 0.25), "−0.5"},
		{Tick(0.25, 0.25), "0.25"},
		{Tick(-0.0000001, 0.5), "0"},
		{Tick(15000, 5000), "15\u202f000"},
		{Tick(2048, 1024), "2048"},
		{Value(0.43214), "0.4321"},
		{Value(12.345), "12.35"},
		{Value(-1234.56), "−1234.6"},
		{Value(-12345.6), "−12\u202f345.6"},
		{Value(0.0012), "0.0012"},
		{Value(3), "3"},
		{Value(math.NaN()), "–"},
		{Count(1048576), "1\u202f048\u202f576"},
		{Count(-950), "−950"},
		{Short(12345), "12.3k"},
		{Short(4194304), "4.19M"},
		{Short(950), "950"},
		{Percent(16.66), "16.7%"},
		{Length(500), "500 m"},
		{Length(1000), "1 km"},
		{Length(2500), "2.5 km"},
		{Length(0.2), "20 cm"},
		{Degrees(12.5, 0.5, false), "12.5°E"},
		{Degrees(-3, 1, false), "3°W"},
		{Degrees(48, 1, true), "48°N"},
		{Degrees(-0.25, 0.25, true), "0.25°S"},
		{Degrees(0, 1, true), "0°"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestDecimals(t *testing.T) {
	for step, want := range map[float64]int{0.25: 2, 0.5: 1, 5: 0, 2.5: 1, 0.001: 3, 1e-9: 6} {
		if got := Decimals(step); got != want {
			t.Errorf("Decimals(%g) = %d, want %d", step, got, want)
		}
	}
}
