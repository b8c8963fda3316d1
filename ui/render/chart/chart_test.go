package chart

import (
	"bytes"
	"encoding/csv"
	"html"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"canopy/compute"
)

// svgText is one text of a chart drawn as SVG; Y grows upwards.
type svgText struct {
	X, Y float64
	S    string
}

var textRe = regexp.MustCompile(`(?s)<text x="([-0-9.e]+)" y="([-0-9.e]+)"[^>]*>([^<]*)</text>`)

// svgTexts draws with f on a w×h pixel SVG canvas and returns its texts.
func svgTexts(t *testing.T, w, h int, f func(draw.Canvas) error) []svgText {
	t.Helper()
	c := vgsvg.New(pixelsToPoints(w), pixelsToPoints(h))
	if err := f(draw.New(c)); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	var out []svgText
	for _, m := range textRe.FindAllStringSubmatch(b.String(), -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		out = append(out, svgText{x, -y, html.UnescapeString(m[3])})
	}
	return out
}

// hasPrefix reports whether a text of the chart starts with p.
func hasPrefix(texts []svgText, p string) bool {
	for _, t := range texts {
		if strings.HasPrefix(t.S, p) {
			return true
		}
	}
	return false
}

func find(texts []svgText, s string) (svgText, bool) {
	for _, t := range texts {
		if t.S == s {
			return t, true
		}
	}
	return svgText{}, false
}

// colourShare returns the share of pixels of img that are exactly c.
func colourShare(img image.Image, c color.Color) float64 {
	want := color.NRGBAModel.Convert(c)
	b := img.Bounds()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.NRGBAModel.Convert(img.At(x, y)) == want {
				n++
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy())
}

func TestTimingsImage(t *testing.T) {
	for _, size := range [][2]int{{1000, 560}, {700, 400}, {MinWidth, MinHeight}} {
		img, err := Timings(benchAt(4096), size[0], size[1])
		if err != nil {
			t.Fatal(err)
		}
		if img.Bounds() != image.Rect(0, 0, size[0], size[1]) {
			t.Errorf("chart is %v, asked for %v", img.Bounds(), size)
		}
		if white := colourShare(img, color.White); white > 0.97 || white < 0.3 {
			t.Errorf("%v: %.0f%% white: blank or flooded", size, 100*white)
		}
		// Every phase colour is drawn (bars and legend).
		for name, c := range map[string]color.Color{"upload": ColorUpload, "kernel": ColorKernel, "download": ColorDownload, "setup": ColorSetup} {
			if colourShare(img, c) == 0 {
				t.Errorf("%v: no %s colour in the chart", size, name)
			}
		}
	}
	if _, err := Timings(benchAt(64), MinWidth-1, 400); err == nil {
		t.Error("a chart narrower than MinWidth was drawn")
	}
	if _, err := Timings(nil, 800, 400); err == nil {
		t.Error("a chart of no results was drawn")
	}
}

func TestTimingsLabels(t *testing.T) {
	rs := benchAt(2048)
	// A hand-made CUDA result with known numbers, and a failed one.
	rs[4] = compute.BenchResult{Backend: "cuda", Mode: "sequential", Device: "NVIDIA H200", GPU: true, Width: 2048, Height: 2048, Repeat: 9,
		SetupMS: 412, UploadMS: 7.5, KernelMS: 0.612, DownloadMS: 4.3, TotalMS: 12.4, KernelPct: 85.2,
		CeilingGBps: 3900, CeilingKind: "device-copy", Verified: true}
	rs = append(rs, compute.BenchResult{Backend: "gl", Mode: "es", Device: "", GPU: true, Width: 2048, Height: 2048, Error: "no OpenGL 4.3 context on this machine"})
	texts := svgTexts(t, 1100, 700, func(dc draw.Canvas) error { return drawTimings(dc, rs) })

	// Rows run top to bottom in the order given; each value label sits on
	// its row.
	prevY := math.Inf(1)
	for i, r := range rs {
		name, ok := find(texts, label(r))
		if !ok {
			t.Fatalf("row label %q missing", label(r))
		}
		if name.Y >= prevY {
			t.Errorf("row %d %q at y=%g is not below the previous row (y=%g)", i, label(r), name.Y, prevY)
		}
		prevY = name.Y
		v, ok := find(texts, valueLabel(r))
		if !ok {
			t.Fatalf("value label %q missing", valueLabel(r))
		}
		if math.Abs(v.Y-name.Y) > 12 {
			t.Errorf("value label of %s at y=%g, its row at y=%g", label(r), v.Y, name.Y)
		}
	}
	for _, want := range []string{
		"kernel 0.612 ms · with transfers 12.4 ms · 85% of device-copy",
		"error: no OpenGL 4.3 context on this machine",
		"412 ms", "set-up (once)", "kernel", "upload (host → device)", "download (device → host)",
		"NDVI of 2048×2048 pixels, median of 9 runs",
		"AMD EPYC 9V84 96-Core, 2 threads",
	} {
		if _, ok := find(texts, want); !ok {
			t.Errorf("text %q missing from the chart", want)
		}
	}
	// The set-up panel is to the right of every bar label.
	setup, _ := find(texts, "412 ms")
	main, _ := find(texts, "kernel 0.612 ms · with transfers 12.4 ms · 85% of device-copy")
	if setup.X <= main.X {
		t.Errorf("set-up value at x=%g is not right of the main panel (%g)", setup.X, main.X)
	}
}

func TestSweep(t *testing.T) {
	var all []compute.BenchResult
	for _, w := range []int{64, 256, 1024, 4096} {
		all = append(all, benchAt(w)...)
	}
	img, err := Sweep(all, 900, 600)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, 900, 600) {
		t.Errorf("sweep is %v", img.Bounds())
	}
	for _, name := range []string{compute.NameGo, compute.NameC, compute.NameCUDA} {
		if colourShare(img, BackendColor(name)) == 0 {
			t.Errorf("no %s line in the sweep", name)
		}
	}
	texts := svgTexts(t, 900, 600, func(dc draw.Canvas) error { return drawSweep(dc, all) })
	px, ok := Crossover(all, "cuda:overlap", true)
	if !ok {
		t.Fatal("constructed data has no crossover")
	}
	for _, want := range []string{
		"go", "go-parallel", "c", "gl kernel", "gl with transfers", "cuda:overlap kernel", "cuda:overlap with transfers",
		"host-copy ceiling, 20 GB/s", "device-copy ceiling, 3900 GB/s", "PCIe transfers at ceiling (50 / 52 GB/s)",
		" cuda:overlap wins from " + SideLabel(float64(px)),
		"image size (side², pixels)", "milliseconds", "64²", "256²", "1024²", "4096²", "1", "10",
	} {
		if _, ok := find(texts, want); !ok {
			t.Errorf("text %q missing from the sweep", want)
		}
	}
	// On a software renderer the "transfers" are host copies: no PCIe line.
	soft := slices.Clone(all)
	for i := range soft {
		if soft[i].GPU {
			soft[i].Device = "llvmpipe (LLVM 15.0.6, 256 bits), OpenGL 4.5 (Core Profile) Mesa 22.3.6"
		}
	}
	for _, tx := range svgTexts(t, 900, 600, func(dc draw.Canvas) error { return drawSweep(dc, soft) }) {
		if strings.Contains(tx.S, "PCIe") {
			t.Errorf("a PCIe line on a software renderer: %q", tx.S)
		}
	}
	for _, bad := range []string{"go with transfers", "c with transfers"} {
		if _, ok := find(texts, bad); ok {
			t.Errorf("CPU backend drawn with transfers: %q", bad)
		}
	}
	// No usable result: the axes and a message, never a blank.
	none := []compute.BenchResult{{Backend: "go", Error: "failed"}}
	empty, err := Sweep(none, 800, 500)
	if err != nil {
		t.Fatal(err)
	}
	if white := colourShare(empty, color.White); white > 0.98 {
		t.Errorf("empty sweep is %.1f%% white", 100*white)
	}
	if !hasPrefix(svgTexts(t, 800, 500, func(dc draw.Canvas) error { return drawSweep(dc, none) }), "No timings to plot yet") {
		t.Error("empty sweep says nothing")
	}
	// One size only still draws.
	if _, err := Sweep(benchAt(512), 800, 500); err != nil {
		t.Errorf("sweep of one size: %v", err)
	}
}

// at returns a result of the given backend at px pixels taking ms (kernel)
// and total ms.
func at(backend string, gpu bool, px int, kernel, total float64) compute.BenchResult {
	return compute.BenchResult{Backend: backend, GPU: gpu, Width: px, Height: 1, KernelMS: kernel, TotalMS: total, Verified: true}
}

func TestCrossover(t *testing.T) {
	// CPU: 1 ms per 1e4 pixels. GPU kernel: twice as slow at 1e5, twice as
	// fast at 1e6: the log-log crossover is half-way, at sqrt(1e11).
	rs := []compute.BenchResult{
		at("c", false, 1e4, 1, 1), at("c", false, 1e5, 10, 10), at("c", false, 1e6, 100, 100), at("c", false, 1e7, 1000, 1000),
		at("go", false, 1e5, 30, 30), // slower CPU: ignored, c is the best
		at("cuda", true, 1e4, 8, 9), at("cuda", true, 1e5, 20, 40), at("cuda", true, 1e6, 50, 400), at("cuda", true, 1e7, 100, 300),
	}
	px, ok := Crossover(rs, "cuda", false)
	if want := int(math.Ceil(math.Sqrt(1e11))); !ok || px != want {
		t.Errorf("kernel crossover = %d %v, want %d", px, ok, want)
	}
	// With transfers the GPU wins only at 1e7: between 1e6 (ratio 4) and
	// 1e7 (ratio 0.3).
	px, ok = Crossover(rs, "cuda", true)
	a, b := math.Log(4), math.Log(0.3)
	want := math.Exp(math.Log(1e6) + a/(a-b)*(math.Log(1e7)-math.Log(1e6)))
	if !ok || math.Abs(float64(px)-want) > 1 {
		t.Errorf("with-transfers crossover = %d %v, want %.0f", px, ok, want)
	}
	// Winning from the smallest size: that size.
	fast := append([]compute.BenchResult{}, rs...)
	fast[5] = at("cuda", true, 1e4, 0.5, 0.9)
	if px, ok := Crossover(fast, "cuda", false); !ok || px != 1e4 {
		t.Errorf("crossover when winning at once = %d %v, want 10000", px, ok)
	}
	// Never winning, unknown backend, CPU-only sizes, errors.
	slow := []compute.BenchResult{at("c", false, 1e4, 1, 1), at("cuda", true, 1e4, 2, 3), at("c", false, 1e6, 1, 1)}
	if _, ok := Crossover(slow, "cuda", false); ok {
		t.Error("crossover found where the GPU never wins")
	}
	if _, ok := Crossover(rs, "gl", false); ok {
		t.Error("crossover found for a backend not measured")
	}
	broken := append([]compute.BenchResult{}, rs...)
	broken[7].Error, broken[7].Verified = "kernel launch failed", false
	broken[6].Error, broken[6].Verified = "kernel launch failed", false
	// Left: cuda loses 8× at 1e4 and wins 10× at 1e7.
	a, b = math.Log(8), math.Log(0.1)
	want = math.Exp(math.Log(1e4) + a/(a-b)*(math.Log(1e7)-math.Log(1e4)))
	if px, ok := Crossover(broken, "cuda", false); !ok || math.Abs(float64(px)-want) > 1 {
		t.Errorf("crossover ignoring failed runs = %d %v, want %.0f", px, ok, want)
	}
	// Modes: the label selects one mode; the bare name takes the best.
	modes := []compute.BenchResult{at("c", false, 1e6, 10, 10),
		{Backend: "cuda", Mode: "sequential", GPU: true, Width: 1e6, Height: 1, KernelMS: 1, TotalMS: 12, Verified: true},
		{Backend: "cuda", Mode: "overlap", GPU: true, Width: 1e6, Height: 1, KernelMS: 1, TotalMS: 8, Verified: true}}
	if _, ok := Crossover(modes, "cuda:sequential", true); ok {
		t.Error("cuda:sequential (12 ms) beats c (10 ms)?")
	}
	if px, ok := Crossover(modes, "cuda:overlap", true); !ok || px != 1e6 {
		t.Errorf("cuda:overlap crossover = %d %v", px, ok)
	}
	if px, ok := Crossover(modes, "cuda", true); !ok || px != 1e6 {
		t.Errorf("cuda (best mode) crossover = %d %v", px, ok)
	}
}

func TestCSVRoundTrip(t *testing.T) {
	rs := benchAt(1000)
	rs[1].Error, rs[1].Verified, rs[1].NaNMismatch = `WRONG: "max error", 3 NaN mismatches`, false, 3
	rs[2].Device = "CPU, with a comma\nand a newline"
	var buf bytes.Buffer
	if err := WriteCSV(&buf, rs); err != nil {
		t.Fatal(err)
	}
	// Any CSV reader sees the header and the numbers.
	recs, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(rs)+1 || !reflect.DeepEqual(recs[0], CSVHeader) {
		t.Fatalf("%d records, header %v", len(recs), recs[0])
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for i, r := range rs {
		rec := recs[i+1]
		k, _ := strconv.ParseFloat(rec[col["kernel_median_ms"]], 64)
		kmax, _ := strconv.ParseFloat(rec[col["kernel_max_ms"]], 64)
		px, _ := strconv.Atoi(rec[col["pixels"]])
		if k != r.Kernel.Median || kmax != r.Kernel.Max || px != pixelsOf(r) || rec[col["backend"]] != r.Backend {
			t.Errorf("row %d: kernel %g/%g pixels %d backend %s, want %g/%g %d %s", i, k, kmax, px, rec[col["backend"]], r.Kernel.Median, r.Kernel.Max, pixelsOf(r), r.Backend)
		}
	}
	back, err := ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, rs) {
		t.Errorf("CSV round trip changed the results:\n got %+v\nwant %+v", back, rs)
	}
	// Errors name the line and column.
	bad := strings.Join(CSVHeader, ",") + "\n" + strings.Repeat("x,", len(CSVHeader)-1) + "x\n"
	if _, err := ReadCSV(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad row: %v", err)
	}
	if _, err := ReadCSV(strings.NewReader("a,b\n")); err == nil {
		t.Error("wrong header accepted")
	}
}

// TestWriteRunsCSV: the window's CSV holds every run, each row naming its
// run, its index or indices and how many indices the job computed; a CSV
// of the columns before them still reads.
func TestWriteRunsCSV(t *testing.T) {
	one := compute.BenchResult{Backend: "go", Index: "ndvi", Width: 64, Height: 64, Repeat: 1, Verified: true}
	five := one
	five.Backend, five.Index = "gl", "ndvi,evi,savi,ndmi,nbr"
	var buf bytes.Buffer
	if err := WriteRunsCSV(&buf, []Run{{"timings", []compute.BenchResult{one}}, {"size sweep", nil}, {"indices per upload", []compute.BenchResult{one, five}}}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	n := len(CSVHeader)
	if len(recs) != 4 || strings.Join(recs[0][n-3:], ",") != "run,index,indices" {
		t.Fatalf("records %v", recs)
	}
	for i, want := range []string{"timings,ndvi,1", "indices per upload,ndvi,1", "indices per upload,\"ndvi,evi,savi,ndmi,nbr\",5"} {
		var b strings.Builder
		w := csv.NewWriter(&b)
		w.Write(recs[i+1][n-3:])
		w.Flush()
		if got := strings.TrimSpace(b.String()); got != want {
			t.Errorf("row %d ends %s, want %s", i+1, got, want)
		}
	}
	back, err := ReadCSV(bytes.NewReader(buf.Bytes()))
	if err != nil || len(back) != 3 || back[2].Index != five.Index {
		t.Errorf("read back: %v %+v", err, back)
	}
	// A CSV written before the run and indices columns.
	var old strings.Builder
	old.WriteString(strings.Join(csvTimings, ",") + "\n")
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n")[1:2] {
		f, _ := csv.NewReader(strings.NewReader(l)).Read()
		w := csv.NewWriter(&old)
		w.Write(f[:len(csvTimings)])
		w.Flush()
	}
	if back, err := ReadCSV(strings.NewReader(old.String())); err != nil || len(back) != 1 || back[0].Backend != "go" {
		t.Errorf("an older CSV: %v %+v", err, back)
	}
}

func TestWritePNG(t *testing.T) {
	img, err := Timings(benchAt(256), 600, 340)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "t.png")
	if err := WritePNG(path, img); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	back, err := png.Decode(f)
	f.Close()
	if err != nil || back.Bounds() != img.Bounds() {
		t.Fatalf("read back %v, %v", back, err)
	}
	if err := WritePNG(filepath.Join(dir, "no", "such", "dir.png"), img); err == nil || !strings.Contains(err.Error(), "dir.png") {
		t.Errorf("writing into a missing directory: %v", err)
	}
}

func TestFormatting(t *testing.T) {
	for dev, want := range map[string]string{
		"Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz (8 threads, linux/amd64)": "Intel Xeon Gold 6338, 8 threads",
		"AMD EPYC 9V84 96-Core Processor (1 threads, linux/amd64)":          "AMD EPYC 9V84 96-Core, 1 thread",
		"NVIDIA H200": "NVIDIA H200",
		"Mesa Intel(R) UHD Graphics 620 (KBL GT2)": "Mesa Intel UHD Graphics 620",
		"": "",
	} {
		if got := ShortDevice(dev); got != want {
			t.Errorf("ShortDevice(%q) = %q, want %q", dev, got, want)
		}
	}
	for v, want := range map[float64]string{212.4: "212 ms", 31.66: "31.7 ms", 1.234: "1.23 ms", 0.6123: "0.612 ms", 0.00123: "0.0012 ms"} {
		if got := FormatMS(v); got != want {
			t.Errorf("FormatMS(%g) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[float64]string{950: "950", 65536: "65.5k", 4194304: "4.19M", 120560400: "121M", 1e6: "1M"} {
		if got := fmtPixels(v); got != want {
			t.Errorf("fmtPixels(%g) = %q, want %q", v, got, want)
		}
	}
	var labels []string
	for _, tk := range (linearTicks{6}).Ticks(0, 263) {
		labels = append(labels, tk.Label)
	}
	if want := []string{"0", "50", "100", "150", "200", "250"}; !reflect.DeepEqual(labels, want) {
		t.Errorf("linear ticks over [0, 263] = %v, want %v", labels, want)
	}
	labels = nil
	for _, tk := range (linearTicks{6}).Ticks(0, 0.0123) {
		labels = append(labels, tk.Label)
	}
	if want := []string{"0", "0.0025", "0.005", "0.0075", "0.01"}; !reflect.DeepEqual(labels, want) {
		t.Errorf("linear ticks over [0, 0.0123] = %v, want %v", labels, want)
	}
	labels = nil
	for _, tk := range (logTicks{format: fmtPixels}).Ticks(3000, 2e6) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"10k", "100k", "1M"}; !reflect.DeepEqual(labels, want) {
		t.Errorf("log ticks over [3000, 2e6] = %v, want %v", labels, want)
	}
}
