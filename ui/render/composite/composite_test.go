package composite

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"canopy/compute"
)

// percentileSorted is NumPy's linear percentile of vs (sorted here),
// written out independently of the histograms.
func percentileSorted(vs []float64, q float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	pos := q / 100 * float64(len(s)-1)
	k := int(math.Floor(pos))
	if k+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[k] + (pos-float64(k))*(s[k+1]-s[k])
}

// reflectance is the float64 reflectance of pixel i of b, NaN for nodata.
func reflectance(b compute.BandInput, i int) float64 {
	v := b.Plane.At(i)
	if v != v || b.HasNoData && v == b.NoData {
		return math.NaN()
	}
	return b.Radiometry.Apply64(v)
}

// validRefl are each band's reflectances at the pixels where all three
// are valid and the mask is 0.
func validRefl(bands [3]compute.BandInput, mask []uint8) [3][]float64 {
	var out [3][]float64
	for i := range bands[0].Plane.Pixels() {
		if mask != nil && mask[i] != 0 {
			continue
		}
		r := [3]float64{reflectance(bands[0], i), reflectance(bands[1], i), reflectance(bands[2], i)}
		if math.IsNaN(r[0]) || math.IsNaN(r[1]) || math.IsNaN(r[2]) {
			continue
		}
		for c := range 3 {
			out[c] = append(out[c], r[c])
		}
	}
	return out
}

// u16Band is a w×h uint16 band of DNs in [lo, hi) with some DN 0 (nodata)
// and Sentinel-2's radiometry (DN − 1000) / 10000.
func u16Band(rng *rand.Rand, role string, w, h int, lo, hi uint16) compute.BandInput {
	s := make([]uint16, w*h)
	for i := range s {
		s[i] = lo + uint16(rng.IntN(int(hi-lo)))
		if rng.IntN(50) == 0 {
			s[i] = 0
		}
	}
	return compute.BandInput{Role: role, Plane: compute.PlaneOf(w, h, s), Radiometry: compute.Radiometry{Add: -1000, Scale: 1e-4},
		NoData: 0, HasNoData: true, Source: role}
}

func f32Band(rng *rand.Rand, role string, w, h int, lo, hi float32) compute.BandInput {
	s := make([]float32, w*h)
	for i := range s {
		s[i] = lo + (hi-lo)*rng.Float32()
		if rng.IntN(40) == 0 {
			s[i] = float32(math.NaN())
		}
	}
	return compute.BandInput{Role: role, Plane: compute.PlaneOf(w, h, s), Radiometry: compute.Identity(), Source: role}
}

func randomMask(rng *rand.Rand, n int) []uint8 {
	m := make([]uint8, n)
	for i := range m {
		if rng.IntN(7) == 0 {
			m[i] = 1
		}
	}
	return m
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// TestPercentilesAgainstSort: the stretch of every stored type equals the
// 2nd and 98th percentiles of the valid reflectances sorted (NumPy's
// linear rule), with nodata, NaN and masked pixels left out, for a
// negative scale too.
func TestPercentilesAgainstSort(t *testing.T) {
	const w, h = 131, 97
	rng := rand.New(rand.NewPCG(1, 2))
	i16 := make([]int16, w*h)
	for i := range i16 {
		i16[i] = int16(rng.IntN(6000) - 3000)
	}
	i32 := make([]int32, w*h)
	for i := range i32 {
		i32[i] = int32(rng.IntN(1<<28) - 1<<27)
	}
	u32 := make([]uint32, w*h)
	for i := range u32 {
		u32[i] = uint32(rng.Uint64() >> 33)
	}
	u8 := make([]uint8, w*h)
	for i := range u8 {
		u8[i] = uint8(rng.IntN(256))
	}
	cases := []struct {
		name  string
		bands [3]compute.BandInput
		mask  []uint8
		lo    float64
		hi    float64
	}{
		{"uint16 Sentinel-2", [3]compute.BandInput{u16Band(rng, "red", w, h, 1000, 3000), u16Band(rng, "green", w, h, 1200, 2500), u16Band(rng, "blue", w, h, 1001, 1800)}, randomMask(rng, w*h), 2, 98},
		{"float32 with NaN", [3]compute.BandInput{f32Band(rng, "nir", w, h, 0.2, 0.6), f32Band(rng, "red", w, h, -0.01, 0.2), f32Band(rng, "green", w, h, 0.03, 0.1)}, nil, 2, 98},
		{"int16 int32 uint32", [3]compute.BandInput{
			{Role: "red", Plane: compute.PlaneOf(w, h, i16), Radiometry: compute.Radiometry{Scale: 2.75e-5, Offset: -0.2}, NoData: -3000, HasNoData: true},
			{Role: "green", Plane: compute.PlaneOf(w, h, i32), Radiometry: compute.Radiometry{Scale: 1e-9}},
			{Role: "blue", Plane: compute.PlaneOf(w, h, u32), Radiometry: compute.Radiometry{Scale: 1e-9, Offset: 0.01}},
		}, randomMask(rng, w*h), 5, 95},
		{"negative scale, uint8", [3]compute.BandInput{
			{Role: "red", Plane: compute.PlaneOf(w, h, u8), Radiometry: compute.Radiometry{Scale: -1.0 / 255, Offset: 1}, NoData: 7, HasNoData: true},
			{Role: "green", Plane: compute.PlaneOf(w, h, u8), Radiometry: compute.Radiometry{Scale: 1.0 / 255}},
			{Role: "blue", Plane: compute.PlaneOf(w, h, i32), Radiometry: compute.Radiometry{Scale: -1e-9}},
		}, nil, 2, 98},
		{"whole range", [3]compute.BandInput{f32Band(rng, "red", w, h, 0, 1), f32Band(rng, "green", w, h, 0, 1), f32Band(rng, "blue", w, h, 0, 1)}, nil, 0, 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.bands, tc.mask, Options{Lo: tc.lo, Hi: tc.hi})
			if err != nil {
				t.Fatal(err)
			}
			ref := validRefl(tc.bands, tc.mask)
			if c.ValidPixels() != len(ref[0]) {
				t.Fatalf("%d valid pixels, want %d", c.ValidPixels(), len(ref[0]))
			}
			for i, ch := range c.Channels() {
				lo, hi := percentileSorted(ref[i], tc.lo), percentileSorted(ref[i], tc.hi)
				if !near(ch.Lo, lo, 1e-12) || !near(ch.Hi, hi, 1e-12) {
					t.Errorf("channel %d (%s): stretch %v … %v, sorted %v … %v", i, ch.Role, ch.Lo, ch.Hi, lo, hi)
				}
			}
		})
	}
}

// TestRenderFullResolution: at zoom 1 every pixel is its reflectances
// stretched (Byte), opaque; masked, nodata and NaN pixels are transparent.
func TestRenderFullResolution(t *testing.T) {
	const w, h = 64, 40
	rng := rand.New(rand.NewPCG(5, 6))
	bands := [3]compute.BandInput{u16Band(rng, "red", w, h, 1000, 4000), f32Band(rng, "green", w, h, 0, 0.3), u16Band(rng, "blue", w, h, 1100, 2000)}
	mask := randomMask(rng, w*h)
	c, err := New(bands, mask, Options{})
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	c.RenderView(img, 0, 0, 1)
	chs := c.Channels()
	transparent := 0
	for y := range h {
		for x := range w {
			i := y*w + x
			got := img.NRGBAAt(x, y)
			r := [3]float64{reflectance(bands[0], i), reflectance(bands[1], i), reflectance(bands[2], i)}
			if mask[i] != 0 || math.IsNaN(r[0]) || math.IsNaN(r[1]) || math.IsNaN(r[2]) {
				if got.A != 0 {
					t.Fatalf("invalid pixel (%d,%d) drawn %v", x, y, got)
				}
				transparent++
				continue
			}
			want := [3]uint8{Byte(r[0], chs[0].Lo, chs[0].Hi), Byte(r[1], chs[1].Lo, chs[1].Hi), Byte(r[2], chs[2].Lo, chs[2].Hi)}
			for k, v := range [3]uint8{got.R, got.G, got.B} {
				if d := int(v) - int(want[k]); d < -1 || d > 1 || got.A != 255 {
					t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, got, want)
				}
			}
			if c.Color(x, y) != got {
				t.Fatalf("Color(%d,%d) = %v, the view %v", x, y, c.Color(x, y), got)
			}
		}
	}
	if transparent == 0 {
		t.Fatal("no pixel was invalid: the test checks nothing of the mask")
	}
	// The stretch clips 2 % at each end: some channel values are 0 and 255.
	var zeros, fulls int
	for i := 0; i < len(img.Pix); i += 4 {
		if img.Pix[i+3] == 255 {
			if img.Pix[i] == 0 {
				zeros++
			}
			if img.Pix[i] == 255 {
				fulls++
			}
		}
	}
	if zeros == 0 || fulls == 0 {
		t.Errorf("red channel: %d pixels at 0, %d at 255; a 2–98 %% stretch clips both ends", zeros, fulls)
	}
}

// TestRenderViewZoomedOut: zoomed out, a screen pixel is the mean of the
// valid samples of its 3×3 grid, per channel; with none valid it is
// transparent; outside the image it is transparent; zoomed in, pixels are
// repeated.
func TestRenderViewZoomedOut(t *testing.T) {
	const w, h = 90, 60
	rng := rand.New(rand.NewPCG(7, 8))
	bands := [3]compute.BandInput{f32Band(rng, "red", w, h, 0, 0.3), f32Band(rng, "green", w, h, 0, 0.3), f32Band(rng, "blue", w, h, 0, 0.3)}
	mask := randomMask(rng, w*h)
	c, err := New(bands, mask, Options{})
	if err != nil {
		t.Fatal(err)
	}
	chs := c.Channels()
	const zoom = 1.0 / 3
	img := image.NewNRGBA(image.Rect(0, 0, 40, 25))
	c.RenderView(img, -3, 0, zoom)
	for sy := range 25 {
		for sx := range 40 {
			var sum [3]float64
			n := 0
			for ky := range 3 {
				for kx := range 3 {
					ix := int(math.Floor(-3 + (float64(sx)+(float64(kx)+0.5)/3)/zoom))
					iy := int(math.Floor((float64(sy) + (float64(ky)+0.5)/3) / zoom))
					if ix < 0 || iy < 0 || ix >= w || iy >= h || mask[iy*w+ix] != 0 {
						continue
					}
					i := iy*w + ix
					r := [3]float64{reflectance(bands[0], i), reflectance(bands[1], i), reflectance(bands[2], i)}
					if math.IsNaN(r[0]) || math.IsNaN(r[1]) || math.IsNaN(r[2]) {
						continue
					}
					for k := range 3 {
						sum[k] += r[k]
					}
					n++
				}
			}
			got := img.NRGBAAt(sx, sy)
			if n == 0 {
				if got.A != 0 {
					t.Fatalf("screen (%d,%d) has no valid sample and is drawn %v", sx, sy, got)
				}
				continue
			}
			for k, v := range [3]uint8{got.R, got.G, got.B} {
				want := Byte(sum[k]/float64(n), chs[k].Lo, chs[k].Hi)
				if d := int(v) - int(want); d < -1 || d > 1 {
					t.Fatalf("screen (%d,%d) channel %d = %d, the mean of %d samples gives %d", sx, sy, k, v, n, want)
				}
			}
		}
	}
	// Zoomed in 4×: screen pixel (4x+1, 4y+2) is image pixel (x, y).
	big := image.NewNRGBA(image.Rect(0, 0, 80, 80))
	c.RenderView(big, 10, 20, 4)
	for y := range 20 {
		for x := range 20 {
			if got, want := big.NRGBAAt(4*x+1, 4*y+2), c.Color(10+x, 20+y); got != want {
				t.Fatalf("zoom 4: screen (%d,%d) %v, pixel %v", 4*x+1, 4*y+2, got, want)
			}
		}
	}
}

// TestImageIsTheFullView: the picture Image encodes is RenderView at zoom
// 1, and image/png writes it with its transparent pixels.
func TestImageIsTheFullView(t *testing.T) {
	const w, h = 33, 21
	rng := rand.New(rand.NewPCG(9, 10))
	bands := [3]compute.BandInput{u16Band(rng, "red", w, h, 1000, 4000), u16Band(rng, "green", w, h, 1000, 4000), u16Band(rng, "blue", w, h, 1000, 4000)}
	c, err := New(bands, randomMask(rng, w*h), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := image.NewNRGBA(image.Rect(0, 0, w, h))
	c.RenderView(want, 0, 0, 1)
	var buf bytes.Buffer
	if err := png.Encode(&buf, c.Image()); err != nil {
		t.Fatal(err)
	}
	got, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for y := range h {
		for x := range w {
			g := got.At(x, y)
			gr, gg, gb, ga := g.RGBA()
			wr, wg, wb, wa := want.At(x, y).RGBA()
			if gr != wr || gg != wg || gb != wb || ga != wa {
				t.Fatalf("PNG pixel (%d,%d) %v, the view %v", x, y, g, want.At(x, y))
			}
		}
	}
}

// TestDescribeAndLegend: the band combination as the legend says it.
func TestDescribeAndLegend(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	bands := [3]compute.BandInput{u16Band(rng, "red", 8, 8, 1000, 2000), u16Band(rng, "green", 8, 8, 1000, 2000), u16Band(rng, "blue", 8, 8, 1000, 2000)}
	c, err := New(bands, nil, Options{Title: "Natural colour", Names: [3]string{"B04", "B03", "B02"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Describe(); got != "R=B04 G=B03 B=B02, 2–98 % stretch" {
		t.Errorf("Describe %q", got)
	}
	l := c.Legend()
	if len(l) != 5 || l[0] != "Natural colour" || !strings.HasPrefix(l[1], "R  B04 (red)  ") || !strings.Contains(l[4], "2–98 %") {
		t.Errorf("legend %q", l)
	}
	c2, _ := New(bands, nil, Options{})
	if got := c2.Describe(); got != "R=red G=green B=blue, 2–98 % stretch" {
		t.Errorf("unnamed Describe %q", got)
	}
}

// TestNewErrors: bad inputs are errors, and a composite of no valid pixel
// draws nothing.
func TestNewErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	a := u16Band(rng, "red", 8, 8, 1000, 2000)
	b := u16Band(rng, "green", 9, 8, 1000, 2000)
	if _, err := New([3]compute.BandInput{a, b, a}, nil, Options{}); err == nil || !strings.Contains(err.Error(), "green band is 9×8") {
		t.Errorf("size mismatch: %v", err)
	}
	if _, err := New([3]compute.BandInput{a, a, a}, make([]uint8, 3), Options{}); err == nil {
		t.Error("a short mask is accepted")
	}
	if _, err := New([3]compute.BandInput{a, a, a}, nil, Options{Lo: 50, Hi: 10}); err == nil {
		t.Error("percentiles out of order are accepted")
	}
	if _, err := New([3]compute.BandInput{a, {Role: "x"}, a}, nil, Options{}); err == nil {
		t.Error("an empty band is accepted")
	}
	all := make([]uint8, 64)
	for i := range all {
		all[i] = 1
	}
	c, err := New([3]compute.BandInput{a, a, a}, all, Options{})
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	c.RenderView(img, 0, 0, 1)
	for _, v := range img.Pix {
		if v != 0 {
			t.Fatal("a fully masked composite draws pixels")
		}
	}
	// A constant channel shows mid-grey.
	flat := compute.BandInput{Role: "blue", Plane: compute.PlaneOf(8, 8, make([]float32, 64)), Radiometry: compute.Identity()}
	c, err = New([3]compute.BandInput{flat, flat, flat}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Color(3, 3); got.R < 126 || got.R > 129 || got.A != 255 {
		t.Errorf("constant channel drawn %v, want mid-grey", got)
	}
}
