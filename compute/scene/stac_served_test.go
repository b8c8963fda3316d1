package scene

import (
	"encoding/json"
	"fmt"
	"image"
	"math"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"canopy/compute"
)

// STAC items as Earth Search and Planetary Computer served them
// (testdata/real/stac, README.md there), each saved beside its band and
// mask files with local hrefs, the way a downloader lays them out, the
// files at the sizes and grids the item declares.

// servedItem reads a corpus item; a file holding a list of items (as the
// search answers were saved) gives its item n.
func servedItem(t *testing.T, file string, n int) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "real", "stac", file))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if l, ok := v.([]any); ok {
		v = l[n]
	}
	return v.(map[string]any)
}

var landsatSR = regexp.MustCompile(`_SR_B(\d)\.TIF$`)

// buildServed writes the files of the item's band and mask assets (those
// a reader takes: a single eo:bands entry with a common name, or a mask
// key) into a new folder, rewrites their hrefs to local ones, and returns
// the item's path there. Sentinel-2 bands hold s2DN's patch at s2PX, s2PY
// (10 m), Landsat ones landsatDN's at landsatPX, landsatPY.
func buildServed(t *testing.T, item map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	props := item["properties"].(map[string]any)
	epsg := int(props["proj:epsg"].(float64))
	nums := func(v any) []float64 {
		l, _ := v.([]any)
		out := make([]float64, len(l))
		for i, x := range l {
			out[i] = x.(float64)
		}
		return out
	}
	for key, v := range item["assets"].(map[string]any) {
		a := v.(map[string]any)
		href, _ := a["href"].(string)
		eo, _ := a["eo:bands"].([]any)
		cn, name := "", ""
		if len(eo) == 1 {
			e := eo[0].(map[string]any)
			cn, _ = e["common_name"].(string)
			name, _ = e["name"].(string)
		}
		if qaKey(key) == "" && (len(eo) != 1 || (stacCommon[cn] == "" && cn != "rededge")) || strings.HasSuffix(key, "-jp2") {
			continue
		}
		shape, tr := nums(a["proj:shape"]), nums(a["proj:transform"])
		if len(shape) == 0 {
			shape, tr = nums(props["proj:shape"]), nums(props["proj:transform"])
		}
		h, w, res := int(shape[0]), int(shape[1]), tr[0]
		spec := tiffSpec{w: w, h: h, bits: 16, geo: northUp(epsg, tr[2], tr[5], res), nodata: "0", patchSize: patchSize}
		fill := func(ps int, f func(i, j int) uint16) {
			spec.patchSize = ps
			spec.patch = make([]uint16, ps*ps)
			for j := range ps {
				for i := range ps {
					spec.patch[j*ps+i] = f(i, j)
				}
			}
		}
		if m := landsatSR.FindStringSubmatch(href); m != nil || strings.HasPrefix(qaKey(key), "qa_") {
			spec.px, spec.py = landsatPX, landsatPY
			switch {
			case m != nil:
				n := int(m[1][0] - '0')
				fill(patchSize, func(i, j int) uint16 { return landsatDN(n, i, j) })
			case qaKey(key) == "qa_pixel":
				spec.nodata = "1"
				fill(patchSize, landsatQA)
			default: // QA_RADSAT: red (SR_B4) saturated at (10, 10), blue at (11, 11)
				spec.nodata = ""
				fill(patchSize, func(i, j int) uint16 {
					switch {
					case i == 10 && j == 10:
						return 1 << 3
					case i == 11 && j == 11:
						return 1 << 1
					}
					return 0
				})
			}
		} else {
			k := int(res / 10)
			spec.px, spec.py = s2PX/k, s2PY/k
			band := map[string]string{"red": "B04", "nir": "B08", "nir08": "B8A"}[cn]
			switch name {
			case "B04", "B05", "B08", "B8A":
				band = name
			case "rededge1":
				band = "B05"
			}
			switch {
			case qaKey(key) == "scl":
				spec.bits = 8
				fill(patchSize/k, s2SCL)
			case band != "":
				fill(patchSize/k, func(i, j int) uint16 { return s2DN(band, i*k, j*k) })
			}
		}
		file := key + ".tif"
		if href != "" {
			file = path.Base(href)
		}
		writeTIFF(t, filepath.Join(dir, file), spec)
		a["href"] = "./" + file
	}
	out, err := json.Marshal(item)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "item.json")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServedSTACSentinel2(t *testing.T) {
	for _, c := range []struct {
		name, file     string
		sensor, tile   string
		baseline, date string
		cloud          float64
		epsg           int
		affine         [6]float64
		add            float64 // the DN offset applied
		note           string
		red, nir       string // asset keys
	}{
		// Earth Search v1, baseline 05.09: raster:bands scale 0.0001 and
		// offset -0.1 with earthsearch:boa_offset_applied true: the
		// offset is not applied again.
		{"earth-search", "S2A_13TDE_20231008_0_L2A_earth-search.json", "Sentinel-2A", "13TDE", "05.09", "2023-10-08 18:02:55", 0.000299, 32613,
			[6]float64{399960, 10, 0, 4500000, 0, -10}, 0, "already in the pixels", "red", "nir"},
		// Planetary Computer, baseline 05.10: no raster:bands: the
		// product's own rule, (DN - 1000) / 10000.
		{"planetary-computer-05.10", "sentinel-2-l2a-pc.json", "Sentinel-2B", "47XML", "05.10", "2024-04-19 09:55:49", 0.219774, 32647,
			[6]float64{399960, 10, 0, 9100020, 0, -10}, -1000, "no raster:bands scale", "B04", "B08"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := buildServed(t, servedItem(t, c.file, 0))
			s, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if a, _ := s.Grid.Geo.Affine(); s.Kind != KindSTAC || s.Sensor != c.sensor || s.Tile != c.tile || s.Baseline != c.baseline || s.CloudShare != c.cloud ||
				s.CRS.EPSG != c.epsg || s.Grid.Width != 10980 || s.Grid.Height != 10980 || a != c.affine || s.Date.UTC().Format("2006-01-02 15:04:05") != c.date {
				t.Fatalf("%s %s %s %s %v %v %+v %v %v", s.Kind, s.Sensor, s.Tile, s.Baseline, s.CloudShare, s.CRS, s.Grid, a, s.Date)
			}
			if !equalStrings(s.RoleNames(), Roles) || s.Mask.Kind != "scl" || s.Mask.Source.Resolution != 20 {
				t.Fatalf("roles %v, mask %+v", s.RoleNames(), s.Mask)
			}
			for _, role := range []string{"red", "nir", "nir2", "rededge1"} {
				b := s.Bands[role]
				if b.Radiometry != (compute.Radiometry{Add: c.add, Scale: 1e-4}) || !b.HasNoData || b.NoData != 0 || b.Saturated != 65535 {
					t.Errorf("%s: %+v", role, b)
				}
			}
			if !strings.Contains(strings.Join(s.Notes, "\n"), c.note) {
				t.Errorf("notes %q lack %q", s.Notes, c.note)
			}
			if s.Values() != ValuesReflectance {
				t.Errorf("values %q", s.Values())
			}
			win := image.Rect(s2PX, s2PY, s2PX+patchSize, s2PY+patchSize)
			bands, mask, err := s.Load([]string{"red", "nir"}, LoadOptions{Window: win})
			if err != nil {
				t.Fatal(err)
			}
			got := ndvi(bands[0], bands[1], mask)
			r, nan := realS2{add: c.add}, 0
			for j := range patchSize {
				for i := range patchSize {
					w, g := s2NDVI(r, i, j), got[j*patchSize+i]
					if math.IsNaN(w) {
						nan++
					}
					if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && math.Abs(w-g) > 1e-6) {
						t.Fatalf("NDVI at patch (%d, %d): %v, reference %v", i, j, g, w)
					}
				}
			}
			if nan < 20 {
				t.Errorf("only %d masked pixels in the patch", nan)
			}
			b20, _, err := s.Load([]string{"rededge1", "nir2"}, LoadOptions{Window: win, Mask: "none"})
			if err != nil {
				t.Fatal(err)
			}
			for j := range patchSize {
				for i := range patchSize {
					if v := b20[1].Plane.At(j*patchSize + i); v != float64(s2DN("B8A", i/2*2, j/2*2)) {
						t.Fatalf("B8A at patch (%d, %d): %v, want %d", i, j, v, s2DN("B8A", i/2*2, j/2*2))
					}
				}
			}
			gdalServed(t, s, p, c.red, "red", s2PX, s2PY)
			gdalServed(t, s, p, c.nir, "nir", s2PX, s2PY)
		})
	}
}

func TestServedSTACLandsat(t *testing.T) {
	for _, c := range []struct {
		name, file      string
		sensor, pathRow string
		date            string
		cloud           float64
		epsg, w, h      int
		affine          [6]float64
	}{
		{"earth-search", "LC08_L2SP_033032_20231008_02_T1_earth-search.json", "Landsat 8", "033032", "2023-10-08 17:37:26", 0.06, 32613, 7711, 7831,
			[6]float64{449085, 30, 0, 4581915, 0, -30}},
		// Southern hemisphere in a northern UTM zone, as USGS grids it:
		// negative northings.
		{"planetary-computer", "landsat-c2-l2-pc.json", "Landsat 9", "089090", "2024-04-17 23:46:20", 97.54, 32655, 7971, 7971,
			[6]float64{520185, 30, 0, -4663485, 0, -30}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := buildServed(t, servedItem(t, c.file, 0))
			s, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if a, _ := s.Grid.Geo.Affine(); s.Sensor != c.sensor || s.PathRow != c.pathRow || s.CloudShare != c.cloud || s.CRS.EPSG != c.epsg ||
				s.Grid.Width != c.w || s.Grid.Height != c.h || a != c.affine || s.Date.UTC().Format("2006-01-02 15:04:05") != c.date {
				t.Fatalf("%s %s %v %v %+v %v %v", s.Sensor, s.PathRow, s.CloudShare, s.CRS, s.Grid, a, s.Date)
			}
			want := map[string]string{"blue": "OLI_B2", "green": "OLI_B3", "red": "OLI_B4", "nir": "OLI_B5", "swir1": "OLI_B6", "swir2": "OLI_B7"}
			for role, name := range want {
				if b := s.Bands[role]; b == nil || b.Name != name || b.Radiometry != (compute.Radiometry{Scale: 2.75e-5, Offset: -0.2}) {
					t.Errorf("%s: %+v", role, b)
				}
			}
			if s.Mask.Kind != "qa_pixel" || s.Mask.Saturation == nil || !equalInts(s.Mask.Bits, []int{0, 1, 2, 3, 4}) {
				t.Errorf("mask %+v", s.Mask)
			}
			if len(s.Notes) > 0 {
				t.Errorf("unexpected notes %q", s.Notes)
			}
			win := image.Rect(landsatPX, landsatPY, landsatPX+patchSize, landsatPY+patchSize)
			bands, mask, err := s.Load([]string{"red", "nir"}, LoadOptions{Window: win})
			if err != nil {
				t.Fatal(err)
			}
			got := ndvi(bands[0], bands[1], mask)
			r := realLandsat{oli: true, mult: 2.75e-5, add: -0.2}
			for j := range patchSize {
				for i := range patchSize {
					w, g := landsatNDVI(r, i, j), got[j*patchSize+i]
					if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && math.Abs(w-g) > 1e-6) {
						t.Fatalf("NDVI at patch (%d, %d): %v, reference %v", i, j, g, w)
					}
				}
			}
			gdalServed(t, s, p, "red", "red", landsatPX, landsatPY)
			gdalServed(t, s, p, "nir08", "nir", landsatPX, landsatPY)
		})
	}
}

// gdalServed checks an asset of the built item against GDAL's STACIT
// driver (the item wrapped in an ItemCollection, as STACIT reads them):
// the same grid, CRS, and stored values in the patch at px, py.
func gdalServed(t *testing.T, s *Scene, item, asset, role string, px, py int) {
	t.Helper()
	needGDALTool(t)
	b, err := os.ReadFile(item)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(item)
	fc := filepath.Join(dir, "collection.json")
	if err := os.WriteFile(fc, []byte(`{"type":"FeatureCollection","features":[`+string(b)+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := `STACIT:"` + fc + `":asset=` + asset
	run := func(args ...string) []byte {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir // the hrefs are relative to the item
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out
	}
	var info struct {
		GeoTransform []float64 `json:"geoTransform"`
		Size         []int     `json:"size"`
		CRS          struct {
			WKT string `json:"wkt"`
		} `json:"coordinateSystem"`
	}
	if err := json.Unmarshal(run("gdalinfo", "-json", sub), &info); err != nil {
		t.Fatal(err)
	}
	a, _ := s.Grid.Geo.Affine()
	if !equalFloats(info.GeoTransform, a[:]) || len(info.Size) != 2 || info.Size[0] != s.Grid.Width || info.Size[1] != s.Grid.Height ||
		!strings.Contains(info.CRS.WKT, fmt.Sprintf(`ID["EPSG",%d]`, s.CRS.EPSG)) {
		t.Fatalf("GDAL %s: %v %v; Canopy: %v %dx%d EPSG:%d", asset, info.GeoTransform, info.Size, a, s.Grid.Width, s.Grid.Height, s.CRS.EPSG)
	}
	raw := filepath.Join(dir, asset+".raw")
	run("gdal_translate", "-q", "-of", "ENVI", "-srcwin", fmt.Sprint(px), fmt.Sprint(py), fmt.Sprint(patchSize), fmt.Sprint(patchSize), sub, raw)
	want := rawU16(t, raw)
	got, _, err := s.Load([]string{role}, LoadOptions{Mask: "none", Window: image.Rect(px, py, px+patchSize, py+patchSize)})
	if err != nil {
		t.Fatal(err)
	}
	for j, v := range want {
		if got[0].Plane.At(j) != float64(v) {
			t.Fatalf("%s pixel %d: %v, GDAL %d", role, j, got[0].Plane.At(j), v)
		}
	}
}
