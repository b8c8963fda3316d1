package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/geotiff"
	"canopy/compute/raster"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Run(args, &o, &e)
	return code, o.String(), e.String()
}

// fakePair writes a fake pair of the given size into dir.
func fakePair(t *testing.T, dir string, size string) (red, nir string) {
	t.Helper()
	red, nir = filepath.Join(dir, "red-"+size+".tif"), filepath.Join(dir, "nir-"+size+".tif")
	if code, _, e := run(t, "fake", "--size", size, "--seed", "3", "--red", red, "--nir", nir); code != 0 {
		t.Fatalf("fake: exit %d: %s", code, e)
	}
	return red, nir
}

func TestFakeThenComputeEveryCPUBackend(t *testing.T) {
	dir := t.TempDir()
	red, nir := fakePair(t, dir, "97x61")
	for _, b := range []string{"go", "go-parallel", "c", "auto"} {
		code, out, e := run(t, "compute", "--red", red, "--nir", nir, "--backend", b, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", b, code, e)
		}
		var rep computeReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v in %q", b, err, out)
		}
		if !rep.Verified || rep.Width != 97 || rep.Height != 61 || rep.MaxAbsErr > compute.Tolerance {
			t.Errorf("%s: report %+v", b, rep)
		}
	}
}

// checkWrittenNDVI checks that the GeoTIFF at tif holds exactly the NDVI
// of the red and nir files, on their grid.
func checkWrittenNDVI(t *testing.T, tif, red, nir string) {
	t.Helper()
	got, err := raster.Load(tif)
	if err != nil {
		t.Fatal(err)
	}
	rb, nb, err := raster.LoadPair(red, nir)
	if err != nil {
		t.Fatal(err)
	}
	j := computetest.NDVIOf(rb.Width, rb.Height, rb.Data, nb.Data)
	j.Out[0] = got.Data
	if rep := compute.VerifyJob(j)[0]; !rep.OK() {
		t.Errorf("written NDVI: %s", rep)
	}
	if !got.Geo.SameGrid(rb.Geo) {
		t.Errorf("NDVI grid %+v differs from the input's %+v", got.Geo, rb.Geo)
	}
}

func TestComputeWritesGeoTIFFAndPNG(t *testing.T) {
	dir := t.TempDir()
	red, nir := fakePair(t, dir, "64x48")
	tif, png := filepath.Join(dir, "ndvi.tif"), filepath.Join(dir, "ndvi.png")
	code, out, e := run(t, "compute", "--red", red, "--nir", nir, "--backend", "c", "--tif", tif, "--png", png, "--legend")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	if !strings.Contains(out, "verified: max error") {
		t.Errorf("no verification line in %q", out)
	}
	checkWrittenNDVI(t, tif, red, nir)
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Errorf("PNG not written: %v", err)
	}
	// With a legend the picture is a layout, not a map: no world file that
	// would place the legend on the ground.
	if _, err := os.Stat(strings.TrimSuffix(png, ".png") + ".pgw"); err == nil {
		t.Errorf("a world file beside a PNG with a legend")
	}
	// The map alone gets one, with the input's geotransform (pixel centre
	// of the top-left pixel).
	if code, _, e := run(t, "compute", "--red", red, "--nir", nir, "--png", png); code != 0 {
		t.Fatal(e)
	}
	wf, err := os.ReadFile(strings.TrimSuffix(png, ".png") + ".pgw")
	if err != nil {
		t.Fatalf("no world file beside the map-only PNG: %v", err)
	}
	rb, _ := raster.Load(red)
	gt, _ := rb.Geo.Affine()
	var want string
	for _, v := range []float64{gt[1], gt[4], gt[2], gt[5], gt[0] + gt[1]/2, gt[3] + gt[5]/2} {
		want += strconv.FormatFloat(v, 'f', -1, 64) + "\n"
	}
	if string(wf) != want {
		t.Errorf("world file %q, want %q", wf, want)
	}
}

func TestFakeIsReproducible(t *testing.T) {
	dir := t.TempDir()
	a, _ := fakePair(t, dir, "40x30")
	b := filepath.Join(dir, "again.tif")
	if code, _, e := run(t, "fake", "--size", "40x30", "--seed", "3", "--red", b, "--nir", filepath.Join(dir, "n2.tif")); code != 0 {
		t.Fatal(e)
	}
	x, _ := os.ReadFile(a)
	y, _ := os.ReadFile(b)
	if !bytes.Equal(x, y) {
		t.Error("same seed wrote different files")
	}
}

// Bad input: one clear line on stderr and the documented exit status.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	red, nir := fakePair(t, dir, "32x32")
	red2, _ := fakePair(t, dir, "33x32")
	missing := filepath.Join(dir, "nope.tif")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no command", nil, 2, "usage"},
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"missing file", []string{"compute", "--red", missing, "--nir", nir, "--backend", "go"}, 1, "nope.tif"},
		{"size mismatch", []string{"compute", "--red", red2, "--nir", nir, "--backend", "go"}, 1, "not the same size"},
		{"unknown backend", []string{"compute", "--red", red, "--nir", nir, "--backend", "fortran"}, 2, "unknown backend"},
		{"bad size", []string{"bench", "--size", "12q"}, 2, "bad --size"},
		{"negative size", []string{"fake", "--size", "-4", "--red", "a.tif", "--nir", "b.tif"}, 2, "bad --size"},
		{"missing band", []string{"compute", "--red", red}, 2, "needs the nir band"},
		{"unknown flag", []string{"backends", "--jsn"}, 2, "jsn"},
		{"bad ramp", []string{"compute", "--red", red, "--nir", nir, "--png", filepath.Join(dir, "x.png"), "--ramp", "rainbow"}, 2, "rainbow"},
		{"overwrite input", []string{"compute", "--red", red, "--nir", nir, "--tif", red}, 2, "refusing to overwrite"},
		{"band out of range", []string{"compute", "--red", red + ":5", "--nir", nir, "--backend", "go"}, 1, "band"},
		{"bad repeat", []string{"bench", "--repeat", "0"}, 2, "repeat"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, e := run(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, c.code, e)
			}
			if !strings.Contains(strings.ToLower(e), strings.ToLower(c.want)) {
				t.Errorf("stderr %q does not mention %q", e, c.want)
			}
			if c.code != 2 || c.name != "no command" {
				if n := strings.Count(strings.TrimSpace(e), "\n"); n > 0 {
					t.Errorf("want one line on stderr, got %d: %q", n+1, e)
				}
			}
		})
	}
}

func TestBackendsJSON(t *testing.T) {
	code, out, e := run(t, "backends", "--json")
	if code != 0 {
		t.Fatal(e)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var info compute.Info
		if err := json.Unmarshal([]byte(line), &info); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		seen[info.Name] = true
		if !info.Available && info.Reason == "" {
			t.Errorf("%s unavailable without a reason", info.Name)
		}
	}
	for _, n := range []string{"go", "go-parallel", "c"} {
		if !seen[n] {
			t.Errorf("backend %s missing from %q", n, out)
		}
	}
}

func TestBenchJSON(t *testing.T) {
	code, out, e := run(t, "bench", "--size", "64,100x30", "--backends", "go,c", "--repeat", "3", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 lines (2 sizes x 2 backends), got %d: %q", len(lines), out)
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"backend", "width", "height", "repeat", "setup_ms", "upload_ms", "kernel_ms", "download_ms", "total_ms", "kernel_gbps", "ceiling_gbps", "max_abs_err", "verified"} {
			if _, ok := m[k]; !ok {
				t.Errorf("key %s missing in %s", k, l)
			}
		}
		if m["verified"] != true || m["repeat"].(float64) != 3 || m["ceiling_gbps"].(float64) <= 0 {
			t.Errorf("bad line %s", l)
		}
	}
}

// TestBenchInterrupted: a bench whose context is cancelled (Ctrl+C: Run's
// context) stops before its next run and says nothing of the run it
// stopped: the header alone, the context's error.
func TestBenchInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, e bytes.Buffer
	err := cmdBench(ctx, []string{"--size", "64", "--backends", "go,c", "--repeat", "3", "--chart", filepath.Join(t.TempDir(), "c.png")}, &out, &e)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want the context's", err)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "# ") {
		t.Errorf("stdout %q, want the header alone", out.String())
	}
}

func TestBenchChart(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sweep.png")
	if code, _, e := run(t, "bench", "--size", "32,64", "--backends", "go", "--repeat", "1", "--chart", p); code != 0 {
		t.Fatal(e)
	}
	if st, err := os.Stat(p); err != nil || st.Size() < 1000 {
		t.Fatalf("chart not written: %v", err)
	}
}

// glOrSkip skips when the gl backend cannot run on this machine (no libEGL
// or no OpenGL 4.3; CI has Mesa's llvmpipe, so it runs there).
func glOrSkip(t *testing.T) {
	t.Helper()
	b, err := compute.New(compute.NameGL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if info := b.Info(); !info.Available {
		t.Skipf("gl cannot run here: %s", info.Reason)
	}
}

// TestComputeGL runs `canopy compute --backend gl`: what lands in the
// GeoTIFF is the reference NDVI.
func TestComputeGL(t *testing.T) {
	glOrSkip(t)
	dir := t.TempDir()
	red, nir := fakePair(t, dir, "301x77")
	tif := filepath.Join(dir, "ndvi.tif")
	code, out, e := run(t, "compute", "--red", red, "--nir", nir, "--backend", "gl", "--tif", tif, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var rep computeReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if rep.Backend != "gl" || rep.Index != "ndvi" || !rep.Verified || rep.Width != 301 || rep.Height != 77 {
		t.Errorf("report %+v", rep)
	}
	checkWrittenNDVI(t, tif, red, nir)
}

// TestBenchGLModes: `canopy bench --backends gl` times every transfer
// mode and says which is which (mode, transfer rates); gl:mapped alone
// works, a mode a backend does not have is a usage error.
func TestBenchGLModes(t *testing.T) {
	glOrSkip(t)
	code, out, e := run(t, "bench", "--size", "96x40", "--backends", "gl", "--repeat", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var modes []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r compute.BenchResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v in %q", err, l)
		}
		modes = append(modes, r.Mode)
		if !r.Verified || r.UploadGBps <= 0 || r.DownloadGBps <= 0 {
			t.Errorf("%s: %+v", r.Mode, r)
		}
		if !strings.HasPrefix(benchLine(r), "gl:"+r.Mode+" ") || !strings.Contains(benchLine(r), "GB/s = ") {
			t.Errorf("line %q", benchLine(r))
		}
	}
	if strings.Join(modes, ",") != "mapped,subdata" {
		t.Errorf("modes %v, want mapped, subdata", modes)
	}
	code, out, e = run(t, "bench", "--size", "33", "--backends", "gl:mapped", "--repeat", "1")
	if code != 0 || !strings.Contains(out, "gl:mapped ") {
		t.Errorf("gl:mapped: exit %d %q %s", code, out, e)
	}
	if code, _, e := run(t, "bench", "--size", "33", "--backends", "c:host"); code != 2 || !strings.Contains(e, "no mode") {
		t.Errorf("c:host: exit %d %s", code, e)
	}
}

// failAfter is an output writer that fails once n bytes have been written.
type failAfter struct {
	outWriter
	n int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full (injected)")
	}
	return f.outWriter.Write(p)
}

func (f *failAfter) WriteAt(p []byte, off int64) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full (injected)")
	}
	return f.outWriter.WriteAt(p, off)
}

// A run whose writing fails part-way leaves nothing behind: not the half
// file, not its temporary file, not the outputs that were complete, and an
// existing file at an output path keeps its bytes and its mode.
func TestFailedWriteLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	red, nir := fakePair(t, dir, "64x48")
	outDir := filepath.Join(dir, "out")
	os.Mkdir(outDir, 0o755)
	keep := filepath.Join(outDir, "keep.tif")
	os.WriteFile(keep, []byte("precious"), 0o600)
	png := filepath.Join(outDir, "map.png")
	for _, after := range []int{0, 100, 3000} {
		calls := 0
		wrapOutput = func(w outWriter) outWriter {
			calls++
			if calls == 2 { // the PNG, after the GeoTIFF was written whole
				return &failAfter{w, after}
			}
			return w
		}
		code, _, e := run(t, "compute", "--red", red, "--nir", nir, "--tif", keep, "--png", png)
		wrapOutput = func(w outWriter) outWriter { return w }
		if code != 1 || !strings.Contains(e, "injected") {
			t.Fatalf("fail after %d bytes: exit %d, %s", after, code, e)
		}
		if b, _ := os.ReadFile(keep); string(b) != "precious" {
			t.Errorf("fail after %d bytes: the existing output was replaced", after)
		}
		if st, _ := os.Stat(keep); st.Mode().Perm() != 0o600 {
			t.Errorf("fail after %d bytes: mode %v", after, st.Mode().Perm())
		}
		ents, _ := os.ReadDir(outDir)
		if len(ents) != 1 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("fail after %d bytes: left %v", after, names)
		}
	}
	// Without the fault the same run writes both, and keep.tif keeps its mode.
	if code, _, e := run(t, "compute", "--red", red, "--nir", nir, "--tif", keep, "--png", png); code != 0 {
		t.Fatal(e)
	}
	if st, err := os.Stat(keep); err != nil || st.Mode().Perm() != 0o600 || st.Size() < 100 {
		t.Errorf("after a good run: %v %v", st, err)
	}
	checkWrittenNDVI(t, keep, red, nir)
}

// canopy fake writes its bands uncompressed unless --compress deflate asks
// for Huffman-coded ones; both hold the same pixels, and an unknown
// compression is a usage error.
func TestFakeCompression(t *testing.T) {
	dir := t.TempDir()
	files := map[string][2]string{}
	for _, c := range []string{"", "none", "deflate"} {
		red, nir := filepath.Join(dir, "r"+c+".tif"), filepath.Join(dir, "n"+c+".tif")
		args := []string{"fake", "--size", "300x200", "--seed", "5", "--red", red, "--nir", nir}
		if c != "" {
			args = append(args, "--compress", c)
		}
		if code, _, e := run(t, args...); code != 0 {
			t.Fatalf("fake %v: exit %d: %s", args, code, e)
		}
		files[c] = [2]string{red, nir}
	}
	for c, want := range map[string]string{"": "none", "none": "none", "deflate": "deflate"} {
		for k, p := range files[c] {
			f, err := geotiff.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.ToLower(f.Compression()); !strings.Contains(got, want) {
				t.Errorf("--compress %q: %s is %s, want %s", c, p, got, want)
			}
			f.Close()
			a, err1 := raster.Load(p)
			b, err2 := raster.Load(files["deflate"][k])
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			for i := range a.Data {
				if math.Float32bits(a.Data[i]) != math.Float32bits(b.Data[i]) {
					t.Fatalf("--compress %q: %s pixel %d is %g, the deflate file's %g", c, p, i, a.Data[i], b.Data[i])
				}
			}
		}
	}
	if code, _, e := run(t, "fake", "--size", "4", "--red", filepath.Join(dir, "a.tif"), "--nir", filepath.Join(dir, "b.tif"), "--compress", "lzw"); code != 2 || !strings.Contains(e, "--compress") {
		t.Errorf("--compress lzw: exit %d, %q; want 2 naming --compress", code, e)
	}
}

// canopy compute writes its COG with DEFLATE unless --compress asks for
// ZSTD or none; all hold the same pixels, and an unknown compression is a
// usage error.
func TestComputeCompression(t *testing.T) {
	dir := t.TempDir()
	red, nir := filepath.Join(dir, "red.tif"), filepath.Join(dir, "nir.tif")
	if code, _, e := run(t, "fake", "--size", "301x203", "--seed", "3", "--red", red, "--nir", nir); code != 0 {
		t.Fatal(e)
	}
	outs := map[string]string{}
	for _, c := range []string{"", "deflate", "zstd", "none"} {
		out := filepath.Join(dir, "ndvi-"+c+".tif")
		args := []string{"compute", "--red", red, "--nir", nir, "--backend", "go", "--tif", out}
		if c != "" {
			args = append(args, "--compress", c)
		}
		if code, _, e := run(t, args...); code != 0 {
			t.Fatalf("compute %v: exit %d: %s", args, code, e)
		}
		outs[c] = out
	}
	want, err := raster.Load(outs["deflate"])
	if err != nil {
		t.Fatal(err)
	}
	for c, label := range map[string]string{"": "deflate", "deflate": "deflate", "zstd": "zstd", "none": "none"} {
		f, err := geotiff.Open(outs[c])
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.ToLower(f.Compression()); !strings.Contains(got, label) {
			t.Errorf("--compress %q: %s is %s, want %s", c, outs[c], got, label)
		}
		f.Close()
		got, err := raster.Load(outs[c])
		if err != nil {
			t.Fatal(err)
		}
		for i := range want.Data {
			if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
				t.Fatalf("--compress %q: pixel %d is %g, the deflate file's %g", c, i, got.Data[i], want.Data[i])
			}
		}
	}
	if code, _, e := run(t, "compute", "--red", red, "--nir", nir, "--tif", filepath.Join(dir, "x.tif"), "--compress", "lzw"); code != 2 || !strings.Contains(e, "--compress") {
		t.Errorf("--compress lzw: exit %d, %q; want 2 naming --compress", code, e)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.tif")); err == nil {
		t.Error("a usage error wrote its output")
	}
}
