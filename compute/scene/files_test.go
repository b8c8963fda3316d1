package scene

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFiles: a scene lists every file on disk it is made of, so that an
// output can refuse to replace any of them (a band file, the metadata, a
// mask), whatever kind of product it is.
func TestFiles(t *testing.T) {
	for _, c := range []struct {
		product string
		want    []string // base names (suffixes) that must be listed
		n       int      // at least this many files
	}{
		{s2New + ".SAFE", []string{"MTD_MSIL2A.xml", "_B04_10m.jp2", "_B08_10m.jp2", "_SCL_20m.jp2"}, 5},
		{s2New + ".SAFE/MTD_MSIL2A.xml", []string{"MTD_MSIL2A.xml", "_B04_10m.jp2"}, 5},
		{s2New + ".SAFE.zip", []string{s2New + ".SAFE.zip"}, 1},
		{lsID, []string{"_MTL.txt", "_SR_B4.TIF", "_SR_B5.TIF", "_QA_PIXEL.TIF"}, 5},
		{lsID + ".tar", []string{lsID + ".tar"}, 1},
		{"stac/item.json", []string{"item.json", "B04.tif", "B08.tif"}, 3},
		{"ortho_rgba.tif", []string{"ortho_rgba.tif"}, 1},
	} {
		p := fx(t, c.product)
		s, err := Open(p)
		if err != nil {
			t.Fatalf("%s: %v", c.product, err)
		}
		files := s.Files()
		s.Close()
		if len(files) < c.n {
			t.Errorf("%s: %d files %v, want at least %d", c.product, len(files), files, c.n)
		}
		for _, f := range files {
			if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() && !st.IsDir() {
				t.Errorf("%s: lists %s, not a file on disk (%v)", c.product, f, err)
			}
		}
		for _, w := range c.want {
			found := false
			for _, f := range files {
				found = found || strings.HasSuffix(filepath.Base(f), w)
			}
			if !found {
				t.Errorf("%s: no file *%s among %v", c.product, w, files)
			}
		}
	}
}
