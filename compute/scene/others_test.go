package scene

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"canopy/compute"
)

func TestLandsat(t *testing.T) {
	folder := fx(t, lsID)
	// One folder per MTL form, and the tar.
	paths := []string{fx(t, lsID+".tar")}
	for _, keep := range []string{"txt", "json", "xml"} {
		dir := filepath.Join(t.TempDir(), lsID)
		copyTree(t, folder, dir)
		for _, ext := range []string{"txt", "json", "xml"} {
			if ext != keep {
				os.Remove(filepath.Join(dir, lsID+"_MTL."+ext))
			}
		}
		paths = append(paths, dir)
	}
	for _, p := range paths {
		s, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if s.Kind != KindLandsatC2L2 || s.Sensor != "Landsat 8" || s.PathRow != "044034" || s.CloudShare != 3.42 || s.CRS.EPSG != 32610 ||
			s.Date.Format("2006-01-02 15:04") != "2020-08-27 18:47" || s.Grid.Resolution != 30 || s.Product != lsID {
			t.Errorf("%s: %s %s %s cloud %v crs %v date %v res %v", p, s.Kind, s.Sensor, s.PathRow, s.CloudShare, s.CRS, s.Date, s.Grid.Resolution)
		}
		// Landsat 8: B4 red, B5 nir; the Level-2 factors, not Level-1's.
		if s.Bands["red"].Name != "SR_B4" || s.Bands["nir"].Name != "SR_B5" || s.Bands["blue"].Name != "SR_B2" || s.Bands["swir2"].Name != "SR_B7" {
			t.Errorf("%s: roles %v", p, s.Bands)
		}
		if r := s.Bands["red"].Radiometry; r != (compute.Radiometry{Scale: 2.75e-5, Offset: -0.2}) {
			t.Errorf("%s: radiometry %+v", p, r)
		}
		bands, mask, err := s.Load([]string{"red", "nir"}, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if bands[0].Plane.Type != compute.U16 {
			t.Errorf("%s: stored type %s", p, bands[0].Plane.Type)
		}
		compareRef(t, ndvi(bands[0], bands[1], mask), reference(t, lsID, "ndvi"), 1e-12)
		// QA_RADSAT: band 4 saturated at (20, 20) masks an NDVI, band 1 at
		// (21, 21) does not.
		if mask[20*64+20] != 1 || mask[21*64+21] != 0 {
			t.Errorf("%s: radsat mask %d %d", p, mask[20*64+20], mask[21*64+21])
		}
		if _, m, _ := s.Load([]string{"blue"}, LoadOptions{}); m[20*64+20] != 0 {
			t.Errorf("%s: red's saturation masks blue", p)
		}
		s.Close()
	}
}

// Landsat 4-7 roles differ: B3 red, B4 nir.
func TestLandsat7Roles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), lsID)
	copyTree(t, fx(t, lsID), dir)
	os.Remove(filepath.Join(dir, lsID+"_MTL.json"))
	os.Remove(filepath.Join(dir, lsID+"_MTL.xml"))
	p := filepath.Join(dir, lsID+"_MTL.txt")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), `"LANDSAT_8"`, `"LANDSAT_7"`, 1)), 0o644)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Sensor != "Landsat 7" || s.Bands["red"].Name != "SR_B3" || s.Bands["nir"].Name != "SR_B4" || s.Bands["blue"].Name != "SR_B1" || s.Bands["swir2"].Name != "SR_B7" || s.Bands["swir1"].Name != "SR_B5" {
		t.Fatalf("%s roles %v", s.Sensor, s.RoleNames())
	}
}

func TestSTAC(t *testing.T) {
	s, err := Open(fx(t, "stac/item.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Kind != KindSTAC || s.Sensor != "Sentinel-2A" || s.Tile != "32TQM" || s.CloudShare != 12.5 || s.CRS.EPSG != 32632 || s.Grid.Resolution != 10 || s.Grid.Width != 64 {
		t.Fatalf("%s %s %s %v %v %+v", s.Kind, s.Sensor, s.Tile, s.CloudShare, s.CRS, s.Grid)
	}
	want := []string{"blue", "green", "red", "rededge1", "nir", "nir2", "swir1"}
	if !slices.Equal(s.RoleNames(), want) {
		t.Fatalf("roles %v, want %v", s.RoleNames(), want)
	}
	// scale 1e-4, offset -0.1 read as (DN - 1000) * 1e-4.
	if r := s.Bands["red"].Radiometry; r != (compute.Radiometry{Add: -1000, Scale: 1e-4}) || s.Bands["nir2"].Resolution != 20 || s.Mask.Kind != "scl" {
		t.Fatalf("red %+v, nir2 %v m, mask %q", r, s.Bands["nir2"].Resolution, s.Mask.Kind)
	}
	bands, mask, err := s.Load([]string{"red", "nir"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	compareRef(t, ndvi(bands[0], bands[1], mask), reference(t, "stac", "ndvi"), 1e-12)
	// A window of GeoTIFF bands (10 m and 20 m) holds the same pixels.
	full, fm, _ := s.Load([]string{"red", "nir2"}, LoadOptions{})
	win, wm, err := s.Load([]string{"red", "nir2"}, LoadOptions{Window: rect(3, 9, 50, 40)})
	if err != nil {
		t.Fatal(err)
	}
	for y := 9; y < 40; y++ {
		for x := 3; x < 50; x++ {
			i, j := (y-9)*47+x-3, y*64+x
			if win[0].Plane.At(i) != full[0].Plane.At(j) || win[1].Plane.At(i) != full[1].Plane.At(j) || wm[i] != fm[j] {
				t.Fatalf("window pixel (%d, %d) differs", x, y)
			}
		}
	}

	// A band at a URL Canopy does not read is refused with a clear line
	// (http, https and s3 are read: remote_test.go).
	b, _ := os.ReadFile(fx(t, "stac/item.json"))
	dir := t.TempDir()
	copyTree(t, fx(t, "stac"), dir)
	os.WriteFile(filepath.Join(dir, "item.json"), []byte(strings.Replace(string(b), `"./B04.tif"`, `"ftp://example.invalid/B04.tif"`, 1)), 0o644)
	_, err = Open(filepath.Join(dir, "item.json"))
	oneLine(t, "ftp asset", err, "a kind of URL Canopy does not read")
}

func TestOrthomosaic(t *testing.T) {
	s, err := Open(fx(t, "ortho_rgba.tif"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != KindOrthomosaic || !slices.Equal(s.RoleNames(), []string{"blue", "green", "red"}) || s.Mask.Kind != "alpha" || s.Mask.Source.Band != 4 ||
		s.Bands["red"].Band != 1 || s.Bands["red"].Type != compute.U8 || s.CRS.EPSG != 32633 {
		t.Fatalf("rgba: roles %v mask %+v", s.RoleNames(), s.Mask)
	}
	bands, mask, err := s.Load([]string{"red"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mask[0] != 1 || mask[10*64+10] != 0 || mask[62*64+30] != 1 || bands[0].Plane.Type != compute.U8 {
		t.Fatalf("alpha mask %d %d %d", mask[0], mask[10*64+10], mask[62*64+30])
	}
	// --bands: give band 2 the nir role (a colour-infrared camera).
	if err := s.AssignBand("nir", 2); err != nil {
		t.Fatal(err)
	}
	if s.Bands["nir"].Band != 2 {
		t.Fatal("AssignBand")
	}
	oneLine(t, "band 9", s.AssignBand("nir", 9), "band 9 does not exist")
	oneLine(t, "role", s.AssignBand("infrared", 2), "unknown role")
	oneLine(t, "role typo", s.AssignBand("niir", 2), `unknown role "niir": did you mean "nir"?`)
	s.Close()

	s, err = Open(fx(t, "ortho_ms.tif"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !slices.Equal(s.RoleNames(), []string{"blue", "green", "red", "rededge1", "nir"}) || s.Mask.Source == nil || s.Mask.Source.Band != 6 || s.Bands["nir"].Type != compute.F32 {
		t.Fatalf("ms: roles %v mask %+v", s.RoleNames(), s.Mask)
	}
	bands, mask, err = s.Load([]string{"red", "nir"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// float32 reflectance: compare in float32 precision; the NaN in red
	// comes through as NaN.
	if !math.IsNaN(Value(bands[0], 5*64+5)) {
		t.Fatal("NaN reflectance lost")
	}
	compareRef(t, ndvi(bands[0], bands[1], mask), reference(t, "ortho_ms", "ndvi"), 1e-12)
}
