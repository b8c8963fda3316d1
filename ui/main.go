package ui

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"canopy/assets"
	"canopy/compute/fake"
	"canopy/compute/index"
	"canopy/compute/outfile"
	"canopy/compute/request"
	"canopy/compute/source"
	"canopy/compute/usererr"
	"canopy/ui/render/colormap"
	"canopy/ui/render/layout"
)

// appID is the application's unique id, as in FyneApp.toml.
const appID = "io.canopy.ndvi"

// appVersion is the app version, as in FyneApp.toml.
const appVersion = "0.1.0"

const usage = `usage: canopy gui [--scene PATH | --red F[:B] --nir F[:B] | --band ROLE=F[:B]...] [--index NAME | --expr EXPR]
                  [--backend NAME] [--session FILE] [flags]

Opens the desktop app: on a product or bands when given, else on a
generated scene.

examples:
  canopy gui --scene S2B_MSIL2A_20240612T103629_N0510_R008_T32UNE_20240612T134015.zip --index ndvi
  canopy gui --red B04.tif --nir B08.tif --backend gl --compare

flags:
  --scene PATH       a product: a Sentinel-2 L2A .SAFE folder or .zip or EOPF .zarr, a Landsat
                     Collection 2 Level-2 folder or .tar, a STAC item .json, or an
                     orthomosaic GeoTIFF (roles from its band descriptions); repeated,
                     tiles of one date shown as one map on one grid (the UTM zone
                     covering most of them, bilinear)
  --band ROLE=F[:B]  a band by role, band B of file F (repeatable; roles: blue green red rededge1
                     rededge2 rededge3 nir nir2 swir1 swir2)
  --red F[:B]        shorthand for --band red=F[:B]
  --nir F[:B]        shorthand for --band nir=F[:B]
  --bands ROLE=B,... band roles of a --scene GeoTIFF or orthomosaic, e.g. red=3,nir=4 (as canopy
                     scene suggests)
  --scale ROLE=S[,O] a band's radiometry: value = stored × S + O (repeatable; makes the band
                     reflectance); the Bands panel shows each band's
  --raw              compute indices with constants (EVI, SAVI, ...) and show class tables on
                     integer bands of no known scale, as raw digital numbers
  --mask auto|none   a product's cloud and quality mask: auto (SCL, QA_PIXEL, alpha; default) or none
  --mask-buffer PX   grow the mask's clouds and shadows by PX pixels (default 0)
  --index NAME       the catalogue index to compute (default ndvi; canopy indices lists them)
  --expr EXPR        a formula of your own instead, e.g. '(nir - swir1) / (nir + swir1)'
  --fake KIND        generated scene: landscape (default) or noise (--scene landscape
                     and --scene noise say the same)
  --size N           generated scene size, N×N pixels (default 2048, at most 10980 is typical)
  --seed S           generated scene seed (default 1)
  --backend NAME     go, go-parallel, c, gl, cuda[:mode] or auto (default auto: the fastest available)
  --ramp NAME        colour ramp: rdylgn (default), viridis, classes (NDVI only)
  --compare          run "Compare all" once the first map is shown
  --repeat K         timed runs per backend when comparing (default 5)
  --screenshot FILE  write a PNG of the window once ready (Capture; may be black under Xvfb)
  --export-map FILE  once ready, write the map alone as a PNG (full resolution) with its
                     world file, .prj and .aux.xml, for smoke tests and scripts
  --export-layout FILE
                     once ready, write a print layout (.png, .pdf or .svg; 1600×1200
                     pixels) and print where its map and legend are
  --stack FILE       a date of a stack (repeatable; GeoTIFFs or products dated by their metadata
                     or a YYYYMMDD in the name): a window with a date slider over the index map
                     and the clicked pixel's time series, harmonic fit and monitoring break; the
                     model (MOSUM or anomaly, harmonics, history, level) runs over the whole area
                     on --backend, the cube kept on the card for gl and cuda
  --stands F[:LAYER] stands over the --stack (GeoPackage, GeoJSON): a click in one draws the
                     mean or median of its valid pixels on every date and its model
  --session FILE     open a session file saved by File > Save session (Ctrl+S): its inputs,
                     index, classes, ramp, stretch and view
  --exit-after D     quit D (e.g. 5s) after the first map is shown, for smoke tests
  --window WxH       initial window size (default 1440x900)
`

// flags are the parsed command line of `canopy gui`.
type flags struct {
	opts       options
	ramp       string
	screenshot string
	exportMap  string
	exportLay  string
	session    string
	exitAfter  time.Duration
	stack      []string // --stack: files of a stack of dates, one date each
	stands     string   // --stands: stands over the stack (FILE[:LAYER])
}

var errHelp = errors.New("help requested")

// bandList is the repeatable --band ROLE=F[:B].
type bandList []string

func (b *bandList) String() string     { return strings.Join(*b, " ") }
func (b *bandList) Set(v string) error { *b = append(*b, v); return nil }

// parseFlags reads the `canopy gui` flags.
func parseFlags(args []string) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("canopy gui", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var red, nir, sceneArg, fakeKind string
	var bands bandList
	fs.StringVar(&red, "red", "", "")
	fs.StringVar(&nir, "nir", "", "")
	fs.Var(&bands, "band", "")
	var more []string
	fs.Func("scene", "", func(s string) error {
		if sceneArg == "" {
			sceneArg = s
		} else {
			more = append(more, s) // tiles of one date: one mosaic
		}
		return nil
	})
	fs.StringVar(&fakeKind, "fake", "", "")
	assign := fs.String("bands", "", "")
	var scales bandList
	fs.Var(&scales, "scale", "")
	fs.BoolVar(&f.opts.Raw, "raw", false, "")
	fs.StringVar(&f.opts.Mask, "mask", "auto", "")
	fs.IntVar(&f.opts.MaskBuffer, "mask-buffer", 0, "")
	fs.StringVar(&f.opts.Index, "index", "", "")
	exprSet := false
	fs.Func("expr", "", func(s string) error { f.opts.Expr, exprSet = s, true; return nil })
	size := fs.String("size", "2048", "")
	seed := fs.String("seed", "1", "")
	fs.StringVar(&f.opts.Backend, "backend", "auto", "")
	fs.StringVar(&f.ramp, "ramp", "", "")
	fs.BoolVar(&f.opts.Compare, "compare", false, "")
	fs.IntVar(&f.opts.Repeat, "repeat", 5, "")
	fs.StringVar(&f.screenshot, "screenshot", "", "")
	fs.StringVar(&f.exportMap, "export-map", "", "")
	fs.StringVar(&f.exportLay, "export-layout", "", "")
	fs.StringVar(&f.session, "session", "", "")
	fs.Func("stack", "", func(s string) error { f.stack = append(f.stack, s); return nil })
	fs.StringVar(&f.stands, "stands", "", "")
	fs.DurationVar(&f.exitAfter, "exit-after", 0, "")
	window := fs.String("window", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return f, errHelp
		}
		return f, request.Error{Msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return f, request.Errorf("unexpected argument %q (a product is given with --scene PATH, bands with --band ROLE=FILE)", fs.Arg(0))
	}
	// --scene landscape|noise is the generated scene, as before --fake.
	if contains(fake.Kinds(), sceneArg) {
		if _, err := os.Stat(sceneArg); err != nil {
			fakeKind, sceneArg = sceneArg, ""
		}
	}
	f.opts.Fake = fakeKind
	if f.opts.Fake == "" {
		f.opts.Fake = fake.Landscape
	}
	if !contains(fake.Kinds(), f.opts.Fake) {
		return f, request.Errorf("unknown --fake %q (known: %s)", f.opts.Fake, strings.Join(fake.Kinds(), ", "))
	}
	specs, err := source.ParseBands(red, nir, bands)
	if err != nil {
		return f, err
	}
	if len(specs) > 0 && sceneArg != "" {
		return f, request.Errorf("give the bands either as files (--red/--nir/--band) or as --scene, not both")
	}
	if len(specs) > 0 {
		f.opts.Bands = specs
	}
	if sceneArg != "" {
		if _, err := os.Stat(sceneArg); err != nil {
			return f, request.Errorf("--scene %q: no such file or folder (a product, or landscape or noise for a generated scene)", sceneArg)
		}
	}
	f.opts.Product = sceneArg
	if f.opts.Assign, err = source.ParseAssign(*assign); err != nil {
		return f, err
	}
	if len(f.opts.Assign) > 0 && sceneArg == "" {
		return f, request.Errorf("--bands names the bands of a --scene; for band files give --band ROLE=FILE[:BAND]")
	}
	if len(scales) > 0 {
		if f.opts.Scale, err = source.ParseScale(scales); err != nil {
			return f, err
		}
	}
	for _, m := range more {
		if _, err := os.Stat(m); err != nil {
			return f, request.Errorf("--scene %q: no such file or folder", m)
		}
	}
	if len(more) > 0 {
		f.opts.More = more
	}
	if exprSet && f.opts.Index != "" {
		return f, request.Errorf("give --index or --expr, not both")
	}
	var roles []string
	if exprSet {
		e, err := index.Parse(f.opts.Expr)
		if err != nil {
			return f, request.Errorf("--expr %q: %v", f.opts.Expr, err)
		}
		roles = e.Roles()
	} else {
		name := f.opts.Index
		if name == "" {
			name = "ndvi"
		}
		c, ok := index.Lookup(name)
		if !ok {
			return f, request.Errorf("unknown --index %q (indices: %s)", name, strings.Join(index.Names(), ", "))
		}
		f.opts.Index, roles = c.Name, c.Roles
	}
	if len(specs) > 0 {
		for _, r := range roles {
			if _, ok := specs[r]; !ok {
				return f, request.Errorf("%s needs the %s band: give it with --band %s=FILE[:BAND]", indexName(f.opts), r, r)
			}
		}
	}
	if f.opts.Mask != "auto" && f.opts.Mask != "none" {
		return f, request.Errorf("bad --mask %q: auto or none", f.opts.Mask)
	}
	if f.opts.MaskBuffer < 0 || f.opts.MaskBuffer > 1000 {
		return f, request.Errorf("bad --mask-buffer %d: 0 to 1000 pixels", f.opts.MaskBuffer)
	}
	n, err := strconv.Atoi(strings.TrimSpace(*size))
	if err != nil || n <= 0 || n*n > fake.MaxPixels {
		return f, request.Errorf("bad --size %q: want a positive N (the scene is N×N), e.g. 2048 or 10980", *size)
	}
	f.opts.Size = n
	s, err := strconv.ParseUint(strings.TrimSpace(*seed), 10, 63)
	if err != nil {
		return f, request.Errorf("bad --seed %q: want a whole number ≥ 0", *seed)
	}
	f.opts.Seed = int(s)
	if *window != "" {
		a, b, ok := strings.Cut(strings.ToLower(*window), "x")
		ww, err1 := strconv.Atoi(a)
		wh, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || ww < 400 || wh < 300 {
			return f, request.Errorf("bad --window %q: want WxH of at least 400x300, e.g. 1600x1000", *window)
		}
		f.opts.WindowSize = fyne.NewSize(float32(ww), float32(wh))
	}
	if f.opts.Repeat < 1 {
		return f, request.Errorf("bad --repeat %d: at least 1", f.opts.Repeat)
	}
	if f.exitAfter < 0 {
		return f, request.Errorf("bad --exit-after: a duration ≥ 0, e.g. 5s")
	}
	if f.exportMap != "" && !strings.EqualFold(filepath.Ext(f.exportMap), ".png") {
		return f, request.Errorf("bad --export-map %q: a .png file", f.exportMap)
	}
	if f.exportLay != "" {
		if _, err := layout.FormatOf(f.exportLay); err != nil {
			return f, request.Errorf("bad --export-layout %q: a .png, .pdf or .svg file", f.exportLay)
		}
	}
	if f.ramp != "" {
		if _, err := colormap.New(f.ramp, -1, 1); err != nil {
			return f, request.Errorf("bad --ramp: %v", err)
		}
		if f.ramp == colormap.RampClasses && (exprSet || f.opts.Index != "ndvi") {
			return f, request.Errorf("--ramp classes: the classes are NDVI's, not %s's", indexName(f.opts))
		}
	}
	return f, nil
}

// indexName names the index of the options for messages.
func indexName(o options) string {
	if o.Expr != "" {
		return "the formula"
	}
	return o.Index
}

// Main runs the desktop app with the `canopy gui` arguments and returns the
// exit status: 0 when the window was closed (or --exit-after ran out), 1
// when the start scene could not be shown in a --exit-after run, 2 for a
// bad command line (one line on stderr).
func Main(args []string) int {
	return run(args, os.Stdout, os.Stderr)
}

// exitGrace is how long the process may take to end after its window
// closed before it is ended (exitSoon).
const exitGrace = 10 * time.Second

func run(args []string, stdout, stderr io.Writer) int {
	f, err := parseFlags(args)
	if errors.Is(err, errHelp) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "canopy gui: %s (canopy gui --help for usage)\n", usererr.Line(err))
		return 2
	}
	// The session file is read before the app starts: a bad one is a
	// failed run (exit 1, one line), whether or not there is a display.
	var sess *session
	if f.session != "" {
		s, err := readSession(f.session)
		if err != nil {
			fmt.Fprintf(stderr, "canopy gui: %v\n", explain(err))
			return 1 // a failed run, as a bad input file of the terminal's
		}
		sess = &s
		f.opts = s.options(f.opts)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A 10980² scene is 1.45 GB of float32; keep the garbage of a
		// replaced plane from doubling that before the GC runs.
		debug.SetMemoryLimit(2560 << 20)
	}

	app.SetMetadata(fyne.AppMetadata{
		ID: appID, Name: "Canopy", Version: appVersion, Build: 1, Icon: assets.Icon, Release: true,
		Migrations: map[string]bool{"fyneDo": true},
	})
	a := app.NewWithID(appID)
	a.SetIcon(assets.Icon)

	status := 0
	var w *window
	// Fyne 2.7.1 can deadlock on the way out: a lifecycle event sent to
	// the main loop just after the loop drained its queue waits for it
	// forever (internal/driver/glfw/loop.go), and the process never
	// ends. Once the window has closed, or the app was asked to quit, the
	// process ends within exitGrace whatever Fyne does.
	exitSoon := sync.OnceFunc(func() {
		time.AfterFunc(exitGrace, func() { os.Exit(status) })
	})
	onReady := func() {
		if sess != nil && w != nil && w.shown != nil {
			w.ApplySession(*sess)
			sess = nil
		}
		if w != nil && w.shown == nil && f.exitAfter > 0 {
			status = 1 // the smoke test must see the failure, and why
			why := strings.TrimSpace(w.Status.Text)
			if why == "" {
				why = "the start scene could not be shown"
			}
			fmt.Fprintf(stderr, "canopy gui: %s\n", usererr.Clip(firstLine(why)))
		}
		if w != nil && w.shown != nil {
			// For smoke tests: which backend made the first map, and what
			// Compare all was estimated to need beyond the bands loaded.
			fmt.Fprintf(stdout, "computed on %s\n", w.shown.backend)
			if f.opts.Compare && w.compareNeed > 0 {
				fmt.Fprintf(stdout, "compare memory estimate %d\n", w.compareNeed)
			}
		}
		// Let the window paint the map before saying so.
		time.AfterFunc(400*time.Millisecond, func() {
			fmt.Fprintln(stdout, "ready")
			if f.screenshot != "" {
				fyne.DoAndWait(func() {
					if err := writeScreenshot(f.screenshot, w.Win.Canvas().Capture()); err != nil {
						fmt.Fprintf(stderr, "canopy gui: screenshot: %v\n", err)
						status = 1
					}
				})
			}
			if f.exportMap != "" || f.exportLay != "" {
				var mapW func(string) ([]string, error)
				var layW func(string) (layout.Geometry, error)
				fyne.DoAndWait(func() {
					mapW, layW = w.mapWriter(), w.layoutWriter(layout.Options{})
				})
				if err := startExports(stdout, f.exportMap, f.exportLay, mapW, layW); err != nil {
					fmt.Fprintf(stderr, "canopy gui: %v\n", explain(err))
					status = 1
				}
			}
			if f.exitAfter > 0 {
				time.AfterFunc(f.exitAfter, func() {
					fyne.Do(a.Quit)
					exitSoon()
				})
			}
		})
	}
	// Fyne saves the preferences once more as the app stops, and that
	// save races Fyne's own watcher of the file: the save truncates the
	// file before it writes it, the watcher reads it in between and logs
	// "Preferences load error: EOF" (seen at the end of a failed start on
	// a busy machine: a second line after the one error line the user
	// should see). Every change was saved when it was made (Fyne saves on
	// change), so the process ends here, before that last save: what is
	// lost is at most a change made in the last 100 ms before quitting.
	a.Lifecycle().SetOnStopped(func() { os.Exit(status) })
	w = newWindow(a, f.opts, hooks{onReady: onReady, onClosed: exitSoon})
	if f.ramp != "" {
		w.colour.SetRamp(f.ramp)
	}
	w.Win.SetIcon(assets.Icon)
	w.Win.SetMaster()
	if len(f.stack) > 0 {
		name := f.opts.Index
		if f.opts.Expr != "" {
			name = f.opts.Expr
		}
		w.openTimeSeries(f.stack, name, f.stands)
	}
	w.Win.ShowAndRun()
	return status
}

// startExports writes the --export-map and --export-layout files and
// prints what it wrote: "exported map FILE" and "exported layout FILE
// legend X,Y WxH" (the legend's box in pixels, for the smoke test to look
// at).
func startExports(stdout io.Writer, mapPath, layPath string, mapW func(string) ([]string, error), layW func(string) (layout.Geometry, error)) error {
	if mapPath != "" {
		if _, err := mapW(mapPath); err != nil {
			return fmt.Errorf("--export-map: %w", err)
		}
		fmt.Fprintf(stdout, "exported map %s\n", mapPath)
	}
	if layPath != "" {
		g, err := layW(layPath)
		if err != nil {
			return fmt.Errorf("--export-layout: %w", err)
		}
		l := g.Legend
		fmt.Fprintf(stdout, "exported layout %s %dx%d legend %d,%d %dx%d\n", layPath, g.Width, g.Height, l.Min.X, l.Min.Y, l.Dx(), l.Dy())
	}
	return nil
}

func writeScreenshot(path string, img image.Image) error {
	return outfile.WriteFileBuffered(path, func(w *bufio.Writer) error { return png.Encode(w, img) })
}
