package source_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/geotiff"
	_ "canopy/compute/goback"
	"canopy/compute/index"
	"canopy/compute/pipeline"
	"canopy/compute/raster"
	"canopy/compute/request"
	"canopy/compute/source"
)

func TestParseBands(t *testing.T) {
	m, err := source.ParseBands("r.tif", "", []string{"NIR=n.tif:2", "swir1 = s.tif"})
	if err != nil {
		t.Fatal(err)
	}
	if m["red"] != "r.tif" || m["nir"] != "n.tif:2" || m["swir1"] != " s.tif" && m["swir1"] != "s.tif" {
		t.Errorf("parsed %v", m)
	}
	for _, c := range []struct {
		red   string
		bands []string
		want  string
	}{
		{"a.tif", []string{"red=b.tif"}, "--band: role red given twice (a.tif and b.tif)"},
		{"", []string{"purple=b.tif"}, `--band: unknown role "purple" (roles:`},
		{"", []string{"rde=b.tif"}, `--band: unknown role "rde": did you mean "red"? (roles:`},
		{"", []string{"red"}, `--band "red": want ROLE=FILE[:BAND]`},
		{"", []string{"red="}, "--band: no file for role red"},
	} {
		_, err := source.ParseBands(c.red, "", c.bands)
		var ue request.Error
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a usage error with %q", c.bands, err, c.want)
		}
	}
	a, err := source.ParseAssign("red=3, NIR=4")
	if err != nil || a["red"] != 3 || a["nir"] != 4 {
		t.Errorf("ParseAssign: %v %v", a, err)
	}
	if _, err := source.ParseAssign("red=0"); err == nil {
		t.Error("band 0 accepted")
	}
}

// bandFiles writes a w×h float32 red and NIR and a uint16 red.
func bandFiles(t *testing.T, w, h int) (red, nir, red16 string) {
	dir := t.TempDir()
	r, n, r16 := make([]float32, w*h), make([]float32, w*h), make([]uint16, w*h)
	for i := range r {
		r[i] = 0.05 + float32(i%17)/100
		n[i] = 0.3 + float32(i%13)/50
		r16[i] = uint16(i % 4000)
	}
	red, nir, red16 = filepath.Join(dir, "red.tif"), filepath.Join(dir, "nir.tif"), filepath.Join(dir, "red16.tif")
	geo := fake.GeoRef()
	if err := geotiff.WriteBands(red, w, h, [][]float32{r}, geo, geotiff.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := geotiff.WriteBands(nir, w, h, [][]float32{n}, geo, geotiff.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := geotiff.WriteBands(red16, w, h, [][]uint16{r16}, geo, geotiff.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return red, nir, red16
}

func ndvi(t *testing.T) source.Job {
	be, err := compute.New(compute.NameGo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	ix, _ := index.Lookup("ndvi")
	return source.Job{Backend: be, Names: []string{"ndvi"}, Exprs: []*index.Expr{ix.Expr}, Verify: true}
}

// Files: roles, radiometry, nodata, a missing role and a grid mismatch
// are decided at Open; Run gives what a whole-image job gives.
func TestOpenFilesAndRun(t *testing.T) {
	const w, h = 70, 45
	red, nir, red16 := bandFiles(t, w, h)
	ctx := context.Background()
	roles := source.Options{Roles: []string{"red", "nir"}, Need: "ndvi"}

	src, err := source.Open(ctx, source.Spec{Files: map[string]string{"red": red, "nir": nir}}, roles)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if g := src.Grid(); g.Width != w || g.Height != h || g.Geo == nil {
		t.Errorf("grid %+v", g)
	}
	if src.Radiometry() != source.Reflectance || src.Product() != nil || src.Masked() != 0 {
		t.Errorf("float files: radiometry %v, product %v, masked %d", src.Radiometry(), src.Product(), src.Masked())
	}
	job := ndvi(t)
	planes := source.NewPlanes(w, h, 1)
	res, err := source.Run(ctx, src, job, planes)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reports) != 1 || !res.Reports[0].OK() {
		t.Errorf("reports %+v", res.Reports)
	}
	// The whole image as one job: the same bits.
	var bands []compute.BandInput
	for _, b := range src.Input().Bands {
		in := b.BandInput
		in.Plane = compute.NewPlane(b.Plane.Type, w, h)
		if err := b.Reader.ReadRows(0, h, []compute.Plane{in.Plane}); err != nil {
			t.Fatal(err)
		}
		bands = append(bands, in)
	}
	j, err := compute.NewJob(bands, nil, job.Names, job.Exprs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compute.RunJob(job.Backend, j); err != nil {
		t.Fatal(err)
	}
	for i, v := range j.Out[0] {
		if math.Float32bits(v) != math.Float32bits(planes.Out[0][i]) {
			t.Fatalf("pixel %d: %v through Run, %v as one job", i, planes.Out[0][i], v)
		}
	}

	// Integer files with no radiometry: digital numbers; --nodata over them.
	dn, err := source.Open(ctx, source.Spec{Files: map[string]string{"red": red16, "nir": red16}, NoData: "7"}, roles)
	if err != nil {
		t.Fatal(err)
	}
	defer dn.Close()
	if dn.Radiometry() != source.DigitalNumbers {
		t.Error("uint16 files are not digital numbers")
	}
	for _, b := range dn.Input().Bands {
		if !b.HasNoData || b.NoData != 7 {
			t.Errorf("band %s: nodata %v %v, want 7", b.Role, b.HasNoData, b.NoData)
		}
	}

	_, err = source.Open(ctx, source.Spec{Files: map[string]string{"red": red}}, roles)
	var ue request.Error
	if !errors.As(err, &ue) || err.Error() != "index ndvi needs the nir band, which was not given (bands given: red); give it with --band nir=FILE[:BAND]" {
		t.Errorf("a missing role: %v", err)
	}

	other := filepath.Join(t.TempDir(), "small.tif")
	if err := geotiff.WriteBands(other, w-1, h, [][]float32{make([]float32, (w-1)*h)}, fake.GeoRef(), geotiff.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := source.Open(ctx, source.Spec{Files: map[string]string{"red": red, "nir": other}}, roles); err == nil || !strings.Contains(err.Error(), "must share a grid") {
		t.Errorf("bands of two sizes: %v", err)
	}

	// A run on a cancelled context stops with its error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := source.Run(cctx, src, job); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled run: %v", err)
	}
}

// A generated scene opens with every role it is asked for; an index
// that needs a role the run's source lacks is a usage error.
func TestOpenFakeAndMissingRole(t *testing.T) {
	ctx := context.Background()
	src, err := source.Open(ctx, source.Spec{Fake: fake.Noise, Width: 40, Height: 30, Seed: 2}, source.Options{Roles: []string{"red"}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if g := src.Grid(); g.Width != 40 || g.Height != 30 {
		t.Errorf("grid %+v", g)
	}
	_, err = source.Run(ctx, src, ndvi(t), pipeline.SinkFunc(func(*pipeline.Block) error { return nil }))
	var ue request.Error
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "needs the nir band") {
		t.Errorf("ndvi over red alone: %v", err)
	}
	if _, err := source.Open(ctx, source.Spec{}, source.Options{}); !errors.As(err, &ue) {
		t.Errorf("no input: %v", err)
	}
	if err := (source.Spec{Product: "p", Files: map[string]string{"red": "r"}}).Check(); !errors.As(err, &ue) {
		t.Errorf("files and a product: %v", err)
	}
}

// Whole reads band files as raster.LoadStored reads them; Large asks the
// face's rule of GeoTIFF bands and never of a generated scene; OpenViews
// opens the files for views of the same size.
func TestMemory(t *testing.T) {
	const w, h = 70, 45
	red, nir, red16 := bandFiles(t, w, h)
	ctx := context.Background()
	spec := source.Spec{Files: map[string]string{"red": red16, "nir": nir}}
	src, err := source.Open(ctx, spec, source.Options{Roles: []string{"red", "nir"}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bands, mask, err := source.Whole(src)
	if err != nil {
		t.Fatal(err)
	}
	if mask != nil || len(bands) != 2 {
		t.Fatalf("%d bands, mask %v", len(bands), mask != nil)
	}
	for i, p := range []string{red16, nir} {
		want, _, err := raster.LoadStored(bands[i].Role, p)
		if err != nil {
			t.Fatal(err)
		}
		if bands[i].Plane.Type != want.Plane.Type || !bytes.Equal(bands[i].Plane.Data, want.Plane.Data) {
			t.Errorf("%s: Whole differs from LoadStored", bands[i].Role)
		}
	}

	var asked int64
	rule := func(b int64) bool { asked = b; return b > 10000 }
	if !source.Large(spec, []string{"red", "nir"}, rule) || asked != int64(w*h*(4+2+4)) {
		t.Errorf("Large asked of %d bytes, want %d (uint16, float32 and the index)", asked, w*h*(4+2+4))
	}
	if source.Large(source.Spec{Fake: fake.Noise, Width: 9000, Height: 9000}, []string{"red"}, func(int64) bool { return true }) {
		t.Error("a generated scene is read by views")
	}
	im, err := source.OpenViews(source.Spec{Files: map[string]string{"red": red, "nir": nir}}, []string{"red", "nir"})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	if im.Width != w || im.Height != h {
		t.Errorf("views of %d×%d", im.Width, im.Height)
	}
}

// A generated scene's red and NIR stream by rows; read whole they are
// the bytes fake.Bands makes.
func TestFakeStreams(t *testing.T) {
	const w, h = 90, 700
	src, err := source.Open(context.Background(), source.Spec{Fake: fake.Landscape, Width: w, Height: h, Seed: 4}, source.Options{Roles: []string{"nir", "red"}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.Input().Bands[0].Reader.BlockRows() != 512 {
		t.Error("red and NIR are not read by rows")
	}
	got, _, err := source.Whole(src)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := fake.Bands(fake.Landscape, w, h, 4, []string{"nir", "red"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i].Role != want[i].Role || got[i].Source != want[i].Source || !bytes.Equal(got[i].Plane.Data, want[i].Plane.Data) {
			t.Errorf("%s: streamed rows differ from fake.Bands", want[i].Role)
		}
	}
}

// TestProductRadiometry: a multi-band integer GeoTIFF opened as a product
// (--scene) is digital numbers, as the same file given with --band is; a
// float one is reflectance; every face says it with the scene's word.
func TestProductRadiometry(t *testing.T) {
	dir := t.TempDir()
	w, h := 8, 4
	a, b := make([]uint16, w*h), make([]uint16, w*h)
	fa, fb := make([]float32, w*h), make([]float32, w*h)
	for i := range a {
		a[i], b[i] = uint16(50+i), uint16(200+i)
		fa[i], fb[i] = 0.05, 0.4
	}
	dnPath, flPath := filepath.Join(dir, "dn.tif"), filepath.Join(dir, "fl.tif")
	if err := geotiff.WriteBands(dnPath, w, h, [][]uint16{a, b}, fake.GeoRef(), geotiff.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := geotiff.WriteBands(flPath, w, h, [][]float32{fa, fb}, fake.GeoRef(), geotiff.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	roles := source.Options{Roles: []string{"red", "nir"}, Need: "ndvi"}
	for _, c := range []struct {
		path string
		want source.Radiometry
		word string
	}{{dnPath, source.DigitalNumbers, "digital numbers"}, {flPath, source.Reflectance, "reflectance"}} {
		src, err := source.Open(context.Background(), source.Spec{Product: c.path, Assign: map[string]int{"red": 1, "nir": 2}, AssignFlag: "--bands"}, roles)
		if err != nil {
			t.Fatal(err)
		}
		if src.Radiometry() != c.want || src.Radiometry().String() != c.word {
			t.Errorf("%s as a product: %v (%q), want %q", filepath.Base(c.path), src.Radiometry(), src.Radiometry().String(), c.word)
		}
		src.Close()
		files, err := source.Open(context.Background(), source.Spec{Files: map[string]string{"red": c.path + ":1", "nir": c.path + ":2"}}, roles)
		if err != nil {
			t.Fatal(err)
		}
		if files.Radiometry() != c.want {
			t.Errorf("%s as files: %v, want %q", filepath.Base(c.path), files.Radiometry(), c.word)
		}
		files.Close()
	}
}
