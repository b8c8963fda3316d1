// Package stack opens a stack of dates of one place on one grid, for the
// per-pixel models of compute/season: each date's products (several of a
// day mosaicked, compute/source; a saved search's items), its date (the
// product's metadata or STAC item, a GeoTIFF's ACQUISITIONDATE or TIFF
// DateTime, a date in the file name, or a `path,date` list), its index computed through the one road
// (source.Open, source.Run, verified) with the date's mask as missing
// values, kept date-major in memory or, past a budget, in a temporary file;
// then the models run over blocks of rows, all dates of a block together
// (Run), so the cube is never whole in memory unless it fits.
package stack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/internal/infile"
	"canopy/compute/pipeline"
	"canopy/compute/request"
	"canopy/compute/scene"
	"canopy/compute/season"
	"canopy/compute/source"
	"canopy/compute/stac"
)

// Entry is one product or file of a stack and its date.
type Entry struct {
	Path string
	// Time is the acquisition time (UTC); How says where it came from:
	// "metadata", "file name" or "list".
	Time time.Time
	How  string
	// Sensor is the product's ("Sentinel-2A", "orthomosaic", ...).
	Sensor string
}

// Date is one date of a stack: the products of one UTC day.
type Date struct {
	Time    time.Time `json:"-"`
	ISO     string    `json:"date"`
	Decimal float64   `json:"decimal_year"`
	Paths   []string  `json:"paths"`
	Sensors []string  `json:"sensors"`
	How     string    `json:"date_from"`
	// Valid is the pixels of the grid with a value of the index that
	// date; ValidShare their share of the grid.
	Valid      int     `json:"valid_pixels"`
	ValidShare float64 `json:"valid_share"`
}

var nameDate = regexp.MustCompile(`(?:^|[^0-9])((?:19|20)[0-9]{2})-?(0[1-9]|1[0-2])-?(0[1-9]|[12][0-9]|3[01])(?:[^0-9]|$)`)

// FileNameDate is the date in a file's name: YYYYMMDD or YYYY-MM-DD (the
// first one; years 1900 to 2099), UTC midnight.
func FileNameDate(path string) (time.Time, bool) {
	m := nameDate.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return time.Time{}, false
	}
	t, err := time.Parse("20060102", m[1]+m[2]+m[3])
	return t, err == nil
}

// DateOf reads the date of the product or GeoTIFF at path: its metadata
// (compute/scene: the product's, the STAC item's, a GeoTIFF's
// ACQUISITIONDATE or DateTime), else a date in its name.
func DateOf(ctx context.Context, path string) (Entry, error) {
	e := Entry{Path: path}
	s, err := scene.OpenContext(ctx, path)
	if err != nil {
		return e, err
	}
	e.Sensor = s.Sensor
	e.Time = s.Date
	s.Close()
	if !e.Time.IsZero() {
		e.Time, e.How = e.Time.UTC(), "metadata"
		return e, nil
	}
	if t, ok := FileNameDate(path); ok {
		e.Time, e.How = t, "file name"
		return e, nil
	}
	return e, fmt.Errorf("%s: no date (none in its metadata, no YYYYMMDD or YYYY-MM-DD in its name): give it in a list file (path,date per line)", path)
}

// ReadList reads a list file: one `path,date` a line (date YYYY-MM-DD,
// YYYYMMDD or RFC 3339; a relative path is relative to the list's folder;
// blank lines and lines starting with # skipped).
func ReadList(path string) ([]Entry, error) {
	f, _, err := infile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(io.LimitReader(f, 16<<20))
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		i := strings.LastIndex(s, ",")
		if i < 0 {
			return nil, fmt.Errorf("%s line %d: want path,date", path, line)
		}
		p, d := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		t, ok := parseDate(d)
		if !ok || p == "" {
			return nil, fmt.Errorf("%s line %d: want path,date with the date as YYYY-MM-DD, not %q", path, line, d)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		out = append(out, Entry{Path: p, Time: t, How: "list"})
		if len(out) > 4*season.MaxDates {
			return nil, fmt.Errorf("%s: more than %d lines", path, 4*season.MaxDates)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no path,date line", path)
	}
	return out, nil
}

func parseDate(s string) (time.Time, bool) {
	for _, l := range []string{"2006-01-02", "20060102", time.RFC3339, "2006-01-02T15:04:05"} {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// Group gathers the entries into dates: the products of one UTC day are
// one date (mosaicked in the order given), the date's time the earliest of
// them; dates in time order.
func Group(entries []Entry) []Date {
	var ds []Date
	byDay := map[string]int{}
	for _, e := range entries {
		day := e.Time.UTC().Format("2006-01-02")
		i, ok := byDay[day]
		if !ok {
			i = len(ds)
			byDay[day] = i
			ds = append(ds, Date{Time: e.Time.UTC(), ISO: day, How: e.How})
		}
		d := &ds[i]
		d.Paths = append(d.Paths, e.Path)
		if e.Sensor != "" && !slices.Contains(d.Sensors, e.Sensor) {
			d.Sensors = append(d.Sensors, e.Sensor)
		}
		if e.Time.Before(d.Time) {
			d.Time = e.Time.UTC()
		}
	}
	slices.SortStableFunc(ds, func(a, b Date) int { return a.Time.Compare(b.Time) })
	for i := range ds {
		ds[i].Decimal = season.DecimalYear(ds[i].Time)
	}
	return ds
}

// Options say how a stack's dates are opened and what is computed.
type Options struct {
	// Assign, AssignFlag, Mask, MaskBuffer and Scale are source.Spec's,
	// the same for every date.
	Assign     map[string]int
	AssignFlag string
	Mask       string
	MaskBuffer int
	Scale      map[string]compute.Radiometry
	// Regrid puts every date on one grid (--grid); without it the dates
	// must share the first date's grid.
	Regrid *source.Regrid
	// Backend computes the index (Mode its mode); Name and Expr are the
	// index; Raw lets indices with constants run on digital numbers.
	Backend compute.Backend
	Mode    string
	Name    string
	Expr    *index.Expr
	Raw     bool
	// Budget is the most bytes of the cube kept in memory; a larger cube
	// goes to a temporary file in TempDir (the system's when "" or when
	// no file can be made there). 0: 1 GiB.
	Budget  int64
	TempDir string
	// Rows, when set, says which rows [y0, y1) of the grid (of height
	// rows, known when the first date is open) the stack keeps: a part of
	// the area (--shard, Part) holds only its rows in memory or in the
	// file, and the dates' valid pixels are counted over them. Every
	// date's index is still computed over the whole grid (compute/source
	// reads no window yet). Without it, every row.
	Rows func(height int) (y0, y1 int)
	// Refuse hears each date's files before its pixels are read (an
	// output that would replace one stops the stack).
	Refuse func(files []string) error
	// Progress hears each date as it is done.
	Progress func(done, total int)
}

// Stack is the index over every date on one grid.
type Stack struct {
	Dates []Date
	Grid  source.Grid
	// Y0 and Y1 are the rows of Grid the stack holds, [Y0, Y1) (Options).
	Y0, Y1 int
	// Files are every file the stack read.
	Files []string
	store store
}

// Decimals are the dates' decimal years.
func (s *Stack) Decimals() []float64 {
	d := make([]float64, len(s.Dates))
	for i := range s.Dates {
		d[i] = s.Dates[i].Decimal
	}
	return d
}

// InMemory says whether the cube is in memory (else in a temporary file).
func (s *Stack) InMemory() bool { return s.store.f == nil }

// Close removes the temporary file, if any.
func (s *Stack) Close() error { return s.store.close() }

// Build opens every date, computes its index on the common grid and keeps
// it. Dates must be distinct days (Group), 1 to season.MaxDates.
func Build(ctx context.Context, dates []Date, opt Options) (*Stack, error) {
	if len(dates) == 0 {
		return nil, errors.New("no date to stack")
	}
	if len(dates) > season.MaxDates {
		return nil, fmt.Errorf("%d dates; a stack holds at most %d", len(dates), season.MaxDates)
	}
	st := &Stack{Dates: slices.Clone(dates)}
	ok := false
	defer func() {
		if !ok {
			st.Close()
		}
	}()
	job := source.Job{Backend: opt.Backend, Mode: opt.Mode, Names: []string{opt.Name}, Exprs: []*index.Expr{opt.Expr}, Verify: true}
	var roles []string
	for _, r := range index.Roles {
		if slices.Contains(opt.Expr.Roles(), r) {
			roles = append(roles, r)
		}
	}
	for t := range st.Dates {
		d := &st.Dates[t]
		spec := source.Spec{Product: d.Paths[0], More: d.Paths[1:], Assign: opt.Assign, AssignFlag: opt.AssignFlag,
			Mask: opt.Mask, MaskBuffer: opt.MaskBuffer, Scale: opt.Scale}
		src, err := source.Open(ctx, spec, source.Options{Roles: roles, Need: opt.Name, Regrid: opt.Regrid, Refuse: opt.Refuse})
		if err != nil {
			return nil, err
		}
		err = st.addDate(ctx, t, src, job, opt)
		src.Close()
		if err != nil {
			return nil, err
		}
		if opt.Progress != nil {
			opt.Progress(t+1, len(st.Dates))
		}
	}
	ok = true
	return st, nil
}

func (st *Stack) addDate(ctx context.Context, t int, src source.Source, job source.Job, opt Options) error {
	d := &st.Dates[t]
	if err := source.CheckValues(src.Radiometry(), job.Names, job.Exprs, opt.Raw); err != nil {
		return fmt.Errorf("%s: %w", d.Paths[0], err)
	}
	g := src.Grid()
	if t == 0 {
		st.Grid = g
		st.Y0, st.Y1 = 0, g.Height
		if opt.Rows != nil {
			st.Y0, st.Y1 = opt.Rows(g.Height)
		}
		if st.Y0 < 0 || st.Y1 > g.Height || st.Y0 > st.Y1 {
			return fmt.Errorf("rows %d to %d of a grid of %d rows", st.Y0, st.Y1, g.Height)
		}
		budget := opt.Budget
		if budget <= 0 {
			budget = 1 << 30
		}
		if err := st.store.open(g.Width, st.Y1-st.Y0, len(st.Dates), budget, opt.TempDir); err != nil {
			return err
		}
	} else if g.Width != st.Grid.Width || g.Height != st.Grid.Height || st.Grid.Geo.Mismatch(g.Geo) != "" {
		return request.Errorf("%s (%s) is not on the grid of %s (%s): give --grid (e.g. --grid %s, or --grid utm)",
			d.Paths[0], d.ISO, st.Dates[0].Paths[0], st.Dates[0].ISO, st.Dates[0].Paths[0])
	}
	st.Files = append(st.Files, src.Files()...)
	valid := 0
	sink := pipeline.SinkFunc(func(b *pipeline.Block) error {
		// The block's rows the stack holds.
		a, z := max(b.Y0, st.Y0), min(b.Y0+b.Rows, st.Y1)
		if a >= z {
			return nil
		}
		o := b.Out[0][(a-b.Y0)*g.Width : (z-b.Y0)*g.Width]
		for _, v := range o {
			if v == v {
				valid++
			}
		}
		return st.store.writeRows(t, a-st.Y0, o)
	})
	if _, err := source.Run(ctx, src, job, sink); err != nil {
		return fmt.Errorf("%s: %w", d.Paths[0], err)
	}
	d.Valid = valid
	if n := g.Width * (st.Y1 - st.Y0); n > 0 {
		d.ValidShare = float64(valid) / float64(n)
	}
	return nil
}

// BlockRows is how many rows a block of the models takes: all dates of
// about 8 MiB of cube, at least one row, at most PartRows.
func (s *Stack) BlockRows() int {
	row := int64(s.Grid.Width) * int64(len(s.Dates)) * 4
	return int(max(1, min(int64(s.Grid.Height), PartRows, (8<<20)/max(row, 1))))
}

// PartRows is the rows of the unit a part of the area is made of (Part):
// the output COG's tiles (512², geotiff.COGOptions' default). No block of
// the models crosses a multiple of it, so that a part's blocks are the
// whole run's blocks and its planes the whole's bit for bit on every
// backend (one that rounds a pixel differently by where it falls in a
// block, vector lanes or a scalar tail, too).
const PartRows = 512

// blocks are the blocks of rows [y0, y1): BlockRows rows each from every
// multiple of PartRows, the last of each band of PartRows rows shorter.
func (s *Stack) blocks(y0, y1 int) [][2]int {
	step := s.BlockRows()
	var out [][2]int
	for band := y0 / PartRows * PartRows; band < y1; band += PartRows {
		for a := band; a < band+PartRows && a < y1; a += step {
			lo, hi := max(a, y0), min(a+step, band+PartRows, y1)
			if lo < hi {
				out = append(out, [2]int{lo, hi})
			}
		}
	}
	return out
}

// Cube reads rows [y0, y0+rows) of the grid (within the rows the stack
// holds) of every date into dst (grown as needed) as a cube of rows×Width
// pixels.
func (s *Stack) Cube(y0, rows int, dst []float32) (season.Cube, error) {
	if y0 < s.Y0 || rows < 0 || y0+rows > s.Y1 {
		return season.Cube{}, fmt.Errorf("rows %d to %d of a stack holding rows %d to %d", y0, y0+rows, s.Y0, s.Y1)
	}
	y0 -= s.Y0
	w := s.Grid.Width
	P := rows * w
	T := len(s.Dates)
	if cap(dst) < T*P {
		dst = make([]float32, T*P)
	}
	dst = dst[:T*P]
	for t := range T {
		if err := s.store.readRows(t, y0, dst[t*P:(t+1)*P]); err != nil {
			return season.Cube{}, err
		}
	}
	return season.Cube{Dates: s.Decimals(), Pixels: P, Values: dst}, nil
}

// Run runs the model over the stack on b, block after block of rows, and
// hands each block's output planes (rows×Width values each, in
// Model.Outputs' order) to sink; it returns the backend's phases summed.
func Run(ctx context.Context, s *Stack, b compute.Backend, m season.Model, sink func(y0, rows int, out [][]float32) error) (*season.Plan, compute.Timings, error) {
	return RunRows(ctx, s, []compute.Backend{b}, m, s.Y0, s.Y1, sink)
}

// RunRows runs the model over rows [y0, y1) of the grid (within those the
// stack holds), its blocks dealt
// to the backends (one per device, season.Spread; season.Deal: the next
// free one takes the next block), and hands each block's output planes to
// sink in row order, y0 of a block counted from the stack's first row.
// Blocks never cross a multiple of PartRows and start where a run over
// the whole grid starts them, so that the planes of a part of the grid
// are bit for bit those of the whole.
func RunRows(ctx context.Context, s *Stack, backends []compute.Backend, m season.Model, y0, y1 int, sink func(y0, rows int, out [][]float32) error) (*season.Plan, compute.Timings, error) {
	var total compute.Timings
	plan, err := season.NewPlan(m, s.Decimals())
	if err != nil {
		return nil, total, err
	}
	for _, b := range backends {
		if !season.Runs(b) {
			return nil, total, request.Errorf("the %s backend does not run per-pixel models over a stack of dates (go, go-parallel, c, gl and cuda do)", b.Name())
		}
	}
	if y0 < s.Y0 || y1 > s.Y1 || y0 > y1 {
		return nil, total, fmt.Errorf("rows %d to %d of a stack holding rows %d to %d", y0, y1, s.Y0, s.Y1)
	}
	bl := s.blocks(y0, y1)
	span := func(k int) (int, int) { return bl[k][0], bl[k][1] }
	outs := len(m.Outputs())
	total, err = season.Deal(ctx, backends, len(bl), func(k int, j *season.Job) (*season.Job, error) {
		a, b := span(k)
		var buf []float32
		if j != nil {
			buf = j.Cube.Values
		}
		c, err := s.Cube(a, b-a, buf)
		if err != nil {
			return nil, err
		}
		if j == nil || cap(j.Out[0]) < c.Pixels {
			return season.NewJob(plan, c), nil
		}
		j.Cube = c
		for i := range outs {
			j.Out[i] = j.Out[i][:c.Pixels]
		}
		return j, nil
	}, func(k int, j *season.Job) error {
		a, b := span(k)
		return sink(a, b-a, j.Out)
	})
	if err != nil {
		return nil, total, err
	}
	return plan, total, nil
}

// store keeps the cube date-major: each date's plane whole, in memory or
// in a temporary file.
type store struct {
	w, h, d int
	mem     []float32
	f       *os.File
	gone    bool // the file is already unlinked
}

func (s *store) open(w, h, d int, budget int64, dir string) error {
	s.w, s.h, s.d = w, h, d
	size := int64(w) * int64(h) * int64(d) * 4
	if size <= budget {
		s.mem = make([]float32, int64(w)*int64(h)*int64(d))
		return nil
	}
	f, err := os.CreateTemp(dir, "canopy-stack-*.f32")
	if err != nil && dir != "" {
		f, err = os.CreateTemp("", "canopy-stack-*.f32") // the system's, then
	}
	if err != nil {
		return fmt.Errorf("the stack (%d MiB) is larger than its memory budget and no temporary file could be made: %w", size>>20, err)
	}
	s.f = f
	if runtime.GOOS != "windows" {
		// Unlinked at once: nothing is left behind, whatever ends the
		// process (Windows removes no open file; Close removes it there).
		if os.Remove(f.Name()) == nil {
			s.gone = true
		}
	}
	return nil
}

func (s *store) offset(t, y0 int) int64 {
	return (int64(t)*int64(s.h) + int64(y0)) * int64(s.w)
}

func (s *store) writeRows(t, y0 int, v []float32) error {
	o := s.offset(t, y0)
	if s.f == nil {
		copy(s.mem[o:], v)
		return nil
	}
	if len(v) == 0 {
		return nil
	}
	_, err := s.f.WriteAt(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)), 4*o)
	return err
}

func (s *store) readRows(t, y0 int, v []float32) error {
	o := s.offset(t, y0)
	if s.f == nil {
		copy(v, s.mem[o:o+int64(len(v))])
		return nil
	}
	if len(v) == 0 {
		return nil
	}
	_, err := s.f.ReadAt(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)), 4*o)
	return err
}

func (s *store) close() error {
	s.mem = nil
	if s.f == nil {
		return nil
	}
	name := s.f.Name()
	s.f.Close()
	s.f = nil
	if s.gone {
		return nil
	}
	return os.Remove(name)
}

// SavedSearch reads a saved search (`canopy search --out`, any STAC
// ItemCollection) as entries of a stack: one per item, dated by the item,
// each item saved as a STAC item file in dir (compute/stac's SaveItem) that
// compute/scene opens. ok is false, with no error, when the file is not an
// ItemCollection (a single STAC item, a product): the caller dates it as
// any other path.
func SavedSearch(path, dir string) (entries []Entry, ok bool, err error) {
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		return nil, false, nil
	}
	r, err := stac.ReadResult(path)
	if errors.Is(err, stac.ErrNotResult) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(r.Items) == 0 {
		return nil, true, fmt.Errorf("%s: the saved search has no item", path)
	}
	for _, it := range r.Items {
		p, err := stac.SaveItem(dir, it)
		if err != nil {
			return nil, true, fmt.Errorf("%s: %w", path, err)
		}
		sensor := it.Platform
		if sensor == "" {
			sensor = it.Collection
		}
		entries = append(entries, Entry{Path: p, Time: it.Date.UTC(), How: "STAC item", Sensor: sensor})
	}
	return entries, true, nil
}

// Part is the i-th of n parts of a grid of height rows cut by bands of
// PartRows rows (the output COG's tiles: every part's file then holds
// whole tiles of the whole's), rows [y0, y1): the bands are shared out as
// evenly as they go, in order, so that the parts are disjoint, cover the
// grid and are the same whatever machine computes them. A part may be
// empty (y0 = y1) when there are more parts than bands.
func Part(height, i, n int) (y0, y1 int) {
	if n < 1 || i < 0 || i >= n || height <= 0 {
		return 0, 0
	}
	bands := (height + PartRows - 1) / PartRows
	a, z := i*bands/n, (i+1)*bands/n
	return min(a*PartRows, height), min(z*PartRows, height)
}

// Rows is the grid of rows [y0, y1) of g: its width, y1 − y0 rows, and its
// georeferencing moved down y0 rows (the tiepoint's map coordinates, or
// the transformation's origin, moved by y0 rows of pixels; the rest as
// it is), so that a GIS places the part where it lies in the whole.
func Rows(g source.Grid, y0, y1 int) source.Grid {
	out := source.Grid{Width: g.Width, Height: y1 - y0, Geo: g.Geo}
	if g.Geo == nil || y0 == 0 {
		return out
	}
	geo := *g.Geo
	switch {
	case len(geo.Transformation) >= 16:
		m := slices.Clone(geo.Transformation)
		m[3] += m[1] * float64(y0)
		m[7] += m[5] * float64(y0)
		geo.Transformation = m
	case len(geo.PixelScale) >= 2 && len(geo.Tiepoints) >= 6:
		tp := slices.Clone(geo.Tiepoints)
		tp[4] -= geo.PixelScale[1] * float64(y0)
		geo.Tiepoints = tp
	}
	out.Geo = &geo
	return out
}
