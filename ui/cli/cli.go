package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"canopy/compute"
	"canopy/compute/backends"
	"canopy/compute/fake"
	"canopy/compute/outfile"
	"canopy/compute/request"
	"canopy/compute/usererr"
)

// Exit statuses.
const (
	ExitOK    = 0
	ExitFail  = 1
	ExitUsage = 2
)

const usage = `usage:
  canopy                                   open the window on a generated scene
  canopy gui [INPUT] [--index NAME]        open the window with data loaded
  canopy backends [--json]                 each backend: available or why not, device, kernel
  canopy indices [--json]                  the index catalogue: name, formula, roles, range
  canopy scene PATH [--json]               what a product holds: sensor, date, tile, CRS, bands, cloud share
  canopy compute INPUT [--index NAME[,NAME...] | --expr EXPR] [--backend NAME[:MODE]|auto]
                 [--mask auto|none] [--mask-buffer PX] [--nodata V]
                 [--tif OUT.tif] [--png OUT.png] [--png-size N] [--ramp NAME] [--stretch MODE] [--legend]
                 [--layout OUT.png|pdf|svg [--paper A4 --dpi 300 | --layout-size WxH] [--grid]] [--json]
                 [--grid FILE.tif|utm[,RES]|EPSG:N[,RES[,W,S,E,N]] [--grid-resampling bilinear]]
  canopy zonal INPUT [--index NAME] --stands FILE[:LAYER] [--id FIELD] --csv OUT.csv [--gpkg OUT.gpkg]
  canopy change --before PATH --after PATH [--bands ROLE=B,...] [--index NAME] [--classes T,...]
                [--tif OUT] [--png OUT] [--stands F --csv OUT] [--json]
  canopy batch --out DIR [--bands ROLE=B,...] [--index NAME[,..]] [--shard I/N|env] [--jobs K] PATH... | --list FILE
  canopy batch --out DIR [--shard I/N|env] composite|monitor STACK... [their flags] --tif NAME.tif
                                           a part of a composite's or monitor's area; the last part merges
  canopy bench [--size N[,N...]] [--backends all|a,b] [--index NAME[,NAME...]] [--repeat K] [--scene noise|landscape] [--json] [--chart OUT.png]
  canopy bench --resident [--size N] [--backends a,b] [--view WxH] [--repeat K] [--json]
                                           a map viewer's steps with the bands kept on the device
  canopy fake --size N[xM] [--seed S] [--scene noise|landscape] --red R.tif --nir N.tif
  canopy warp INPUT... [--crs EPSG:N] [--res M] [--bbox W,S,E,N|--like F|--stands F]
              [--resampling nearest|bilinear|cubic|average] [--backend go|go-parallel|c] --tif OUT
  canopy search --collection C --bbox W,S,E,N|--stands F --datetime A/B [--cloud P]
                [--api earth-search|planetary-computer|URL] [--max N] [--json]
  canopy stack PATH|SEARCH.json... [--list FILE] [--bands ROLE=B,...] [--index NAME] [--grid SPEC] [--json]
                                           a stack's dates, sensors and valid share per date
  canopy composite STACK... --period FROM/TO [--stat median|max-ndvi|pNN] [--index NAME]
                   [--devices all|N] [--shard I/N|env] --tif OUT
  canopy monitor STACK... --index NAME --history FROM/TO --monitor FROM/ [--harmonics K] [--rule mosum|anomaly]
                 [--stands F [--csv OUT] [--gpkg OUT]] [--png OUT] [--layout OUT.pdf]
                 [--devices all|N] [--shard I/N|env] --tif OUT [--json]
INPUT is --red F[:B] --nir F[:B] (shorthand), --band ROLE=F[:B] (repeatable), or --scene PATH
(a Sentinel-2 L2A .SAFE folder or .zip, a Landsat Collection 2 Level-2 folder or .tar, a STAC
item .json, an orthomosaic GeoTIFF; a STAC item or a GeoTIFF may be an http(s) or s3:// URL,
read by byte ranges). F:B selects band B (1-based) of a multi-band file.
Roles: blue green red rededge1 rededge2 rededge3 nir nir2 swir1 swir2. Backends: go, go-parallel, c, gl, cuda.
canopy CMD --help (or canopy help CMD) shows a command's flags and two examples.
Exit status: 0 success, 1 a failed run, 2 bad usage.`

// command is one command of the command line: `canopy NAME ARGS...`.
type command struct {
	name string
	run  func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the command table Run dispatches through (help and the
// window, `canopy gui`, aside). A command that writes files writes them
// through compute/outfile, and is listed in writers_test.go with a hostile
// run of each output (TestEveryCommandWritesSafely fails for a command
// listed here and not there).
var commands = []command{
	{"backends", cmdBackends},
	{"indices", cmdIndices},
	{"scene", cmdScene},
	{"compute", cmdCompute},
	{"zonal", cmdZonal},
	{"change", cmdChange},
	{"batch", cmdBatch},
	{"bench", cmdBench},
	{"fake", cmdFake},
	{"warp", cmdWarp},
	{"search", cmdSearch},
	{"stack", cmdStack},
	{"composite", cmdComposite},
	{"monitor", cmdMonitor},
}

// commandNames lists the commands, gui first, for messages.
func commandNames() string {
	names := []string{"gui"}
	for _, c := range commands {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}

// Run executes the command line args (without the program name) and
// returns the exit status.
//
// The command runs under a context that Ctrl+C (SIGINT) or SIGTERM
// cancels (outfile.NotifyContext): the run stops at its next block,
// removes what it had begun to write (no output is put in place after
// the signal), and Run prints one line, "canopy CMD: interrupted", and
// returns 128 + the signal (130 for Ctrl+C, 143 for SIGTERM), the
// status a shell gives a process the signal killed. A second signal does
// not wait for the run to stop: the temporary files are removed and the
// process exits at once.
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return ExitUsage
	}
	switch args[0] {
	case "help", "-h", "--help", "-help":
		if len(args) > 1 && args[0] == "help" && args[1] != "gui" {
			return Run([]string{args[1], "--help"}, stdout, stderr) // canopy help CMD
		}
		fmt.Fprintln(stdout, usage)
		return ExitOK
	}
	err := request.Errorf("unknown command %q (commands: %s)", args[0], commandNames())
	ctx, stop := outfile.NotifyContext(context.Background())
	defer stop()
	for _, c := range commands {
		if c.name == args[0] {
			err = c.run(ctx, args[1:], stdout, stderr)
			break
		}
	}
	var ue request.Error
	var sig outfile.SignalError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(context.Cause(ctx), &sig):
		// Whatever the run's own error says (a context error, a
		// commit refused), the run stopped because it was asked to.
		fmt.Fprintf(stderr, "canopy %s: interrupted\n", usererr.Clip(args[0]))
		return sig.ExitCode()
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "canopy %s: %s\n", usererr.Clip(args[0]), usererr.Line(err))
		return ExitUsage
	default:
		// One line in the user's words, naming the file (compute/usererr,
		// which the window uses too).
		fmt.Fprintf(stderr, "canopy %s: %v\n", usererr.Clip(args[0]), usererr.Explain(err))
		return ExitFail
	}
}

// newFlags returns a flag set that reports errors as values, not exits.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("canopy "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

func parse(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(fs, stdout)
			return err
		}
		return request.Error{Msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return request.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

func cmdBackends(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("backends", stderr)
	asJSON := fs.Bool("json", false, "one JSON object per line")
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for _, b := range backends.All() {
		info := b.Info()
		b.Close()
		if *asJSON {
			if err := enc.Encode(info); err != nil {
				return err
			}
			continue
		}
		if info.Available {
			fmt.Fprintf(stdout, "%-12s available    %s\n", info.Name, info.Device)
		} else {
			fmt.Fprintf(stdout, "%-12s unavailable  %s\n", info.Name, info.Reason)
		}
	}
	return nil
}

// pickBackend resolves a name (or auto, or name:mode) to a ready backend
// and the mode to run it in (a per-run argument; "" for its default).
func pickBackend(name string) (compute.Backend, string, error) {
	b, mode, _, err := pickBackendWhy(name)
	return b, mode, err
}

// pickBackendWhy is pickBackend with, for auto, the reason for the choice
// ("" for a backend the user named).
func pickBackendWhy(name string) (compute.Backend, string, string, error) {
	if name == "auto" || name == "" {
		b, why, err := compute.AutoWhy()
		return b, "", why, err
	}
	b, mode, err := pickNamed(name)
	return b, mode, "", err
}

// pickNamed resolves a backend the user named (name or name:mode).
func pickNamed(name string) (compute.Backend, string, error) {
	base, mode, _ := strings.Cut(name, ":")
	b, err := compute.New(base)
	if err != nil {
		return nil, "", request.Error{Msg: err.Error()}
	}
	if mode != "" {
		m, ok := b.(compute.Moder)
		if !ok {
			b.Close()
			return nil, "", request.Errorf("backend %s has no modes (asked for %q)", base, mode)
		}
		if !slices.Contains(m.Modes(), mode) {
			b.Close()
			return nil, "", request.Errorf("backend %s has no mode %q (modes: %s)", base, mode, strings.Join(m.Modes(), ", "))
		}
	}
	if info := b.Info(); !info.Available {
		b.Close()
		return nil, "", fmt.Errorf("backend %s cannot run here: %s; choose another (canopy backends lists those that can)", base, info.Reason)
	}
	return b, mode, nil
}

// parseSize reads N or NxM.
func parseSize(s string) (w, h int, err error) {
	a, b, two := strings.Cut(strings.ToLower(s), "x")
	w, err1 := strconv.Atoi(a)
	h = w
	var err2 error
	if two {
		h, err2 = strconv.Atoi(b)
	}
	if err1 != nil || err2 != nil || w <= 0 || h <= 0 {
		return 0, 0, request.Errorf("bad --size %q: want N or NxM with positive integers, e.g. 2048 or 10980x10980", s)
	}
	if w*h > fake.MaxPixels || w > fake.MaxPixels || h > fake.MaxPixels {
		return 0, 0, request.Errorf("bad --size %q: at most %d pixels", s, fake.MaxPixels)
	}
	return w, h, nil
}

// sameFile reports whether two paths name the same existing file.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(fa, fb)
	}
	aa, _ := filepath.Abs(a)
	bb, _ := filepath.Abs(b)
	return aa == bb
}
