package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	stdpng "image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"canopy/compute/geotiff"
	"canopy/compute/raster"
	"canopy/compute/season"
)

// seasonStack writes n dates of a w×h two-band (red, nir) uint16 GeoTIFF,
// about every 16 days from 2019-01-01, each named s_YYYYMMDD.tif: NDVI on
// a seasonal curve, a clear-cut (NIR down) from cutFrom in the pixels
// x < w/2, y < h/2, a cloud (nodata) on every fifth date over row 0.
func seasonStack(t *testing.T, dir string, w, h, n int, cutFrom time.Time) ([]string, []time.Time) {
	t.Helper()
	var paths []string
	var dates []time.Time
	d0 := time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		d := d0.AddDate(0, 0, 16*i+(i*7)%5)
		red, nir := make([]uint16, w*h), make([]uint16, w*h)
		phase := season.DecimalYear(d)
		for y := range h {
			for x := range w {
				k := y*w + x
				ndvi := 0.55 + 0.2*math.Cos(2*math.Pi*(phase-0.55)) + 0.01*math.Sin(float64(7*i+3*x+5*y))
				if !d.Before(cutFrom) && x < w/2 && y < h/2 {
					ndvi -= 0.35
				}
				r := 500.0 + 10*float64(x)
				red[k] = uint16(r)
				nir[k] = uint16(r * (1 + ndvi) / (1 - ndvi))
				if i%5 == 4 && y == 0 {
					red[k], nir[k] = 0, 0
				}
			}
		}
		p := filepath.Join(dir, "s_"+d.Format("20060102")+".tif")
		if err := geotiff.WriteBands(p, w, h, [][]uint16{red, nir}, geoIn(32632), geotiff.WriteOptions{NoData: "0", Descriptions: []string{"red", "nir"}}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		dates = append(dates, d)
	}
	return paths, dates
}

func TestStackListsDates(t *testing.T) {
	dir := t.TempDir()
	paths, dates := seasonStack(t, dir, 12, 8, 6, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	// The first date twice: a second file of the same day is mosaicked.
	twin := filepath.Join(dir, "twin.tif")
	b, _ := os.ReadFile(paths[0])
	os.WriteFile(twin, b, 0o644)
	list := filepath.Join(dir, "dates.csv")
	os.WriteFile(list, []byte("# path,date\ntwin.tif,"+dates[0].Format("2006-01-02")+"\n"), 0o644)
	code, out, e := run(t, append([]string{"stack", "--json", "--list", list}, paths...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var rep stackReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Dates) != 6 || rep.Width != 12 || rep.Height != 8 || rep.Index != "ndvi" {
		t.Fatalf("report %+v", rep)
	}
	for i, d := range rep.Dates {
		if d.ISO != dates[i].Format("2006-01-02") {
			t.Errorf("date %d is %s, want %s", i, d.ISO, dates[i].Format("2006-01-02"))
		}
		want := 1.0
		if i == 4 {
			want = 1 - 1.0/8 // row 0 clouded
		}
		if math.Abs(d.ValidShare-want) > 1e-12 {
			t.Errorf("date %s valid share %v, want %v", d.ISO, d.ValidShare, want)
		}
	}
	if got := rep.Dates[0].Paths; len(got) != 2 || rep.Dates[0].How != "list" && rep.Dates[0].How != "file name" {
		t.Errorf("first date: %+v", rep.Dates[0])
	}
	if rep.Dates[1].How != "file name" {
		t.Errorf("date from %q, want the file name", rep.Dates[1].How)
	}
}

func TestStackDateFromMetadata(t *testing.T) {
	if _, err := exec.LookPath("gdal_translate"); err != nil {
		if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
			t.Fatal("gdal_translate not found but CANOPY_EXPECT_GDAL=1")
		}
		t.Skip("gdal_translate not found")
	}
	dir := t.TempDir()
	paths, _ := seasonStack(t, dir, 8, 4, 1, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	a, b := filepath.Join(dir, "a.tif"), filepath.Join(dir, "b.tif")
	// GDAL's ACQUISITIONDATE item, and the TIFF DateTime tag.
	if out, err := exec.Command("gdal_translate", "-q", "-mo", "ACQUISITIONDATE=2021-05-04T10:30:00Z", paths[0], a).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if out, err := exec.Command("gdal_translate", "-q", "-mo", "TIFFTAG_DATETIME=2022:07:08 11:00:00", paths[0], b).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	code, out, e := run(t, "stack", a, b, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var rep stackReport
	json.Unmarshal([]byte(out), &rep)
	if len(rep.Dates) != 2 || rep.Dates[0].ISO != "2021-05-04" || rep.Dates[1].ISO != "2022-07-08" || rep.Dates[0].How != "metadata" {
		t.Fatalf("dates %+v", rep.Dates)
	}
	// No date anywhere: one line naming the file and what to do.
	c := filepath.Join(dir, "nodate.tif")
	b0, _ := os.ReadFile(paths[0])
	os.WriteFile(c, b0, 0o644)
	code, _, e = run(t, "stack", c)
	if code != 1 || !strings.Contains(e, "nodate.tif") || !strings.Contains(e, "list file") || strings.Count(strings.TrimSpace(e), "\n") > 0 {
		t.Errorf("exit %d: %s", code, e)
	}
}

func TestCompositeMedian(t *testing.T) {
	dir := t.TempDir()
	paths, _ := seasonStack(t, dir, 10, 6, 24, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	tif := filepath.Join(dir, "summer.tif")
	code, _, e := run(t, append([]string{"composite", "--period", "2019-06/2019-08", "--stat", "median", "--backend", "c", "--tif", tif}, paths...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	got := loadAll(t, tif)
	if len(got) != 3 {
		t.Fatalf("%d bands, want value, count, date", len(got))
	}
	// Pixel (3, 2): the median of its NDVI on the summer's dates, computed
	// here from the files.
	var v []float64
	for _, p := range paths {
		base := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "s_"), ".tif")
		d, _ := time.Parse("20060102", base)
		if d.Month() < 6 || d.Month() > 8 || d.Year() != 2019 {
			continue
		}
		b := loadAll(t, p)
		r, n := float64(b[0][2*10+3]), float64(b[1][2*10+3])
		v = append(v, float64(ndvi32(r, n)))
	}
	slices.Sort(v)
	want := v[len(v)/2]
	if len(v)%2 == 0 {
		want = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	if g := float64(got[0][2*10+3]); math.Abs(g-want) > 1e-6 {
		t.Errorf("median %v, want %v", g, want)
	}
	if g := got[1][2*10+3]; int(g) != len(v) {
		t.Errorf("count %v, want %d", g, len(v))
	}
}

func TestMonitorFindsTheCut(t *testing.T) {
	dir := t.TempDir()
	cut := time.Date(2022, 3, 10, 0, 0, 0, 0, time.UTC)
	paths, dates := seasonStack(t, dir, 12, 8, 92, cut) // 2019 to early 2023
	_, _, stands := zonalFixture(t, dir, 2, 8)
	tif, csvOut, gpkg, png := filepath.Join(dir, "alerts.tif"), filepath.Join(dir, "alerts.csv"), filepath.Join(dir, "alerts.gpkg"), filepath.Join(dir, "alerts.png")
	lay := filepath.Join(dir, "alerts-layout.pdf")
	for _, backend := range []string{"go", "c", "c --memory 0"} {
		backend, memory, _ := strings.Cut(backend, " --memory ")
		if memory == "" {
			memory = "256"
		}
		os.Remove(tif)
		os.Remove(csvOut)
		os.Remove(gpkg)
		os.Remove(png)
		os.Remove(lay)
		args := append([]string{"monitor", "--index", "ndvi", "--history", "2019-01-01/2021-12-31", "--monitor", "2022-01-01/", "--harmonics", "2",
			"--backend", backend, "--memory", memory, "--stands", stands, "--csv", csvOut, "--gpkg", gpkg, "--png", png, "--layout", lay, "--paper", "a5", "--tif", tif, "--json"}, paths...)
		code, out, e := run(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", backend, code, e)
		}
		var rep seasonReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		got := loadAll(t, tif)
		if len(got) != 4 {
			t.Fatalf("%d bands", len(got))
		}
		// The first date of the cut, to the day.
		var first time.Time
		for _, d := range dates {
			if !d.Before(cut) {
				first = d
				break
			}
		}
		brk := got[0]
		for y := range 8 {
			for x := range 12 {
				b := float64(brk[y*12+x])
				if x < 6 && y < 4 {
					if math.IsNaN(b) || season.ISODate(b) > first.AddDate(0, 0, 60).Format("2006-01-02") || b < season.DecimalYear(first)-1e-4 {
						t.Errorf("%s: pixel (%d, %d) in the cut: break %v (%s), the cut from %s", backend, x, y, b, season.ISODate(b), first.Format("2006-01-02"))
					}
				} else if !math.IsNaN(b) {
					t.Errorf("%s: pixel (%d, %d) outside the cut: a break on %s", backend, x, y, season.ISODate(b))
				}
			}
		}
		if rep.Alerts != 24 {
			t.Errorf("%s: %d pixels alerted, want 24", backend, rep.Alerts)
		}
		f, err := os.Open(csvOut)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil || len(rows) != 3 || strings.Join(rows[0], ",") != "id,first_alert,first_alert_year,alerted_ha,area_ha,monitored_ha,share" {
			t.Fatalf("%s: csv %v %v", backend, rows, err)
		}
		// Both stands reach into the cut: their first alert is its first
		// date, to the day (not the evening before, as a float32 date
		// would round).
		for _, r := range rows[1:] {
			if r[1] != first.Format("2006-01-02") || r[3] == "0" || r[6] == "" {
				t.Errorf("%s: stand %s: %v, want a first alert on %s", backend, r[0], r, first.Format("2006-01-02"))
			}
		}
		for _, p := range []string{gpkg, png, lay} {
			if _, err := os.Stat(p); err != nil {
				t.Error(err)
			}
		}
		// The map: transparent outside the cut, coloured in it.
		f, err = os.Open(png)
		if err != nil {
			t.Fatal(err)
		}
		im, err := stdpng.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, a := im.At(1, 1).RGBA(); a == 0 {
			t.Errorf("%s: the map is transparent in the cut", backend)
		}
		if _, _, _, a := im.At(10, 6).RGBA(); a != 0 {
			t.Errorf("%s: the map is not transparent outside the cut", backend)
		}
	}
}

func TestSeasonUsage(t *testing.T) {
	dir := t.TempDir()
	paths, _ := seasonStack(t, dir, 4, 4, 3, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	out := filepath.Join(dir, "o.tif")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"composite", paths[0], "--tif", out}, "--period"},
		{[]string{"composite", paths[0], "--period", "2019/2019", "--stat", "p101", "--tif", out}, "--stat"},
		{[]string{"composite", paths[0], "--period", "2019-13/2019", "--tif", out}, "--period"},
		{[]string{"monitor", paths[0], "--history", "2019/2019", "--tif", out}, "--monitor"},
		{[]string{"monitor", paths[0], "--history", "2019/2019", "--monitor", "2018/", "--tif", out}, "after the history"},
		{[]string{"monitor", paths[0], "--history", "2019/2019", "--monitor", "2020/", "--window", "0.3", "--tif", out}, "0.3"},
		{[]string{"monitor", paths[0], "--history", "2019/2019", "--monitor", "2020/", "--rule", "x", "--tif", out}, "--rule"},
		{[]string{"stack"}, "STACK"},
		{[]string{"composite", paths[0], "--period", "2019/2019", "--devices", "0", "--tif", out}, "--devices"},
		{[]string{"monitor", paths[0], "--history", "2019/2019", "--monitor", "2020/", "--devices", "x", "--tif", out}, "--devices"},
		{[]string{"composite", paths[0], "--period", "2019/2019", "--backend", "c", "--devices", "2", "--tif", out}, "the c backend runs on one device, not 2"},
	} {
		code, _, e := run(t, c.args...)
		if code != 2 || !strings.Contains(e, c.want) {
			t.Errorf("%v: exit %d, %s (want usage naming %s)", c.args, code, e, c.want)
		}
	}
}

// loadAll reads every band of a GeoTIFF as float32.
func loadAll(t *testing.T, path string) [][]float32 {
	t.Helper()
	f, err := geotiff.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	n := f.Bands()
	f.Close()
	var out [][]float32
	for b := 1; b <= n; b++ {
		band, err := raster.Load(fmt.Sprintf("%s:%d", path, b))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, band.Data)
	}
	return out
}
