package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"canopy/compute"
	"canopy/compute/request"
	"canopy/compute/season"
	"canopy/compute/stack"
)

// stackFlags are the flags of the commands over a stack of dates (stack,
// composite, monitor): the products' band roles, the index, the backend,
// the masks, the common grid and a list file of dates.
type stackFlags struct {
	pf     productFlags
	gf     gridFlags
	list   string
	memory int
	// scratch is the folder of a cube past --memory ("" the system's):
	// the output's, where the user has room.
	scratch string
	// rows, when set, picks the rows of the grid the stack keeps (a part
	// of the area, --shard).
	rows func(height int) (int, int)
}

func (f *stackFlags) register(fs *flag.FlagSet, what string) {
	f.pf.register(fs, what)
	f.gf.register(fs)
	fs.IntVar(&f.memory, "memory", 256, "MiB of the stack's cube (dates × pixels × 4 bytes) kept in memory; a larger cube goes to a temporary file, read back a block of rows at a time (0: always the file)")
	fs.StringVar(&f.list, "list", "", "a list file of the stack: one path,date a line (date YYYY-MM-DD), for files whose date is neither in their metadata nor in their name")
}

// opened is a stack and what the models run on.
type openedStack struct {
	st      *stack.Stack
	sel     selection
	backend compute.Backend
	// load is how long the stack took: each date's files decoded, its
	// index computed, kept.
	load time.Duration
}

func (o *openedStack) close() {
	o.st.Close()
	o.backend.Close()
}

// open dates the paths (and the list's), opens every date on one grid
// and computes the index there; refuse hears every file before it is read.
func (f *stackFlags) open(ctx context.Context, paths []string, inputs *[]string) (*openedStack, error) {
	if f.memory < 0 {
		return nil, request.Errorf("--memory %d: MiB, 0 or more", f.memory)
	}
	if len(paths) == 0 && f.list == "" {
		return nil, request.Errorf("no STACK: name the products or GeoTIFFs of the dates (or --list FILE)")
	}
	bandMap, sel, err := f.pf.parse()
	if err != nil {
		return nil, err
	}
	if len(sel.names) != 1 {
		return nil, request.Errorf("a stack holds one index, not %d", len(sel.names))
	}
	rg, err := f.gf.regrid()
	if err != nil {
		return nil, err
	}
	var entries []stack.Entry
	if f.list != "" {
		if entries, err = stack.ReadList(f.list); err != nil {
			return nil, err
		}
		*inputs = append(*inputs, f.list)
	}
	var items string // where a saved search's items are saved for compute/scene
	defer func() {
		if items != "" {
			os.RemoveAll(items)
		}
	}()
	for _, p := range paths {
		if strings.EqualFold(filepath.Ext(p), ".json") && items == "" {
			if items, err = os.MkdirTemp("", "canopy-items-*"); err != nil {
				return nil, err
			}
		}
		es, ok, err := stack.SavedSearch(p, items)
		if err != nil {
			return nil, err
		}
		if ok {
			*inputs = append(*inputs, p)
			entries = append(entries, es...)
			continue
		}
		e, err := stack.DateOf(ctx, p)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	for _, e := range entries {
		*inputs = append(*inputs, e.Path)
	}
	dates := stack.Group(entries)
	if len(dates) > season.MaxDates {
		return nil, request.Errorf("%d dates; a stack holds at most %d", len(dates), season.MaxDates)
	}
	b, mode, err := pickBackend(f.pf.backend)
	if err != nil {
		return nil, err
	}
	if !season.Runs(b) {
		if f.pf.backend != "auto" && f.pf.backend != "" {
			b.Close()
			return nil, request.Errorf("the %s backend does not run per-pixel models over a stack of dates yet: use go, go-parallel or c", b.Name())
		}
		b.Close()
		if b, err = compute.New(compute.NameC); err != nil {
			return nil, err
		}
		mode = ""
	}
	t0 := time.Now()
	st, err := stack.Build(ctx, dates, stack.Options{Assign: bandMap, AssignFlag: "--bands", Mask: f.pf.mask, MaskBuffer: f.pf.buffer,
		Scale: sel.scale, Regrid: rg, Backend: b, Mode: mode, Name: sel.names[0], Expr: sel.exprs[0], Raw: sel.raw,
		Budget: max(1, int64(f.memory)<<20), TempDir: f.scratch, Rows: f.rows})
	if err != nil {
		b.Close()
		return nil, err
	}
	*inputs = append(*inputs, st.Files...)
	return &openedStack{st: st, sel: sel, backend: b, load: time.Since(t0)}, nil
}

// stackReport is what `canopy stack --json` prints.
type stackReport struct {
	Index  string       `json:"index"`
	Width  int          `json:"width"`
	Height int          `json:"height"`
	CRS    string       `json:"crs"`
	Dates  []stack.Date `json:"dates"`
	// InMemory is false when the cube went to a temporary file.
	InMemory bool `json:"in_memory"`
}

// cmdStack is canopy stack: the dates of a stack, their sensors and the
// valid share of each over the common grid.
func cmdStack(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("stack", stderr)
	var sf stackFlags
	sf.register(fs, "the index whose valid share is counted (one)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	paths, err := parseInterspersed(fs, args, stdout)
	if err != nil {
		return err
	}
	var inputs []string
	o, err := sf.open(ctx, paths, &inputs)
	if err != nil {
		return err
	}
	defer o.close()
	st := o.st
	rep := stackReport{Index: o.sel.names[0], Width: st.Grid.Width, Height: st.Grid.Height, Dates: st.Dates, InMemory: st.InMemory()}
	if st.Grid.Geo != nil {
		rep.CRS = st.Grid.Geo.CRSName()
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	fmt.Fprintf(stdout, "%d dates on %dx%d pixels (%s), %s\n", len(st.Dates), rep.Width, rep.Height, rep.CRS, rep.Index)
	for _, d := range st.Dates {
		fmt.Fprintf(stdout, "  %s  %9.4f  %-24s valid %5.1f%%  (date from %s)  %s\n", d.ISO, d.Decimal, strings.Join(d.Sensors, ", "), 100*d.ValidShare, d.How, strings.Join(d.Paths, " + "))
	}
	return nil
}

// parsePeriod reads A/B as a span of decimal years: A and B are YYYY,
// YYYY-MM or YYYY-MM-DD, B included whole (2024-06/2024-08 is June 1 to
// August 31); an empty B is open (to the last date). open says whether an
// empty B is allowed.
func parsePeriod(flagName, s string, open bool) (season.Period, error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return season.Period{}, request.Errorf("%s %q: want FROM/TO (e.g. 2024-06/2024-08)", flagName, s)
	}
	from, _, err := periodBound(a)
	if err != nil {
		return season.Period{}, request.Errorf("%s: %v", flagName, err)
	}
	p := season.Period{From: season.DecimalYear(from), To: math.Inf(1)}
	if strings.TrimSpace(b) == "" {
		if !open {
			return season.Period{}, request.Errorf("%s %q: give the end (FROM/TO)", flagName, s)
		}
		return p, nil
	}
	_, to, err := periodBound(b)
	if err != nil {
		return season.Period{}, request.Errorf("%s: %v", flagName, err)
	}
	p.To = season.DecimalYear(to)
	if !(p.To > p.From) {
		return season.Period{}, request.Errorf("%s %q ends before it starts", flagName, s)
	}
	return p, nil
}

// periodBound is the span [start, end) a YYYY, YYYY-MM or YYYY-MM-DD
// names, UTC.
func periodBound(s string) (time.Time, time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, t.AddDate(0, 0, 1), nil
	}
	if t, err := time.Parse("2006-01", s); err == nil {
		return t, t.AddDate(0, 1, 0), nil
	}
	if y, err := strconv.Atoi(s); err == nil && y >= 1900 && y <= 2200 && len(s) == 4 {
		t := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		return t, t.AddDate(1, 0, 0), nil
	}
	return time.Time{}, time.Time{}, fmt.Errorf("%q is not a date (YYYY, YYYY-MM or YYYY-MM-DD)", s)
}
