package geotiff

import (
	"path/filepath"
	"strings"
	"testing"
)

// Band descriptions land where GDAL (and so QGIS) reads them, escaped.
func TestBandDescriptionsMatchGDAL(t *testing.T) {
	needGDAL(t)
	p := filepath.Join(t.TempDir(), "indices.tif")
	bands := [][]float32{{1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1}, {0, 0, 0, 0, 0, 0}}
	if err := WriteBands(p, 3, 2, bands, nil, WriteOptions{NoData: "nan", Descriptions: []string{"ndvi", "a<b & c", ""}}); err != nil {
		t.Fatal(err)
	}
	out := gdal(t, "gdalinfo", p)
	for _, want := range []string{"Description = ndvi", "Description = a<b & c"} {
		if !strings.Contains(out, want) {
			t.Errorf("gdalinfo does not show %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "Description =") != 2 {
		t.Errorf("want 2 descriptions (the empty one left out):\n%s", out)
	}
}
