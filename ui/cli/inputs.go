package cli

import (
	"context"
	"errors"
	"flag"
	"slices"
	"strings"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/request"
	"canopy/compute/source"
)

// bandFlags is the repeatable --band ROLE=F[:B].
type bandFlags []string

func (b *bandFlags) String() string     { return strings.Join(*b, " ") }
func (b *bandFlags) Set(v string) error { *b = append(*b, v); return nil }

// inputFlags are compute's input flags (DESIGN's INPUT): the --red/--nir
// shorthand, --band ROLE=F[:B], or --scene PATH, with the mask and nodata
// options. compute, zonal, change and batch share them.
type inputFlags struct {
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
	// grid is --grid: a grid to warp the bands onto (gridflags.go).
	grid gridFlags
	// more are the further --scene products of the same date.
	more []string
	// raw is --raw (source.CheckValues); scale every --scale ROLE=S[,O].
	raw   bool
	scale bandFlags
	// assign is --bands ROLE=B,...: the roles of a --scene GeoTIFF's
	// bands, as canopy scene suggests them.
	assign string
}

func (f *inputFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.red, "red", "", "red band, FILE[:BAND] (shorthand for --band red=FILE[:BAND])")
	fs.StringVar(&f.nir, "nir", "", "near-infrared band, FILE[:BAND] (shorthand for --band nir=FILE[:BAND])")
	fs.Var(&f.bands, "band", "a band by role, ROLE=FILE[:BAND] (repeatable; roles: "+strings.Join(index.Roles[:], " ")+")")
	fs.Var(sceneValue{f}, "scene", "a product: Sentinel-2 L2A .SAFE folder or .zip, EOPF Zarr .zarr folder or .zip, Landsat C2 L2 folder or .tar, STAC item .json, orthomosaic GeoTIFF (a STAC item or GeoTIFF may be a URL); repeat it for tiles of one date, mosaicked onto one grid (gridflags.go)")
	fs.StringVar(&f.mask, "mask", "auto", "cloud and quality mask of a --scene: auto (the product's own: SCL, QA_PIXEL, alpha) or none")
	fs.IntVar(&f.maskBuffer, "mask-buffer", 0, "grow the mask by this many pixels")
	fs.BoolVar(&f.raw, "raw", false, "compute indices with constants (EVI, SAVI, ...) on integer bands of no known scale, as raw digital numbers")
	fs.Var(&f.scale, "scale", "a band's radiometry, ROLE=SCALE[,OFFSET]: value = stored × SCALE + OFFSET (repeatable; makes the band reflectance)")
	fs.StringVar(&f.assign, "bands", "", "band roles of a --scene GeoTIFF or orthomosaic, e.g. red=3,nir=4 (as canopy scene suggests)")
	fs.StringVar(&f.nodata, "nodata", "", "nodata value (as stored) for every band given as a file (overrides the files' GDAL_NODATA)")
	f.grid.register(fs)
}

// given reports whether any input was named.
func (f *inputFlags) given() bool {
	return f.red != "" || f.nir != "" || f.scene != "" || len(f.bands) > 0
}

// spec is the inputs as a source.Spec: the files by role (one role
// parser for every face: source.ParseBands) or the product, with the
// mask and nodata options.
func (f *inputFlags) spec() (source.Spec, error) {
	files, err := source.ParseBands(f.red, f.nir, f.bands)
	if err != nil {
		return source.Spec{}, err
	}
	assign, err := source.ParseAssign(f.assign)
	if err != nil {
		return source.Spec{}, err
	}
	if len(assign) > 0 && f.scene == "" {
		return source.Spec{}, request.Errorf("--bands names the bands of a --scene; for band files give --band ROLE=FILE[:BAND]")
	}
	scale, err := source.ParseScale(f.scale)
	if err != nil {
		return source.Spec{}, err
	}
	return source.Spec{Files: files, NoData: f.nodata, Product: f.scene, More: f.more, Mask: f.mask, MaskBuffer: f.maskBuffer,
		Assign: assign, AssignFlag: "--bands", Scale: scale}, nil
}

// inputFiles lists the files the inputs read (for refusing to overwrite
// them with an output).
func (f *inputFlags) inputFiles() []string {
	s, _ := f.spec()
	s.Product = f.scene
	return append(s.InputFiles(), f.sceneFiles...)
}

// refuseInputs is the usage error for an output that names one of the
// inputs (the same file, whatever the name), or nil.
func refuseInputs(outs, inputs []string) error {
	for _, o := range outs {
		for _, p := range inputs {
			if sameFile(o, p) {
				return request.Errorf("refusing to overwrite input %s with an output", p)
			}
		}
	}
	return nil
}

// refuse keeps the files of the --scene (source.Options.Refuse, called
// once the product is open, before its pixels are read) and refuses an
// output that names one of them.
func (f *inputFlags) refuse(files []string) error {
	f.sceneFiles = files
	return refuseInputs(f.outs, files)
}

// check validates the flags without reading pixels.
func (f *inputFlags) check() error {
	if f.scene != "" && (f.red != "" || f.nir != "" || len(f.bands) > 0) {
		return request.Errorf("give the bands either as files (--red/--nir/--band) or as --scene, not both")
	}
	if !f.given() {
		return request.Errorf("no input: give --red and --nir, --band ROLE=FILE[:BAND], or --scene PATH")
	}
	s, err := f.spec()
	if err != nil {
		return err
	}
	return s.Check()
}

// open opens the bands of sel's roles (source.Open): band files are read
// block by block at their stored type; a --scene is loaded whole (its
// bands resampled onto one grid and masked), then passed on block by
// block.
func (f *inputFlags) open(ctx context.Context, sel selection) (source.Source, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	s, err := f.spec()
	if err != nil {
		return nil, err
	}
	rg, err := f.grid.regrid()
	if err != nil {
		return nil, err
	}
	return source.Open(ctx, s, source.Options{Roles: sel.roles(), Need: strings.Join(sel.names, ","), Refuse: f.refuse, Regrid: rg})
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
	// raw is --raw: indices with constants run on digital numbers
	// (source.CheckValues).
	raw bool
	// scale is every --scale ROLE=S[,O] of batch and change (compute and
	// zonal carry theirs in the inputs' spec).
	scale map[string]compute.Radiometry
	// classTable names the class table the command writes (zonal's,
	// change's), refused on digital numbers without raw
	// (source.CheckClasses); "" for none.
	classTable string
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
		return s, request.Errorf("give --index or --expr, not both")
	}
	if f.exprSet {
		e, err := index.Parse(f.expr)
		if err != nil {
			var se *index.SyntaxError
			if errors.As(err, &se) {
				return s, request.Errorf("--expr %q: %v", f.expr, err)
			}
			return s, request.Errorf("--expr: %v", err)
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
		return s, request.Errorf("--index: %v", err)
	}
	for i := range ix {
		s.names = append(s.names, ix[i].Name)
		s.exprs = append(s.exprs, ix[i].Expr)
		s.cat = append(s.cat, &ix[i])
	}
	return s, nil
}

// computeIndices opens the bands sel needs, runs its job on the backend
// named (name[:mode] or auto) through the one road (source.Run), verified,
// and keeps the whole planes: what zonal and change compute before their
// own work. Close the source when done.
func computeIndices(ctx context.Context, spec source.Spec, opt source.Options, sel selection, backendName string) (*source.Planes, source.Source, error) {
	b, mode, err := pickBackend(backendName)
	if err != nil {
		return nil, nil, err
	}
	defer b.Close()
	opt.Roles = sel.roles()
	src, err := source.Open(ctx, spec, opt)
	if err != nil {
		return nil, nil, err
	}
	if err := source.CheckValues(src.Radiometry(), sel.names, sel.exprs, sel.raw); err != nil {
		src.Close()
		return nil, nil, err
	}
	if sel.classTable != "" {
		if err := source.CheckClasses(src.Radiometry(), sel.classTable, sel.raw); err != nil {
			src.Close()
			return nil, nil, err
		}
	}
	g := src.Grid()
	planes := source.NewPlanes(g.Width, g.Height, len(sel.names))
	if _, err := source.Run(ctx, src, source.Job{Backend: b, Mode: mode, Names: sel.names, Exprs: sel.exprs, Verify: true}, planes); err != nil {
		src.Close()
		return nil, nil, err
	}
	return planes, src, nil
}

// productFlags are the flags of commands over whole products or
// multi-band GeoTIFFs (change, batch): the roles of GeoTIFF bands, the
// indices, the backend and the masks.
type productFlags struct {
	bands, backend, mask string
	buffer               int
	raw                  bool
	scale                bandFlags
	ix                   indexFlags
}

func (f *productFlags) register(fs *flag.FlagSet, what string) {
	fs.StringVar(&f.bands, "bands", "", "band roles of GeoTIFF inputs, e.g. red=3,nir=4 (the same for every one)")
	f.ix.register(fs, what)
	fs.StringVar(&f.backend, "backend", "auto", "go, go-parallel, c, gl, cuda[:mode] or auto")
	fs.StringVar(&f.mask, "mask", "auto", "the products' cloud and quality masks: auto or none")
	fs.IntVar(&f.buffer, "mask-buffer", 0, "grow the masks by this many pixels")
	fs.BoolVar(&f.raw, "raw", false, "compute indices with constants (EVI, SAVI, ...) on integer bands of no known scale, as raw digital numbers")
	fs.Var(&f.scale, "scale", "a band's radiometry, ROLE=SCALE[,OFFSET]: value = stored × SCALE + OFFSET (repeatable; makes the band reflectance)")
}

// parse checks the flags and returns the band roles and the indices.
func (f *productFlags) parse() (map[string]int, selection, error) {
	if err := source.CheckMask(f.mask, f.buffer); err != nil {
		return nil, selection{}, err
	}
	bandMap, err := source.ParseAssign(f.bands)
	if err != nil {
		return nil, selection{}, err
	}
	scale, err := source.ParseScale(f.scale)
	if err != nil {
		return nil, selection{}, err
	}
	sel, err := f.ix.parse()
	sel.raw, sel.scale = f.raw, scale
	return bandMap, sel, err
}
