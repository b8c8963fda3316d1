// Package hostile generates Canopy's own adversarial corpus: files made to
// break a raster reader (decompression bombs, tiles sharing bytes, huge
// tiles over tiny images, enormous dimensions, truncated files, offsets
// outside the file, loops in IFD chains, huge tag counts, megabyte ASCII
// tags, wrong field types, broken compressed streams, predictor misuse,
// non-finite georeferencing, grids in different CRSs, PNG bombs) and
// paths that are not files at all (FIFOs, directories, devices, sockets,
// symbolic link loops).
//
// GenerateInputs makes the second corpus, of the command line's other
// inputs: Sentinel-2 zips and SAFE metadata, Landsat tars and MTLs, JPEG
// 2000 headers, STAC items, GeoPackages and GeoJSON stands, scene and
// stack lists, session files, and FIFOs, devices, folders, missing files
// and link loops in every place a file is read. The test beside it runs
// each case through the canopy binary in a memory cgroup of 1 GiB where
// the system allows, and checks the exit status, the one line naming the
// file, the CPU time and the kernel's verdict on the memory.
//
// The files are built here, byte by byte, with their own TIFF and PNG
// writers and their own LZW and PackBits encoders, so that the corpus
// does not share the codec's understanding of the format. Each Case says
// whether a careful reader must load it or refuse it, and with which
// words. The test beside it runs every case through the loader canopy
// compute uses, each in a process of its own, and checks that it neither
// panics nor hangs, stays within 1 GiB of memory, reports one line
// naming the file, and leaves no output behind.
package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Case is one input of the corpus.
type Case struct {
	// Name identifies the case: "bomb/shared-tiles-deflate".
	Name string
	// Red and NIR are the band specs given to the loader (FILE or
	// FILE:B); NIR is empty when the case loads one band.
	Red, NIR string
	// Loads says the input is acceptable and must load.
	Loads bool
	// Either says the case may load or fail (random corruption): only the
	// safety checks apply.
	Either bool
	// Want is a piece of the error a refused case must give.
	Want string
}

// gen collects cases and the files they need.
type gen struct {
	dir   string
	cases []Case
	err   error
}

// file writes b as dir/NAME (the case name with / as -) and returns its
// path.
func (g *gen) file(name string, b []byte) string {
	p := filepath.Join(g.dir, strings.ReplaceAll(name, "/", "-"))
	if err := os.WriteFile(p, b, 0o644); err != nil && g.err == nil {
		g.err = err
	}
	return p
}

// ok adds a case that must load.
func (g *gen) ok(name string, b []byte) {
	g.add(Case{Name: name, Red: g.file(name+".tif", b), Loads: true})
}

// bad adds a case that must be refused with an error containing want.
func (g *gen) bad(name string, b []byte, want string) {
	g.add(Case{Name: name, Red: g.file(name+".tif", b), Want: want})
}

// either adds a case that may load or fail.
func (g *gen) either(name string, b []byte) {
	g.add(Case{Name: name, Red: g.file(name+".tif", b), Either: true})
}

func (g *gen) add(c Case) {
	for _, o := range g.cases {
		if o.Name == c.Name && g.err == nil {
			g.err = fmt.Errorf("two cases named %s", c.Name)
		}
	}
	g.cases = append(g.cases, c)
}

// Generate writes the corpus into dir (an empty directory) and returns
// its cases.
func Generate(dir string) ([]Case, error) {
	g := &gen{dir: dir}
	for _, step := range []func(){g.structure, g.tags, g.truncated, g.corrupted, g.bombs, g.streams, g.georef, g.pngs, g.paths, g.others} {
		step()
	}
	return g.cases, g.err
}
