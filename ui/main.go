package ui

import (
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"canopy/assets"
	"canopy/compute"
	"canopy/ui/render/colormap"
)

// AppID is the application's unique id, as in FyneApp.toml.
const AppID = "io.canopy.ndvi"

// Version is the app version, as in FyneApp.toml.
const Version = "0.1.0"

const usage = `usage: canopy gui [flags]

Opens the desktop app. Without --red/--nir it opens on a generated scene.

  --red F[:B]        red band: a GeoTIFF or PNG, band B of a multi-band file
  --nir F[:B]        near-infrared band
  --scene KIND       generated scene: landscape (default) or noise
  --size N           generated scene size, N×N pixels (default 2048, at most 10980 is typical)
  --seed S           generated scene seed (default 1)
  --backend NAME     go, go-parallel, c, gl, cuda[:mode] or auto (default auto: the fastest available)
  --ramp NAME        colour ramp: rdylgn (default), viridis, classes
  --compare          run "Compare all" once the first map is shown
  --repeat K         timed runs per backend when comparing (default 5)
  --screenshot FILE  write a PNG of the window once ready (Capture; may be black under Xvfb)
  --exit-after D     quit D (e.g. 5s) after the first map is shown, for smoke tests
  --window WxH       initial window size (default 1440x900)
`

// flags are the parsed command line of `canopy gui`.
type flags struct {
	opts       Options
	ramp       string
	screenshot string
	exitAfter  time.Duration
}

// usageError is a bad command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

var errHelp = errors.New("help requested")

// parseFlags reads the `canopy gui` flags.
func parseFlags(args []string) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("canopy gui", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.opts.Red, "red", "", "")
	fs.StringVar(&f.opts.NIR, "nir", "", "")
	fs.StringVar(&f.opts.Scene, "scene", compute.SceneLandscape, "")
	size := fs.String("size", "2048", "")
	seed := fs.String("seed", "1", "")
	fs.StringVar(&f.opts.Backend, "backend", "auto", "")
	fs.StringVar(&f.ramp, "ramp", "", "")
	fs.BoolVar(&f.opts.Compare, "compare", false, "")
	fs.IntVar(&f.opts.Repeat, "repeat", 5, "")
	fs.StringVar(&f.screenshot, "screenshot", "", "")
	fs.DurationVar(&f.exitAfter, "exit-after", 0, "")
	window := fs.String("window", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return f, errHelp
		}
		return f, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return f, usageError{fmt.Sprintf("unexpected argument %q (bands are given with --red and --nir)", fs.Arg(0))}
	}
	if (f.opts.Red == "") != (f.opts.NIR == "") {
		return f, usageError{"--red and --nir go together: give both bands, or neither for a generated scene"}
	}
	n, err := strconv.Atoi(strings.TrimSpace(*size))
	if err != nil || n <= 0 || n*n > compute.MaxFakePixels {
		return f, usageError{fmt.Sprintf("bad --size %q: want a positive N (the scene is N×N), e.g. 2048 or 10980", *size)}
	}
	f.opts.Size = n
	s, err := strconv.ParseUint(strings.TrimSpace(*seed), 10, 63)
	if err != nil {
		return f, usageError{fmt.Sprintf("bad --seed %q: want a whole number ≥ 0", *seed)}
	}
	f.opts.Seed = int(s)
	if !contains(compute.Scenes(), f.opts.Scene) {
		return f, usageError{fmt.Sprintf("unknown --scene %q (known: %s)", f.opts.Scene, strings.Join(compute.Scenes(), ", "))}
	}
	if *window != "" {
		a, b, ok := strings.Cut(strings.ToLower(*window), "x")
		ww, err1 := strconv.Atoi(a)
		wh, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || ww < 400 || wh < 300 {
			return f, usageError{fmt.Sprintf("bad --window %q: want WxH of at least 400x300, e.g. 1600x1000", *window)}
		}
		f.opts.WindowSize = fyne.NewSize(float32(ww), float32(wh))
	}
	if f.opts.Repeat < 1 {
		return f, usageError{fmt.Sprintf("bad --repeat %d: at least 1", f.opts.Repeat)}
	}
	if f.exitAfter < 0 {
		return f, usageError{"bad --exit-after: a duration ≥ 0, e.g. 5s"}
	}
	if f.ramp != "" {
		if _, err := colormap.New(f.ramp, -1, 1); err != nil {
			return f, usageError{"bad --ramp: " + err.Error()}
		}
	}
	return f, nil
}

// Main runs the desktop app with the `canopy gui` arguments and returns the
// exit status: 0 when the window was closed (or --exit-after ran out), 1
// when the start scene could not be shown in a --exit-after run, 2 for a
// bad command line (one line on stderr).
func Main(args []string) int {
	return run(args, os.Stdout, os.Stderr)
}

func run(args []string, stdout, stderr io.Writer) int {
	f, err := parseFlags(args)
	if errors.Is(err, errHelp) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "canopy gui: %v (canopy gui --help for usage)\n", err)
		return 2
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A 10980² scene is 1.45 GB of float32; keep the garbage of a
		// replaced plane from doubling that before the GC runs.
		debug.SetMemoryLimit(2560 << 20)
	}

	app.SetMetadata(fyne.AppMetadata{
		ID: AppID, Name: "Canopy", Version: Version, Build: 1, Icon: assets.Icon, Release: true,
		Migrations: map[string]bool{"fyneDo": true},
	})
	a := app.NewWithID(AppID)
	a.SetIcon(assets.Icon)

	status := 0
	var w *Window
	onReady := func() {
		if w != nil && w.scene == nil && f.exitAfter > 0 {
			status = 1 // the smoke test must see the failure
		}
		if w != nil && w.scene != nil && w.scene.ndvi != nil {
			// For smoke tests: which backend made the first map.
			fmt.Fprintf(stdout, "computed on %s\n", w.scene.backend)
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
			if f.exitAfter > 0 {
				time.AfterFunc(f.exitAfter, func() { fyne.Do(a.Quit) })
			}
		})
	}
	w = newWindow(a, f.opts, hooks{onReady: onReady})
	if f.ramp != "" {
		w.colour.SetRamp(f.ramp)
	}
	w.Win.SetIcon(assets.Icon)
	w.Win.SetMaster()
	w.Win.ShowAndRun()
	return status
}

func writeScreenshot(path string, img image.Image) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(out, img); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
