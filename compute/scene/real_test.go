package scene

import (
	"encoding/json"
	"fmt"
	"image"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every real Landsat Collection 2 Level-2 MTL of the corpus, in each of
// its forms alone and all together, as a folder and as the .tar USGS
// delivers, opens with what the MTL declares, and NDVI at the known pixels
// equals the reference from the MTL's own factors.
func TestRealLandsat(t *testing.T) {
	for _, r := range realLandsats {
		t.Run(r.id, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			// Each form alone, then all the corpus has together.
			for _, f := range r.forms {
				d := filepath.Join(dir, f)
				paths = append(paths, buildLandsat(t, d, r, []string{f}))
			}
			if len(r.forms) > 1 {
				paths = append(paths, buildLandsat(t, filepath.Join(dir, "all"), r, r.forms))
			}
			tarred := filepath.Join(dir, r.id+".tar")
			tarDir(t, paths[len(paths)-1], tarred)
			paths = append(paths, tarred)
			for _, p := range paths {
				checkRealLandsat(t, r, p)
			}
			gdalRealLandsat(t, r, paths[0])
		})
	}
}

// gdalRealLandsat checks the red band of the product against GDAL's
// reading of its file: the same size, geotransform and patch values.
func gdalRealLandsat(t *testing.T, r realLandsat, dir string) {
	t.Helper()
	needGDALTool(t)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	red := s.Bands["red"]
	file := filepath.Join(dir, filepath.FromSlash(red.File))
	if filepath.IsAbs(red.File) {
		file = red.File
	}
	out, err := exec.Command("gdalinfo", "-json", file).Output()
	if err != nil {
		t.Fatalf("gdalinfo %s: %v", file, err)
	}
	var info struct {
		GeoTransform []float64 `json:"geoTransform"`
		Size         []int     `json:"size"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	a, _ := s.Grid.Geo.Affine()
	if !equalFloats(info.GeoTransform, a[:]) || len(info.Size) != 2 || info.Size[0] != r.w || info.Size[1] != r.h {
		t.Fatalf("GDAL: %v %v; Canopy: %v %dx%d", info.GeoTransform, info.Size, a, s.Grid.Width, s.Grid.Height)
	}
	raw := filepath.Join(t.TempDir(), "b.raw")
	if out, err := exec.Command("gdal_translate", "-q", "-of", "ENVI", "-srcwin", fmt.Sprint(landsatPX), fmt.Sprint(landsatPY), fmt.Sprint(patchSize), fmt.Sprint(patchSize), file, raw).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	want := rawU16(t, raw)
	got, _, err := s.Load([]string{"red"}, LoadOptions{Mask: "none", Window: image.Rect(landsatPX, landsatPY, landsatPX+patchSize, landsatPY+patchSize)})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range want {
		if got[0].Plane.At(i) != float64(v) {
			t.Fatalf("red pixel %d: %v, GDAL %d", i, got[0].Plane.At(i), v)
		}
	}
}

func checkRealLandsat(t *testing.T, r realLandsat, p string) {
	t.Helper()
	s, err := Open(p)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	defer s.Close()
	if s.Kind != KindLandsatC2L2 || s.Sensor != r.sensor || s.Product != r.id || s.PathRow != r.pathRow || s.CloudShare != r.cloud ||
		s.Date.UTC().Format("2006-01-02 15:04:05") != r.date {
		t.Errorf("%s: %s %q %q %q cloud %v date %v", p, s.Kind, s.Sensor, s.Product, s.PathRow, s.CloudShare, s.Date)
	}
	if s.CRS.EPSG != r.epsg || s.Grid.Width != r.w || s.Grid.Height != r.h || s.Grid.Resolution != 30 {
		t.Errorf("%s: crs %v grid %dx%d at %g", p, s.CRS, s.Grid.Width, s.Grid.Height, s.Grid.Resolution)
	}
	if a, _ := s.Grid.Geo.Affine(); a != [6]float64{r.ulx - 15, 30, 0, r.uly + 15, 0, -30} {
		t.Errorf("%s: georeferencing %v, the MTL's upper-left pixel centre (%g, %g)", p, a, r.ulx, r.uly)
	}
	want := map[string]string{"blue": "SR_B1", "green": "SR_B2", "red": "SR_B3", "nir": "SR_B4", "swir1": "SR_B5", "swir2": "SR_B7"}
	bits := []int{0, 1, 3, 4}
	if r.oli {
		want = map[string]string{"blue": "SR_B2", "green": "SR_B3", "red": "SR_B4", "nir": "SR_B5", "swir1": "SR_B6", "swir2": "SR_B7"}
		bits = []int{0, 1, 2, 3, 4}
	}
	for role, name := range want {
		b := s.Bands[role]
		if b == nil || b.Name != name || b.Radiometry.Scale != r.mult || b.Radiometry.Offset != r.add || b.Radiometry.Add != 0 {
			t.Errorf("%s: %s: %+v, want %s scale %g offset %g", p, role, b, name, r.mult, r.add)
		}
	}
	if len(s.Bands) != len(want) {
		t.Errorf("%s: roles %v", p, s.RoleNames())
	}
	if s.Mask.Kind != "qa_pixel" || !equalInts(s.Mask.Bits, bits) || s.Mask.Saturation == nil {
		t.Errorf("%s: mask %+v", p, s.Mask)
	}
	for _, n := range s.Notes {
		t.Errorf("%s: unexpected note %q", p, n)
	}
	win := image.Rect(landsatPX, landsatPY, landsatPX+patchSize, landsatPY+patchSize)
	bands, mask, err := s.Load([]string{"red", "nir"}, LoadOptions{Window: win})
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	got := ndvi(bands[0], bands[1], mask)
	nan := 0
	for j := range patchSize {
		for i := range patchSize {
			w, g := landsatNDVI(r, i, j), got[j*patchSize+i]
			if math.IsNaN(w) {
				nan++
			}
			if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && math.Abs(w-g) > 1e-6) {
				t.Fatalf("%s: NDVI at patch (%d, %d): %v, reference %v", p, i, j, g, w)
			}
		}
	}
	if nan < 5 {
		t.Errorf("%s: only %d masked pixels in the patch", p, nan)
	}
	// Blue's saturation at (11, 11) does not mask red and NIR; it masks
	// blue.
	if _, m, _ := s.Load([]string{"blue"}, LoadOptions{Window: win}); m[11*patchSize+11] != 1 || m[10*patchSize+10] != 0 {
		t.Errorf("%s: blue's QA_RADSAT mask %d %d", p, m[11*patchSize+11], m[10*patchSize+10])
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The Level-1 record of a real Level-2 MTL never stands for the product:
// its PROCESSING_LEVEL (L1TP, L1GS) and file names are those of the
// Level-1 parent. A product whose files disagree with the MTL gets one
// line naming the file and what was expected.
func TestRealLandsatDisagreements(t *testing.T) {
	r := realLandsats[0]
	dir := t.TempDir()
	p := buildLandsat(t, dir, r, r.forms)
	// A band of another size than REFLECTIVE_SAMPLES x REFLECTIVE_LINES.
	geo := northUp(r.epsg, r.ulx-15, r.uly+15, 30)
	for _, b := range []string{"SR_B1", "SR_B2", "SR_B3", "SR_B4", "SR_B5", "SR_B6", "SR_B7"} {
		writeTIFF(t, filepath.Join(p, r.id+"_"+b+".TIF"), tiffSpec{w: 64, h: 64, bits: 16, geo: geo})
	}
	_, err := Open(p)
	oneLine(t, "band smaller than declared", err, "is 64x64 pixels but")
	oneLine(t, "band smaller than declared", err, "declares 7611x7741")
	// Bands shifted from the MTL's corner.
	shifted := northUp(r.epsg, r.ulx+15, r.uly+15, 30)
	for _, b := range []string{"SR_B1", "SR_B2", "SR_B3", "SR_B4", "SR_B5", "SR_B6", "SR_B7"} {
		writeTIFF(t, filepath.Join(p, r.id+"_"+b+".TIF"), tiffSpec{w: r.w, h: r.h, bits: 16, geo: shifted})
	}
	_, err = Open(p)
	oneLine(t, "band shifted", err, "CORNER_UL_PROJECTION_X/Y_PRODUCT")
	// A missing band: the message names the file the MTL lists.
	p = buildLandsat(t, filepath.Join(dir, "missing"), r, r.forms)
	os.Remove(filepath.Join(p, r.id+"_SR_B4.TIF"))
	_, err = Open(p)
	oneLine(t, "missing band", err, r.id+"_SR_B4.TIF")
	// The MTL of the Level-1 parent: its PRODUCT_CONTENTS says L1TP.
	p = buildLandsat(t, filepath.Join(dir, "l1"), r, nil)
	b, err := os.ReadFile(filepath.Join("testdata", "real", "landsat", r.id+"_MTL.txt"))
	if err != nil {
		t.Fatal(err)
	}
	l1 := strings.Replace(string(b), `PROCESSING_LEVEL = "L2SP"`, `PROCESSING_LEVEL = "L1TP"`, 1)
	os.WriteFile(filepath.Join(p, r.id+"_MTL.txt"), []byte(l1), 0o644)
	_, err = Open(p)
	oneLine(t, "Level-1 MTL", err, "processing level L1TP: a Level-1 product")
}

// The MTL's JSON form is read in document order: its values are the same
// whatever order Go's maps would give, run after run.
func TestMTLJSONDeterministic(t *testing.T) {
	r := realLandsats[1]
	b, err := os.ReadFile(filepath.Join("testdata", "real", "landsat", r.id+"_MTL.json"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := os.ReadFile(filepath.Join("testdata", "real", "landsat", r.id+"_MTL.xml"))
	if err != nil {
		t.Fatal(err)
	}
	mx, err := parseMTL(x, "a_MTL.xml", "xml")
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		mj, err := parseMTL(b, "a_MTL.json", "json")
		if err != nil {
			t.Fatal(err)
		}
		if len(mj.q) != len(mx.q) || len(mj.u) != len(mx.u) {
			t.Fatalf("json %d/%d values, xml %d/%d", len(mj.q), len(mj.u), len(mx.q), len(mx.u))
		}
		for k, v := range mx.q {
			if mj.q[k] != v {
				t.Fatalf("%s: json %q, xml %q", k, mj.q[k], v)
			}
		}
		for k, v := range mx.u {
			if mj.u[k] != v {
				t.Fatalf("%s: json %q, xml %q", k, mj.u[k], v)
			}
		}
		if mj.get("PROCESSING_LEVEL", mtlContents) != "L2SP" || mj.u["PROCESSING_LEVEL"] != "L2SP" || mj.get("FILE_NAME_QUALITY_L1_PIXEL", mtlContents) != r.id+"_QA_PIXEL.TIF" {
			t.Fatalf("json: level %q file %q", mj.get("PROCESSING_LEVEL", mtlContents), mj.get("FILE_NAME_QUALITY_L1_PIXEL", mtlContents))
		}
	}
}

// Every real Sentinel-2 L2A metadata file of the corpus, with band files
// at the size MTD_TL.xml declares (JPEG 2000, or GeoTIFF where
// MTD_MSIL2A.xml says imageFormat GeoTIFF), as a .SAFE folder, as its
// MTD_MSIL2A.xml, and as the deflated .SAFE.zip the Copernicus services
// serve, opens with what the metadata declares, and NDVI at the known
// pixels equals the reference from the metadata's own offset and
// quantification.
func TestRealSentinel2(t *testing.T) {
	for _, r := range realS2s {
		t.Run(r.baseline, func(t *testing.T) {
			if r.ext == ".jp2" {
				needGDALTool(t) // GDAL encodes the JPEG 2000 tiles
			}
			dir := t.TempDir()
			safe := buildS2(t, dir, r)
			zipped := safe + ".zip"
			zipDir(t, safe, zipped)
			for _, p := range []string{safe, filepath.Join(safe, r.mtdName), zipped} {
				checkRealS2(t, r, p)
			}
			if r.ext == ".jp2" {
				gdalRealS2(t, r, safe)
			}
		})
	}
}

func checkRealS2(t *testing.T, r realS2, p string) {
	t.Helper()
	s, err := Open(p)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	defer s.Close()
	if s.Kind != KindSentinel2L2A || s.Sensor != r.sensor || s.Product != r.id || s.Baseline != r.baseline || s.Tile != r.tile || s.CloudShare != r.cloud ||
		s.Date.UTC().Format("2006-01-02 15:04:05") != r.date {
		t.Errorf("%s: %s %q %q baseline %s tile %s cloud %v date %v", p, s.Kind, s.Sensor, s.Product, s.Baseline, s.Tile, s.CloudShare, s.Date)
	}
	if a, _ := s.Grid.Geo.Affine(); s.CRS.EPSG != r.epsg || s.Grid.Width != 10980 || s.Grid.Height != 10980 || a != [6]float64{r.ulx, 10, 0, r.uly, 0, -10} {
		t.Errorf("%s: crs %v grid %dx%d %v", p, s.CRS, s.Grid.Width, s.Grid.Height, a)
	}
	if got := s.RoleNames(); !equalStrings(got, Roles) {
		t.Errorf("%s: roles %v", p, got)
	}
	for role, res := range map[string]float64{"red": 10, "nir": 10, "blue": 10, "rededge1": 20, "nir2": 20, "swir2": 20} {
		b := s.Bands[role]
		if b.Resolution != res || b.Radiometry.Add != r.add || b.Radiometry.Scale != 1e-4 || b.Radiometry.Offset != 0 || !b.HasNoData || b.NoData != 0 || b.Saturated != 65535 {
			t.Errorf("%s: %s: %+v", p, role, b)
		}
	}
	if s.Mask.Kind != "scl" || s.Mask.Source.Resolution != 20 {
		t.Errorf("%s: mask %+v", p, s.Mask)
	}
	for _, n := range s.Notes {
		t.Errorf("%s: unexpected note %q", p, n)
	}
	win := image.Rect(s2PX, s2PY, s2PX+patchSize, s2PY+patchSize)
	bands, mask, err := s.Load([]string{"red", "nir"}, LoadOptions{Window: win})
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	got := ndvi(bands[0], bands[1], mask)
	nan := 0
	for j := range patchSize {
		for i := range patchSize {
			w, g := s2NDVI(r, i, j), got[j*patchSize+i]
			if math.IsNaN(w) {
				nan++
			}
			if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && math.Abs(w-g) > 1e-6) {
				t.Fatalf("%s: NDVI at patch (%d, %d): %v, reference %v", p, i, j, g, w)
			}
		}
	}
	if nan < 20 {
		t.Errorf("%s: only %d masked pixels in the patch", p, nan)
	}
	// A 20 m pair on the 10 m grid: each 20 m pixel repeated 2 x 2.
	b20, _, err := s.Load([]string{"rededge1", "nir2"}, LoadOptions{Window: win, Mask: "none"})
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	for j := range patchSize {
		for i := range patchSize {
			if v := b20[0].Plane.At(j*patchSize + i); v != float64(s2DN("B05", i/2*2, j/2*2)) {
				t.Fatalf("%s: B05 at patch (%d, %d): %v, want %d", p, i, j, v, s2DN("B05", i/2*2, j/2*2))
			}
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// gdalRealS2 checks the product against GDAL's SENTINEL2 driver: the same
// 10 m grid, geotransform, CRS, and the same values in the patch for each
// of its 10 m bands.
func gdalRealS2(t *testing.T, r realS2, safe string) {
	t.Helper()
	sub := fmt.Sprintf("SENTINEL2_L2A:%s:10m:EPSG_%d", filepath.Join(safe, r.mtdName), r.epsg)
	out, err := exec.Command("gdalinfo", "-json", sub).Output()
	if err != nil {
		t.Fatalf("gdalinfo %s: %v", sub, err)
	}
	var info struct {
		GeoTransform []float64 `json:"geoTransform"`
		Size         []int     `json:"size"`
		CRS          struct {
			WKT string `json:"wkt"`
		} `json:"coordinateSystem"`
		Bands []struct {
			Description string `json:"description"`
		} `json:"bands"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	s, err := Open(safe)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, _ := s.Grid.Geo.Affine()
	if !equalFloats(info.GeoTransform, a[:]) || len(info.Size) != 2 || info.Size[0] != s.Grid.Width || info.Size[1] != s.Grid.Height ||
		!strings.Contains(info.CRS.WKT, fmt.Sprintf(`ID["EPSG",%d]`, r.epsg)) {
		t.Fatalf("GDAL: %v %v; Canopy: %v %dx%d", info.GeoTransform, info.Size, a, s.Grid.Width, s.Grid.Height)
	}
	raw := filepath.Join(t.TempDir(), "s2.raw")
	if out, err := exec.Command("gdal_translate", "-q", "-of", "ENVI", "-srcwin", fmt.Sprint(s2PX), fmt.Sprint(s2PY), fmt.Sprint(patchSize), fmt.Sprint(patchSize), sub, raw).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	all := rawU16(t, raw)
	roles := map[string]string{"B4": "red", "B3": "green", "B2": "blue", "B8": "nir"}
	win := image.Rect(s2PX, s2PY, s2PX+patchSize, s2PY+patchSize)
	if len(info.Bands) != 4 {
		t.Fatalf("GDAL: %d bands at 10 m", len(info.Bands))
	}
	for i, b := range info.Bands {
		role := roles[strings.Split(b.Description, ",")[0]]
		if role == "" {
			t.Fatalf("GDAL band %q", b.Description)
		}
		got, _, err := s.Load([]string{role}, LoadOptions{Mask: "none", Window: win})
		if err != nil {
			t.Fatal(err)
		}
		want := all[i*patchSize*patchSize : (i+1)*patchSize*patchSize]
		for j, v := range want {
			if got[0].Plane.At(j) != float64(v) {
				t.Fatalf("%s pixel %d: %v, GDAL %d", role, j, got[0].Plane.At(j), v)
			}
		}
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A Sentinel-2 product whose metadata and files disagree gets one line
// naming the file and what was expected.
func TestRealSentinel2Disagreements(t *testing.T) {
	r := realS2s[2] // GeoTIFF bands: quick to rewrite
	dir := t.TempDir()
	safe := buildS2(t, dir, r)
	img := filepath.Join(safe, "GRANULE", r.granule, "IMG_DATA", "R10m")
	b04 := filepath.Join(img, r.prefix+"B04_10m.tif")
	// A band smaller than MTD_TL.xml's Size.
	writeTIFF(t, b04, tiffSpec{w: 64, h: 64, bits: 16, geo: northUp(r.epsg, r.ulx, r.uly, 10)})
	_, err := Open(safe)
	oneLine(t, "band smaller than declared", err, "B04 is 64x64 but")
	oneLine(t, "band smaller than declared", err, "10980x10980")
	// A band shifted from MTD_TL.xml's Geoposition.
	writeTIFF(t, b04, tiffSpec{w: 10980, h: 10980, bits: 16, geo: northUp(r.epsg, r.ulx+10, r.uly, 10)})
	_, err = Open(safe)
	oneLine(t, "band shifted", err, "georeferencing")
	// A missing band file names the file MTD_MSIL2A.xml lists.
	os.Remove(b04)
	_, err = Open(safe)
	oneLine(t, "missing band", err, r.prefix+"B04_10m.tif is missing")
	// A baseline newer than any known, without offsets.
	safe = buildS2(t, filepath.Join(dir, "new"), r)
	mtd := filepath.Join(safe, r.mtdName)
	b, _ := os.ReadFile(mtd)
	os.WriteFile(mtd, []byte(strings.Replace(string(b), "<PROCESSING_BASELINE>02.12<", "<PROCESSING_BASELINE>07.00<", 1)), 0o644)
	_, err = Open(safe)
	oneLine(t, "unknown baseline", err, "processing baseline 07.00 is newer than those Canopy knows")
	// The scene says it gives reflectance.
	safe = buildS2(t, filepath.Join(dir, "ok"), r)
	s, err := Open(safe)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Values() != ValuesReflectance || !strings.Contains(s.Describe(), "values       reflectance") {
		t.Errorf("values %q:\n%s", s.Values(), s.Describe())
	}
}

// An 8-bit orthomosaic without SCALE/OFFSET gives digital numbers, and
// says so in `canopy scene` and its JSON.
func TestValuesDigitalNumbers(t *testing.T) {
	s, err := Open(fx(t, "ortho_rgba.tif"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, _ := json.Marshal(s)
	if s.Values() != ValuesDN || !strings.Contains(s.Describe(), "values       digital numbers") || strings.Contains(s.Describe(), "reflectance =") || !strings.Contains(string(b), `"values":"digital numbers"`) {
		t.Errorf("values %q, json %s", s.Values(), b)
	}
}
