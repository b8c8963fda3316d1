package stack

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// Entries takes what a person picks for a stack: a folder of scenes (its
// GeoTIFFs by name, dated by their names; side files, hidden files and
// plain sub-folders left out), a list file, a saved search and single
// files; a path it cannot date is one line naming it.
func TestEntries(t *testing.T) {
	dir := t.TempDir()
	scenes := filepath.Join(dir, "season")
	os.MkdirAll(filepath.Join(scenes, "notes"), 0o755)
	g := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, 600000, 5300000, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32632}}
	tif := func(p string) {
		if err := geotiff.WriteBands(p, 3, 2, [][]uint16{{1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1}}, g, geotiff.WriteOptions{Descriptions: []string{"red", "nir"}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"b_20240612.tif", "a_2024-05-02.tif", "c_20240701.tiff"} {
		tif(filepath.Join(scenes, n))
	}
	os.WriteFile(filepath.Join(scenes, "b_20240612.tif.aux.xml"), []byte("<PAMDataset/>"), 0o644)
	os.WriteFile(filepath.Join(scenes, ".hidden.tif"), []byte("not a tiff"), 0o644)
	os.WriteFile(filepath.Join(scenes, "readme.txt"), []byte("a season"), 0o644)
	undated := filepath.Join(dir, "undated.tif")
	tif(undated)
	list := filepath.Join(dir, "list.csv")
	os.WriteFile(list, []byte("undated.tif,2024-08-15\n"), 0o644)
	search := filepath.Join(dir, "r.json")
	os.WriteFile(search, []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","stac_version":"1.0.0","id":"x","collection":"sentinel-2-l2a",`+
		`"properties":{"datetime":"2024-09-01T10:36:29Z","platform":"sentinel-2a"},"geometry":null,"links":[],"assets":{"red":{"href":"https://example.com/B04.tif"}}}]}`), 0o644)
	items := filepath.Join(dir, "items")
	es, err := Entries(context.Background(), []string{scenes, list, search}, items)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		name := filepath.Base(e.Path)
		if filepath.Dir(e.Path) == items {
			name = "item" // SaveItem's name for it
		}
		got = append(got, name+" "+e.Time.Format("2006-01-02")+" "+e.How)
	}
	want := []string{"a_2024-05-02.tif 2024-05-02 file name", "b_20240612.tif 2024-06-12 file name", "c_20240701.tiff 2024-07-01 file name",
		"undated.tif 2024-08-15 list", "item 2024-09-01 STAC item"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("entries\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range []struct {
		paths []string
		want  string
	}{
		{[]string{undated}, "undated.tif: no date"},
		{[]string{filepath.Join(scenes, "notes")}, "notes: no scene in the folder"},
		{[]string{filepath.Join(dir, "gone_20240101.tif")}, "gone_20240101.tif"},
	} {
		_, err := Entries(context.Background(), c.paths, items)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line with %q", c.paths, err, c.want)
		}
	}
}
