package scene

import (
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"canopy/compute"
)

// The fixture products, made once per test run by scripts/fixtures-products.
var (
	fixtures    string
	fixturesErr string
)

const (
	s2Old = "S2B_MSIL2A_20210704T102559_N0301_R108_T32TQM_20210704T134039"
	s2New = "S2A_MSIL2A_20230615T102021_N0500_R065_T32TQM_20230615T163207"
	lsID  = "LC08_L2SP_044034_20200827_20200906_02_T1"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "canopy-products-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	script, _ := filepath.Abs("../../scripts/fixtures-products")
	flag.Parse()
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		// A fuzzing run (and each of its workers, which start anew after
		// every crash and minimisation) needs no fixture products: making
		// them took most of a fuzzing run's time.
		fixturesErr = "fuzzing: no fixtures made"
	} else if os.Getenv("CANOPY_BENCH_PRODUCTS") != "" {
		fixturesErr = "CANOPY_BENCH_PRODUCTS is set: benchmarks only, no fixtures made"
	} else if _, err := exec.LookPath("gdal_translate"); err != nil {
		fixturesErr = "GDAL (Debian gdal-bin, python3-gdal) is not installed: the fixture products cannot be made"
	} else if out, err := exec.Command(script, dir).CombinedOutput(); err != nil {
		fixturesErr = fmt.Sprintf("scripts/fixtures-products failed (needs python3-gdal and python3-numpy): %v: %s", err, strings.TrimSpace(string(out)))
	} else {
		fixtures = dir
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fx returns the fixture path, skipping the test (or failing it when
// CANOPY_EXPECT_GDAL=1) when the fixtures could not be made.
func fx(t testing.TB, name string) string {
	t.Helper()
	if fixtures == "" {
		if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
			t.Fatal(fixturesErr)
		}
		t.Skip(fixturesErr)
	}
	return filepath.Join(fixtures, name)
}

// reference reads the NumPy reference plane of a product (NaN as null).
func reference(t *testing.T, product, index string) []float64 {
	t.Helper()
	b, err := os.ReadFile(fx(t, "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]map[string][][]*float64
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	rows := all[product][index]
	if rows == nil {
		t.Fatalf("no reference %s %s", product, index)
	}
	var out []float64
	for _, r := range rows {
		for _, v := range r {
			if v == nil {
				out = append(out, math.NaN())
			} else {
				out = append(out, *v)
			}
		}
	}
	return out
}

// ndvi computes (nir - red) / (nir + red) in float64 from loaded bands, by
// the engine's rules: NaN where nodata, masked, or a zero denominator.
func ndvi(red, nir compute.BandInput, mask []uint8) []float64 {
	out := make([]float64, red.Plane.Pixels())
	for i := range out {
		r, n := Value(red, i), Value(nir, i)
		switch {
		case mask != nil && mask[i] != 0, math.IsNaN(r), math.IsNaN(n), r+n == 0:
			out[i] = math.NaN()
		default:
			out[i] = (n - r) / (n + r)
		}
	}
	return out
}

func compareRef(t *testing.T, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d values, reference has %d", len(got), len(want))
	}
	nan := 0
	for i := range got {
		g, w := got[i], want[i]
		if math.IsNaN(w) {
			nan++
		}
		if math.IsNaN(g) != math.IsNaN(w) || (!math.IsNaN(w) && math.Abs(g-w) > tol) {
			t.Fatalf("pixel %d (col %d row %d): %v, NumPy reference %v", i, i%64, i/64, g, w)
		}
	}
	if nan == 0 || nan == len(want) {
		t.Fatalf("reference has %d NaN of %d: the fixture does not test masks", nan, len(want))
	}
}

// copyTree copies a folder.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		defer out.Close()
		_, err = io.Copy(out, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// oneLine checks that err is a single line containing want.
func oneLine(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: no error, want one naming %q", what, want)
	case strings.Contains(err.Error(), "\n"):
		t.Errorf("%s: error spans lines: %q", what, err)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%s: error %q does not say %q", what, err, want)
	}
}

func rawU16(t *testing.T, path string) []uint16 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]uint16, len(b)/2)
	for i := range v {
		v[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	return v
}

func rect(x0, y0, x1, y1 int) image.Rectangle { return image.Rect(x0, y0, x1, y1) }
