package compute

import (
	"canopy/compute/par"
	"fmt"
	"math"
	"math/rand/v2"
)

// Fake scene kinds.
const (
	SceneNoise     = "noise"
	SceneLandscape = "landscape"
)

// Scenes lists the fake scene kinds.
func Scenes() []string { return []string{SceneNoise, SceneLandscape} }

// MaxFakePixels bounds a fake scene (a Sentinel-2 tile is 10980², 1.2e8
// pixels) so that a typo cannot ask for terabytes.
const MaxFakePixels = 1 << 30

// Fake generates a seeded, reproducible pair of float32 bands. "noise" is
// the textbook benchmark's fake image: red uniform in [0.05, 0.40), NIR uniform in
// [0.20, 0.60). "landscape" is land a forester knows: forest stands, fields,
// bare soil, water and roads with spatial structure, scaled to the image.
// The same kind, size and seed give identical bytes on every machine.
func Fake(kind string, w, h int, seed uint64) (red, nir *Band, err error) {
	if w <= 0 || h <= 0 || w > MaxFakePixels || h > MaxFakePixels || w*h > MaxFakePixels {
		return nil, nil, fmt.Errorf("fake scene size %dx%d: sides must be positive and the scene at most %d pixels", w, h, MaxFakePixels)
	}
	var row func(y int, r, n []float32)
	switch kind {
	case SceneNoise:
		row = func(y int, r, n []float32) { noiseRow(seed, y, r, n) }
	case SceneLandscape:
		l := newLandscape(w, h, seed)
		row = l.row
	default:
		return nil, nil, fmt.Errorf("unknown scene %q (known: noise, landscape)", kind)
	}
	red, nir = NewBand(w, h), NewBand(w, h)
	src := fmt.Sprintf("fake %s %dx%d seed %d", kind, w, h, seed)
	red.Source, nir.Source = src+" red", src+" nir"
	red.Geo, nir.Geo = FakeGeoRef(), FakeGeoRef()
	par.For(h, func(y int) {
		row(y, red.Data[y*w:(y+1)*w], nir.Data[y*w:(y+1)*w])
	})
	return red, nir, nil
}

// FakeGeoRef places fake scenes where a Sentinel-2 tile could be: WGS 84 /
// UTM zone 32N (EPSG:32632), 10 m pixels, top-left corner at (600000 E,
// 5300000 N). GIS tools then show them on a map and areas come out in
// hectares.
func FakeGeoRef() *GeoRef {
	return &GeoRef{
		PixelScale: []float64{10, 10, 0},
		Tiepoints:  []float64{0, 0, 0, 600000, 5300000, 0},
		// Version 1.1.0, 3 keys: projected model, pixel-is-area, EPSG:32632.
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32632},
	}
}

// uniform32 returns a float32 uniform in [lo, hi), never rounding up to hi.
func uniform32(g *rand.Rand, lo, hi float32) float32 {
	v := lo + (hi-lo)*float32(g.Float64())
	if v >= hi {
		v = math.Nextafter32(hi, lo)
	}
	return v
}

func noiseRow(seed uint64, y int, r, n []float32) {
	g := rand.New(rand.NewPCG(seed, uint64(y)))
	for x := range r {
		r[x] = uniform32(g, 0.05, 0.40)
		n[x] = uniform32(g, 0.20, 0.60)
	}
}

// landscape is a procedural scene in unit coordinates (the longer side is
// 1), so every size shows the same land at a different resolution.
type landscape struct {
	w, h  int
	scale float64
	seed  uint64
	roads []road
}

type road struct {
	horizontal bool
	at, amp    float64 // position and meander amplitude (unit coords)
	freq, ph   float64
}

// Surface classes with their mean reflectances (red, NIR).
type surface struct{ red, nir float64 }

var (
	surfDeepWater  = surface{0.025, 0.010}
	surfWater      = surface{0.035, 0.025}
	surfRoad       = surface{0.24, 0.27}
	surfBare       = surface{0.26, 0.33}
	surfRock       = surface{0.30, 0.34}
	surfConifer    = surface{0.030, 0.27}
	surfBroadleaf  = surface{0.035, 0.42}
	surfClearcut   = surface{0.11, 0.24}
	surfYoungStand = surface{0.05, 0.33}
	fieldCrops     = []surface{
		{0.040, 0.46}, // dense crop
		{0.080, 0.31}, // young crop
		{0.200, 0.29}, // harvested stubble
		{0.060, 0.34}, // pasture
		{0.150, 0.22}, // ploughed
		{0.045, 0.40}, // maize
	}
)

func newLandscape(w, h int, seed uint64) *landscape {
	l := &landscape{w: w, h: h, scale: float64(max(w, h)), seed: seed}
	g := rand.New(rand.NewPCG(seed, 0x6c616e64))
	for i := range 4 {
		l.roads = append(l.roads, road{
			horizontal: i%2 == 0,
			at:         0.15 + 0.7*g.Float64(),
			amp:        0.02 + 0.05*g.Float64(),
			freq:       0.5 + 1.5*g.Float64(),
			ph:         2 * math.Pi * g.Float64(),
		})
	}
	return l
}

// hash2 is a 64-bit integer hash of a lattice point and a salt.
func hash2(x, y int64, seed uint64) uint64 {
	h := seed ^ 0x9e3779b97f4a7c15
	h ^= uint64(x) * 0xbf58476d1ce4e5b9
	h = (h ^ (h >> 31)) * 0x94d049bb133111eb
	h ^= uint64(y) * 0xd6e8feb86659fd93
	h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9
	return h ^ (h >> 32)
}

func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// valueNoise is smooth lattice noise in [0, 1).
func valueNoise(x, y float64, seed uint64) float64 {
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := x-x0, y-y0
	ix, iy := int64(x0), int64(y0)
	sx, sy := fx*fx*(3-2*fx), fy*fy*(3-2*fy)
	a := unit(hash2(ix, iy, seed))
	b := unit(hash2(ix+1, iy, seed))
	c := unit(hash2(ix, iy+1, seed))
	d := unit(hash2(ix+1, iy+1, seed))
	return a + (b-a)*sx + (c-a)*sy + (a-b-c+d)*sx*sy
}

// fbm sums octaves of value noise; the result is about in [0, 1).
func fbm(x, y float64, octaves int, seed uint64) float64 {
	sum, amp, norm := 0.0, 0.5, 0.0
	for o := range octaves {
		sum += amp * valueNoise(x, y, seed+uint64(o)*7919)
		norm += amp
		x, y, amp = x*2.03, y*2.03, amp*0.5
	}
	return sum / norm
}

func (l *landscape) row(y int, red, nir []float32) {
	v := (float64(y) + 0.5) / l.scale
	px := 1 / l.scale // one pixel in unit coordinates
	for x := range red {
		u := (float64(x) + 0.5) / l.scale
		s, tex := l.surfaceAt(u, v, px)
		// Pixel texture: crowns, furrows, sensor noise.
		g := hash2(int64(x), int64(y), l.seed^0x7e57)
		n1 := unit(g) - 0.5
		n2 := unit(g>>7|g<<57) - 0.5
		r := s.red * (1 + tex*n1 + 0.02*n2)
		n := s.nir * (1 + tex*n2 + 0.02*n1)
		red[x], nir[x] = float32(max(r, 0.001)), float32(max(n, 0.001))
	}
}

// surfaceAt classifies unit coordinate (u, v) and returns its surface and
// texture strength.
func (l *landscape) surfaceAt(u, v, px float64) (surface, float64) {
	seed := l.seed
	// Domain warp gives natural, non-grid outlines.
	wu := u + 0.04*(fbm(u*3, v*3, 3, seed+11)-0.5)
	wv := v + 0.04*(fbm(u*3+5.2, v*3+1.3, 3, seed+13)-0.5)
	elev := fbm(wu*2.5, wv*2.5, 5, seed+1)

	// A river meanders across the scene.
	rc := 0.55 + 0.18*math.Sin(2*math.Pi*(wu*1.3)+float64(seed%7)) + 0.1*(fbm(wu*2, 0.5, 3, seed+3)-0.5)
	rw := 0.006 + 0.004*fbm(wu*4, 1.5, 2, seed+4)
	if d := math.Abs(wv - rc); d < rw {
		if d < rw*0.5 {
			return surfDeepWater, 0.05
		}
		return surfWater, 0.05
	}
	// Lakes in the lowest ground.
	if elev < 0.30 {
		if elev < 0.26 {
			return surfDeepWater, 0.04
		}
		return surfWater, 0.06
	}
	// Roads: meandering lines a few metres wide, at least about a pixel.
	half := max(0.0012, 0.75*px)
	for _, r := range l.roads {
		a, b := v, u
		if !r.horizontal {
			a, b = u, v
		}
		c := r.at + r.amp*math.Sin(2*math.Pi*r.freq*b+r.ph)
		if math.Abs(a-c) < half {
			return surfRoad, 0.05
		}
	}
	// Rocky, bare high ground.
	if elev > 0.78 {
		return surfRock, 0.10
	}
	if elev > 0.72 {
		return surfBare, 0.12
	}
	// Land use: forest on the hills and far from the river, fields on the
	// plains.
	landuse := fbm(u*1.7+3.1, v*1.7+7.7, 4, seed+21) + 0.6*(elev-0.5)
	if landuse > 0.52 {
		// Forest stands: warped cells, each with a species and an age.
		cs := 1.0 / 9
		cx, cy := math.Floor(wu/cs), math.Floor(wv/cs)
		h := hash2(int64(cx), int64(cy), seed+31)
		switch k := unit(h); {
		case k < 0.45:
			return surfConifer, 0.35
		case k < 0.80:
			return surfBroadleaf, 0.30
		case k < 0.90:
			return surfYoungStand, 0.20
		default:
			return surfClearcut, 0.15
		}
	}
	// Fields: rectangular parcels of varied size with a crop each, with
	// furrows.
	fs := 1.0 / 16
	col := math.Floor(u / fs)
	rowOff := unit(hash2(int64(col), 0, seed+41)) * fs
	row := math.Floor((v + rowOff) / (fs * 0.7))
	h := hash2(int64(col), int64(row), seed+43)
	// Narrow grassy margins between parcels.
	mu := math.Mod(u, fs) / fs
	mv := math.Mod(v+rowOff, fs*0.7) / (fs * 0.7)
	if mu < 0.03 || mv < 0.04 {
		return fieldCrops[3], 0.08
	}
	if unit(h<<13|h>>51) < 0.06 {
		return surfBare, 0.10
	}
	crop := fieldCrops[h%uint64(len(fieldCrops))]
	furrow := 0.04 * math.Sin(v*l.scale*0.9)
	return surface{crop.red * (1 - furrow), crop.nir * (1 + furrow)}, 0.06
}

// fakeMix is how FakeBands derives the roles other than red and nir from
// them on a landscape: typical reflectance relations (green and blue
// follow red, the red edge moves from red to NIR, the short-wave infrared
// follows NIR and water), so that every catalogue index draws a
// plausible map.
var fakeMix = map[string][2]float32{
	// role: {share of red, share of NIR}
	"blue":     {0.55, 0.02},
	"green":    {0.60, 0.12},
	"rededge1": {0.55, 0.25},
	"rededge2": {0.25, 0.65},
	"rededge3": {0.10, 0.88},
	"nir2":     {0.00, 0.97},
	"swir1":    {0.45, 0.45},
	"swir2":    {0.55, 0.22},
}

// noiseRange is each role's uniform range in the noise scene.
var noiseRange = map[string][2]float32{
	"blue": {0.01, 0.08}, "green": {0.03, 0.15}, "rededge1": {0.05, 0.30}, "rededge2": {0.15, 0.50},
	"rededge3": {0.20, 0.60}, "nir2": {0.20, 0.60}, "swir1": {0.10, 0.40}, "swir2": {0.05, 0.30},
}

// FakeBands generates a seeded scene with a float32 band for each role:
// red and nir exactly as Fake makes them; for "noise" every other role is
// uniform over its typical range (noiseRange: blue and green darker than
// red, so that EVI's denominator stays away from zero); for "landscape" it
// is mixed from red and NIR (fakeMix) with a little seeded noise. The same arguments give the same
// bytes.
func FakeBands(kind string, w, h int, seed uint64, roles []string) ([]BandInput, *GeoRef, error) {
	red, nir, err := Fake(kind, w, h, seed)
	if err != nil {
		return nil, nil, err
	}
	var out []BandInput
	for ri, role := range roles {
		var data []float32
		switch role {
		case "red":
			data = red.Data
		case "nir":
			data = nir.Data
		default:
			mix, ok := fakeMix[role]
			if !ok {
				return nil, nil, fmt.Errorf("fake scene: no band for role %q", role)
			}
			data = NewOutput(w * h)
			s := seed*31 + uint64(ri) + 1
			par.For(h, func(y int) {
				for x := range w {
					i := y*w + x
					u := float32(unit(hash2(int64(x), int64(y), s)))
					if kind == SceneNoise {
						r := noiseRange[role]
						data[i] = r[0] + (r[1]-r[0])*u
					} else {
						data[i] = mix[0]*red.Data[i] + mix[1]*nir.Data[i] + 0.01*(u-0.5)
					}
				}
			})
		}
		src := fmt.Sprintf("fake %s %dx%d seed %d %s", kind, w, h, seed, role)
		out = append(out, BandInput{Role: role, Plane: PlaneOf(w, h, data), Radiometry: Identity(), Source: src})
	}
	return out, red.Geo, nil
}
