package ui

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/raster"
	"canopy/compute/scene"
	"canopy/compute/source"
)

// sourceKind is where a window's bands come from.
type sourceKind int

const (
	// srcFake: a generated scene, every role.
	srcFake sourceKind = iota
	// srcFiles: a file (band) per role, read at its stored type.
	srcFiles
	// srcProduct: a product scene.Open reads (Sentinel-2, Landsat, STAC,
	// an orthomosaic GeoTIFF), with its radiometry and mask.
	srcProduct
)

// fileBand is one role's band of a file: FILE and B (1-based) of count.
type fileBand struct {
	path        string
	band, count int
}

func (f fileBand) spec() string {
	if f.count > 1 {
		return f.path + ":" + strconv.Itoa(f.band)
	}
	return f.path
}

// bandSource says where the bands come from. It is a value: changing it
// makes a new one (with...), so a job holds the source it started with
// while the user changes the next.
type bandSource struct {
	kind sourceKind

	// srcFake
	fake string
	size int
	seed uint64

	// srcFiles
	files map[string]fileBand

	// srcProduct: info is the product's metadata (opened and closed again:
	// a job opens its own to read pixels, so nothing is shared); assign
	// the bands the user gave roles in an orthomosaic.
	// bandCount is an orthomosaic file's number of bands.
	info      *scene.Scene
	bandCount int
	assign    map[string]int
	mask      string
	buffer    int
	// more are further products of the same date mosaicked with info's
	// onto one grid (mosaic.go); moreFiles every file of them.
	more, moreFiles []string

	// scale is the user's radiometry by role (--scale), every kind but
	// srcFake; rawOK lets what needs reflectance run on digital numbers
	// (--raw).
	scale map[string]compute.Radiometry
	rawOK bool
}

func fakeSource(kind string, size int, seed uint64) bandSource {
	return bandSource{kind: srcFake, fake: kind, size: size, seed: seed}
}

// openProduct opens the product at path (its metadata: sc is closed
// again) as a source masked as asked.
func openProduct(path, mask string, buffer int) (bandSource, error) {
	sc, err := scene.Open(path)
	if err != nil {
		return bandSource{}, err
	}
	sc.Close()
	s := bandSource{kind: srcProduct, info: sc, mask: mask, buffer: buffer}
	if sc.Kind == scene.KindOrthomosaic {
		if s.bandCount, err = raster.Count(path); err != nil {
			return bandSource{}, err
		}
	}
	return s, nil
}

// withFile is the source with role read from f: a files source (the roles
// of this one kept if it is one).
func (s bandSource) withFile(role string, f fileBand) bandSource {
	files := map[string]fileBand{}
	if s.kind == srcFiles {
		files = maps.Clone(s.files)
	}
	files[role] = f
	return bandSource{kind: srcFiles, files: files}
}

// withBand is the source with role taken from band b of its file (an
// orthomosaic product, or a multi-band file of a files source).
func (s bandSource) withBand(role string, b int) bandSource {
	switch s.kind {
	case srcFiles:
		if f, ok := s.files[role]; ok {
			f.band = b
			return s.withFile(role, f)
		}
	case srcProduct:
		s.assign = maps.Clone(s.assign)
		if s.assign == nil {
			s.assign = map[string]int{}
		}
		s.assign[role] = b
	}
	return s
}

// withMask is a product source with another mask choice.
func (s bandSource) withMask(mask string, buffer int) bandSource {
	s.mask, s.buffer = mask, buffer
	return s
}

// has reports whether the source can give the role's band.
func (s bandSource) has(role string) bool {
	switch s.kind {
	case srcFake:
		return index.RoleIndex(role) >= 0
	case srcFiles:
		_, ok := s.files[role]
		return ok
	case srcProduct:
		return s.info.Bands[role] != nil || s.assign[role] > 0
	}
	return false
}

// missing are the roles of the list the source cannot give.
func (s bandSource) missing(roles []string) []string {
	var out []string
	for _, r := range roles {
		if !s.has(r) {
			out = append(out, r)
		}
	}
	return out
}

// roles are the roles the source has, in canonical order.
func (s bandSource) roles() []string {
	var out []string
	for _, r := range index.Roles {
		if s.has(r) {
			out = append(out, r)
		}
	}
	return out
}

// ortho reports whether the source is an orthomosaic, whose bands the
// user may give roles.
func (s bandSource) ortho() bool {
	return s.kind == srcProduct && s.info.Kind == scene.KindOrthomosaic
}

// band returns the band of role in an orthomosaic: the user's choice, else
// the file's own (from its descriptions), 0 if none.
func (s bandSource) band(role string) int {
	if b := s.assign[role]; b > 0 {
		return b
	}
	if b := s.info.Bands[role]; b != nil {
		return b.Band
	}
	return 0
}

// key identifies the pixels the source gives: bands loaded from one
// source serve another with the same key.
func (s bandSource) key() string {
	k := s.kindKey()
	for _, r := range slices.Sorted(maps.Keys(s.scale)) {
		k += fmt.Sprintf(" %s×%g%+g", r, s.scale[r].Scale, s.scale[r].Offset)
	}
	return k
}

func (s bandSource) kindKey() string {
	switch s.kind {
	case srcFake:
		return fmt.Sprintf("fake %s %d %d", s.fake, s.size, s.seed)
	case srcFiles:
		var parts []string
		for _, r := range slices.Sorted(maps.Keys(s.files)) {
			parts = append(parts, r+"="+s.files[r].spec())
		}
		return "files " + strings.Join(parts, " ")
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(s.assign)) {
		parts = append(parts, fmt.Sprintf("%s=%d", r, s.assign[r]))
	}
	return fmt.Sprintf("product %s %q mask %s %d %s", s.info.Path, s.more, s.mask, s.buffer, strings.Join(parts, " "))
}

// describe names the source for the map's header.
func (s bandSource) describe(w, h int) string {
	switch s.kind {
	case srcFake:
		return fmt.Sprintf("Fake %s, %d×%d, seed %d", s.fake, w, h, s.seed)
	case srcFiles:
		var names []string
		for _, r := range index.Roles {
			if f, ok := s.files[r]; ok && !slices.Contains(names, filepath.Base(f.spec())) {
				names = append(names, filepath.Base(f.spec()))
			}
		}
		return fmt.Sprintf("%s, %d×%d", strings.Join(names, " + "), w, h)
	}
	return fmt.Sprintf("%s, %d×%d", sceneLine(s.info), w, h)
}

// bandSet is the bands loaded from a source: those of the roles asked for
// so far, the mask and where the pixels are.
type bandSet struct {
	key   string
	bands []compute.BandInput
	mask  []uint8
	geo   *compute.GeoRef
	w, h  int
	// raw: integer bands with no radiometry known, as files or as a
	// product such as an orthomosaic (source.DigitalNumbers; the
	// index is then one of digital numbers).
	raw bool
}

// band returns the band of role, false if not loaded.
func (b *bandSet) band(role string) (compute.BandInput, bool) {
	if b == nil {
		return compute.BandInput{}, false
	}
	for _, x := range b.bands {
		if x.Role == role {
			return x, true
		}
	}
	return compute.BandInput{}, false
}

// masked counts the masked pixels.
func (b *bandSet) masked() int {
	n := 0
	for _, m := range b.mask {
		if m != 0 {
			n++
		}
	}
	return n
}

// load reads the bands of roles from s (off the event goroutine),
// reusing those of have where it comes from the same source: a fake scene
// or files give the missing roles alone; a product reads every role asked
// for again when one is missing, because its mask depends on the bands
// read (saturation).
func (s bandSource) load(ctx context.Context, progress progressFunc, roles []string, have *bandSet) (*bandSet, error) {
	if have != nil && have.key == s.key() {
		need := slices.DeleteFunc(slices.Clone(roles), func(r string) bool { _, ok := have.band(r); return ok })
		switch {
		case len(need) == 0 && (s.kind != srcProduct || len(have.bands) == len(roles)):
			return have, nil
		case s.kind != srcProduct && len(need) > 0:
			more, err := s.read(ctx, progress, need)
			if err != nil {
				return nil, err
			}
			if len(more.bands) > 0 && len(have.bands) > 0 {
				if err := raster.CheckSameGrid(have.bands[0], more.bands[0], have.geo, more.geo); err != nil {
					return nil, err
				}
			}
			set := *have
			set.bands = append(slices.Clone(have.bands), more.bands...)
			set.raw = have.raw && more.raw
			return &set, nil
		}
	}
	return s.read(ctx, progress, roles)
}

// spec is the source as the road's source.Spec.
func (s bandSource) spec() source.Spec {
	switch s.kind {
	case srcFake:
		return source.Spec{Fake: s.fake, Width: s.size, Height: s.size, Seed: s.seed}
	case srcFiles:
		files := map[string]string{}
		for r, f := range s.files {
			files[r] = f.spec()
		}
		return source.Spec{Files: files, Scale: s.scale}
	}
	return source.Spec{Product: s.info.Path, More: s.more, Assign: s.assign, Mask: s.mask, MaskBuffer: s.buffer, Scale: s.scale}
}

// read reads the bands of roles from s whole (source.Open, source.Whole):
// the window's map, probes and statistics need the image at once.
func (s bandSource) read(ctx context.Context, progress progressFunc, roles []string) (*bandSet, error) {
	switch s.kind {
	case srcFake:
		progress(-1, fmt.Sprintf("Generating a %d×%d %s scene (%s)…", s.size, s.size, s.fake, strings.Join(roles, ", ")))
	case srcFiles:
		var names []string
		for _, r := range roles {
			if f, ok := s.files[r]; ok {
				names = append(names, filepath.Base(f.spec()))
			}
		}
		progress(-1, fmt.Sprintf("Loading %s (%s)…", strings.Join(names, ", "), strings.Join(roles, ", ")))
	case srcProduct:
		progress(-1, fmt.Sprintf("Reading %s (%s)…", filepath.Base(s.info.Path), strings.Join(roles, ", ")))
	}
	src, err := source.Open(ctx, s.spec(), source.Options{Roles: roles, Need: "the map"})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	bands, mask, err := source.Whole(src)
	if err != nil {
		return nil, err
	}
	g := src.Grid()
	return &bandSet{key: s.key(), bands: bands, mask: mask, geo: g.Geo, w: g.Width, h: g.Height,
		raw: src.Radiometry() == source.DigitalNumbers}, nil
}

// sceneLine is what a product is, where and when, and its cloud share:
// "Sentinel-2A · 2023-06-15 · tile 32TQM · cloud 12.3 %".
func sceneLine(sc *scene.Scene) string {
	parts := []string{sc.Sensor}
	if !sc.Date.IsZero() {
		parts = append(parts, sc.Date.UTC().Format("2006-01-02"))
	} else {
		parts = append(parts, "date unknown")
	}
	switch {
	case sc.Tile != "":
		parts = append(parts, "tile "+sc.Tile)
	case sc.PathRow != "":
		parts = append(parts, "path/row "+sc.PathRow)
	default:
		parts = append(parts, sc.Product)
	}
	if math.IsNaN(sc.CloudShare) {
		parts = append(parts, "cloud share unknown")
	} else {
		parts = append(parts, fmt.Sprintf("cloud %.1f %%", sc.CloudShare))
	}
	return strings.Join(parts, " · ")
}
