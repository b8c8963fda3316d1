package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/raster"
	"canopy/compute/scene"
)

// bandFlags is the repeatable --band ROLE=F[:B].
type bandFlags []string

func (b *bandFlags) String() string     { return strings.Join(*b, " ") }
func (b *bandFlags) Set(v string) error { *b = append(*b, v); return nil }

// inputFlags are compute's input flags (DESIGN's INPUT): the --red/--nir
// shorthand, --band ROLE=F[:B], or --scene PATH, with the mask and nodata
// options. compute, zonal, change and batch share them.
type inputFlags struct {
	// warn, when set, hears a one-line notice before a load that needs
	// more memory than raster.Budget.
	warn            io.Writer
	red, nir, scene string
	bands           bandFlags
	mask            string
	maskBuffer      int
	nodata          string
	// outs are the run's outputs: one that is a file of the --scene (a
	// band, the metadata, a mask) is refused as soon as the product is
	// open, before its pixels are read.
	outs []string
	// sceneFiles are the files of the --scene, once it was opened.
	sceneFiles []string
}

func (f *inputFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.red, "red", "", "red band, FILE[:BAND] (shorthand for --band red=FILE[:BAND])")
	fs.StringVar(&f.nir, "nir", "", "near-infrared band, FILE[:BAND] (shorthand for --band nir=FILE[:BAND])")
	fs.Var(&f.bands, "band", "a band by role, ROLE=FILE[:BAND] (repeatable; roles: "+strings.Join(index.Roles[:], " ")+")")
	fs.StringVar(&f.scene, "scene", "", "a product: Sentinel-2 L2A .SAFE folder or .zip, Landsat C2 L2 folder or .tar, STAC item .json, orthomosaic GeoTIFF")
	fs.StringVar(&f.mask, "mask", "auto", "cloud and quality mask of a --scene: auto (the product's own: SCL, QA_PIXEL, alpha) or none")
	fs.IntVar(&f.maskBuffer, "mask-buffer", 0, "grow the mask by this many pixels")
	fs.StringVar(&f.nodata, "nodata", "", "nodata value (as stored) for every band given as a file (overrides the files' GDAL_NODATA)")
}

// given reports whether any input was named.
func (f *inputFlags) given() bool {
	return f.red != "" || f.nir != "" || f.scene != "" || len(f.bands) > 0
}

// specs returns the file bands by role: --band entries and the shorthand.
func (f *inputFlags) specs() (map[string]string, error) {
	m := map[string]string{}
	add := func(role, spec, flagName string) error {
		role = strings.ToLower(strings.TrimSpace(role))
		if index.RoleIndex(role) < 0 {
			return compute.Usagef("%s: unknown role %q (roles: %s)", flagName, role, strings.Join(index.Roles[:], ", "))
		}
		if spec == "" {
			return compute.Usagef("%s: no file for role %s", flagName, role)
		}
		if old, dup := m[role]; dup && old != spec {
			return compute.Usagef("%s: role %s given twice (%s and %s)", flagName, role, old, spec)
		}
		m[role] = spec
		return nil
	}
	if f.red != "" {
		if err := add("red", f.red, "--red"); err != nil {
			return nil, err
		}
	}
	if f.nir != "" {
		if err := add("nir", f.nir, "--nir"); err != nil {
			return nil, err
		}
	}
	for _, b := range f.bands {
		role, spec, ok := strings.Cut(b, "=")
		if !ok {
			return nil, compute.Usagef("--band %q: want ROLE=FILE[:BAND], e.g. --band red=scene.tif:3", b)
		}
		if err := add(role, spec, "--band"); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// inputFiles lists the files the inputs read (for refusing to overwrite
// them with an output).
func (f *inputFlags) inputFiles() []string {
	var out []string
	specs, _ := f.specs()
	for _, s := range specs {
		if p, _, err := raster.ParseSpec(s); err == nil {
			out = append(out, p, s)
		}
	}
	if f.scene != "" {
		out = append(out, f.scene)
	}
	return append(out, f.sceneFiles...)
}

// refuseInputs is the usage error for an output that names one of the
// inputs (the same file, whatever the name), or nil.
func refuseInputs(outs, inputs []string) error {
	for _, o := range outs {
		for _, p := range inputs {
			if sameFile(o, p) {
				return compute.Usagef("refusing to overwrite input %s with an output", p)
			}
		}
	}
	return nil
}

// loaded is what the inputs gave: the bands of the roles asked for (at
// their stored type, with radiometry and nodata), the mask, and where the
// pixels are.
type loaded struct {
	bands []compute.BandInput
	mask  []uint8
	geo   *compute.GeoRef
	// scene is the product, nil for bands given as files.
	scene *scene.Scene
	// raw is true when the bands are digital numbers with no radiometry
	// known (plain files): index values then depend on the scaling.
	raw bool
}

// masked counts the masked pixels.
func (l *loaded) masked() int {
	n := 0
	for _, m := range l.mask {
		if m != 0 {
			n++
		}
	}
	return n
}

// check validates the flags without reading pixels.
func (f *inputFlags) check() error {
	if f.scene != "" && (f.red != "" || f.nir != "" || len(f.bands) > 0) {
		return compute.Usagef("give the bands either as files (--red/--nir/--band) or as --scene, not both")
	}
	if !f.given() {
		return compute.Usagef("no input: give --red and --nir, --band ROLE=FILE[:BAND], or --scene PATH")
	}
	if f.mask != "auto" && f.mask != "none" {
		return compute.Usagef("bad --mask %q: auto or none", f.mask)
	}
	if f.maskBuffer < 0 || f.maskBuffer > 1000 {
		return compute.Usagef("bad --mask-buffer %d: 0 to 1000 pixels", f.maskBuffer)
	}
	if f.nodata != "" {
		if _, err := strconv.ParseFloat(f.nodata, 64); err != nil {
			return compute.Usagef("bad --nodata %q: not a number", f.nodata)
		}
		if f.scene != "" {
			return compute.Usagef("--nodata applies to bands given as files; a --scene's nodata comes from its metadata")
		}
	}
	_, err := f.specs()
	return err
}

// load reads the bands of roles (each role once) and checks that they share
// a grid and a CRS.
func (f *inputFlags) load(roles []string, names []string) (*loaded, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	if f.scene != "" {
		sc, err := scene.Open(f.scene)
		if err != nil {
			return nil, err
		}
		defer sc.Close()
		f.sceneFiles = sc.Files()
		if err := refuseInputs(f.outs, f.sceneFiles); err != nil {
			return nil, err
		}
		for _, r := range roles {
			if sc.Bands[r] == nil {
				return nil, compute.UsageError{Msg: (&compute.MissingRoleError{Index: strings.Join(names, ","), Role: r, Given: sc.RoleNames()}).Error() + " in " + f.scene}
			}
		}
		bands, mask, err := sc.Load(roles, scene.LoadOptions{Mask: f.mask, MaskBuffer: f.maskBuffer})
		if err != nil {
			return nil, err
		}
		return &loaded{bands: bands, mask: mask, geo: sc.Grid.Geo, scene: sc}, nil
	}
	specs, err := f.specs()
	if err != nil {
		return nil, err
	}
	given := slices.Sorted(func(yield func(string) bool) {
		for r := range specs {
			if !yield(r) {
				return
			}
		}
	})
	for _, r := range roles {
		if _, ok := specs[r]; !ok {
			return nil, compute.UsageError{Msg: (&compute.MissingRoleError{Index: strings.Join(names, ","), Role: r, Given: given}).Error() + fmt.Sprintf("; give it with --band %s=FILE[:BAND]", r)}
		}
	}
	if f.warn != nil {
		var need raster.Need
		for _, r := range roles {
			if n, err := raster.Estimate(specs[r]); err == nil {
				need.Width, need.Height, need.Memory = n.Width, n.Height, need.Memory+n.Memory
			}
		}
		if need = need.WithPlanes(len(names)); need.Large() {
			fmt.Fprintf(f.warn, "canopy: %s\n", need)
		}
	}
	l := &loaded{raw: true}
	var geos []*compute.GeoRef
	type res struct {
		b   compute.BandInput
		g   *compute.GeoRef
		err error
	}
	results := make([]res, len(roles))
	done := make(chan int, len(roles))
	for i, r := range roles {
		go func() {
			b, g, err := raster.LoadStored(r, specs[r])
			results[i] = res{b, g, err}
			done <- i
		}()
	}
	for range roles {
		<-done
	}
	for _, r := range results {
		if r.err != nil {
			return nil, r.err
		}
	}
	for i, r := range results {
		b := r.b
		if f.nodata != "" {
			v, _ := strconv.ParseFloat(f.nodata, 64)
			b.NoData, b.HasNoData = v, !math.IsNaN(v)
		}
		if i > 0 {
			if err := raster.CheckSameGrid(results[0].b, b, results[0].g, r.g); err != nil {
				return nil, err
			}
		}
		l.bands = append(l.bands, b)
		geos = append(geos, r.g)
		if b.Plane.Type == compute.F32 {
			// Float bands are taken as physical values already.
			l.raw = false
		}
	}
	if len(geos) > 0 {
		l.geo = geos[0]
	}
	return l, nil
}

// indexFlags are --index NAME[,NAME...] and --expr EXPR.
type indexFlags struct {
	list, expr string
	exprSet    bool
}

func (f *indexFlags) register(fs *flag.FlagSet, what string) {
	fs.StringVar(&f.list, "index", "", what+": catalogue names, comma-separated (default ndvi; `canopy indices` lists them)")
	fs.Func("expr", "a custom formula over band roles instead of --index, e.g. '(nir - swir1) / (nir + swir1)'", func(s string) error {
		f.expr, f.exprSet = s, true
		return nil
	})
}

// selection is the indices chosen: names, formulas and catalogue entries
// (nil for a custom formula).
type selection struct {
	names []string
	exprs []*index.Expr
	cat   []*index.Index
}

// roles are the bands the selection reads, in canonical order.
func (s selection) roles() []string {
	var out []string
	for _, r := range index.Roles {
		for _, e := range s.exprs {
			if slices.Contains(e.Roles(), r) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// parse resolves the flags: a usage error for an unknown index or a
// malformed formula (naming the column).
func (f *indexFlags) parse() (selection, error) {
	var s selection
	if f.exprSet && f.list != "" {
		return s, compute.Usagef("give --index or --expr, not both")
	}
	if f.exprSet {
		e, err := index.Parse(f.expr)
		if err != nil {
			var se *index.SyntaxError
			if errors.As(err, &se) {
				return s, compute.Usagef("--expr %q: %v", f.expr, err)
			}
			return s, compute.Usagef("--expr: %v", err)
		}
		s.names, s.exprs, s.cat = []string{e.String()}, []*index.Expr{e}, []*index.Index{nil}
		return s, nil
	}
	list := f.list
	if list == "" {
		list = "ndvi"
	}
	ix, err := index.ParseList(list)
	if err != nil {
		return s, compute.Usagef("--index: %v", err)
	}
	for i := range ix {
		s.names = append(s.names, ix[i].Name)
		s.exprs = append(s.exprs, ix[i].Expr)
		s.cat = append(s.cat, &ix[i])
	}
	return s, nil
}

// runVerified makes the job of sel over bands (a missing role is a usage
// error), runs it on b in mode and checks every output against the
// float64 truth.
func runVerified(b compute.Backend, mode string, bands []compute.BandInput, mask []uint8, sel selection) (*compute.Job, error) {
	j, err := compute.NewJob(bands, mask, sel.names, sel.exprs)
	if err != nil {
		var mr *compute.MissingRoleError
		if errors.As(err, &mr) {
			return nil, compute.UsageError{Msg: err.Error()}
		}
		return nil, err
	}
	j.Mode = mode
	if _, err := compute.RunJob(b, j); err != nil {
		return nil, err
	}
	for o, v := range compute.VerifyJob(j) {
		if err := v.Err(b.Name() + " " + sel.names[o]); err != nil {
			return nil, err
		}
	}
	return j, nil
}

// computeIndices loads the bands sel needs, runs its job on the backend
// named (name[:mode] or auto) and verifies it: what zonal computes before
// its own work.
func computeIndices(in *inputFlags, sel selection, backendName string) (*compute.Job, *loaded, error) {
	b, mode, err := pickBackend(backendName)
	if err != nil {
		return nil, nil, err
	}
	defer b.Close()
	l, err := in.load(sel.roles(), sel.names)
	if err != nil {
		return nil, nil, err
	}
	j, err := runVerified(b, mode, l.bands, l.mask, sel)
	if err != nil {
		return nil, nil, err
	}
	return j, l, nil
}

// productFlags are the flags of commands over whole products or
// multi-band GeoTIFFs (change, batch): the roles of GeoTIFF bands, the
// indices, the backend and the masks.
type productFlags struct {
	bands, backend, mask string
	buffer               int
	ix                   indexFlags
}

func (f *productFlags) register(fs *flag.FlagSet, what string) {
	fs.StringVar(&f.bands, "bands", "", "band roles of GeoTIFF inputs, e.g. red=3,nir=4 (the same for every one)")
	f.ix.register(fs, what)
	fs.StringVar(&f.backend, "backend", "auto", "go, go-parallel, c, gl, cuda[:mode] or auto")
	fs.StringVar(&f.mask, "mask", "auto", "the products' cloud and quality masks: auto or none")
	fs.IntVar(&f.buffer, "mask-buffer", 0, "grow the masks by this many pixels")
}

// parse checks the flags and returns the band roles and the indices.
func (f *productFlags) parse() (map[string]int, selection, error) {
	if f.mask != "auto" && f.mask != "none" {
		return nil, selection{}, compute.Usagef("bad --mask %q: auto or none", f.mask)
	}
	if f.buffer < 0 || f.buffer > 1000 {
		return nil, selection{}, compute.Usagef("bad --mask-buffer %d: 0 to 1000 pixels", f.buffer)
	}
	bandMap, err := parseBandMap(f.bands)
	if err != nil {
		return nil, selection{}, err
	}
	sel, err := f.ix.parse()
	return bandMap, sel, err
}
