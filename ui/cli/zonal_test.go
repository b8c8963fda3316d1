package cli

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"canopy/compute/raster"
)

// canopy zonal on pixel-aligned stands: every column of the CSV equals a
// direct computation over the stand's pixels (full coverage, no weights).
func TestZonalPixelAlignedStands(t *testing.T) {
	dir := t.TempDir()
	red, nir := fakePair(t, dir, "40x30")
	// The fake grid: 10 m pixels from (600000, 5300000) down and right.
	rect := func(c0, r0, c1, r1 int) string {
		x0, x1 := 600000+10*float64(c0), 600000+10*float64(c1)
		y0, y1 := 5300000-10*float64(r0), 5300000-10*float64(r1)
		return fmt.Sprintf("[[[%g,%g],[%g,%g],[%g,%g],[%g,%g],[%g,%g]]]", x0, y0, x1, y0, x1, y1, x0, y1, x0, y0)
	}
	stands := [][4]int{{0, 0, 10, 10}, {5, 12, 37, 29}, {20, 3, 21, 4}}
	var feats []string
	for i, s := range stands {
		feats = append(feats, fmt.Sprintf(`{"type":"Feature","properties":{"name":"s%d"},"geometry":{"type":"Polygon","coordinates":%s}}`, i, rect(s[0], s[1], s[2], s[3])))
	}
	gj := `{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::32632"}},"features":[` + strings.Join(feats, ",") + `]}`
	sp := filepath.Join(dir, "stands.geojson")
	os.WriteFile(sp, []byte(gj), 0o644)
	out := filepath.Join(dir, "stats.csv")
	code, _, e := run(t, "zonal", "--red", red, "--nir", nir, "--stands", sp, "--id", "name", "--csv", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	f, _ := os.Open(out)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// DESIGN.md's columns, hectares per class, then the stands' own
	// attributes (here their name).
	if strings.Join(rows[0][:12], ",") != "id,pixels,valid_pixels,area_ha,valid_ha,mean,median,std,min,max,p10,p90" || !strings.HasPrefix(rows[0][12], "ha_") || rows[0][len(rows[0])-1] != "name" {
		t.Fatalf("header %v", rows[0])
	}
	rb, _ := raster.Load(red)
	nb, _ := raster.Load(nir)
	for i, s := range stands {
		row := rows[i+1]
		var sum, n float64
		mn, mx := math.Inf(1), math.Inf(-1)
		for y := s[1]; y < s[3]; y++ {
			for x := s[0]; x < s[2]; x++ {
				r, v := float64(rb.Data[y*40+x]), float64(nb.Data[y*40+x])
				nd := float64(float32(float32(v-r) / float32(v+r)))
				sum += nd
				n++
				mn, mx = math.Min(mn, nd), math.Max(mx, nd)
			}
		}
		num := func(k int) float64 { v, _ := strconv.ParseFloat(row[k], 64); return v }
		if row[0] != fmt.Sprintf("s%d", i) || num(1) != n || num(2) != n || math.Abs(num(3)-n*100/1e4) > 1e-9 || math.Abs(num(4)-n*100/1e4) > 1e-9 || row[len(row)-1] != row[0] {
			t.Errorf("stand %d: %v, want %g pixels", i, row, n)
		}
		if math.Abs(num(5)-sum/n) > 1e-6 || math.Abs(num(8)-mn) > 1e-6 || math.Abs(num(9)-mx) > 1e-6 {
			t.Errorf("stand %d: mean %s min %s max %s, want %g %g %g", i, row[5], row[8], row[9], sum/n, mn, mx)
		}
	}
	// Bad stands: one clear line each.
	for _, c := range [][]string{
		{"--stands", filepath.Join(dir, "none.gpkg"), "--csv", out},
		{"--stands", sp},
		{"--stands", filepath.Join(dir, "x.shp"), "--csv", out},
	} {
		code, _, e := run(t, append([]string{"zonal", "--red", red, "--nir", nir}, c...)...)
		if code == 0 || strings.Count(strings.TrimSpace(e), "\n") != 0 {
			t.Errorf("%v: exit %d, %q", c, code, e)
		}
	}
}
