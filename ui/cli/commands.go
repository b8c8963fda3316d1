package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/geo"
	"canopy/compute/geotiff"
	"canopy/compute/outfile"
	"canopy/compute/pipeline"
	"canopy/compute/request"
	"canopy/compute/source"
	"canopy/ui/render/chart"
	"canopy/ui/render/colormap"
)

// computeReport is the JSON `canopy compute --json` prints.
type computeReport struct {
	Backend string `json:"backend"`
	Mode    string `json:"mode,omitempty"`
	Device  string `json:"device"`
	// BackendReason says why --backend auto chose Backend.
	BackendReason string `json:"backend_reason,omitempty"`
	// Index names the indices computed, comma-separated ("ndvi", "ndvi,evi",
	// or the formula of --expr); Indices has one entry each.
	Index   string        `json:"index"`
	Indices []indexReport `json:"indices"`
	// Bands are the files (or product bands) by role.
	Bands      map[string]string `json:"bands"`
	Scene      string            `json:"scene,omitempty"`
	Width      int               `json:"width"`
	Height     int               `json:"height"`
	LoadMS     float64           `json:"load_ms"`
	SetupMS    float64           `json:"setup_ms"`
	UploadMS   float64           `json:"upload_ms"`
	KernelMS   float64           `json:"kernel_ms"`
	DownloadMS float64           `json:"download_ms"`
	TotalMS    float64           `json:"total_ms"`
	Verified   bool              `json:"verified"`
	MaxAbsErr  float64           `json:"max_abs_err"`
	// NaN is the NaN pixels of the first index; Masked the pixels the
	// product's mask removed.
	NaN    int `json:"nan_pixels"`
	Masked int `json:"masked_pixels"`
	// DigitalNumbers is true when the bands are integers with no radiometry
	// known (plain files): index values are then those of the raw numbers.
	DigitalNumbers bool `json:"digital_numbers,omitempty"`
	// Values is the same in words, as canopy scene and batch.jsonl say
	// it: "reflectance" or "digital numbers".
	Values  string   `json:"values"`
	Tif     string   `json:"tif,omitempty"`
	PNG     []string `json:"png,omitempty"`
	Layouts []string `json:"layouts,omitempty"`
}

// indexReport is one index of a compute run.
type indexReport struct {
	Name      string  `json:"name"`
	Verified  bool    `json:"verified"`
	MaxAbsErr float64 `json:"max_abs_err"`
	NaN       int     `json:"nan_pixels"`
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// pngStyle is how --png colours a map, and its size (0: full; else the
// longest side).
type pngStyle struct {
	ramp, stretch string
	legend        bool
	title         string
	size          int
}

// pause, when set (by tests), is called with the run's context where a
// test holds a run to interrupt it: "commit" (zonal, just before its
// outputs are put in place), "block" (compute, after each block its
// outputs took) and "block NAME" (batch, the same for the scene whose
// output is NAME).
var pause func(ctx context.Context, at string)

// withPause is sinks and, when pause is set, a last one that calls it.
func withPause(ctx context.Context, at string, sinks []pipeline.Sink) []pipeline.Sink {
	if pause == nil {
		return sinks
	}
	return append(slices.Clip(sinks), pipeline.SinkFunc(func(*pipeline.Block) error {
		pause(ctx, at)
		return nil
	}))
}

// outWriter is what an output is encoded into (the COG writer reads back
// what it wrote to lay the file out).
type outWriter interface {
	io.Writer
	io.WriterAt
	io.ReaderAt
}

// wrapOutput lets tests inject a writer that fails part-way.
var wrapOutput = func(w outWriter) outWriter { return w }

// outputs are the GeoTIFF (a COG, one band per index) and the PNGs (one
// per index; a map alone gets a world file placing its pixels) of a run,
// written as the pipeline's blocks pass, as one outfile set: never over an
// input, all of them or none, nothing left behind on failure or
// interruption.
type outputs struct {
	set   *outfile.Set
	cog   *source.COG
	tif   string
	maps  []*colormap.MapStream
	paths []string
	world []bool // a world file beside the map
	geo   *compute.GeoRef
	sinks []pipeline.Sink
}

// openOutputs starts the outputs of a w×h run.
func openOutputs(inputs []string, tif string, pngs []string, w, h int, geo *compute.GeoRef, sel selection, st pngStyle, comp geotiff.Compression) (*outputs, error) {
	o := &outputs{set: outfile.NewSet(inputs...), tif: tif, geo: geo}
	ok := false
	defer func() {
		if !ok {
			o.abort()
		}
	}()
	if tif != "" {
		fw, err := o.set.Create(tif)
		if err != nil {
			return nil, err
		}
		var out io.WriterAt = fw // with its descriptor
		if wr := wrapOutput(fw); wr != outWriter(fw) {
			out = wr
		}
		// The COG sink every face writes its GeoTIFF through.
		c, err := source.NewCOG(out, tif, source.Grid{Width: w, Height: h, Geo: geo}, sel.names, comp, filepath.Dir(tif))
		if err != nil {
			return nil, err
		}
		o.cog = c
		o.sinks = append(o.sinks, c)
	}
	for i, p := range pngs {
		lo, hi := -1.0, 1.0
		if c := sel.cat[i]; c != nil {
			lo, hi = c.Range[0], c.Range[1]
		}
		title := st.title
		if title == "" && len(sel.names) > 1 {
			title = sel.names[i]
		}
		fw, err := o.set.Create(p)
		if err != nil {
			return nil, err
		}
		opt := colormap.StreamOptions{PNGOptions: colormap.PNGOptions{Ramp: st.ramp, Stretch: colormap.Stretch{Lo: lo, Hi: hi}, Legend: st.legend, Title: title},
			StretchMode: st.stretch, Size: st.size, ScratchDir: filepath.Dir(p)}
		m, err := colormap.NewMapStream(wrapOutput(fw), w, h, opt)
		if err != nil {
			return nil, fmt.Errorf("write map %s: %w", p, err)
		}
		o.maps = append(o.maps, m)
		o.paths = append(o.paths, p)
		// A world file places the picture's pixels on the ground: only
		// right for the map alone, not for a layout with a legend strip.
		o.world = append(o.world, !st.legend && title == "")
		o.sinks = append(o.sinks, pipeline.SinkFunc(func(b *pipeline.Block) error {
			if err := m.WriteRows(b.Y0, b.Rows, b.Out[i]); err != nil {
				return fmt.Errorf("write map %s: %w", p, err)
			}
			return nil
		}))
	}
	ok = true
	return o, nil
}

// finish lays the outputs out, writes the world files and commits them.
func (o *outputs) finish() error {
	defer o.abort()
	if o.cog != nil {
		c := o.cog
		o.cog = nil
		if err := c.Close(); err != nil {
			return err
		}
	}
	for i, m := range o.maps {
		o.maps[i] = nil
		if err := m.Close(); err != nil {
			return fmt.Errorf("write map %s: %w", o.paths[i], err)
		}
		if wf, ok := m.WorldFile(o.geo); ok && o.world[i] {
			ww, err := o.set.Create(colormap.WorldFilePath(o.paths[i]))
			if err != nil {
				return err
			}
			if _, err := ww.Write([]byte(wf)); err != nil {
				return fmt.Errorf("write %s: %w", ww.Path(), err)
			}
			// The CRS beside it: a .prj (ESRI WKT) and GDAL's .aux.xml,
			// which GDAL and QGIS read for a PNG.
			if c, err := geo.Of(o.geo); err == nil {
				for _, f := range []struct{ path, text string }{
					{colormap.PRJPath(o.paths[i]), c.ESRIWKT + "\n"},
					{colormap.AuxPath(o.paths[i]), colormap.AuxXML(c.WKT)},
				} {
					if strings.TrimSpace(f.text) == "" || f.text == colormap.AuxXML("") {
						continue
					}
					fw, err := o.set.Create(f.path)
					if err != nil {
						return err
					}
					if _, err := fw.Write([]byte(f.text)); err != nil {
						return fmt.Errorf("write %s: %w", f.path, err)
					}
				}
			}
		}
	}
	return o.set.Commit()
}

// abort drops whatever was written (nothing after a commit).
func (o *outputs) abort() {
	if o.cog != nil {
		o.cog.Abort()
		o.cog = nil
	}
	for i, m := range o.maps {
		if m != nil {
			m.Close()
			o.maps[i] = nil
		}
	}
	o.set.Abort()
}

// pngPaths names one PNG per index: the path as given for one index, the
// index name before the extension for several ("map-ndvi.png").
func pngPaths(path string, names []string) []string {
	if path == "" {
		return nil
	}
	if len(names) == 1 {
		return []string{path}
	}
	ext := filepath.Ext(path)
	var out []string
	for _, n := range names {
		out = append(out, strings.TrimSuffix(path, ext)+"-"+n+ext)
	}
	return out
}

func cmdCompute(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compute", stderr)
	var in inputFlags
	in.register(fs)
	var ix indexFlags
	ix.register(fs, "indices to compute")
	backend := fs.String("backend", "auto", "go, go-parallel, c, gl, cuda[:mode] or auto")
	tif := fs.String("tif", "", "write the indices as a float32 GeoTIFF, one band per index (named after it)")
	png := fs.String("png", "", "write the coloured map as PNG (with several indices, one file each: OUT-NAME.png)")
	ramp := fs.String("ramp", "rdylgn", "colour ramp for --png: rdylgn, viridis, classes")
	stretch := fs.String("stretch", "full", "colour stretch for --png: full (the index's range), minmax, percentile")
	legend := fs.Bool("legend", false, "draw the legend beside the PNG map")
	title := fs.String("title", "", "title above the PNG map")
	pngSize := fs.Int("png-size", 0, "the PNG map's longest side in pixels (0: full resolution; a smaller map's pixels are means of the image's)")
	noVerify := fs.Bool("no-verify", false, "skip the check against the float64 reference")
	compress := fs.String("compress", "deflate", "the GeoTIFF's compression: deflate (with the floating-point predictor, as GDAL's COG driver), zstd (the same with ZSTD), or none (about 35% larger, written at the speed of the disk)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	var lay layoutFlags
	lay.register(fs)
	if err := parse(fs, joinGridArg(args), stdout); err != nil {
		return err
	}
	if err := in.check(); err != nil {
		return err
	}
	sel, err := ix.parse()
	sel.raw = in.raw
	if err != nil {
		return err
	}
	if err := checkPNGOptions(*ramp, *stretch); err != nil {
		return err
	}
	if err := lay.check(sel, *ramp); err != nil {
		return err
	}
	if *pngSize < 0 {
		return request.Errorf("bad --png-size %d: a positive number of pixels, or 0 for full resolution", *pngSize)
	}
	comp, ok := map[string]geotiff.Compression{"deflate": geotiff.Deflate, "zstd": geotiff.ZSTD, "none": geotiff.NoCompression}[*compress]
	if !ok {
		return request.Errorf("unknown --compress %q (deflate, zstd, none)", *compress)
	}
	pngs := pngPaths(*png, sel.names)
	outs := append(append([]string{*tif}, pngs...), lay.paths(sel.names)...)
	for i, o := range outs {
		if o == "" {
			continue
		}
		if err := refuseInputs([]string{o}, in.inputFiles()); err != nil {
			return err
		}
		in.outs = append(in.outs, o)
		for _, o2 := range outs[i+1:] {
			if sameFile(o, o2) {
				return request.Errorf("two outputs name the same file %s", o)
			}
		}
	}
	b, mode, why, err := pickBackendWhy(*backend)
	if err != nil {
		return err
	}
	defer b.Close()

	t0 := time.Now()
	src, err := in.open(ctx, sel)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := source.CheckValues(src.Radiometry(), sel.names, sel.exprs, sel.raw); err != nil {
		return err
	}
	open := time.Since(t0)
	g := src.Grid()
	out, err := openOutputs(in.inputFiles(), *tif, pngs, g.Width, g.Height, g.Geo, sel, pngStyle{*ramp, *stretch, *legend, *title, *pngSize}, comp)
	if err != nil {
		return err
	}
	defer out.abort()
	layRun, err := lay.start(g.Width, g.Height, sel.names)
	if err != nil {
		return err
	}
	sinks := slices.Clip(out.sinks)
	if layRun != nil {
		sinks = append(sinks, layRun.sinks...)
	}
	sinks = withPause(ctx, "block", sinks)
	res, err := source.Run(ctx, src, source.Job{Backend: b, Mode: mode, Names: sel.names, Exprs: sel.exprs, Verify: !*noVerify}, sinks...)
	if err != nil {
		return err
	}
	raw := src.Radiometry() == source.DigitalNumbers
	t := res.Timings
	rep := computeReport{Backend: b.Name(), Mode: mode, Device: b.Info().Device, BackendReason: why, Index: strings.Join(sel.names, ","),
		Bands: map[string]string{}, Width: res.Width, Height: res.Height, LoadMS: ms(open + res.Decode), SetupMS: ms(t.Setup),
		UploadMS: ms(t.Upload), KernelMS: ms(t.Kernel), DownloadMS: ms(t.Download), TotalMS: ms(t.Total),
		Masked: src.Masked(), DigitalNumbers: raw, Values: src.Radiometry().String()}
	for _, band := range src.Input().Bands {
		rep.Bands[band.Role] = band.Source
	}
	if src.Product() != nil {
		rep.Scene = in.scene
	}
	if !*noVerify {
		rep.Verified = true
		for o, v := range res.Reports {
			rep.Indices = append(rep.Indices, indexReport{Name: sel.names[o], Verified: v.OK(), MaxAbsErr: v.MaxAbsErr, NaN: v.NaN})
			rep.Verified = rep.Verified && v.OK()
			rep.MaxAbsErr = math.Max(rep.MaxAbsErr, v.MaxAbsErr)
			if o == 0 {
				rep.NaN = v.NaN
			}
		}
	} else {
		for _, n := range sel.names {
			rep.Indices = append(rep.Indices, indexReport{Name: n})
		}
	}
	if err := out.finish(); err != nil {
		return err
	}
	layouts, err := layRun.finish(in.inputFiles(), g.Geo, sel, pngStyle{*ramp, *stretch, *legend, *title, *pngSize}, lay.metaOf(src.Product(), src.Input().Bands, raw))
	if err != nil {
		return err
	}
	rep.Tif, rep.PNG, rep.Layouts = *tif, pngs, layouts
	if *asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	fmt.Fprintf(stdout, "%s of %dx%d on %s (%s): load %.1f ms, setup %.1f ms, upload %.3f ms, kernel %.3f ms, download %.3f ms, total %.3f ms\n",
		rep.Index, rep.Width, rep.Height, chart.Label(rep.Backend, rep.Mode), rep.Device, rep.LoadMS, rep.SetupMS, rep.UploadMS, rep.KernelMS, rep.DownloadMS, rep.TotalMS)
	if rep.DigitalNumbers {
		fmt.Fprintln(stdout, "note: the bands are integers with no radiometry known; the index is computed on the raw digital numbers")
	}
	if rep.Masked > 0 {
		fmt.Fprintf(stdout, "masked: %d pixels (%.1f%%)\n", rep.Masked, 100*float64(rep.Masked)/float64(rep.Width*rep.Height))
	}
	if *noVerify {
		fmt.Fprintln(stdout, "not verified (--no-verify)")
	} else {
		for _, r := range rep.Indices {
			fmt.Fprintf(stdout, "%s verified: max error %.3g, %d NaN pixels\n", r.Name, r.MaxAbsErr, r.NaN)
		}
	}
	for _, p := range append(append([]string{rep.Tif}, rep.PNG...), rep.Layouts...) {
		if p != "" {
			fmt.Fprintf(stdout, "wrote %s\n", p)
		}
	}
	return nil
}

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if wantsResident(args) {
		return cmdBenchResident(ctx, args, stdout, stderr) // ui/cli/resident.go
	}
	fs := newFlags("bench", stderr)
	sizes := fs.String("size", "2048", "image sizes, N or NxM, comma-separated")
	list := fs.String("backends", "all", "backends to time: all or a comma list (name, or name:mode: cuda:overlapped, cuda:sequential, gl:mapped, gl:subdata)")
	repeat := fs.Int("repeat", 10, "timed runs per backend and size, after one untimed warm-up")
	scene := fs.String("scene", fake.Noise, "fake scene: noise (uniform random reflectances, the textbook benchmark) or landscape")
	seed := fs.Uint64("seed", 1, "scene seed")
	asJSON := fs.Bool("json", false, "one JSON object per backend and size")
	chartOut := fs.String("chart", "", "write a chart PNG (time vs pixels when several sizes, phases when one)")
	fs.Bool(residentFlag, false, "time a map viewer's steps with the bands kept on the device instead (canopy bench --resident --help)")
	var ix indexFlags
	ix.register(fs, "indices to time in one job")
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	if *repeat < 1 {
		return request.Errorf("bad --repeat %d: at least 1", *repeat)
	}
	if *scene != fake.Noise && *scene != fake.Landscape {
		return request.Errorf("unknown --scene %q (noise, landscape)", *scene)
	}
	var dims [][2]int
	for _, s := range strings.Split(*sizes, ",") {
		w, h, err := parseSize(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		dims = append(dims, [2]int{w, h})
	}
	targets, err := benchPlan(*list)
	if err != nil {
		return request.Error{Msg: err.Error()}
	}
	sel, err := ix.parse()
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
		inst[i] = b
		defer b.Close()
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "# %s, GOMAXPROCS %d, %s scene, %d repeats after one warm-up; medians [min-max]\n",
			inst[0].Info().Device, runtime.GOMAXPROCS(0), *scene, *repeat)
	}
	for _, d := range dims {
		bands, _, err := fake.Bands(*scene, d[0], d[1], *seed, sel.roles())
		if err != nil {
			return err
		}
		j, err := compute.NewJob(bands, nil, sel.names, sel.exprs)
		if err != nil {
			return err
		}
		ceiling := compute.HostCopyCeiling(min(max(j.Pixels()*4, 64<<20), 512<<20))
		for i, b := range inst {
			j.Mode = targets[i].mode
			r := compute.BenchJob(ctx, b, j, compute.BenchOptions{Repeat: *repeat, HostCeiling: ceiling})
			if err := ctx.Err(); err != nil {
				return err // interrupted: no line for the run it stopped
			}
			all = append(all, r)
			if r.Error != "" && b.Info().Available {
				failed++
			}
			if *asJSON {
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else {
				fmt.Fprintln(stdout, benchLine(r))
			}
		}
		bands, j = nil, nil
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

func cmdFake(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fake", stderr)
	size := fs.String("size", "", "N or NxM pixels")
	seed := fs.Uint64("seed", 1, "random seed (same seed, same bytes)")
	scene := fs.String("scene", fake.Landscape, "noise (uniform random reflectances) or landscape")
	redOut := fs.String("red", "", "output red band GeoTIFF")
	nirOut := fs.String("nir", "", "output NIR band GeoTIFF")
	// The fake's per-pixel texture barely compresses (Huffman coding saves
	// about a fifth and costs a third of the run), so the files are
	// written as they are unless asked.
	compress := fs.String("compress", "none", "the files' compression: none, or deflate (Huffman coding with the floating-point predictor: about 23% smaller, slower)")
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	comp, ok := map[string]geotiff.Compression{"deflate": geotiff.Deflate, "none": geotiff.NoCompression}[*compress]
	if !ok {
		return request.Errorf("unknown --compress %q (deflate, none)", *compress)
	}
	if *size == "" || *redOut == "" || *nirOut == "" {
		return request.Errorf("--size, --red and --nir are required")
	}
	if sameFile(*redOut, *nirOut) {
		return request.Errorf("--red and --nir name the same file %s", *redOut)
	}
	w, h, err := parseSize(*size)
	if err != nil {
		return err
	}
	if *scene != fake.Noise && *scene != fake.Landscape {
		return request.Errorf("unknown --scene %q (noise, landscape)", *scene)
	}
	if err := writeFake(ctx, *redOut, *nirOut, *scene, w, h, *seed, comp); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s: %s scene %dx%d seed %d\n", *redOut, *nirOut, *scene, w, h, *seed)
	return nil
}

// writeFake generates a fake scene block by block into two COGs, red and
// NIR, written as one outfile set (both or neither): generation and the
// two files' compression overlap, and memory is a few blocks whatever the
// size.
func writeFake(ctx context.Context, redPath, nirPath, kind string, w, h int, seed uint64, comp geotiff.Compression) error {
	// The scene's source streams red and NIR by rows: memory is a few
	// blocks whatever the size.
	src, err := source.Open(ctx, source.Spec{Fake: kind, Width: w, Height: h, Seed: seed}, source.Options{Roles: []string{"red", "nir"}})
	if err != nil {
		return err
	}
	defer src.Close()
	in := src.Input()
	set := outfile.NewSet()
	defer set.Abort()
	var sinks []pipeline.Sink
	var cogs []*geotiff.COGWriter
	defer func() {
		for _, c := range cogs {
			c.Abort()
		}
	}()
	level := geotiff.HuffmanOnly
	if comp != geotiff.Deflate {
		level = 0
	}
	for k, p := range []string{redPath, nirPath} {
		fw, err := set.Create(p)
		if err != nil {
			return err
		}
		c, err := geotiff.NewCOG(fw, w, h, 1, fake.GeoRef(), geotiff.COGOptions{Compression: comp, Level: level, Descriptions: []string{in.Bands[k].Role}, ScratchDir: filepath.Dir(p)})
		if err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		cogs = append(cogs, c)
		sinks = append(sinks, pipeline.SinkFunc(func(b *pipeline.Block) error {
			if err := c.WriteRows(b.Y0, b.Rows, [][]float32{b.Bands[k].Plane.F32()}); err != nil {
				return fmt.Errorf("write %s: %w", p, err)
			}
			return nil
		}))
	}
	if _, err := source.Run(ctx, src, source.Job{InFlight: 3}, sinks...); err != nil {
		return err
	}
	for k, c := range cogs {
		if err := c.Close(); err != nil {
			return fmt.Errorf("write %s: %w", []string{redPath, nirPath}[k], err)
		}
	}
	cogs = nil
	return set.Commit()
}
