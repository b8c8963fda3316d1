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
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// The EOPF Zarr product of the corpus (testdata/real/eopf, README.md
// there): its real consolidated metadata, with chunk files GDAL's Zarr
// driver wrote (Blosc zstd, bit shuffle, as the product's .zarray says)
// where the patch of known values lies; every other chunk is missing,
// hence all fill value, as Zarr says.
const eopfID = "S2A_MSIL2A_20220428T100601_N0400_R022_T32TPS_20220428T141313"

// buildEOPF copies the corpus product into dir, writes every array's
// .zarray and .zattrs from its consolidated metadata, and the chunks of
// B04, B08, B05, B8A (s2DN) and SCL (s2SCL) that hold the patch at s2PX,
// s2PY (10 m). It returns the product's folder.
func buildEOPF(t *testing.T, dir string) string {
	t.Helper()
	needGDALTool(t)
	src := filepath.Join("testdata", "real", "eopf", eopfID+".zarr")
	dst := filepath.Join(dir, eopfID+".zarr")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".zmetadata", ".zattrs", ".zgroup"} {
		copyFile(t, filepath.Join(src, f), filepath.Join(dst, f))
	}
	b, err := os.ReadFile(filepath.Join(dst, ".zmetadata"))
	if err != nil {
		t.Fatal(err)
	}
	var z struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(b, &z); err != nil {
		t.Fatal(err)
	}
	for k, v := range z.Metadata {
		if k == ".zattrs" || k == ".zgroup" {
			continue
		}
		p := filepath.Join(dst, filepath.FromSlash(k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, v, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	for _, c := range []struct {
		array, band string
		res         int
	}{
		{"measurements/reflectance/r10m/b04", "B04", 10}, {"measurements/reflectance/r10m/b08", "B08", 10},
		{"measurements/reflectance/r20m/b05", "B05", 20}, {"measurements/reflectance/r20m/b8a", "B8A", 20},
		{"conditions/mask/l2a_classification/r20m/scl", "SCL", 20},
	} {
		k := c.res / 10
		n := 1830 / k                        // the chunk's side
		px, py := s2PX/k, s2PY/k             // the patch in the array
		cx, cy := px/n, py/n                 // its chunk
		ox, oy, ps := px-cx*n, py-cy*n, 16/k // the patch in the chunk
		tif := filepath.Join(tmp, path.Base(c.array)+".tif")
		if c.band == "SCL" {
			v := make([]uint8, n*n)
			for j := range ps {
				for i := range ps {
					v[(oy+j)*n+ox+i] = uint8(s2SCL(i, j))
				}
			}
			err = geotiff.WriteBands(tif, n, n, [][]uint8{v}, nil, geotiff.WriteOptions{})
		} else {
			v := make([]uint16, n*n)
			for j := range ps {
				for i := range ps {
					v[(oy+j)*n+ox+i] = s2DN(c.band, i*k, j*k)
				}
			}
			err = geotiff.WriteBands(tif, n, n, [][]uint16{v}, nil, geotiff.WriteOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(tmp, path.Base(c.array)+".zarr")
		if b, err := exec.Command("gdal_translate", "-q", "-of", "Zarr", "-co", "FORMAT=ZARR_V2", "-co", "COMPRESS=BLOSC", "-co", "BLOSC_CNAME=zstd",
			"-co", "BLOSC_CLEVEL=3", "-co", "BLOSC_SHUFFLE=BIT", "-co", fmt.Sprintf("BLOCKSIZE=%d,%d", n, n), "-co", "ARRAY_NAME=a", tif, out).CombinedOutput(); err != nil {
			t.Fatalf("gdal_translate: %v %s", err, b)
		}
		copyFile(t, filepath.Join(out, "a", "0.0"), filepath.Join(dst, filepath.FromSlash(c.array), fmt.Sprintf("%d.%d", cy, cx)))
	}
	return dst
}

func TestRealEOPF(t *testing.T) {
	dir := t.TempDir()
	p := buildEOPF(t, dir)
	zipped := p + ".zip"
	zipDir(t, p, zipped)
	r := realS2{add: -1000}
	for _, q := range []string{p, zipped} {
		s, err := Open(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer s.Close()
		if a, _ := s.Grid.Geo.Affine(); s.Kind != KindSentinel2L2A || s.Sensor != "Sentinel-2A" || s.Product != eopfID || s.Baseline != "04.00" || s.Tile != "32TPS" ||
			s.CloudShare != 5.044114 || s.Date.UTC().Format("2006-01-02 15:04:05") != "2022-04-28 10:06:01" || s.CRS.EPSG != 32632 ||
			s.Grid.Width != 10980 || s.Grid.Height != 10980 || a != [6]float64{600000, 10, 0, 5200020, 0, -10} {
			t.Fatalf("%s: %s %s %s %s %s %v %v %v %+v %v", q, s.Kind, s.Sensor, s.Product, s.Baseline, s.Tile, s.CloudShare, s.Date, s.CRS, s.Grid, a)
		}
		if !equalStrings(s.RoleNames(), Roles) {
			t.Errorf("%s: roles %v", q, s.RoleNames())
		}
		// The same radiometry as the SAFE reader gives a baseline 04.00
		// product: (DN - 1000) / 10000, DN 0 nodata, 65535 saturated.
		for role, res := range map[string]float64{"red": 10, "nir": 10, "blue": 10, "rededge1": 20, "nir2": 20, "swir2": 20} {
			b := s.Bands[role]
			if b.Resolution != res || b.Radiometry != (compute.Radiometry{Add: -1000, Scale: 1e-4}) || !b.HasNoData || b.NoData != 0 || b.Saturated != 65535 || b.Type != compute.U16 {
				t.Errorf("%s: %s: %+v", q, role, b)
			}
		}
		if s.Mask.Kind != "scl" || s.Mask.Source.Resolution != 20 || !equalInts(s.Mask.Classes, SCLMasked) || s.Values() != ValuesReflectance || len(s.Notes) > 0 {
			t.Errorf("%s: mask %+v, values %s, notes %q", q, s.Mask, s.Values(), s.Notes)
		}
		win := image.Rect(s2PX, s2PY, s2PX+patchSize, s2PY+patchSize)
		bands, mask, err := s.Load([]string{"red", "nir"}, LoadOptions{Window: win})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
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
					t.Fatalf("%s: NDVI at patch (%d, %d): %v, reference %v", q, i, j, g, w)
				}
			}
		}
		if nan < 20 {
			t.Errorf("%s: only %d masked pixels in the patch", q, nan)
		}
		b20, _, err := s.Load([]string{"rededge1", "nir2"}, LoadOptions{Window: win, Mask: "none"})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for j := range patchSize {
			for i := range patchSize {
				if v := b20[1].Plane.At(j*patchSize + i); v != float64(s2DN("B8A", i/2*2, j/2*2)) {
					t.Fatalf("%s: B8A at patch (%d, %d): %v, want %d", q, i, j, v, s2DN("B8A", i/2*2, j/2*2))
				}
			}
		}
		// A window across chunks without files: all fill value (0), NaN.
		far, _, err := s.Load([]string{"red"}, LoadOptions{Window: image.Rect(1820, 1820, 1840, 1840), Mask: "none"})
		if err != nil || far[0].Plane.At(0) != 0 {
			t.Errorf("%s: a window of missing chunks: %v %v", q, err, far)
		}
		if d := s.Describe(); !strings.Contains(d, "04.00") || !strings.Contains(d, "32TPS") {
			t.Errorf("%s: describe:\n%s", q, d)
		}
	}
	// GDAL's Zarr driver reads the same stored values.
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for role, array := range map[string]string{"red": "/measurements/reflectance/r10m/b04", "nir": "/measurements/reflectance/r10m/b08"} {
		raw := filepath.Join(dir, role+".raw")
		sub := fmt.Sprintf("ZARR:%q:%s", p, array)
		if b, err := exec.Command("gdal_translate", "-q", "-of", "ENVI", "-srcwin", fmt.Sprint(s2PX), fmt.Sprint(s2PY), fmt.Sprint(patchSize), fmt.Sprint(patchSize), sub, raw).CombinedOutput(); err != nil {
			t.Fatalf("gdal_translate %s: %v %s", sub, err, b)
		}
		want := rawU16(t, raw)
		got, _, err := s.Load([]string{role}, LoadOptions{Mask: "none", Window: image.Rect(s2PX, s2PY, s2PX+patchSize, s2PY+patchSize)})
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range want {
			if got[0].Plane.At(j) != float64(v) {
				t.Fatalf("%s pixel %d: %v, GDAL %d", role, j, got[0].Plane.At(j), v)
			}
		}
	}
}

// An EOPF product whose metadata and files disagree: one line naming the
// file and what was expected.
func TestEOPFDisagreements(t *testing.T) {
	p := buildEOPF(t, t.TempDir())
	chunk := filepath.Join(p, "measurements", "reflectance", "r10m", "b04", "1.2")
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	os.WriteFile(chunk, []byte("not blosc at all, but long enough"), 0o644)
	_, _, err = s.Load([]string{"red"}, LoadOptions{Mask: "none", Window: image.Rect(s2PX, s2PY, s2PX+4, s2PY+4)})
	oneLine(t, "damaged chunk", err, "1.2")
	// A Level-1C product is refused as the SAFE reader refuses it.
	meta := filepath.Join(p, ".zmetadata")
	b, _ := os.ReadFile(meta)
	os.WriteFile(meta, []byte(strings.Replace(string(b), `"product:type": "S02MSIL2A"`, `"product:type": "S02MSIL1C"`, 1)), 0o644)
	_, err = Open(p)
	oneLine(t, "Level-1C", err, "Level-1C")
	// Not consolidated Zarr v2.
	os.WriteFile(meta, []byte(`{"metadata": {}, "zarr_consolidated_format": 3}`), 0o644)
	_, err = Open(p)
	oneLine(t, "not consolidated v2", err, "zarr_consolidated_format 1")
}

// The Zarr v3 product of the corpus: ESA's format from CPM 3.0 (2026),
// baseline 05.12, ESA's new product name (no tile, no baseline in it), its
// arrays without proj:* (the grid is the stac_discovery's proj:code and
// proj:bbox), chunks "c/<row>/<col>" of raw little-endian bytes in zstd.
const eopf3Excerpt = "S2B_MSIL2A_20260721T100559_N0512_R022_T33UWQ_20260721T143508.zarr3-excerpt.json"

// buildEOPF3 writes the excerpt's nodes as a Zarr v3 product (each
// node's zarr.json: the node without its members), and the chunks of B04,
// B08, B8A (s2DN) and SCL (s2SCL) that hold the patch, compressed by the
// zstd command.
func buildEOPF3(t *testing.T, dir string) string {
	t.Helper()
	if _, err := exec.LookPath("zstd"); err != nil {
		t.Fatalf("the zstd command is needed to write the product's chunks (Debian zstd): %v", err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "real", "eopf", eopf3Excerpt))
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "S2B_MSIL2A_20260721T100559_N0512_R022_T33UWQ_20260721T143508.zarr")
	var write func(p string, n map[string]any)
	write = func(p string, n map[string]any) {
		node := map[string]any{}
		for k, v := range n {
			if k != "members" {
				node[k] = v
			}
		}
		out, _ := json.MarshalIndent(node, "", "  ")
		os.MkdirAll(p, 0o755)
		if err := os.WriteFile(filepath.Join(p, "zarr.json"), out, 0o644); err != nil {
			t.Fatal(err)
		}
		m, _ := n["members"].(map[string]any)
		for k, v := range m {
			write(filepath.Join(p, k), v.(map[string]any))
		}
	}
	write(dst, root)
	for _, c := range []struct {
		array, band string
		res         int
	}{
		{"measurements/reflectance/r10m/b04", "B04", 10}, {"measurements/reflectance/r10m/b08", "B08", 10},
		{"measurements/reflectance/r20m/b8a", "B8A", 20}, {"conditions/mask/l2a_classification/r20m/scl", "SCL", 20},
	} {
		k := c.res / 10
		n := 1830 / k
		px, py := s2PX/k, s2PY/k
		cx, cy := px/n, py/n
		ox, oy, ps := px-cx*n, py-cy*n, 16/k
		size := 2
		if c.band == "SCL" {
			size = 1
		}
		raw := make([]byte, n*n*size)
		for j := range ps {
			for i := range ps {
				o := (oy+j)*n + ox + i
				if c.band == "SCL" {
					raw[o] = uint8(s2SCL(i, j))
				} else {
					v := s2DN(c.band, i*k, j*k)
					raw[2*o], raw[2*o+1] = byte(v), byte(v>>8)
				}
			}
		}
		chunk := filepath.Join(dst, filepath.FromSlash(c.array), "c", fmt.Sprint(cy), fmt.Sprint(cx))
		os.MkdirAll(filepath.Dir(chunk), 0o755)
		cmd := exec.Command("zstd", "-q", "-3", "-o", chunk)
		cmd.Stdin = strings.NewReader(string(raw))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("zstd: %v %s", err, out)
		}
	}
	return dst
}

func TestRealEOPFZarr3(t *testing.T) {
	dir := t.TempDir()
	p := buildEOPF3(t, dir)
	zipped := p + ".zip"
	zipDir(t, p, zipped)
	for _, q := range []string{p, zipped} {
		s, err := Open(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer s.Close()
		if a, _ := s.Grid.Geo.Affine(); s.Kind != KindSentinel2L2A || s.Sensor != "Sentinel-2B" || s.Product != "S02MSIL2A_20260721T100559_00000_B0022_T8BB" || s.Baseline != "05.12" ||
			s.CloudShare != 76.20542 || s.Date.UTC().Format("2006-01-02 15:04:05") != "2026-07-21 10:05:59" || s.CRS.EPSG != 32633 ||
			s.Grid.Width != 10980 || s.Grid.Height != 10980 || a != [6]float64{499980, 10, 0, 5500020, 0, -10} {
			t.Fatalf("%s: %s %s %s %s %v %v %v %+v %v", q, s.Kind, s.Sensor, s.Product, s.Baseline, s.CloudShare, s.Date, s.CRS, s.Grid, a)
		}
		// The excerpt holds b02, b03, b04, b08, b8a, b11, b12.
		if got := s.RoleNames(); !equalStrings(got, []string{"blue", "green", "red", "nir", "nir2", "swir1", "swir2"}) {
			t.Errorf("%s: roles %v", q, got)
		}
		for _, role := range []string{"red", "nir", "nir2", "swir2"} {
			b := s.Bands[role]
			if b.Radiometry != (compute.Radiometry{Add: -1000, Scale: 1e-4}) || !b.HasNoData || b.NoData != 0 || b.Saturated != 65535 || b.Type != compute.U16 {
				t.Errorf("%s: %s: %+v", q, role, b)
			}
		}
		if s.Bands["nir2"].Resolution != 20 || s.Mask.Kind != "scl" || s.Mask.Source.Resolution != 20 || len(s.Notes) > 0 {
			t.Errorf("%s: nir2 %+v, mask %+v, notes %q", q, s.Bands["nir2"], s.Mask, s.Notes)
		}
		win := image.Rect(s2PX, s2PY, s2PX+patchSize, s2PY+patchSize)
		bands, mask, err := s.Load([]string{"red", "nir", "nir2"}, LoadOptions{Window: win})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		got := ndvi(bands[0], bands[1], mask)
		nan := 0
		for j := range patchSize {
			for i := range patchSize {
				w, g := s2NDVI(realS2{add: -1000}, i, j), got[j*patchSize+i]
				if math.IsNaN(w) {
					nan++
				}
				if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && math.Abs(w-g) > 1e-6) {
					t.Fatalf("%s: NDVI at patch (%d, %d): %v, reference %v", q, i, j, g, w)
				}
				if v := bands[2].Plane.At(j*patchSize + i); v != float64(s2DN("B8A", i/2*2, j/2*2)) {
					t.Fatalf("%s: B8A at patch (%d, %d): %v, want %d", q, i, j, v, s2DN("B8A", i/2*2, j/2*2))
				}
			}
		}
		if nan < 20 {
			t.Errorf("%s: only %d masked pixels in the patch", q, nan)
		}
	}
	// Sharding, which Canopy does not read, is refused with the reason.
	zj := filepath.Join(p, "measurements", "reflectance", "r10m", "b04", "zarr.json")
	b, _ := os.ReadFile(zj)
	os.WriteFile(zj, []byte(strings.Replace(string(b), `"name": "zstd"`, `"name": "sharding_indexed"`, 1)), 0o644)
	_, err := Open(p)
	oneLine(t, "sharded array", err, "sharding_indexed")
}
