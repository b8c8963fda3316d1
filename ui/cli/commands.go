package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	"canopy/compute"
	"canopy/compute/backends"
)

// computeReport is the JSON `canopy compute --json` prints.
type computeReport struct {
	Backend    string  `json:"backend"`
	Mode       string  `json:"mode,omitempty"`
	Device     string  `json:"device"`
	Red        string  `json:"red"`
	NIR        string  `json:"nir"`
	Width      int     `json:"width"`
	Height     int     `json:"height"`
	LoadMS     float64 `json:"load_ms"`
	SetupMS    float64 `json:"setup_ms"`
	UploadMS   float64 `json:"upload_ms"`
	KernelMS   float64 `json:"kernel_ms"`
	DownloadMS float64 `json:"download_ms"`
	TotalMS    float64 `json:"total_ms"`
	// HostBuffers: the bands were decoded into the backend's own pinned
	// host memory and the NDVI came back into it (gl).
	HostBuffers bool    `json:"host_buffers,omitempty"`
	Verified    bool    `json:"verified"`
	MaxAbsErr   float64 `json:"max_abs_err"`
	NaN         int     `json:"nan_pixels"`
	Tif         string  `json:"tif,omitempty"`
	PNG         string  `json:"png,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func cmdCompute(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compute", stderr)
	red := fs.String("red", "", "red band, FILE[:BAND]")
	nir := fs.String("nir", "", "near-infrared band, FILE[:BAND]")
	backend := fs.String("backend", "auto", "go, go-parallel, c, gl, cuda[:mode] or auto")
	nodata := fs.String("nodata", "", "nodata value for both bands (overrides the files' GDAL_NODATA)")
	tif := fs.String("tif", "", "write NDVI as a float32 GeoTIFF")
	png := fs.String("png", "", "write the coloured map as PNG")
	ramp := fs.String("ramp", "rdylgn", "colour ramp for --png: rdylgn, viridis, classes")
	stretch := fs.String("stretch", "full", "colour stretch for --png: full ([-1, 1]), minmax, percentile")
	legend := fs.Bool("legend", false, "draw the legend beside the PNG map")
	title := fs.String("title", "", "title above the PNG map")
	noVerify := fs.Bool("no-verify", false, "skip the check against the float64 reference")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	if *red == "" || *nir == "" {
		return usagef("--red and --nir are both required")
	}
	var ndv float64
	if *nodata != "" {
		v, err := strconv.ParseFloat(*nodata, 64)
		if err != nil {
			return usagef("bad --nodata %q: not a number", *nodata)
		}
		ndv = v
	}
	if err := checkPNGOptions(*ramp, *stretch); err != nil {
		return err
	}
	for _, out := range []string{*tif, *png} {
		for _, in := range []string{*red, *nir} {
			if p, _, err := parseSpec(in); err == nil && sameFile(out, p) {
				return usagef("refusing to overwrite input %s with an output", p)
			}
		}
	}
	b, err := pickBackend(*backend)
	if err != nil {
		return err
	}
	defer b.Close()

	t0 := time.Now()
	rb, nb, out, err := loadPair(*red, *nir, b)
	if err != nil {
		return err
	}
	if *nodata != "" {
		rb.NoData, rb.HasNoData = ndv, true
		nb.NoData, nb.HasNoData = ndv, true
	}
	in, err := compute.PairInput(rb, nb)
	if err != nil {
		return err
	}
	load := time.Since(t0)
	t1 := time.Now()
	hostBuffers := out != nil
	if !hostBuffers {
		out = compute.NewOutput(in.Pixels())
	}
	alloc := time.Since(t1)
	setup, err := b.Setup(in.Width, in.Height)
	if err != nil {
		return fmt.Errorf("%s setup: %w", b.Name(), err)
	}
	setup += alloc
	t, err := b.Run(in, out)
	if err != nil {
		return fmt.Errorf("%s: %w", b.Name(), err)
	}
	rep := computeReport{Backend: b.Name(), Device: b.Info().Device, Red: *red, NIR: *nir, Width: in.Width, Height: in.Height,
		LoadMS: ms(load), SetupMS: ms(setup + t.Setup), UploadMS: ms(t.Upload), KernelMS: ms(t.Kernel), DownloadMS: ms(t.Download), TotalMS: ms(t.Total),
		HostBuffers: hostBuffers}
	if m, ok := b.(compute.Moder); ok {
		rep.Mode = m.Mode()
	}
	if !*noVerify {
		v := compute.Verify(in, out)
		rep.Verified, rep.MaxAbsErr, rep.NaN = v.OK(), v.MaxAbsErr, v.NaN
		if err := v.Err(b.Name()); err != nil {
			return err
		}
	}
	// The NDVI takes the georeferencing of the red band (both are on the
	// same grid, PairInput checked).
	res := &compute.Band{Width: in.Width, Height: in.Height, Data: out, Geo: rb.Geo, NoData: math.NaN(), HasNoData: true, Source: "ndvi"}
	if *tif != "" {
		if err := writeTIF(*tif, res); err != nil {
			return err
		}
		rep.Tif = *tif
	}
	if *png != "" {
		if err := writePNG(*png, res, *ramp, *stretch, *legend, *title); err != nil {
			return err
		}
		rep.PNG = *png
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	fmt.Fprintf(stdout, "%s on %s: %dx%d, load %.1f ms, setup %.1f ms, upload %.3f ms, kernel %.3f ms, download %.3f ms, total %.3f ms\n",
		rep.Backend, rep.Device, rep.Width, rep.Height, rep.LoadMS, rep.SetupMS, rep.UploadMS, rep.KernelMS, rep.DownloadMS, rep.TotalMS)
	if rep.HostBuffers {
		fmt.Fprintf(stdout, "bands decoded into %s's pinned host buffers: transfers by DMA alone\n", rep.Backend)
	}
	if *noVerify {
		fmt.Fprintln(stdout, "not verified (--no-verify)")
	} else {
		fmt.Fprintf(stdout, "verified: max error %.3g, %d NaN pixels\n", rep.MaxAbsErr, rep.NaN)
	}
	for _, p := range []string{rep.Tif, rep.PNG} {
		if p != "" {
			fmt.Fprintf(stdout, "wrote %s\n", p)
		}
	}
	return nil
}

// benchTarget is one backend (and mode) to time.
type benchTarget struct {
	name, mode string
}

func benchTargets(list string) ([]benchTarget, error) {
	var ts []benchTarget
	// every mode of b: ModeHost first where b keeps host memory of its own
	// (what canopy compute uses), then its Moder modes.
	every := func(b compute.Backend) {
		m, ok := b.(compute.Moder)
		if !ok || !b.Info().Available {
			ts = append(ts, benchTarget{b.Name(), ""})
			return
		}
		if _, ok := b.(compute.HostMemory); ok {
			ts = append(ts, benchTarget{b.Name(), compute.ModeHost})
		}
		for _, md := range m.Modes() {
			ts = append(ts, benchTarget{b.Name(), md})
		}
	}
	if list == "all" || list == "" {
		for _, b := range backends.All() {
			every(b)
			b.Close()
		}
		return ts, nil
	}
	for _, s := range strings.Split(list, ",") {
		name, mode, _ := strings.Cut(strings.TrimSpace(s), ":")
		b, err := compute.New(name)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		_, host := b.(compute.HostMemory)
		switch {
		case mode == "":
			every(b)
		case mode == compute.ModeHost && !host:
			b.Close()
			return nil, usagef("%s has no host buffers of its own: no %s:%s", name, name, compute.ModeHost)
		default:
			ts = append(ts, benchTarget{name, mode})
		}
		b.Close()
	}
	return ts, nil
}

func cmdBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	sizes := fs.String("size", "2048", "image sizes, N or NxM, comma-separated")
	list := fs.String("backends", "all", "backends to time: all or a comma list (name or name:mode; gl:host = bands in gl's pinned host buffers)")
	repeat := fs.Int("repeat", 10, "timed runs per backend and size, after one untimed warm-up")
	scene := fs.String("scene", compute.SceneNoise, "fake scene: noise (uniform random reflectances, the textbook benchmark) or landscape")
	seed := fs.Uint64("seed", 1, "scene seed")
	asJSON := fs.Bool("json", false, "one JSON object per backend and size")
	chartOut := fs.String("chart", "", "write a chart PNG (time vs pixels when several sizes, phases when one)")
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	if *repeat < 1 {
		return usagef("bad --repeat %d: at least 1", *repeat)
	}
	if *scene != compute.SceneNoise && *scene != compute.SceneLandscape {
		return usagef("unknown --scene %q (noise, landscape)", *scene)
	}
	var dims [][2]int
	for _, s := range strings.Split(*sizes, ",") {
		w, h, err := parseSize(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		dims = append(dims, [2]int{w, h})
	}
	targets, err := benchTargets(*list)
	if err != nil {
		return err
	}
	if *chartOut != "" {
		if err := checkChartPath(*chartOut); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(stdout)
	var all []compute.BenchResult
	failed := 0
	// One instance per target for the whole run: setup is paid once.
	inst := make([]compute.Backend, len(targets))
	for i, t := range targets {
		b, _ := compute.New(t.name)
		if m, ok := b.(compute.Moder); ok && t.mode != "" && t.mode != compute.ModeHost {
			if err := m.SetMode(t.mode); err != nil {
				return usageError{err.Error()}
			}
		}
		inst[i] = b
		defer b.Close()
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "# %s, GOMAXPROCS %d, %s scene, %d repeats after one warm-up; medians [min-max]\n",
			inst[0].Info().Device, runtime.GOMAXPROCS(0), *scene, *repeat)
	}
	for _, d := range dims {
		red, nir, err := compute.Fake(*scene, d[0], d[1], *seed)
		if err != nil {
			return err
		}
		in := compute.Input{Width: d[0], Height: d[1], Red: red.Data, NIR: nir.Data}
		out := compute.NewOutput(in.Pixels())
		ceiling := compute.HostCopyCeiling(min(max(in.Pixels()*4, 64<<20), 512<<20))
		for i, b := range inst {
			opt := compute.BenchOptions{Repeat: *repeat, HostCeiling: ceiling, HostBuffers: targets[i].mode == compute.ModeHost}
			r := compute.Bench(b, in, out, opt)
			all = append(all, r)
			if r.Error != "" && b.Info().Available {
				failed++
			}
			if *asJSON {
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else {
				fmt.Fprintln(stdout, r)
			}
		}
		red, nir, out = nil, nil, nil
		runtime.GC()
	}
	if *chartOut != "" {
		if err := writeChart(*chartOut, all, len(dims) > 1); err != nil {
			return err
		}
		if !*asJSON {
			fmt.Fprintf(stdout, "wrote %s\n", *chartOut)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d backend runs failed or gave wrong numbers", failed)
	}
	return nil
}

func cmdFake(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fake", stderr)
	size := fs.String("size", "", "N or NxM pixels")
	seed := fs.Uint64("seed", 1, "random seed (same seed, same bytes)")
	scene := fs.String("scene", compute.SceneLandscape, "noise (uniform random reflectances) or landscape")
	redOut := fs.String("red", "", "output red band GeoTIFF")
	nirOut := fs.String("nir", "", "output NIR band GeoTIFF")
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	if *size == "" || *redOut == "" || *nirOut == "" {
		return usagef("--size, --red and --nir are required")
	}
	if sameFile(*redOut, *nirOut) {
		return usagef("--red and --nir name the same file %s", *redOut)
	}
	w, h, err := parseSize(*size)
	if err != nil {
		return err
	}
	if *scene != compute.SceneNoise && *scene != compute.SceneLandscape {
		return usagef("unknown --scene %q (noise, landscape)", *scene)
	}
	red, nir, err := compute.Fake(*scene, w, h, *seed)
	if err != nil {
		return err
	}
	if err := writeTIF(*redOut, red); err != nil {
		return err
	}
	if err := writeTIF(*nirOut, nir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s: %s scene %dx%d seed %d\n", *redOut, *nirOut, *scene, w, h, *seed)
	return nil
}
