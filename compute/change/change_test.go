package change

import (
	"math"
	"testing"

	"canopy/compute"
	"canopy/compute/fake"
)

func TestDifferenceRules(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	before := []float32{0.8, 0.5, nan, 0.2, inf, 0.1}
	after := []float32{0.3, 0.5, 0.4, nan, 0.1, -0.2}
	out := make([]float32, len(before))
	if err := Difference(out, before, after); err != nil {
		t.Fatal(err)
	}
	want := []float32{0.8 - 0.3, 0, nan, nan, nan, 0.1 + 0.2}
	for i := range want {
		if !(out[i] == want[i] || (out[i] != out[i] && want[i] != want[i])) {
			t.Errorf("pixel %d: %g, want %g", i, out[i], want[i])
		}
	}
	if Difference(out[:2], before, after) == nil {
		t.Error("planes of different sizes accepted")
	}
}

func TestDNBRClassesAreUSGS(t *testing.T) {
	cs := DNBRClasses()
	// dNBR × 1000 as the USGS tables give it.
	for _, c := range []struct {
		v    float32
		name string
	}{{-0.3, "enhanced regrowth, high"}, {-0.2, "enhanced regrowth, low"}, {0, "unburned"}, {0.099, "unburned"},
		{0.1, "low severity"}, {0.3, "moderate-low severity"}, {0.5, "moderate-high severity"}, {0.7, "high severity"}} {
		if got := cs[compute.ClassOf(cs, c.v)].Name; got != c.name {
			t.Errorf("dNBR %g: %s, want %s", c.v, got, c.name)
		}
	}
}

func TestParseClasses(t *testing.T) {
	cs, err := ParseClasses("-0.2, 0, 0.3")
	if err != nil || len(cs) != 4 || cs[0].Name != "< -0.2" || cs[3].Name != "≥ 0.3" || cs[1].Lo != -0.2 || cs[2].Hi != 0.3 {
		t.Fatalf("%+v %v", cs, err)
	}
	for _, bad := range []string{"", "a", "0.2,0.1", "0,nan"} {
		if _, err := ParseClasses(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestOntoGridSameGridIsIdentity(t *testing.T) {
	g := fake.GeoRef()
	p := []float32{1, 2, 3, 4}
	out, al, err := OntoGrid(p, 2, 2, g, 2, 2, g)
	if err != nil || al.Resampled || &out[0] != &p[0] {
		t.Fatalf("%v %+v", err, al)
	}
}
