package fake_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"runtime"
	"testing"

	"canopy/compute"
	"canopy/compute/fake"
)

func bandBytes(b *compute.Band) []byte {
	var buf bytes.Buffer
	binary.Write(&buf, binary.LittleEndian, b.Data)
	return buf.Bytes()
}

func TestFakeReproducible(t *testing.T) {
	for _, kind := range fake.Kinds() {
		r1, n1, err := fake.RedNIR(kind, 333, 217, 42)
		if err != nil {
			t.Fatal(err)
		}
		prev := runtime.GOMAXPROCS(1)
		r2, n2, _ := fake.RedNIR(kind, 333, 217, 42)
		runtime.GOMAXPROCS(prev)
		if !bytes.Equal(bandBytes(r1), bandBytes(r2)) || !bytes.Equal(bandBytes(n1), bandBytes(n2)) {
			t.Errorf("%s: same seed gave different bytes", kind)
		}
		r3, _, _ := fake.RedNIR(kind, 333, 217, 43)
		if bytes.Equal(bandBytes(r1), bandBytes(r3)) {
			t.Errorf("%s: seeds 42 and 43 gave the same red band", kind)
		}
	}
}

// The noise scene is the textbook's: red uniform in [0.05, 0.40), NIR
// uniform in [0.20, 0.60), so NDVI spans about -0.33 to 0.85.
func TestNoiseSceneMatchesChapter(t *testing.T) {
	const w, h = 1000, 1000
	r, n, err := fake.RedNIR(fake.Noise, w, h, 7)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, d []float32, lo, hi float32) {
		mn, mx, sum := float32(math.Inf(1)), float32(math.Inf(-1)), 0.0
		for _, v := range d {
			mn, mx, sum = min(mn, v), max(mx, v), sum+float64(v)
		}
		if mn < lo || mx >= hi {
			t.Errorf("%s outside [%g, %g): min %g max %g", name, lo, hi, mn, mx)
		}
		// Uniform: the extremes are reached and the mean is the midpoint.
		if mn > lo+1e-4 || mx < hi-1e-4 {
			t.Errorf("%s does not fill [%g, %g): min %g max %g", name, lo, hi, mn, mx)
		}
		if mean := sum / float64(len(d)); math.Abs(mean-float64(lo+hi)/2) > 0.002 {
			t.Errorf("%s mean %g, want %g", name, mean, (lo+hi)/2)
		}
	}
	check("red", r.Data, 0.05, 0.40)
	check("nir", n.Data, 0.20, 0.60)
	mn, mx := 1.0, -1.0
	for i := range r.Data {
		v := float64(ndvi32(r.Data[i], n.Data[i]))
		mn, mx = math.Min(mn, v), math.Max(mx, v)
	}
	if mn < -0.334 || mn > -0.30 || mx < 0.82 || mx > 0.847 {
		t.Errorf("NDVI range [%.3f, %.3f], the textbook's is about [-0.33, 0.85]", mn, mx)
	}
}

// The landscape has water, bare ground, fields and dense forest in
// believable shares.
func TestLandscapeHasLandCover(t *testing.T) {
	r, n, err := fake.RedNIR(fake.Landscape, 800, 600, 1)
	if err != nil {
		t.Fatal(err)
	}
	var water, bare, sparse, moderate, dense int
	for i := range r.Data {
		v := ndvi32(r.Data[i], n.Data[i])
		switch {
		case v < 0:
			water++
		case v < 0.2:
			bare++
		case v < 0.4:
			sparse++
		case v < 0.6:
			moderate++
		default:
			dense++
		}
	}
	total := float64(len(r.Data))
	for name, share := range map[string]float64{"water": float64(water) / total, "bare": float64(bare) / total,
		"sparse": float64(sparse) / total, "moderate": float64(moderate) / total, "dense": float64(dense) / total} {
		if share < 0.01 {
			t.Errorf("%s covers %.1f%% of the landscape, want at least 1%%", name, 100*share)
		}
	}
	if float64(dense)/total < 0.25 {
		t.Errorf("dense vegetation covers %.1f%%, a forested landscape has more", 100*float64(dense)/total)
	}
	// Spatial structure: neighbours are far more alike than random pixels.
	near, far := 0.0, 0.0
	for y := 0; y < 600; y++ {
		for x := 0; x+1 < 800; x++ {
			i := y*800 + x
			a := ndvi32(r.Data[i], n.Data[i])
			b := ndvi32(r.Data[i+1], n.Data[i+1])
			j := (i * 7919) % len(r.Data)
			c := ndvi32(r.Data[j], n.Data[j])
			near += math.Abs(float64(a - b))
			far += math.Abs(float64(a - c))
		}
	}
	if near > far/3 {
		t.Errorf("no spatial structure: neighbour difference %.3g vs random %.3g", near, far)
	}
}

func TestFakeRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		kind string
		w, h int
	}{{"noise", 0, 5}, {"noise", 5, -1}, {"noise", 1 << 20, 1 << 20}, {"mars", 5, 5}} {
		if _, _, err := fake.RedNIR(c.kind, c.w, c.h, 1); err == nil {
			t.Errorf("Fake(%q, %d, %d) gave no error", c.kind, c.w, c.h)
		}
	}
}

// ndvi32 is NDVI of one pixel in float32: NaN where nir + red is 0.
func ndvi32(red, nir float32) float32 {
	s := nir + red
	if s == 0 {
		return float32(math.NaN())
	}
	return (nir - red) / s
}
