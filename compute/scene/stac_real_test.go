package scene

import (
	"encoding/json"
	"image"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"canopy/compute"
	_ "canopy/compute/goback"
	"canopy/compute/index"
)

// The real Planetary Computer item of the corpus (sentinel-2-l2a, baseline
// 02.12): its assets saved beside it with local hrefs, as a downloader
// lays them out, at the shapes the item declares.
const pcItem = "S2B_MSIL2A_20190629T212529_R043_T06VVN_20201006T080531_planetary-computer.json"

// buildSTAC writes the item (edited by edit, if not nil) and the files of
// its band and SCL assets into a new folder, and returns the item's path.
func buildSTAC(t *testing.T, edit func(props map[string]any, assets map[string]map[string]any)) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "real", "stac", pcItem))
	if err != nil {
		t.Fatal(err)
	}
	var item map[string]any
	if err := json.Unmarshal(b, &item); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	assets := map[string]map[string]any{}
	for k, v := range item["assets"].(map[string]any) {
		assets[k] = v.(map[string]any)
	}
	props := item["properties"].(map[string]any)
	const epsg, ulx, uly = 32606, 399960.0, 6800040.0
	for _, res := range []int{10, 20} {
		n, px, py, ps := 10980, s2PX, s2PY, patchSize
		if res == 20 {
			n, px, py, ps = 5490, s2PX/2, s2PY/2, patchSize/2
		}
		for _, key := range s2Bands[res] {
			a := assets[key]
			if a == nil {
				t.Fatalf("the item has no %s asset", key)
			}
			bits, k := 16, res/10
			patch := make([]uint16, ps*ps)
			for j := range ps {
				for i := range ps {
					switch key {
					case "SCL":
						bits = 8
						patch[j*ps+i] = s2SCL(i, j)
					case "B04", "B08", "B05", "B8A":
						patch[j*ps+i] = s2DN(key, i*k, j*k)
					}
				}
			}
			name := path.Base(a["href"].(string))
			writeTIFF(t, filepath.Join(dir, name), tiffSpec{w: n, h: n, bits: bits, geo: northUp(epsg, ulx, uly, float64(res)), nodata: "0",
				px: px, py: py, patch: patch, patchSize: ps})
			a["href"] = "./" + name
		}
	}
	if edit != nil {
		edit(props, assets)
	}
	out, _ := json.Marshal(item)
	p := filepath.Join(dir, "item.json")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// earthSearchBands sets every band asset's raster:bands as Earth Search
// writes its sentinel-2-l2a items: scale 0.0001, offset -0.1.
func earthSearchBands(assets map[string]map[string]any) {
	for _, a := range assets {
		if eo, ok := a["eo:bands"].([]any); ok && len(eo) == 1 {
			a["raster:bands"] = []any{map[string]any{"nodata": 0, "data_type": "uint16", "scale": 0.0001, "offset": -0.1}}
		}
	}
}

func TestRealSTAC(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(props map[string]any, assets map[string]map[string]any)
		add  float64
		note string
	}{
		// As Planetary Computer serves it: no scale or offset, baseline
		// 02.12: the product's own rule, DN / 10000.
		{"planetary-computer", nil, 0, "no raster:bands scale"},
		// Earth Search's raster:bands on a baseline 05.00 item whose
		// pixels still hold the offset: (DN - 1000) / 10000.
		{"earth-search-offset", func(p map[string]any, a map[string]map[string]any) {
			earthSearchBands(a)
			p["s2:processing_baseline"], p["earthsearch:boa_offset_applied"] = "05.00", false
		}, -1000, "issue 71"},
		// The same, where Earth Search says it applied the offset to the
		// pixels: raster:bands' offset is not applied again.
		{"earth-search-applied", func(p map[string]any, a map[string]map[string]any) {
			earthSearchBands(a)
			p["s2:processing_baseline"], p["earthsearch:boa_offset_applied"] = "05.00", true
		}, 0, "already in the pixels"},
		// A template offset on a baseline 02.12 item: none applied.
		{"offset-before-04.00", func(p map[string]any, a map[string]map[string]any) {
			earthSearchBands(a)
		}, 0, "baseline 02.12 products have none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := buildSTAC(t, c.edit)
			s, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if a, _ := s.Grid.Geo.Affine(); s.Kind != KindSTAC || s.Sensor != "Sentinel-2B" || s.Tile != "06VVN" || s.CloudShare != 0.314306 || s.CRS.EPSG != 32606 ||
				s.Grid.Width != 10980 || a != [6]float64{399960, 10, 0, 6800040, 0, -10} || s.Date.UTC().Format("2006-01-02 15:04:05") != "2019-06-29 21:25:29" {
				t.Fatalf("%s %s %s %v %v %+v %v %v", s.Kind, s.Sensor, s.Tile, s.CloudShare, s.CRS, s.Grid, a, s.Date)
			}
			if !equalStrings(s.RoleNames(), Roles) || s.Bands["nir2"].Name != "B8A" || s.Mask.Kind != "scl" {
				t.Fatalf("roles %v, nir2 %q, mask %q", s.RoleNames(), s.Bands["nir2"].Name, s.Mask.Kind)
			}
			if r := s.Bands["red"].Radiometry; r != (compute.Radiometry{Add: c.add, Scale: 1e-4}) {
				t.Fatalf("red radiometry %+v, want add %g scale 1e-4", r, c.add)
			}
			if c.note != "" && !strings.Contains(strings.Join(s.Notes, "\n"), c.note) {
				t.Errorf("notes %q lack %q", s.Notes, c.note)
			}
			if c.note == "" && len(s.Notes) > 0 {
				t.Errorf("unexpected notes %q", s.Notes)
			}
			win := image.Rect(s2PX, s2PY, s2PX+patchSize, s2PY+patchSize)
			bands, mask, err := s.Load([]string{"red", "nir"}, LoadOptions{Window: win})
			if err != nil {
				t.Fatal(err)
			}
			r := realS2{add: c.add}
			// The reference from the numbers alone, and the engine (the go
			// backend, float32 kernels) on the loaded bands.
			ndviIdx, _ := index.Lookup("ndvi")
			j, err := compute.NewJob(bands, mask, []string{"ndvi"}, []*index.Expr{ndviIdx.Expr})
			if err != nil {
				t.Fatal(err)
			}
			be, err := compute.New(compute.NameGo)
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			if _, err := compute.RunJob(be, j); err != nil {
				t.Fatal(err)
			}
			got := ndvi(bands[0], bands[1], mask)
			zero := 0
			for jj := range patchSize {
				for i := range patchSize {
					w := s2NDVI(r, i, jj)
					g, e := got[jj*patchSize+i], float64(j.Out[0][jj*patchSize+i])
					if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && math.Abs(w-g) > 1e-6) {
						t.Fatalf("NDVI at patch (%d, %d): %v, reference %v", i, jj, g, w)
					}
					if math.IsNaN(w) != math.IsNaN(e) || (!math.IsNaN(w) && math.Abs(w-e) > 1e-6) {
						t.Fatalf("engine NDVI at patch (%d, %d): %v, reference %v", i, jj, e, w)
					}
					if s2DN("B04", i, jj) == 1000 && s2DN("B08", i, jj) == 1000 {
						zero++
						// Red and NIR both exactly 0 where the offset is -1000:
						// 0/0, NaN (never -0).
						if c.add == -1000 && !math.IsNaN(e) {
							t.Fatalf("engine NDVI of 0/0 at patch (%d, %d) is %v, want NaN", i, jj, e)
						}
					}
				}
			}
			if zero == 0 {
				t.Fatal("the patch has no pixel where red and NIR are DN 1000")
			}
		})
	}
}

// USGS's own STAC item of a Landsat 8 L2SP product (STAC 1.0.0-beta.2:
// asset eo:bands as indexes into the item's, "eo:platform", asset keys
// "SR_B4.TIF" and "QA_PIXEL.TIF", no raster:bands), its files saved
// beside it. The item declares no grid: the files are 2048 x 2048 pixels
// of 30 m.
func TestRealSTACUSGSLandsat(t *testing.T) {
	const id = "LC08_L2SP_047027_20201204_20210313_02_T1"
	b, err := os.ReadFile(filepath.Join("testdata", "real", "stac", id+"_SR_stac.json"))
	if err != nil {
		t.Fatal(err)
	}
	var item map[string]any
	if err := json.Unmarshal(b, &item); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := realLandsat{oli: true, mult: 2.75e-5, add: -0.2}
	geo := northUp(32610, 399985, 5400015, 30)
	patch := func(f func(i, j int) uint16) []uint16 {
		v := make([]uint16, patchSize*patchSize)
		for j := range patchSize {
			for i := range patchSize {
				v[j*patchSize+i] = f(i, j)
			}
		}
		return v
	}
	const n, px, py = 2048, 1020, 1030
	for k, v := range item["assets"].(map[string]any) {
		a := v.(map[string]any)
		var p []uint16
		switch {
		case strings.HasPrefix(k, "SR_B"):
			band := int(k[4] - '0')
			p = patch(func(i, j int) uint16 { return landsatDN(band, i, j) })
		case k == "QA_PIXEL.TIF":
			p = patch(landsatQA)
		case k == "QA_RADSAT.TIF":
			p = patch(func(i, j int) uint16 {
				if i == 10 && j == 10 {
					return 1 << 3 // red, SR_B4
				}
				return 0
			})
		default:
			continue
		}
		name := path.Base(a["href"].(string))
		writeTIFF(t, filepath.Join(dir, name), tiffSpec{w: n, h: n, bits: 16, geo: geo, px: px, py: py, patch: p, patchSize: patchSize})
		a["href"] = "./" + name
	}
	out, _ := json.Marshal(item)
	ip := filepath.Join(dir, id+"_SR_stac.json")
	os.WriteFile(ip, out, 0o644)
	s, err := Open(ip)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Sensor != "Landsat 8" || s.PathRow != "047027" || s.CloudShare != 1.55 || s.CRS.EPSG != 32610 || s.Grid.Width != n ||
		s.Date.UTC().Format("2006-01-02 15:04:05") != "2020-12-04 19:02:11" {
		t.Fatalf("%s %s %v %v %+v %v", s.Sensor, s.PathRow, s.CloudShare, s.CRS, s.Grid, s.Date)
	}
	want := map[string]string{"blue": "SR_B2", "green": "SR_B3", "red": "SR_B4", "nir": "SR_B5", "swir1": "SR_B6", "swir2": "SR_B7"}
	for role, name := range want {
		if b := s.Bands[role]; b == nil || b.Name != name || b.Radiometry != (compute.Radiometry{Scale: 2.75e-5, Offset: -0.2}) {
			t.Errorf("%s: %+v", role, b)
		}
	}
	if s.Mask.Kind != "qa_pixel" || s.Mask.Saturation == nil || !equalInts(s.Mask.Bits, []int{0, 1, 2, 3, 4}) {
		t.Errorf("mask %+v", s.Mask)
	}
	win := image.Rect(px, py, px+patchSize, py+patchSize)
	bands, mask, err := s.Load([]string{"red", "nir"}, LoadOptions{Window: win})
	if err != nil {
		t.Fatal(err)
	}
	got := ndvi(bands[0], bands[1], mask)
	for j := range patchSize {
		for i := range patchSize {
			w, g := landsatNDVI(r, i, j), got[j*patchSize+i]
			if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && math.Abs(w-g) > 1e-6) {
				t.Fatalf("NDVI at patch (%d, %d): %v, reference %v", i, j, g, w)
			}
		}
	}
}

// Earth Search's first Sentinel-2 items named B05, B06, B07 and B8A in
// eo:bands without a common name: their roles come from the band names.
func TestSTACBandNamesWithoutCommonName(t *testing.T) {
	p := buildSTAC(t, func(props map[string]any, assets map[string]map[string]any) {
		for _, k := range []string{"B05", "B06", "B07", "B8A"} {
			eo := assets[k]["eo:bands"].([]any)[0].(map[string]any)
			delete(eo, "common_name")
		}
	})
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !equalStrings(s.RoleNames(), Roles) || s.Bands["rededge1"].Name != "B05" || s.Bands["nir2"].Name != "B8A" {
		t.Fatalf("roles %v", s.RoleNames())
	}
}
