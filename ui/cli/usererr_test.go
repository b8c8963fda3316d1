package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"canopy/compute/backends"
)

// TestErrorsInUsersWords: what the terminal says when a run fails on a
// file is one line in the user's words naming the file (compute/usererr,
// as the window says it), and exit status 1.
func TestErrorsInUsersWords(t *testing.T) {
	dir := t.TempDir()
	red, nir := fakePair(t, dir, "16x16")
	red2, _ := fakePair(t, dir, "17x16")
	missing := filepath.Join(dir, "B04.tif")
	noDir := filepath.Join(dir, "nodir", "ndvi.tif")
	notGPKG := filepath.Join(dir, "stands.gpkg")
	os.WriteFile(notGPKG, []byte("SQLite format 3\x00 but not really a database at all, only junk"), 0o644)
	badJSON := filepath.Join(dir, "stands.geojson")
	os.WriteFile(badJSON, []byte(`{"type": "FeatureCollection", "features": [`), 0o644)
	junkZip := filepath.Join(dir, "S2A_MSIL2A.zip")
	os.WriteFile(junkZip, []byte("PK\x03\x04 not a zip"), 0o644)
	gpu := "" // a backend that cannot run here, if any
	for _, b := range backends.All() {
		if info := b.Info(); !info.Available && gpu == "" {
			gpu = "backend " + info.Name + " cannot run here: " + info.Reason + "; choose another (canopy backends lists those that can)"
			defer func(name string) {
				code, _, e := run(t, "compute", "--red", red, "--nir", nir, "--backend", name)
				if code != 1 || strings.TrimSpace(e) != "canopy compute: "+gpu {
					t.Errorf("an unavailable backend: exit %d, stderr %q\n  want %q", code, e, gpu)
				}
			}(info.Name)
		}
		b.Close()
	}
	trunc := filepath.Join(dir, "cut.tif")
	b, _ := os.ReadFile(red)
	os.WriteFile(trunc, b[:len(b)/2], 0o644)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"a GeoTIFF cut short", []string{"compute", "--red", trunc, "--nir", nir, "--backend", "go"},
			"read " + trunc + ": the file ends early; it may be incomplete"},
		{"missing input", []string{"compute", "--red", missing, "--nir", nir, "--backend", "go"},
			missing + ": there is no such file or folder"},
		{"a folder as the input", []string{"compute", "--red", dir, "--nir", nir, "--backend", "go"},
			dir + ": this is a folder, not a file; choose a file"},
		{"output into a missing folder", []string{"compute", "--red", red, "--nir", nir, "--backend", "go", "--tif", noDir},
			noDir + ": the folder " + filepath.Dir(noDir) + " does not exist; choose another place"},
		{"a folder as the output", []string{"compute", "--red", red, "--nir", nir, "--backend", "go", "--tif", dir},
			dir + ": this is a folder; give the name of a file to write"},
		{"bands of two sizes", []string{"compute", "--red", red2, "--nir", nir, "--backend", "go"},
			"the bands are not the same size: red " + red2 + ":1 is 17×16 pixels, nir " + nir + ":1 is 16×16; the bands of one computation must share a grid"},
		{"stands not a GeoPackage", []string{"zonal", "--red", red, "--nir", nir, "--stands", notGPKG, "--csv", filepath.Join(dir, "z.csv")},
			notGPKG + ": the file is not a GeoPackage or it is damaged"},
		{"stands not GeoJSON", []string{"zonal", "--red", red, "--nir", nir, "--stands", badJSON, "--csv", filepath.Join(dir, "z.csv")},
			badJSON + ": the file is not GeoJSON or it is damaged"},
		{"a product that is not a zip", []string{"scene", junkZip},
			junkZip + ": the file is not a zip archive or it is damaged"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, e := run(t, c.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1 (stderr %q)", code, e)
			}
			want := "canopy " + c.args[0] + ": " + c.want
			if !strings.HasPrefix(e, want) {
				t.Errorf("stderr %q\n  want %q", e, want)
			}
			if n := strings.Count(strings.TrimSpace(e), "\n"); n > 0 {
				t.Errorf("%d lines on stderr: %q", n+1, e)
			}
		})
	}
}

// TestUnknownIndexInUsersWords: an unknown index is a usage error (exit
// 2) that lists the indices there are.
func TestUnknownIndexInUsersWords(t *testing.T) {
	red, nir := fakePair(t, t.TempDir(), "8x8")
	code, _, e := run(t, "compute", "--red", red, "--nir", nir, "--index", "ndvvi")
	if code != 2 || !strings.HasPrefix(e, `canopy compute: --index: unknown index "ndvvi" (indices: ndvi, evi`) || strings.Count(strings.TrimSpace(e), "\n") > 0 {
		t.Errorf("exit %d, stderr %q", code, e)
	}
}
