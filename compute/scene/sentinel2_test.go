package scene

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"canopy/compute"
)

func TestSentinel2Metadata(t *testing.T) {
	for _, c := range []struct {
		path, sensor, baseline string
		add, cloud             float64
	}{
		{s2Old + ".SAFE", "Sentinel-2B", "03.01", 0, 7.25},
		{s2Old + ".SAFE.zip", "Sentinel-2B", "03.01", 0, 7.25},
		{s2New + ".SAFE", "Sentinel-2A", "05.00", -1000, 12.5},
		{s2New + ".SAFE.zip", "Sentinel-2A", "05.00", -1000, 12.5},
		{"stored/" + s2New + ".SAFE.zip", "Sentinel-2A", "05.00", -1000, 12.5},
		{s2New + ".SAFE/MTD_MSIL2A.xml", "Sentinel-2A", "05.00", -1000, 12.5},
	} {
		s, err := Open(fx(t, c.path))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if s.Kind != KindSentinel2L2A || s.Sensor != c.sensor || s.Baseline != c.baseline || s.Tile != "32TQM" || s.CloudShare != c.cloud {
			t.Errorf("%s: %s %s baseline %s tile %s cloud %v", c.path, s.Kind, s.Sensor, s.Baseline, s.Tile, s.CloudShare)
		}
		if s.CRS.EPSG != 32632 || s.CRS.Name != "WGS 84 / UTM zone 32N" {
			t.Errorf("%s: CRS %v", c.path, s.CRS)
		}
		if a, _ := s.Grid.Geo.Affine(); s.Grid.Width != 64 || s.Grid.Height != 64 || s.Grid.Resolution != 10 || a != [6]float64{600000, 10, 0, 5100000, 0, -10} {
			t.Errorf("%s: grid %+v %v", c.path, s.Grid, a)
		}
		if got := s.RoleNames(); !slices.Equal(got, Roles) {
			t.Errorf("%s: roles %v", c.path, got)
		}
		for role, res := range map[string]float64{"red": 10, "nir": 10, "nir2": 20, "rededge1": 20, "swir2": 20} {
			b := s.Bands[role]
			if b.Resolution != res || b.Type != compute.U16 || b.Radiometry != (compute.Radiometry{Add: c.add, Scale: 1e-4}) || !b.HasNoData || b.NoData != 0 || b.Saturated != 65535 {
				t.Errorf("%s: %s: %+v", c.path, role, b)
			}
		}
		if s.Bands["red"].Name != "B04" || s.Bands["nir2"].Name != "B8A" || s.Mask.Kind != "scl" || s.Mask.Source.Resolution != 20 || !slices.Equal(s.Mask.Classes, []int{0, 1, 3, 8, 9, 10}) {
			t.Errorf("%s: bands or mask wrong: %s %s %+v", c.path, s.Bands["red"].Name, s.Bands["nir2"].Name, s.Mask)
		}
		if a, _ := s.Grid.WindowGeo(rect(3, 5, 10, 10)).Affine(); a != [6]float64{600030, 10, 0, 5099950, 0, -10} {
			t.Errorf("%s: window georeferencing %v", c.path, a)
		}
		if s.Date.Year() < 2021 {
			t.Errorf("%s: date %v", c.path, s.Date)
		}
	}
}

func TestSentinel2JSONAndDescribe(t *testing.T) {
	s, err := Open(fx(t, s2New+".SAFE.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Sensor string `json:"sensor"`
		Date   string `json:"date"`
		Tile   string `json:"tile"`
		CRS    CRS    `json:"crs"`
		Bands  []struct {
			Role       string
			Resolution float64 `json:"resolution_m"`
			Add, Scale float64
			Offset     float64
			Type       string
			NoData     *float64
		} `json:"bands"`
		CloudShare *float64 `json:"cloud_share"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if j.Sensor != "Sentinel-2A" || j.Date != "2023-06-15T10:20:21Z" || j.Tile != "32TQM" || j.CRS.EPSG != 32632 || j.CloudShare == nil || *j.CloudShare != 12.5 || len(j.Bands) != 10 {
		t.Fatalf("json %s", b)
	}
	if j.Bands[2].Role != "red" || j.Bands[2].Add != -1000 || j.Bands[2].Scale != 1e-4 || j.Bands[2].Type != "uint16" || j.Bands[2].NoData == nil || j.Bands[2].Resolution != 10 {
		t.Fatalf("red in json: %+v", j.Bands[2])
	}
	d := s.Describe()
	for _, want := range []string{"Sentinel-2A", "32TQM", "EPSG:32632", "12.5%", "B8A", "add -1000"} {
		if !strings.Contains(d, want) {
			t.Errorf("Describe lacks %q:\n%s", want, d)
		}
	}
}

// The NDVI of the loaded bands equals the NumPy reference, which applies
// the offsets, nodata, saturation and the SCL mask on its own.
func TestSentinel2NDVIReference(t *testing.T) {
	for _, name := range []string{s2Old, s2New} {
		for _, path := range []string{name + ".SAFE", name + ".SAFE.zip"} {
			s, err := Open(fx(t, path))
			if err != nil {
				t.Fatal(err)
			}
			bands, mask, err := s.Load([]string{"red", "nir"}, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			compareRef(t, ndvi(bands[0], bands[1], mask), reference(t, name, "ndvi"), 1e-12)
			// 20 m bands on the 10 m grid: each 20 m pixel repeated 2×2.
			// (The mask is of the bands loaded: saturation in red does not
			// mask an index of other bands.)
			bands, mask, err = s.Load([]string{"rededge1", "nir2"}, LoadOptions{})
			s.Close()
			if err != nil {
				t.Fatal(err)
			}
			compareRef(t, ndvi(bands[0], bands[1], mask), reference(t, name, "ndre_20m"), 1e-12)
		}
	}
}

func TestSentinel2Radiometry(t *testing.T) {
	load := func(name string) ([]compute.BandInput, []uint8) {
		s, err := Open(fx(t, name+".SAFE"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		b, m, err := s.Load([]string{"red", "nir"}, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return b, m
	}
	oldB, _ := load(s2Old)
	newB, mask := load(s2New)
	red := newB[0]
	// Same reflectance in both fixtures' smooth field: baseline 05 DNs are
	// 1000 higher and the -1000 brings them back.
	i := 30*64 + 30
	if d := oldB[0].Plane.At(i) - red.Plane.At(i); d != -1000 {
		t.Fatalf("DN difference %v, want -1000 (the fixtures' offset)", d)
	}
	if a, b := Value(oldB[0], i), Value(red, i); a != b || a <= 0 || a > 0.2 {
		t.Fatalf("reflectance baseline 03 %v, baseline 05 %v: want equal", a, b)
	}
	// DN 0 is nodata: NaN.
	if red.Plane.At(0) != 0 || !math.IsNaN(Value(red, 0)) {
		t.Fatalf("DN %v gives %v, want NaN", red.Plane.At(0), Value(red, 0))
	}
	// DN 1000 at baseline 05 is a reflectance of exactly 0.
	if j := 50*64 + 10; red.Plane.At(j) != 1000 || Value(red, j) != 0 {
		t.Fatalf("DN %v gives %v, want exactly 0", red.Plane.At(j), Value(red, j))
	}
	// Saturated pixels (65535) are masked, in red and in nir.
	for _, j := range []int{40*64 + 40, 41*64 + 41, 30*64 + 60} {
		if mask[j] != 1 {
			t.Errorf("saturated pixel %d not masked", j)
		}
	}
	if mask[30*64+30] != 0 {
		t.Error("a clear vegetation pixel is masked")
	}
	// Mask none: no mask at all.
	s, _ := Open(fx(t, s2New+".SAFE"))
	defer s.Close()
	if _, m, err := s.Load([]string{"red"}, LoadOptions{Mask: "none"}); err != nil || m != nil {
		t.Fatalf("mask none: %v %v", m != nil, err)
	}
}

// A baseline 04.00 or later without offsets in the XML gets -1000, with a
// note.
func TestSentinel2AssumedOffset(t *testing.T) {
	dir := filepath.Join(t.TempDir(), s2New+".SAFE")
	copyTree(t, fx(t, s2New+".SAFE"), dir)
	p := filepath.Join(dir, "MTD_MSIL2A.xml")
	b, _ := os.ReadFile(p)
	x := string(b)
	x = x[:strings.Index(x, "<BOA_ADD_OFFSET_VALUES_LIST>")] + x[strings.Index(x, "</BOA_ADD_OFFSET_VALUES_LIST>")+len("</BOA_ADD_OFFSET_VALUES_LIST>"):]
	os.WriteFile(p, []byte(x), 0o644)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Bands["red"].Radiometry.Add != -1000 || len(s.Notes) == 0 || !strings.Contains(s.Notes[0], "-1000") {
		t.Fatalf("add %v notes %v", s.Bands["red"].Radiometry.Add, s.Notes)
	}
}

// The SCL mask with a buffer: the cloud and shadow classes grow by the
// buffer (a square), nodata does not. Checked against a direct
// computation from the SCL as GDAL reads it.
func TestSCLMaskBuffer(t *testing.T) {
	needGDALTool(t)
	s, err := Open(fx(t, s2New+".SAFE.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw := filepath.Join(t.TempDir(), "scl.raw")
	sclFile := filepath.Join(fx(t, s2New+".SAFE"), strings.TrimPrefix(s.Mask.Source.File, s2New+".SAFE/"))
	if out, err := exec.Command("gdal_translate", "-q", "-of", "ENVI", "-ot", "UInt16", sclFile, raw).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	scl := rawU16(t, raw)
	for _, buf := range []int{0, 1, 3} {
		_, mask, err := s.Load([]string{"red", "nir"}, LoadOptions{MaskBuffer: buf})
		if err != nil {
			t.Fatal(err)
		}
		bands, _, _ := s.Load([]string{"red", "nir"}, LoadOptions{Mask: "none"})
		for y := range 64 {
			for x := range 64 {
				c := scl[(y/2)*32+x/2]
				want := c == 0 || c == 1 || bands[0].Plane.At(y*64+x) == 65535 || bands[1].Plane.At(y*64+x) == 65535
				for dy := -buf; dy <= buf && !want; dy++ {
					for dx := -buf; dx <= buf && !want; dx++ {
						xx, yy := x+dx, y+dy
						if xx >= 0 && yy >= 0 && xx < 64 && yy < 64 {
							c := scl[(yy/2)*32+xx/2]
							want = c == 3 || c == 8 || c == 9 || c == 10
						}
					}
				}
				if (mask[y*64+x] == 1) != want {
					t.Fatalf("buffer %d: pixel (%d, %d) masked %d, want %v (SCL %d)", buf, x, y, mask[y*64+x], want, c)
				}
			}
		}
	}
	// A window loads the same pixels as the whole.
	_, full, _ := s.Load([]string{"nir2"}, LoadOptions{MaskBuffer: 2})
	wb, wm, err := s.Load([]string{"nir2"}, LoadOptions{MaskBuffer: 2, Window: rect(5, 7, 41, 30)})
	if err != nil {
		t.Fatal(err)
	}
	fb, _, _ := s.Load([]string{"nir2"}, LoadOptions{})
	for y := 7; y < 30; y++ {
		for x := 5; x < 41; x++ {
			i := (y-7)*36 + x - 5
			if wb[0].Plane.At(i) != fb[0].Plane.At(y*64+x) {
				t.Fatalf("window pixel (%d, %d) differs", x, y)
			}
			// The buffer inside a window sees only the window.
			if wm[i] == 1 && full[y*64+x] != 1 {
				t.Fatalf("window mask (%d, %d) masked, the whole is not", x, y)
			}
		}
	}
}

func needGDALTool(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"gdal_translate", "gdalinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
				t.Fatalf("%s not found but CANOPY_EXPECT_GDAL=1", tool)
			}
			t.Skipf("%s not found (Debian gdal-bin): skipping the GDAL cross-check", tool)
		}
	}
}

// GDAL's SENTINEL2 driver opens the fixture: same 10 m bands, same
// geocoding.
func TestSentinel2MatchesGDALDriver(t *testing.T) {
	needGDALTool(t)
	safe := fx(t, s2New+".SAFE")
	sub := "SENTINEL2_L2A:" + filepath.Join(safe, "MTD_MSIL2A.xml") + ":10m:EPSG_32632"
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
	if !slices.Equal(info.GeoTransform, a[:]) || info.Size[0] != s.Grid.Width || info.Size[1] != s.Grid.Height || !strings.Contains(info.CRS.WKT, `ID["EPSG",32632]`) {
		t.Fatalf("GDAL: %v %v; Canopy: %v %dx%d", info.GeoTransform, info.Size, a, s.Grid.Width, s.Grid.Height)
	}
	raw := filepath.Join(t.TempDir(), "s2.raw")
	if out, err := exec.Command("gdal_translate", "-q", "-of", "ENVI", sub, raw).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	all := rawU16(t, raw)
	roles := map[string]string{"B4": "red", "B3": "green", "B2": "blue", "B8": "nir"}
	for i, b := range info.Bands {
		role := roles[strings.Split(b.Description, ",")[0]]
		if role == "" {
			t.Fatalf("GDAL band %q", b.Description)
		}
		got, _, err := s.Load([]string{role}, LoadOptions{Mask: "none"})
		if err != nil {
			t.Fatal(err)
		}
		want := all[i*64*64 : (i+1)*64*64]
		for j, v := range want {
			if got[0].Plane.At(j) != float64(v) {
				t.Fatalf("%s pixel %d: %v, GDAL %d", role, j, got[0].Plane.At(j), v)
			}
		}
	}
}
