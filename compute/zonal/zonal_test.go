package zonal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"canopy/compute/geotiff"
	"canopy/compute/vector"
)

// refQuantile is the weighted quantile written straight from its
// definition (docs/ZONAL.md) on (value, weight) pairs sorted with the
// standard library.
func refQuantile(vals, ws []float64, q float64) float64 {
	type p struct{ v, w float64 }
	ps := make([]p, len(vals))
	for i := range vals {
		ps[i] = p{vals[i], ws[i]}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].v < ps[j].v })
	n := len(ps)
	S := make([]float64, n)
	var cum, total float64
	for i := range ps {
		S[i] = float64(i)*ps[i].w + float64(n-1)*cum
		cum += ps[i].w
	}
	total = cum
	target := q * float64(n-1) * total
	for i := range ps {
		if S[i] > target {
			if i == 0 {
				return ps[0].v
			}
			return ps[i-1].v + (target-S[i-1])*(ps[i].v-ps[i-1].v)/(S[i]-S[i-1])
		}
	}
	return ps[n-1].v
}

// numpyLinear is NumPy's default percentile (type 7) on equal weights.
func numpyLinear(vals []float64, q float64) float64 {
	s := slices.Clone(vals)
	slices.Sort(s)
	h := q * float64(len(s)-1)
	lo := math.Floor(h)
	if int(lo)+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[int(lo)] + (h-lo)*(s[int(lo)+1]-s[int(lo)])
}

func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 5, 63, 64, 65, 1000, 20000} {
		var keys, pk []uint32
		var pw []float64
		for i := 0; i < n; i++ {
			v := float32(rng.NormFloat64() * 3)
			switch i % 97 {
			case 1:
				v = float32(math.Inf(1))
			case 2:
				v = float32(math.Inf(-1))
			case 3:
				v = float32(math.Copysign(0, -1))
			case 4:
				v = 0.25 // ties
			}
			keys = append(keys, floatKey(v))
			pk, pw = append(pk, floatKey(v)), append(pw, float64(i)) // the weight records the order
		}
		want := make([]float32, n)
		for i, k := range keys {
			want[i] = keyFloat(k)
		}
		slices.Sort(want)
		var sc sortScratch
		sortKeys(keys, &sc)
		sortPairs(pk, pw, &sc)
		for i := 0; i < n; i++ {
			if got := keyFloat(keys[i]); got != want[i] && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want[i]))) {
				t.Fatalf("n=%d: keys[%d] = %v, want %v", n, i, got, want[i])
			}
			if keyFloat(pk[i]) != want[i] {
				t.Fatalf("n=%d: pairs[%d] = %v, want %v", n, i, keyFloat(pk[i]), want[i])
			}
			if i > 0 && pk[i] == pk[i-1] && pw[i-1] > pw[i] {
				t.Fatalf("n=%d: equal keys out of their order at %d", n, i)
			}
		}
	}
}

func TestQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(300)
		vals := make([]float64, n)
		ws := make([]float64, n)
		var s, e samples
		for i := range vals {
			v := float32(rng.Float64()*2 - 1)
			if trial%2 == 0 && rng.IntN(5) == 0 {
				v = float32(rng.IntN(3)) / 4 // ties
			}
			vals[i] = float64(v)
			ws[i] = rng.Float64()
			if rng.IntN(3) == 0 {
				ws[i] = 1
			}
			s.add(v, ws[i])
			e.add(v, 1)
		}
		var sc sortScratch
		s.sort(&sc)
		e.sort(&sc)
		got, gotEq := s.summarise(nil), e.summarise(nil)
		for j, q := range []float64{0.1, 0.5, 0.9} {
			g := [3]float64{got.p10, got.median, got.p90}[j]
			ge := [3]float64{gotEq.p10, gotEq.median, gotEq.p90}[j]
			// With ties the weighted order among equal values is a choice
			// (docs/ZONAL.md); compare with the definition without them.
			if want := refQuantile(vals, ws, q); math.Abs(g-want) > 1e-12 && !hasTies(vals) {
				t.Fatalf("trial %d: q=%v: %v, definition %v", trial, q, g, want)
			}
			if want := numpyLinear(vals, q); math.Abs(ge-want) > 1e-12 {
				t.Fatalf("trial %d: equal weights q=%v: %v, NumPy linear %v", trial, q, ge, want)
			}
		}
		if got.min != slices.Min(vals) || got.max != slices.Max(vals) {
			t.Fatalf("trial %d: min %v max %v", trial, got.min, got.max)
		}
	}
}

func hasTies(v []float64) bool {
	s := slices.Clone(v)
	slices.Sort(s)
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			return true
		}
	}
	return false
}

// noSlice hides Plane's in-place rows so that Compute reads copies.
type noSlice struct{ p *Plane }

func (n noSlice) Width() int                               { return n.p.W }
func (n noSlice) Height() int                              { return n.p.H }
func (n noSlice) ReadRows(y0, y1 int, dst []float32) error { return n.p.ReadRows(y0, y1, dst) }

type failing struct{ noSlice }

func (failing) ReadRows(y0, y1 int, dst []float32) error { return fmt.Errorf("disk on fire") }

func randomPlane(rng *rand.Rand, w, h int) *Plane {
	d := make([]float32, w*h)
	for i := range d {
		d[i] = float32(rng.Float64()*1.2 - 0.2)
		if rng.IntN(30) == 0 {
			d[i] = float32(math.NaN())
		}
	}
	p, _ := NewPlane(d, w, h)
	return p
}

// TestComputeAgainstClipping checks every statistic of random stands
// against a reference built from cell clipping and the definitions, for
// several block heights, worker counts and both read paths.
func TestComputeAgainstClipping(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const W, H = 50, 40
	p := randomPlane(rng, W, H)
	var stands []Stand
	for k := 0; k < 12; k++ {
		cx, cy := 600000+rng.Float64()*520, 5800000-rng.Float64()*420
		g := orb.Polygon{star(rng, cx, cy, 20+rng.Float64()*120, 3+rng.IntN(40))}
		if k == 3 {
			g = append(g, reversed(regular(cx, cy, 10, 6, 0))) // a hole
		}
		stands = append(stands, Stand{ID: fmt.Sprint("s", k), Geom: g})
	}
	classes := DefaultClasses()
	type ref struct {
		pixels, valid, mean, std, min, max float64
		q                                  [3]float64
		class                              []float64
	}
	refs := make([]ref, len(stands))
	for i, st := range stands {
		var vals, ws []float64
		r := ref{class: make([]float64, 5), min: math.Inf(1), max: math.Inf(-1)}
		for y := 0; y < H; y++ {
			for x := 0; x < W; x++ {
				f := refCoverage(st.Geom, testGT, x, y)
				if f < 1e-12 {
					continue
				}
				r.pixels += f
				v := p.Data[y*W+x]
				if math.IsNaN(float64(v)) {
					continue
				}
				vals, ws = append(vals, float64(v)), append(ws, f)
				r.valid += f
				r.mean += f * float64(v)
				r.min, r.max = math.Min(r.min, float64(v)), math.Max(r.max, float64(v))
				c := sort.Search(4, func(j int) bool { return v < float32(classes.Breaks[j]) })
				r.class[c] += f
			}
		}
		r.mean /= r.valid
		for j := range vals {
			r.std += ws[j] * (vals[j] - r.mean) * (vals[j] - r.mean)
		}
		r.std = math.Sqrt(r.std / r.valid)
		for j, q := range []float64{0.5, 0.1, 0.9} {
			r.q[j] = refQuantile(vals, ws, q)
		}
		refs[i] = r
	}
	for _, opt := range []Options{
		{Classes: classes},
		{Classes: classes, BlockRows: 1, Workers: 1},
		{Classes: classes, BlockRows: 7, Workers: 3},
	} {
		for _, src := range []Blocks{p, noSlice{p}} {
			res, _, err := Compute(src, testGT, stands, opt)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				want := refs[i]
				near := func(name string, got, exp, tol float64) {
					if math.Abs(got-exp) > tol*math.Max(1, math.Abs(exp)) {
						t.Errorf("block %d workers %d %T: stand %s %s = %.12g, reference %.12g", opt.BlockRows, opt.Workers, src, r.ID, name, got, exp)
					}
				}
				near("pixels", r.Pixels, want.pixels, 1e-9)
				near("valid_pixels", r.ValidPixels, want.valid, 1e-9)
				near("area_ha", r.AreaHa, want.pixels*0.01, 1e-9)
				near("valid_ha", r.ValidHa, want.valid*0.01, 1e-9)
				near("mean", r.Mean, want.mean, 1e-9)
				near("std", r.Std, want.std, 1e-9)
				near("min", r.Min, want.min, 0)
				near("max", r.Max, want.max, 0)
				near("median", r.Median, want.q[0], 1e-7)
				near("p10", r.P10, want.q[1], 1e-7)
				near("p90", r.P90, want.q[2], 1e-7)
				for c := range want.class {
					near("ha_"+classes.Names[c], r.ClassHa[c], want.class[c]*0.01, 1e-9)
				}
			}
		}
	}
}

func TestComputeEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	p := randomPlane(rng, 30, 30)
	for i := 0; i < 10; i++ { // a nodata block
		for j := 0; j < 10; j++ {
			p.Data[(20+i)*30+20+j] = float32(math.NaN())
		}
	}
	rect := func(c0, r0, c1, r1 float64) orb.Polygon {
		x0, x1 := 600000+10*c0, 600000+10*c1
		y0, y1 := 5800000-10*r0, 5800000-10*r1
		return orb.Polygon{{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}, {x0, y0}}}
	}
	stands := []Stand{
		{ID: "inside", Geom: rect(2, 2, 6, 5)},
		{ID: "nodata", Geom: rect(20, 20, 30, 30)},
		{ID: "half-nodata", Geom: rect(15, 20, 25, 30)},
		{ID: "partly-out", Geom: rect(25, 0, 35, 4)},
		{ID: "outside", Geom: rect(40, 40, 45, 45)},
		{ID: "bowtie", Geom: orb.Polygon{{{600020, 5799980}, {600080, 5799920}, {600080, 5799980}, {600020, 5799920}, {600020, 5799980}}}},
		{ID: "empty", Geom: orb.MultiPolygon{}},
	}
	res, warn, err := Compute(p, testGT, stands, Options{Classes: DefaultClasses()})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Result{}
	for _, r := range res {
		byID[r.ID] = r
	}
	if r := byID["inside"]; r.Pixels != 12 || math.IsNaN(r.Mean) {
		t.Errorf("inside: %+v", r)
	}
	if r := byID["nodata"]; r.Pixels != 100 || r.ValidPixels != 0 || r.ValidHa != 0 || math.Abs(r.AreaHa-1) > 1e-12 || !math.IsNaN(r.Mean) || !math.IsNaN(r.P90) {
		t.Errorf("all nodata: %+v", r)
	}
	// Half the stand is nodata: its valid part is the other half exactly.
	var valid float64
	var sum float64
	for y := 20; y < 30; y++ {
		for x := 15; x < 25; x++ {
			if v := p.Data[y*30+x]; v == v {
				valid++
				sum += float64(v)
			}
		}
	}
	if r := byID["half-nodata"]; r.Pixels != 100 || r.ValidPixels != valid || math.Abs(r.Mean-sum/valid) > 1e-12 {
		t.Errorf("half nodata: %+v, want %v valid, mean %v", r, valid, sum/valid)
	}
	if r := byID["partly-out"]; r.Pixels != 20 {
		t.Errorf("partly outside: %v pixels, want 20 (5 columns × 4 rows inside)", r.Pixels)
	}
	if r := byID["outside"]; r.Pixels != 0 || !math.IsNaN(r.Mean) || len(r.ClassHa) != 5 {
		t.Errorf("outside: %+v", r)
	}
	// The bowtie spans 6×6 pixels: two triangles of 6 × 3 / 2 = 9 pixels.
	if r := byID["bowtie"]; math.Abs(r.Pixels-18) > 1e-9 {
		t.Errorf("bowtie: %v pixels, want 18 (both lobes)", r.Pixels)
	}
	all := strings.Join(warn, "\n")
	for _, want := range []string{
		"stand nodata: no valid pixel (all nodata): no statistics",
		"stand partly-out: 50.0% of its area lies outside the raster",
		"stand outside: outside the raster: no statistics",
		"stand bowtie: invalid geometry: edges cross each other near (600050, 5799950) (self-intersection)",
		"stand empty: empty geometry: no statistics",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "stand inside") || strings.Contains(all, "stand half-nodata") {
		t.Errorf("warnings for good stands:\n%s", all)
	}

	// Errors.
	if _, _, err := Compute(p, testGT, nil, Options{}); err == nil || !strings.Contains(err.Error(), "stands layer is empty") {
		t.Errorf("no stands: %v", err)
	}
	if _, _, err := Compute(p, [6]float64{0, 0, 0, 0, 0, 0}, stands, Options{}); err == nil || !strings.Contains(err.Error(), "singular") {
		t.Errorf("singular: %v", err)
	}
	if _, _, err := Compute(p, testGT, stands, Options{Classes: Classes{Breaks: []float64{0.5, 0.1}, Names: []string{"a", "b", "c"}}}); err == nil || !strings.Contains(err.Error(), "must increase") {
		t.Errorf("bad classes: %v", err)
	}
	if _, _, err := Compute(failing{noSlice{p}}, testGT, stands, Options{}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("read error: %v", err)
	}
}

// TestWriteCSV: the columns and their order (DESIGN.md's zonal --csv:
// id, pixels, valid_pixels, area_ha, valid_ha, the statistics, hectares
// per class, then the stand's own attributes, a name the statistics
// already have made unique), NaN and NULL as empty fields.
func TestWriteCSV(t *testing.T) {
	nan := math.NaN()
	res := []Result{
		{ID: "A,1", Pixels: 12.5, ValidPixels: 10.25, AreaHa: 0.125, ValidHa: 0.1025, Mean: 0.5, Median: 0.25, Std: 0.125, Min: -0.5, Max: 1, P10: 0, P90: 0.75, ClassHa: []float64{0, 0.1025}},
		{ID: "out", Mean: nan, Median: nan, Std: nan, Min: nan, Max: nan, P10: nan, P90: nan, ClassHa: []float64{0, 0}},
	}
	cl := Classes{Breaks: []float64{0}, Names: []string{"No vegetation", "Green  (>0)"}}
	var b bytes.Buffer
	if err := WriteCSV(&b, res, cl, nil); err != nil {
		t.Fatal(err)
	}
	want := "id,pixels,valid_pixels,area_ha,valid_ha,mean,median,std,min,max,p10,p90,ha_no_vegetation,ha_green_0\n" +
		"\"A,1\",12.5000,10.2500,0.1250,0.1025,0.500000,0.250000,0.125000,-0.500000,1.000000,0.000000,0.750000,0.0000,0.1025\n" +
		"out,0.0000,0.0000,0.0000,0.0000,,,,,,,,0.0000,0.0000\n"
	if b.String() != want {
		t.Fatalf("CSV:\n%s\nwant:\n%s", b.String(), want)
	}
	if got := strings.Join(DefaultClasses().Columns(), ","); got != "ha_no_vegetation,ha_bare,ha_sparse,ha_moderate,ha_dense" {
		t.Fatalf("default class columns %s", got)
	}
	// The stands' own attributes, as the GeoPackage keeps them.
	layer := &vector.Layer{
		Fields: []vector.Field{{Name: "species", Type: "TEXT"}, {Name: "age", Type: "INTEGER"}, {Name: "Mean", Type: "REAL"}},
		Features: []vector.Feature{
			{FID: 1, Attrs: map[string]any{"species": "Picea abies", "age": int64(85), "Mean": 3.5}},
			{FID: 2, Attrs: map[string]any{"species": "Fagus, sylvatica", "age": nil}},
		},
	}
	b.Reset()
	if err := WriteCSV(&b, res, cl, layer); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.HasSuffix(lines[0], ",ha_green_0,species,age,Mean_1") {
		t.Errorf("header %s", lines[0])
	}
	if !strings.HasSuffix(lines[1], ",0.1025,Picea abies,85,3.5") || !strings.HasSuffix(lines[2], ",0.0000,\"Fagus, sylvatica\",,") {
		t.Errorf("rows:\n%s", b.String())
	}
	if err := WriteCSV(&b, res[:1], cl, layer); err == nil {
		t.Error("a layer of 2 stands written with 1 result")
	}
}

// TestAgainstGDAL runs scripts/fixtures-stands (GDAL writes the index and
// the stands, gdal_rasterize and NumPy compute the statistics) and checks
// Compute on the same files read by Canopy's own readers.
func TestAgainstGDAL(t *testing.T) {
	py := gdalPython(t)
	for _, tool := range []string{"ogr2ogr", "gdal_rasterize"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
				t.Fatalf("%s not found but CANOPY_EXPECT_GDAL=1", tool)
			}
			t.Skipf("%s not found: the GDAL reference needs gdal-bin", tool)
		}
	}
	dir := t.TempDir()
	cmd := exec.Command(py, filepath.Join("..", "..", "scripts", "fixtures-stands"), dir, "7")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fixtures-stands: %v\n%s", err, stderr.String())
	}
	var ref struct {
		Index, Stands string
		Stats         []struct {
			ID                                    string
			P                                     float64 `json:"pixels"`
			V                                     float64 `json:"valid_pixels"`
			AreaHa                                float64 `json:"area_ha"`
			ValidHa                               float64 `json:"valid_ha"`
			Mean, Median, Std, Min, Max, P10, P90 *float64
			ClassHa                               []float64 `json:"class_ha"`
		}
	}
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatalf("fixtures-stands output: %v\n%s", err, out)
	}
	f, err := geotiff.Open(ref.Index)
	if err != nil {
		t.Fatal(err)
	}
	band, err := f.ReadBand(1)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	gt, ok := band.Geo.Affine()
	if !ok {
		t.Fatal("index has no geotransform")
	}
	rcrs, err := vector.RasterCRS(band.Geo)
	if err != nil {
		t.Fatal(err)
	}
	layer, err := vector.Read(ref.Stands, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := vector.Reproject(layer, rcrs); err != nil {
		t.Fatal(err)
	}
	stands, err := StandsFromLayer(layer, "name")
	if err != nil {
		t.Fatal(err)
	}
	plane, _ := NewPlane(band.Data, band.Width, band.Height)
	res, warn, err := Compute(plane, gt, stands, Options{Classes: DefaultClasses(), BlockRows: 64})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(ref.Stats) {
		t.Fatalf("%d results, %d references", len(res), len(ref.Stats))
	}
	for i, want := range ref.Stats {
		r := res[i]
		if r.ID != want.ID {
			t.Fatalf("stand %d: id %q, want %q", i, r.ID, want.ID)
		}
		near := func(name string, got float64, exp *float64) {
			if exp == nil {
				if !math.IsNaN(got) {
					t.Errorf("stand %s: %s = %v, NumPy has none", r.ID, name, got)
				}
				return
			}
			if math.Abs(got-*exp) > 1e-9*math.Max(1, math.Abs(*exp)) {
				t.Errorf("stand %s: %s = %.15g, NumPy %.15g", r.ID, name, got, *exp)
			}
		}
		near("pixels", r.Pixels, &want.P)
		near("valid_pixels", r.ValidPixels, &want.V)
		near("area_ha", r.AreaHa, &want.AreaHa)
		near("valid_ha", r.ValidHa, &want.ValidHa)
		near("mean", r.Mean, want.Mean)
		near("median", r.Median, want.Median)
		near("std", r.Std, want.Std)
		near("min", r.Min, want.Min)
		near("max", r.Max, want.Max)
		near("p10", r.P10, want.P10)
		near("p90", r.P90, want.P90)
		for c := range want.ClassHa {
			near("ha class "+fmt.Sprint(c), r.ClassHa[c], &want.ClassHa[c])
		}
	}
	all := strings.Join(warn, "\n")
	for _, w := range []string{"stand edge: 50.0% of its area lies outside the raster", "stand outside: outside the raster", "stand all-nodata: no valid pixel"} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}
	// The GeoPackage output opens in GDAL with the statistics.
	gp := filepath.Join(dir, "zonal.gpkg")
	if err := vector.WriteGPKG(gp, layer, GPKGColumns(DefaultClasses()), GPKGRows(res)); err != nil {
		t.Fatal(err)
	}
	info, err := exec.Command("ogrinfo", "-q", "-sql", "SELECT name, valid_pixels, ha_dense FROM stands WHERE name = 'B1'", gp).CombinedOutput()
	if err != nil {
		t.Fatalf("ogrinfo: %v\n%s", err, info)
	}
	if want := fmt.Sprintf("valid_pixels (Real) = %v", ref.Stats[2].V); !strings.Contains(string(info), want) {
		t.Errorf("ogrinfo on the output lacks %q:\n%s", want, info)
	}
}

// gdalPython returns a Python interpreter with GDAL's bindings and NumPy,
// or skips (fails under CANOPY_EXPECT_GDAL=1).
func gdalPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import osgeo.gdal, numpy").Run() == nil {
			return py
		}
	}
	if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
		t.Fatal("no python3 with GDAL's bindings and NumPy but CANOPY_EXPECT_GDAL=1: install python3-gdal python3-numpy")
	}
	t.Skip("no python3 with GDAL's bindings and NumPy (python3-gdal, python3-numpy)")
	return ""
}

// TestProgressAndCancel: Progress counts the rows up to the height in
// increasing steps; a context cancelled part-way stops Compute with its
// error and no results.
func TestProgressAndCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	p := randomPlane(rng, 40, 50)
	stands := []Stand{{ID: "a", Geom: orb.Polygon{{{600010, 5799990}, {600300, 5799990}, {600300, 5799600}, {600010, 5799600}, {600010, 5799990}}}}}
	var done []int
	if _, _, err := Compute(p, testGT, stands, Options{BlockRows: 7, Progress: func(d, n int) {
		if n != 50 {
			t.Errorf("progress total %d, want 50", n)
		}
		done = append(done, d)
	}}); err != nil {
		t.Fatal(err)
	}
	if len(done) != 8 || done[len(done)-1] != 50 || !sort.IntsAreSorted(done) {
		t.Errorf("progress %v, want 8 increasing steps to 50", done)
	}
	ctx, cancel := context.WithCancel(context.Background())
	blocks := 0
	res, _, err := Compute(noSlice{p}, testGT, stands, Options{BlockRows: 7, Context: ctx, Progress: func(d, n int) {
		if blocks++; blocks == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || res != nil || blocks != 2 {
		t.Errorf("cancelled after 2 blocks: %d blocks, %d results, error %v", blocks, len(res), err)
	}
}
