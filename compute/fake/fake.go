// Package fake generates Canopy's fake scenes, seeded and reproducible:
// "noise", the textbook chapter's own fake image (red uniform in
// [0.05, 0.40), NIR uniform in [0.20, 0.60), float32), and "landscape",
// land a forester knows (stands, fields, bare soil, water, roads), made row
// by row so that a scene of any size is generated block by block (Scene)
// and the same kind, size and seed give the same bytes on every machine.
// compute/source opens them as one more kind of source (Spec.Fake).
package fake

import (
	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/par"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// The fake scene kinds.
const (
	Noise     = "noise"
	Landscape = "landscape"
)

// Kinds lists the fake scene kinds.
func Kinds() []string { return []string{Noise, Landscape} }

// MaxPixels bounds a fake scene (a Sentinel-2 tile is 10980², 1.2e8
// pixels) so that a typo cannot ask for terabytes.
const MaxPixels = 1 << 30

// RedNIR generates a seeded, reproducible pair of float32 bands. "noise" is
// the textbook benchmark's fake image: red uniform in [0.05, 0.40), NIR uniform in
// [0.20, 0.60). "landscape" is land a forester knows: forest stands, fields,
// bare soil, water and roads with spatial structure, scaled to the image.
// The same kind, size and seed give identical bytes on every machine.
func RedNIR(kind string, w, h int, seed uint64) (red, nir *compute.Band, err error) {
	s, err := NewScene(kind, w, h, seed)
	if err != nil {
		return nil, nil, err
	}
	red, nir = compute.NewBand(w, h), compute.NewBand(w, h)
	red.Source, nir.Source = s.Source()+" red", s.Source()+" nir"
	red.Geo, nir.Geo = GeoRef(), GeoRef()
	s.Rows(0, h, red.Data, nir.Data)
	return red, nir, nil
}

// Scene generates a fake scene's red and NIR rows on demand, so that a
// scene of any size is made block by block (canopy fake writes its
// GeoTIFFs so). Rows depend on nothing but the kind, size, seed and their
// row numbers: any split into blocks gives the bytes RedNIR gives.
type Scene struct {
	kind, source string
	w, h         int
	seed         uint64
	land         *landscape
}

// NewScene prepares a scene (see RedNIR) of w×h pixels.
func NewScene(kind string, w, h int, seed uint64) (*Scene, error) {
	if w <= 0 || h <= 0 || w > MaxPixels || h > MaxPixels || w*h > MaxPixels {
		return nil, fmt.Errorf("fake scene size %dx%d: sides must be positive and the scene at most %d pixels", w, h, MaxPixels)
	}
	s := &Scene{kind: kind, w: w, h: h, seed: seed, source: fmt.Sprintf("fake %s %dx%d seed %d", kind, w, h, seed)}
	switch kind {
	case Noise:
	case Landscape:
		s.land = newLandscape(w, h, seed)
	default:
		return nil, fmt.Errorf("unknown scene %q (known: noise, landscape)", kind)
	}
	return s, nil
}

// Size is the scene's size.
func (s *Scene) Size() (w, h int) { return s.w, s.h }

// Source names the scene ("fake landscape 10980x10980 seed 1").
func (s *Scene) Source() string { return s.source }

// Rows fills red and nir ((y1-y0)*width samples each) with rows [y0, y1),
// on all cores. Calls for disjoint rows may run at the same time.
func (s *Scene) Rows(y0, y1 int, red, nir []float32) {
	w := s.w
	if s.land == nil {
		par.For(y1-y0, func(r int) {
			noiseRow(s.seed, y0+r, red[r*w:(r+1)*w], nir[r*w:(r+1)*w])
		})
		return
	}
	s.land.rows(y0, y1, red, nir)
}

// GeoRef places fake scenes where a Sentinel-2 tile could be: WGS 84 /
// UTM zone 32N (EPSG:32632), 10 m pixels, top-left corner at (600000 E,
// 5300000 N). GIS tools then show them on a map and areas come out in
// hectares.
func GeoRef() *compute.GeoRef {
	return &compute.GeoRef{
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
//
// Its smooth fields (the domain warp, the elevation, the river's course
// and width, the land use) vary over hundreds of pixels in a large scene:
// they are evaluated on a grid of points step pixels apart (step 1, every
// pixel, up to scenes of about 3000 pixels; 8 at 10980; the grid keeps at
// least 32 points per cycle of the finest octave) and interpolated
// bilinearly in between, which makes a large scene about ten times faster
// to generate. Classes, edges, roads and texture are still decided pixel
// by pixel. The grid is the image's, not a block's: rows come out the same
// whatever the blocks.
type landscape struct {
	w, h  int
	scale float64
	seed  uint64
	roads []road
	step  int
	// along[k][x] is horizontal road k's centre line at column x.
	along [][]float64
	// cols are the field parcels' column terms.
	cols []parcelCol
}

// parcel is the width of a field parcel in unit coordinates.
const parcel = 1.0 / 16

// parcelCol is what a column's pixels share: its unit coordinate, and in
// the field parcels its parcel column, the column's row offset and where
// the column is across it.
type parcelCol struct{ u, col, rowOff, mu float64 }

// cellMemo remembers the last forest cell's and field parcel's hash along
// a row (neighbours are mostly in the same one).
type cellMemo struct {
	forest, field  bool
	fx, fy, pc, pr float64
	fh, ph         uint64
}

// fields are the smooth fields at one point.
type fields struct{ wu, wv, elev, rc, rw, lu float64 }

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
	// The finest octave is the elevation's fifth: 2.5 * 2.03^4 cycles per
	// unit.
	l.step = max(1, int(l.scale/(2.5*2.03*2.03*2.03*2.03)/32))
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
	l.cols = make([]parcelCol, w)
	for x := range l.cols {
		u := (float64(x) + 0.5) / l.scale
		pu := u / parcel
		col := math.Floor(pu)
		l.cols[x] = parcelCol{u: u, col: col, rowOff: unit(hash2(int64(col), 0, seed+41)) * parcel, mu: pu - col}
	}
	for _, r := range l.roads {
		if !r.horizontal {
			l.along = append(l.along, nil)
			continue
		}
		c := make([]float64, w)
		for x := range c {
			u := (float64(x) + 0.5) / l.scale
			c[x] = r.at + r.amp*math.Sin(2*math.Pi*r.freq*u+r.ph)
		}
		l.along = append(l.along, c)
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

// fieldsAt evaluates the smooth fields at unit coordinate (u, v).
func (l *landscape) fieldsAt(u, v float64) fields {
	seed := l.seed
	// Domain warp gives natural, non-grid outlines.
	wu := u + 0.04*(fbm(u*3, v*3, 3, seed+11)-0.5)
	wv := v + 0.04*(fbm(u*3+5.2, v*3+1.3, 3, seed+13)-0.5)
	return fields{
		wu: wu, wv: wv,
		elev: fbm(wu*2.5, wv*2.5, 5, seed+1),
		// A river meanders across the scene.
		rc: 0.55 + 0.18*math.Sin(2*math.Pi*(wu*1.3)+float64(seed%7)) + 0.1*(fbm(wu*2, 0.5, 3, seed+3)-0.5),
		rw: 0.006 + 0.004*fbm(wu*4, 1.5, 2, seed+4),
		lu: fbm(u*1.7+3.1, v*1.7+7.7, 4, seed+21),
	}
}

// gridRow evaluates the fields at the grid points of image row y (a
// multiple of step): columns 0, step, 2*step, … up to the first at or past
// the last column.
func (l *landscape) gridRow(y int, dst []fields) {
	v := (float64(y) + 0.5) / l.scale
	for i := range dst {
		dst[i] = l.fieldsAt((float64(i*l.step)+0.5)/l.scale, v)
	}
}

// rows fills rows [y0, y1) of both bands on all cores, a band of rows at
// a time: the grid rows the band needs first, then every pixel.
func (l *landscape) rows(y0, y1 int, red, nir []float32) {
	st := l.step
	cols := (l.w-1)/st + 2
	chunk := max(st, 64/st*st)
	for c0 := y0; c0 < y1; {
		c1 := min(y1, (c0/chunk+1)*chunk)
		g0 := c0 / st
		g1 := (c1-1)/st + 1 // the grid row below the band's last row
		grid := make([][]fields, g1-g0+1)
		par.For(len(grid), func(k int) {
			grid[k] = make([]fields, cols)
			l.gridRow((g0+k)*st, grid[k])
		})
		par.For(c1-c0, func(r int) {
			y := c0 + r
			k := y/st - g0
			ty := float64(y%st) / float64(st)
			o := (y - y0) * l.w
			l.row(y, grid[k], grid[k+1], ty, red[o:o+l.w], nir[o:o+l.w])
		})
		c0 = c1
	}
}

// colPool holds the rows' interpolated grid columns.
var colPool = sync.Pool{New: func() any { return new([]fields) }}

// lerp interpolates the fields between two grid points.
func lerp(a, b fields, t float64) fields {
	if t == 0 {
		return a
	}
	return fields{a.wu + t*(b.wu-a.wu), a.wv + t*(b.wv-a.wv), a.elev + t*(b.elev-a.elev),
		a.rc + t*(b.rc-a.rc), a.rw + t*(b.rw-a.rw), a.lu + t*(b.lu-a.lu)}
}

// row fills image row y, between grid rows top and bottom (ty of the way
// down).
func (l *landscape) row(y int, top, bottom []fields, ty float64, red, nir []float32) {
	v := (float64(y) + 0.5) / l.scale
	px := 1 / l.scale // one pixel in unit coordinates
	st := l.step
	// Vertical roads' centre lines depend on the row only.
	var across [4]float64
	for k, r := range l.roads {
		if !r.horizontal {
			across[k] = r.at + r.amp*math.Sin(2*math.Pi*r.freq*v+r.ph)
		}
	}
	furrow := 0.04 * math.Sin(v*l.scale*0.9)
	// The grid columns interpolated down to this row first.
	cp := colPool.Get().(*[]fields)
	defer colPool.Put(cp)
	if cap(*cp) < len(top) {
		*cp = make([]fields, len(top))
	}
	col := (*cp)[:len(top)]
	for i := range col {
		col[i] = lerp(top[i], bottom[i], ty)
	}
	var memo cellMemo
	for x := range red {
		u := l.cols[x].u
		i, tx := x/st, float64(x%st)/float64(st)
		f := lerp(col[i], col[i+1], tx)
		s, tex := l.surfaceAt(x, u, v, px, f, &across, furrow, &memo)
		// Pixel texture: crowns, furrows, sensor noise.
		g := hash2(int64(x), int64(y), l.seed^0x7e57)
		n1 := unit(g) - 0.5
		n2 := unit(g>>7|g<<57) - 0.5
		r := s.red * (1 + tex*n1 + 0.02*n2)
		n := s.nir * (1 + tex*n2 + 0.02*n1)
		if r < 0.001 {
			r = 0.001
		}
		if n < 0.001 {
			n = 0.001
		}
		red[x], nir[x] = float32(r), float32(n)
	}
}

// surfaceAt classifies the pixel at column x, unit coordinate (u, v),
// whose smooth fields are f, and returns its surface and texture
// strength.
func (l *landscape) surfaceAt(x int, u, v, px float64, f fields, across *[4]float64, furrow float64, m *cellMemo) (surface, float64) {
	seed := l.seed
	wu, wv, elev := f.wu, f.wv, f.elev
	if d := math.Abs(wv - f.rc); d < f.rw {
		if d < f.rw*0.5 {
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
	for k, r := range l.roads {
		a, c := u, across[k]
		if r.horizontal {
			a, c = v, l.along[k][x]
		}
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
	landuse := f.lu + 0.6*(elev-0.5)
	if landuse > 0.52 {
		// Forest stands: warped cells, each with a species and an age.
		cs := 1.0 / 9
		cx, cy := math.Floor(wu/cs), math.Floor(wv/cs)
		if !m.forest || cx != m.fx || cy != m.fy {
			m.forest, m.fx, m.fy, m.fh = true, cx, cy, hash2(int64(cx), int64(cy), seed+31)
		}
		switch k := unit(m.fh); {
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
	// furrows; narrow grassy margins between parcels.
	c := &l.cols[x]
	pv := (v + c.rowOff) / (parcel * 0.7)
	row := math.Floor(pv)
	if !m.field || c.col != m.pc || row != m.pr {
		m.field, m.pc, m.pr, m.ph = true, c.col, row, hash2(int64(c.col), int64(row), seed+43)
	}
	h := m.ph
	if c.mu < 0.03 || pv-row < 0.04 {
		return fieldCrops[3], 0.08
	}
	if unit(h<<13|h>>51) < 0.06 {
		return surfBare, 0.10
	}
	crop := fieldCrops[h%uint64(len(fieldCrops))]
	return surface{crop.red * (1 - furrow), crop.nir * (1 + furrow)}, 0.06
}

// fakeMix is how Bands derives the roles other than red and nir from
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

// Bands generates a seeded scene with a float32 band for each role:
// red and nir exactly as RedNIR makes them; for "noise" every other role is
// uniform over its typical range (noiseRange: blue and green darker than
// red, so that EVI's denominator stays away from zero); for "landscape" it
// is mixed from red and NIR (fakeMix) with a little seeded noise. The same arguments give the same
// bytes.
func Bands(kind string, w, h int, seed uint64, roles []string) ([]compute.BandInput, *compute.GeoRef, error) {
	red, nir, err := RedNIR(kind, w, h, seed)
	if err != nil {
		return nil, nil, err
	}
	var out []compute.BandInput
	for _, role := range roles {
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
			data = compute.NewOutput(w * h)
			// The role's own seed, whatever other roles are asked for.
			s := seed*31 + uint64(index.RoleIndex(role)) + 1
			par.For(h, func(y int) {
				for x := range w {
					i := y*w + x
					u := float32(unit(hash2(int64(x), int64(y), s)))
					if kind == Noise {
						r := noiseRange[role]
						data[i] = r[0] + (r[1]-r[0])*u
					} else {
						data[i] = mix[0]*red.Data[i] + mix[1]*nir.Data[i] + 0.01*(u-0.5)
					}
				}
			})
		}
		src := fmt.Sprintf("fake %s %dx%d seed %d %s", kind, w, h, seed, role)
		out = append(out, compute.BandInput{Role: role, Plane: compute.PlaneOf(w, h, data), Radiometry: compute.Identity(), Source: src})
	}
	return out, red.Geo, nil
}
