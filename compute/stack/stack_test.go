package stack

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"canopy/compute"
	"canopy/compute/geotiff"
	_ "canopy/compute/goback"
	"canopy/compute/index"
	"canopy/compute/season"
	"canopy/compute/source"
)

func TestFileNameDate(t *testing.T) {
	for name, want := range map[string]string{
		"S2B_MSIL2A_20240612T103629_N0510_R008_T32UNE_20240612T134015.zip": "2024-06-12",
		"ndvi_2023-08-15.tif":                      "2023-08-15",
		"/a/2019/b_20190101.tif":                   "2019-01-01",
		"LC08_L2SP_196024_20230815_20230822_02_T1": "2023-08-15",
	} {
		d, ok := FileNameDate(name)
		if !ok || d.Format("2006-01-02") != want {
			t.Errorf("%s: %v %v, want %s", name, d, ok, want)
		}
	}
	for _, name := range []string{"band4.tif", "x_20241301.tif", "123456789.tif", "a_2024-02-30x.tif"} {
		if d, ok := FileNameDate(name); ok {
			t.Errorf("%s: took %v", name, d)
		}
	}
}

func TestReadListAndGroup(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "l.csv")
	os.WriteFile(list, []byte("# a list\nb.tif,2024-06-02\n\n/abs/a.tif , 2024-06-01\nc.tif,20240602\n"), 0o644)
	es, err := ReadList(list)
	if err != nil {
		t.Fatal(err)
	}
	ds := Group(es)
	if len(ds) != 2 || ds[0].ISO != "2024-06-01" || ds[1].ISO != "2024-06-02" {
		t.Fatalf("%+v", ds)
	}
	if !slices.Equal(ds[1].Paths, []string{filepath.Join(dir, "b.tif"), filepath.Join(dir, "c.tif")}) || ds[0].Paths[0] != "/abs/a.tif" {
		t.Errorf("paths %v %v", ds[0].Paths, ds[1].Paths)
	}
	if want := season.DecimalYear(time.Date(2024, 6, 2, 0, 0, 0, 0, time.UTC)); ds[1].Decimal != want {
		t.Errorf("decimal %v, want %v", ds[1].Decimal, want)
	}
	for _, bad := range []string{"a.tif\n", "a.tif,yesterday\n", ",2024-01-01\n", "\n# nothing\n"} {
		os.WriteFile(list, []byte(bad), 0o644)
		if _, err := ReadList(list); err == nil {
			t.Errorf("%q was taken", bad)
		}
	}
}

// TestSpill builds one stack in memory and one past a budget of one byte
// (a temporary file) and checks that a model gives the same planes, and
// that the file is gone after Close.
func TestSpill(t *testing.T) {
	dir := t.TempDir()
	var entries []Entry
	d0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	w, h := 13, 11
	for i := range 20 {
		d := d0.AddDate(0, 0, 20*i)
		red, nir := make([]uint16, w*h), make([]uint16, w*h)
		for k := range red {
			red[k] = uint16(400 + 3*k + 7*i)
			nir[k] = uint16(2500 + 11*k - 13*i + int(400*math.Cos(float64(i))))
		}
		red[(i*5)%len(red)] = 0
		p := filepath.Join(dir, "d_"+d.Format("20060102")+".tif")
		g := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, 600000, 5300000, 0},
			GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32632}}
		if err := geotiff.WriteBands(p, w, h, [][]uint16{red, nir}, g, geotiff.WriteOptions{NoData: "0", Descriptions: []string{"red", "nir"}}); err != nil {
			t.Fatal(err)
		}
		e, err := DateOf(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	b, err := compute.New(compute.NameGo)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, ex, err := index.Resolve("ndvi")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	var planes [2][][]float32
	for k, budget := range []int64{0, 1} {
		st, err := Build(context.Background(), Group(entries), Options{Backend: b, Name: "ndvi", Expr: ex, Budget: budget, TempDir: tmp})
		if err != nil {
			t.Fatal(err)
		}
		if st.InMemory() != (budget == 0) {
			t.Fatalf("budget %d: in memory %v", budget, st.InMemory())
		}
		planes[k] = make([][]float32, 4)
		m := season.DefaultMosum(season.Period{From: 2020, To: 2020.7}, season.Period{From: 2020.7, To: math.Inf(1)})
		m.Harmonics = 1
		if _, _, err := Run(context.Background(), st, b, m, func(y0, rows int, out [][]float32) error {
			for i, o := range out {
				planes[k][i] = append(planes[k][i], o...)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("left in the temporary folder: %v", left)
		}
	}
	for i := range planes[0] {
		if len(planes[0][i]) != w*h {
			t.Fatalf("plane %d has %d values", i, len(planes[0][i]))
		}
		for p := range planes[0][i] {
			a, c := planes[0][i][p], planes[1][i][p]
			if a != c && !(a != a && c != c) {
				t.Fatalf("plane %d pixel %d: %v in memory, %v from the file", i, p, a, c)
			}
		}
	}
	if cnt := planes[0][3][0]; cnt < 15 {
		t.Errorf("count %v: the stack's values did not come through", cnt)
	}
}

func TestSavedSearch(t *testing.T) {
	dir := t.TempDir()
	item := func(id, date string) string {
		return `{"type":"Feature","stac_version":"1.0.0","id":"` + id + `","collection":"sentinel-2-l2a",` +
			`"properties":{"datetime":"` + date + `","platform":"sentinel-2b"},"geometry":null,` +
			`"links":[{"rel":"self","href":"https://example.com/items/` + id + `"}],` +
			`"assets":{"red":{"href":"B04.tif"}}}`
	}
	p := filepath.Join(dir, "r.json")
	os.WriteFile(p, []byte(`{"type":"FeatureCollection","features":[`+item("b", "2024-06-12T10:36:29Z")+`,`+item("a", "2024-05-02T10:36:29Z")+`]}`), 0o644)
	es, ok, err := SavedSearch(p, filepath.Join(dir, "items"))
	if err != nil || !ok || len(es) != 2 {
		t.Fatalf("%v %v %v", es, ok, err)
	}
	if es[0].Time.Format("2006-01-02") != "2024-05-02" || es[1].Time.Format("2006-01-02") != "2024-06-12" || es[0].Sensor != "sentinel-2b" {
		t.Errorf("entries %+v", es)
	}
	b, err := os.ReadFile(es[1].Path)
	if err != nil || !strings.Contains(string(b), "https://example.com/items/B04.tif") {
		t.Errorf("the saved item %s: %s %v", es[1].Path, b, err)
	}
	// A single item is not a saved search: dated as any path.
	one := filepath.Join(dir, "one.json")
	os.WriteFile(one, []byte(item("c", "2024-07-01T00:00:00Z")), 0o644)
	if _, ok, err := SavedSearch(one, dir); ok || err != nil {
		t.Errorf("a single item: %v %v", ok, err)
	}
	if _, ok, _ := SavedSearch(filepath.Join(dir, "x.tif"), dir); ok {
		t.Error("a GeoTIFF taken for a search")
	}
}

// TestPart: the parts of a grid are disjoint, in order, cover it and
// start on multiples of PartRows; the blocks of the models never cross
// one, and a part's blocks are the whole's.
func TestPart(t *testing.T) {
	for _, h := range []int{1, 511, 512, 513, 1100, 5000} {
		st := &Stack{Grid: source.Grid{Width: 3, Height: h}, Dates: make([]Date, 2), Y1: h}
		whole := map[[2]int]bool{}
		for _, b := range st.blocks(0, h) {
			whole[b] = true
			if b[0]/PartRows != (b[1]-1)/PartRows {
				t.Fatalf("height %d: block %v crosses a band", h, b)
			}
		}
		for n := 1; n <= 7; n++ {
			next := 0
			for i := range n {
				y0, y1 := Part(h, i, n)
				if y0 != next || y1 < y0 || y0%PartRows != 0 && y0 != h {
					t.Fatalf("height %d, part %d/%d: rows %d to %d after %d", h, i, n, y0, y1, next)
				}
				next = y1
				for _, b := range st.blocks(y0, y1) {
					if !whole[b] {
						t.Fatalf("height %d, part %d/%d: block %v is not one of the whole's", h, i, n, b)
					}
				}
			}
			if next != h {
				t.Errorf("height %d in %d parts: covered to %d", h, n, next)
			}
		}
	}
	for _, bad := range [][2]int{{0, 0}, {2, 2}, {-1, 2}} {
		if y0, y1 := Part(100, bad[0], bad[1]); y0 != 0 || y1 != 0 {
			t.Errorf("Part(100, %d, %d) = %d, %d", bad[0], bad[1], y0, y1)
		}
	}
}
