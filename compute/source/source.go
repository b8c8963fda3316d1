// Package source is where a computation's pixels come from: the one place
// that opens band files (--red/--nir/--band ROLE=F[:B]), products (a
// Sentinel-2 SAFE folder or zip, a Landsat folder or tar, a STAC item, an
// orthomosaic GeoTIFF: compute/scene) and generated scenes, and the one
// run over them (Run: the block pipeline with verification, cancellation
// and progress).
//
// A Spec says where the bands are (parsed once: ParseBands for the
// --red/--nir/--band shorthand, ParseAssign for --bands ROLE=B,...). Open
// turns a Spec and the roles a selection of indices reads into a Source,
// which decides, once for every face:
//
//   - roles: which band of which file or product gives each role; a role
//     the selection needs and the source lacks is a request error (compute/request) naming it;
//   - radiometry: reflectance (a product's scale and offset, float bands)
//     or digital numbers (integer files with no radiometry known);
//   - masks and nodata: a product's own mask (SCL, QA_PIXEL, alpha) as
//     asked, a --nodata that overrides the files';
//   - the grid: every band of one computation on one grid and CRS, or a
//     clear error;
//   - memory: band files are read block by block at their stored type as
//     the pipeline asks; a product's bands are decoded and resampled onto
//     one grid whole (its mask depends on several bands), then passed on
//     block by block; a generated scene is made whole.
//
// Callers see a Source only through its interface: a grid, a pipeline
// input (rows at their stored type, with the mask), the radiometry and
// the product's metadata. That is how the coming kinds plug in without
// their callers changing:
//
//   - a remote source (COG or product over HTTP range reads) is another
//     implementation whose pipeline Reader fetches the byte ranges of a
//     block's tiles (the header once, merged ranges) instead of reading a
//     local file; Open picks it for a URL;
//   - a time axis (several dates on one grid) is a Source whose Dates
//     method lists the acquisitions and whose input gives one band per
//     role and date, the masks as missing values; a caller that reads one
//     date sees the Source it sees today.
//
// Adding a product reader is its file in compute/scene and its case in
// scene.Open (and, for a new file name, scene.IsProductName): this
// package opens products for every face, so nothing in the window or the
// terminal changes.
package source

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/index"
	"canopy/compute/pipeline"
	"canopy/compute/raster"
	"canopy/compute/request"
	"canopy/compute/scene"
)

// Spec says where the bands come from: files by role, a product, or a
// generated scene (exactly one of Files, Product and Fake).
type Spec struct {
	// Files are band files by role: FILE or FILE:B (B from 1).
	Files map[string]string
	// NoData, when set, is the nodata value (as stored) of every band
	// given as a file, over the files' own GDAL_NODATA.
	NoData string

	// Product is a product's path (compute/scene).
	Product string
	// More are further products of the same date (adjacent tiles, in
	// other UTM zones too): Open mosaics them with Product onto one grid,
	// each pixel from the first product valid there (mosaic.go).
	More []string
	// Assign gives roles to bands of a product's file (an orthomosaic or
	// a multi-band GeoTIFF): role → band number from 1. AssignFlag names
	// the flag that sets it, for messages ("" when the face has none).
	Assign     map[string]int
	AssignFlag string
	// Scale is the user's radiometry by role (--scale ROLE=S[,O]): value
	// = DN × S + O, over the band's own. A band given one is reflectance.
	Scale map[string]compute.Radiometry
	// Mask is the product's mask: "auto" (or "") for its own, "none".
	// MaskBuffer grows it by that many pixels.
	Mask       string
	MaskBuffer int

	// Fake is a generated scene's kind (fake.Kinds), Width×Height
	// pixels from Seed.
	Fake          string
	Width, Height int
	Seed          uint64
}

// Radiometry says what a source's samples are.
type Radiometry int

const (
	// Reflectance: a product's bands with their scale and offset, or
	// float bands taken as physical values.
	Reflectance Radiometry = iota
	// DigitalNumbers: integer bands with no radiometry known (plain
	// files, or a product such as an orthomosaic or a multi-band GeoTIFF
	// whose bands carry no scale or offset); an index is then one of the
	// raw numbers.
	DigitalNumbers
)

// String is the word every face uses for it, the same as canopy scene's
// "values" (scene.ValuesReflectance, scene.ValuesDN).
func (r Radiometry) String() string {
	if r == DigitalNumbers {
		return scene.ValuesDN
	}
	return scene.ValuesReflectance
}

// bandsRadiometry decides the radiometry of bands read: reflectance when
// any band states how to get it (a scale or offset, or values stored as
// floats), digital numbers otherwise; no band at all is reflectance (a
// formula of constants).
func bandsRadiometry(bands []compute.BandInput) Radiometry {
	if len(bands) == 0 {
		return Reflectance
	}
	for _, b := range bands {
		if !b.Radiometry.IsIdentity() || b.Plane.Type == compute.F32 {
			return Reflectance
		}
	}
	return DigitalNumbers
}

// ParseBands reads the band shorthand of a face's command line: --red,
// --nir and every --band ROLE=FILE[:BAND] into files by role. A role
// given twice with different files, an unknown role or a malformed entry
// is a request error (compute/request) naming the flag.
func ParseBands(red, nir string, bands []string) (map[string]string, error) {
	m := map[string]string{}
	add := func(role, spec, flagName string) error {
		role = strings.ToLower(strings.TrimSpace(role))
		if index.RoleIndex(role) < 0 {
			return request.Errorf("%s: unknown role %q%s (roles: %s)", flagName, role, index.DidYouMean(role, index.Roles[:]), strings.Join(index.Roles[:], ", "))
		}
		if spec == "" {
			return request.Errorf("%s: no file for role %s", flagName, role)
		}
		if old, dup := m[role]; dup && old != spec {
			return request.Errorf("%s: role %s given twice (%s and %s)", flagName, role, old, spec)
		}
		m[role] = spec
		return nil
	}
	if red != "" {
		if err := add("red", red, "--red"); err != nil {
			return nil, err
		}
	}
	if nir != "" {
		if err := add("nir", nir, "--nir"); err != nil {
			return nil, err
		}
	}
	for _, b := range bands {
		role, spec, ok := strings.Cut(b, "=")
		if !ok {
			return nil, request.Errorf("--band %q: want ROLE=FILE[:BAND], e.g. --band red=scene.tif:3", b)
		}
		if err := add(role, spec, "--band"); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// ParseAssign reads --bands ROLE=B,... (the roles of a multi-band file's
// bands, B from 1).
func ParseAssign(s string) (map[string]int, error) {
	m := map[string]int{}
	if s == "" {
		return m, nil
	}
	for _, kv := range strings.Split(s, ",") {
		role, num, ok := strings.Cut(strings.TrimSpace(kv), "=")
		b, err := strconv.Atoi(num)
		if !ok || err != nil || b < 1 {
			return nil, request.Errorf("bad --bands entry %q: want ROLE=BAND, e.g. red=3,nir=4", kv)
		}
		m[strings.ToLower(role)] = b
	}
	return m, nil
}

// ParseScale reads every --scale ROLE=S[,O] (value = DN × S + O; O is 0
// when left out) into radiometry by role.
func ParseScale(list []string) (map[string]compute.Radiometry, error) {
	m := map[string]compute.Radiometry{}
	for _, kv := range list {
		role, so, ok := strings.Cut(strings.TrimSpace(kv), "=")
		role = strings.ToLower(strings.TrimSpace(role))
		sc, off, hasOff := strings.Cut(so, ",")
		r := compute.Radiometry{Scale: 1}
		var err1, err2 error
		r.Scale, err1 = strconv.ParseFloat(strings.TrimSpace(sc), 64)
		if hasOff {
			r.Offset, err2 = strconv.ParseFloat(strings.TrimSpace(off), 64)
		}
		if !ok || err1 != nil || err2 != nil || r.Scale == 0 || math.IsNaN(r.Scale) || math.IsInf(r.Scale, 0) || math.IsNaN(r.Offset) || math.IsInf(r.Offset, 0) {
			return nil, request.Errorf("bad --scale %q: want ROLE=SCALE[,OFFSET], e.g. --scale red=0.0000275,-0.2", kv)
		}
		if index.RoleIndex(role) < 0 {
			return nil, request.Errorf("--scale: unknown role %q%s (roles: %s)", role, index.DidYouMean(role, index.Roles[:]), strings.Join(index.Roles[:], ", "))
		}
		if _, dup := m[role]; dup {
			return nil, request.Errorf("--scale: role %s given twice", role)
		}
		m[role] = r
	}
	return m, nil
}

// CheckMask checks a mask choice and its buffer.
func CheckMask(mask string, buffer int) error {
	if mask != "auto" && mask != "none" {
		return request.Errorf("bad --mask %q: auto or none", mask)
	}
	if buffer < 0 || buffer > 1000 {
		return request.Errorf("bad --mask-buffer %d: 0 to 1000 pixels", buffer)
	}
	return nil
}

// Check validates a spec of files or a product without reading pixels.
func (s Spec) Check() error {
	if s.Product != "" && len(s.Files) > 0 {
		return request.Errorf("give the bands either as files (--red/--nir/--band) or as --scene, not both")
	}
	if len(s.More) > 0 && s.Product == "" {
		return request.Errorf("further products to mosaic need a first one")
	}
	if s.Product == "" && len(s.Files) == 0 && s.Fake == "" {
		return request.Errorf("no input: give --red and --nir, --band ROLE=FILE[:BAND], or --scene PATH")
	}
	mask := s.Mask
	if mask == "" {
		mask = "auto"
	}
	if err := CheckMask(mask, s.MaskBuffer); err != nil {
		return err
	}
	if s.NoData != "" {
		if _, err := strconv.ParseFloat(s.NoData, 64); err != nil {
			return request.Errorf("bad --nodata %q: not a number", s.NoData)
		}
		if s.Product != "" {
			return request.Errorf("--nodata applies to bands given as files; a --scene's nodata comes from its metadata")
		}
	}
	return nil
}

// InputFiles lists the files the spec reads (an output must not be one).
func (s Spec) InputFiles() []string {
	var out []string
	for _, sp := range s.Files {
		if p, _, err := raster.ParseSpec(sp); err == nil {
			out = append(out, p, sp)
		}
	}
	if s.Product != "" {
		out = append(out, s.Product)
	}
	return append(out, s.More...)
}

// Grid is where a source's pixels are: its size and georeferencing (nil
// when the files have none).
type Grid struct {
	Width, Height int
	Geo           *compute.GeoRef
}

// Source is bands opened for a computation, on one grid.
type Source interface {
	// Grid is the grid every band shares.
	Grid() Grid
	// Input is the bands as the block pipeline reads them (rows at their
	// stored type, radiometry and nodata with each band) and the mask.
	Input() *pipeline.Input
	// Radiometry says whether the samples are reflectance or digital
	// numbers.
	Radiometry() Radiometry
	// Masked counts the pixels the product's mask removes (0 for files
	// and generated scenes).
	Masked() int
	// Product is the product's metadata; nil for files and generated
	// scenes.
	Product() *scene.Scene
	// Files are the files on disk the source reads (a product's every
	// file: scene.Files), which a run's outputs must not replace.
	Files() []string
	// Close releases the files.
	Close() error
}

// Options are what Open reads.
type Options struct {
	// Roles are the bands to open, in this order.
	Roles []string
	// Need names what needs them, for messages ("ndvi", "ndvi,evi").
	Need string
	// Refuse, when set, hears the files of a product as soon as its
	// metadata is open, before any pixel is read: an error (an output
	// that would replace one of them) stops Open.
	Refuse func(files []string) error
	// Regrid, when set, warps the bands onto another grid (--grid):
	// regrid.go.
	Regrid *Regrid
}

// Open opens the bands of opt.Roles from spec (see the package comment
// for what it decides). A cancelled ctx stops it before the pixels are
// read. Close the source when done.
func Open(ctx context.Context, spec Spec, opt Options) (Source, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var src Source
	var err error
	switch {
	case len(spec.More) > 0:
		return openMosaic(ctx, spec, opt)
	case spec.Product != "":
		src, err = openProduct(ctx, spec, opt)
	case len(spec.Files) > 0:
		src, err = openFiles(spec, opt)
	default:
		src, err = openFake(spec, opt)
	}
	if err != nil || opt.Regrid == nil {
		return src, err
	}
	out, err := regrid(src, *opt.Regrid)
	if err != nil {
		src.Close()
		return nil, err
	}
	return out, nil
}

// opened is every source Open makes today.
type opened struct {
	grid    Grid
	in      *pipeline.Input
	radio   Radiometry
	masked  int
	product *scene.Scene
	files   []string
	// whole are the bands when the source holds them in memory (a
	// product, a generated scene): Whole hands them over.
	whole []compute.BandInput
	close func()
}

func (o *opened) Grid() Grid             { return o.grid }
func (o *opened) Input() *pipeline.Input { return o.in }
func (o *opened) Radiometry() Radiometry { return o.radio }
func (o *opened) Masked() int            { return o.masked }
func (o *opened) Product() *scene.Scene  { return o.product }
func (o *opened) Files() []string        { return o.files }

func (o *opened) Close() error {
	if o.close != nil {
		o.close()
		o.close = nil
	}
	return nil
}

// openFiles opens band files for the pipeline, read block by block at
// their stored type.
func openFiles(spec Spec, opt Options) (Source, error) {
	roles := opt.Roles
	var list []string
	for _, r := range roles {
		sp, ok := spec.Files[r]
		if !ok {
			given := slices.Sorted(maps.Keys(spec.Files))
			return nil, request.Error{Msg: (&compute.MissingRoleError{Index: opt.Need, Role: r, Given: given}).Error() + fmt.Sprintf("; give it with --band %s=FILE[:BAND]", r)}
		}
		list = append(list, sp)
	}
	if len(roles) == 0 {
		// A formula of constants only: the first band given sets the size.
		r := slices.Sorted(maps.Keys(spec.Files))[0]
		roles, list = []string{r}, []string{spec.Files[r]}
	}
	st, err := raster.OpenStored(roles, list)
	if err != nil {
		return nil, err
	}
	o := &opened{grid: Grid{st.Width, st.Height, st.Geo}, in: st.Input, radio: DigitalNumbers, files: spec.InputFiles(), close: st.Close}
	for i := range st.Bands {
		b := &st.Bands[i]
		if spec.NoData != "" {
			v, _ := strconv.ParseFloat(spec.NoData, 64)
			b.NoData, b.HasNoData = v, !math.IsNaN(v)
		}
		if r, ok := spec.Scale[b.Role]; ok {
			b.Radiometry, o.radio = r, Reflectance
		}
		if b.Plane.Type == compute.F32 {
			// Float bands are taken as physical values already.
			o.radio = Reflectance
		}
	}
	return o, nil
}

// openProduct reads a product's bands of the roles whole, resampled onto
// its finest grid and masked, and passes them on block by block. ctx
// bounds a remote product's requests: cancelling it stops them.
func openProduct(ctx context.Context, spec Spec, opt Options) (Source, error) {
	sc, err := scene.OpenContext(ctx, spec.Product)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	if opt.Refuse != nil {
		if err := opt.Refuse(sc.Files()); err != nil {
			return nil, err
		}
	}
	for _, role := range slices.Sorted(maps.Keys(spec.Assign)) {
		if err := sc.AssignBand(role, spec.Assign[role]); err != nil {
			return nil, request.Error{Msg: err.Error()}
		}
	}
	for _, r := range opt.Roles {
		if sc.Bands[r] == nil {
			msg := (&compute.MissingRoleError{Index: opt.Need, Role: r, Given: sc.RoleNames()}).Error() + " in " + spec.Product
			if spec.AssignFlag != "" {
				msg += " (name it with " + spec.AssignFlag + " " + r + "=BAND)"
			}
			return nil, request.Error{Msg: msg}
		}
	}
	mask := spec.Mask
	if mask == "" {
		mask = "auto"
	}
	bands, m, err := sc.Load(opt.Roles, scene.LoadOptions{Mask: mask, MaskBuffer: spec.MaskBuffer})
	if err != nil {
		return nil, err
	}
	radio := bandsRadiometry(bands)
	for i := range bands {
		if r, ok := spec.Scale[bands[i].Role]; ok {
			bands[i].Radiometry, radio = r, Reflectance
		}
	}
	in, err := pipeline.Memory(bands, m)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, v := range m {
		if v != 0 {
			n++
		}
	}
	return &opened{grid: Grid{in.Width, in.Height, sc.Grid.Geo}, in: in, radio: radio, masked: n, product: sc, files: sc.Files(), whole: bands}, nil
}

// openFake opens a generated scene: red and NIR are generated by rows as
// the pipeline asks (fake.Scene: any split into blocks gives the
// same bytes), so that a scene of any size streams; any other set of
// roles is generated whole (fake.Bands).
func openFake(spec Spec, opt Options) (Source, error) {
	if len(opt.Roles) == 2 && slices.Contains(opt.Roles, "red") && slices.Contains(opt.Roles, "nir") {
		fs, err := fake.NewScene(spec.Fake, spec.Width, spec.Height, spec.Seed)
		if err != nil {
			return nil, err
		}
		in := &pipeline.Input{Width: spec.Width, Height: spec.Height}
		rows := fakeRows{fs}
		for _, r := range opt.Roles {
			p := compute.Plane{Type: compute.F32, Width: spec.Width, Height: spec.Height}
			in.Bands = append(in.Bands, pipeline.Band{BandInput: compute.BandInput{Role: r, Plane: p, Radiometry: compute.Identity(), Source: fs.Source() + " " + r},
				Reader: rows, Index: map[string]int{"red": 0, "nir": 1}[r]})
		}
		return &opened{grid: Grid{in.Width, in.Height, fake.GeoRef()}, in: in, radio: Reflectance}, nil
	}
	bands, geo, err := fake.Bands(spec.Fake, spec.Width, spec.Height, spec.Seed, opt.Roles)
	if err != nil {
		return nil, err
	}
	if len(bands) == 0 {
		// A formula of constants only: the scene's size, no band.
		in := &pipeline.Input{Width: spec.Width, Height: spec.Height}
		return &opened{grid: Grid{in.Width, in.Height, geo}, in: in, radio: Reflectance, whole: []compute.BandInput{}}, nil
	}
	in, err := pipeline.Memory(bands, nil)
	if err != nil {
		return nil, err
	}
	return &opened{grid: Grid{in.Width, in.Height, geo}, in: in, radio: Reflectance, whole: bands}, nil
}

// fakeRows reads a generated scene's rows as they are made: a
// pipeline.Reader of red and NIR (bands 0 and 1).
type fakeRows struct{ s *fake.Scene }

// BlockRows is a COG's row of tiles.
func (f fakeRows) BlockRows() int { return 512 }

func (f fakeRows) ReadRows(y0, y1 int, dst []compute.Plane) error {
	f.s.Rows(y0, y1, dst[0].F32(), dst[1].F32())
	return nil
}

// FromBands is a source over bands a face holds in memory already (the
// window's loaded bands), with their mask (nil for none) on the grid geo:
// so that a face that keeps the image whole still runs through Run.
func FromBands(bands []compute.BandInput, mask []uint8, geo *compute.GeoRef) (Source, error) {
	in, err := pipeline.Memory(bands, mask)
	if err != nil {
		return nil, err
	}
	return &opened{grid: Grid{in.Width, in.Height, geo}, in: in, radio: Reflectance, whole: bands}, nil
}

// NeedsReflectance reports whether a formula's values depend on the
// bands' common scale in a way digital numbers cannot stand for: whether
// it adds a constant to a band term, or terms of different powers of the
// bands (EVI's "+ 1" and "6 * red", SAVI's "+ 0.5", MSAVI2's "2 * nir +
// 1"). A formula that scales as one power of the bands — a normalised
// difference (a − b) / (a + b), a ratio, a constant times either, clamped
// to constant bounds, or one band — keeps its meaning on digital numbers
// (a scale-free index gives the same value whatever scale the bands
// share), so it runs on them, with the note that they are raw numbers.
func NeedsReflectance(e *index.Expr) bool {
	_, ok := degree(e)
	return !ok
}

// degree is the power of the bands' common scale s a formula scales by
// (f(s·b) = s^d · f(b)); ok is false when it does not scale so.
func degree(e *index.Expr) (float64, bool) {
	if e == nil {
		return 0, true
	}
	switch e.Kind {
	case index.KindNum:
		return 0, true
	case index.KindRole:
		return 1, true
	}
	var ds []float64
	for _, a := range e.Args {
		d, ok := degree(a)
		if !ok {
			return 0, false
		}
		ds = append(ds, d)
	}
	switch e.Kind {
	case index.KindNeg, index.KindAbs:
		return ds[0], true
	case index.KindMul:
		return ds[0] + ds[1], true
	case index.KindDiv:
		return ds[0] - ds[1], true
	case index.KindSqrt:
		return ds[0] / 2, true
	}
	// Sums, min, max and clamp: every operand of the same power.
	for _, d := range ds[1:] {
		if d != ds[0] {
			return 0, false
		}
	}
	return ds[0], true
}

// CheckClasses refuses, with the reason, a class table (what the
// classes cover, in hectares: zonal's NDVI classes, change's classes, the
// window's class statistics) on bands of digital numbers, unless raw (the
// user's explicit --raw): the classes' bounds are set for reflectance,
// and on numbers of no known scale they class nothing true. what names
// the table.
func CheckClasses(r Radiometry, what string, raw bool) error {
	if r != DigitalNumbers || raw {
		return nil
	}
	return request.Errorf("%s needs reflectance: its bounds are set for reflectance, but the bands are digital numbers with no scale known; give the scale with --scale ROLE=S[,O], or class the raw numbers with --raw", what)
}

// CheckValues refuses, with the reason, indices whose formula needs
// reflectance (NeedsReflectance) on bands of digital numbers, unless raw
// (the user's explicit --raw). flag names how the user gives the scale.
func CheckValues(r Radiometry, names []string, exprs []*index.Expr, raw bool) error {
	if r != DigitalNumbers || raw {
		return nil
	}
	for i, e := range exprs {
		if NeedsReflectance(e) {
			return request.Errorf("%s needs reflectance: its formula adds constants to the bands (%s), but the bands are digital numbers with no scale known; give the scale with --scale ROLE=S[,O], or compute it on the raw numbers with --raw", names[i], e)
		}
	}
	return nil
}
