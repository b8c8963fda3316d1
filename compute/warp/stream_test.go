package warp

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/grid"
)

// streamInputs is a mosaic of two inputs of two bands each (uint16 with
// nodata and a mask, float32), in UTM 32N and 33N, onto UTM 33N.
func streamInputs(t *testing.T) (grid.Grid, [][]*Source) {
	w, h := 64, 48
	rng := rand.New(rand.NewPCG(7, 9))
	mk := func(name string, typ compute.DataType, sg SourceGrid) *Source {
		p := compute.NewPlane(typ, w, h)
		for i := range p.Pixels() {
			v := 1 + rng.UintN(3000)
			if typ == compute.U16 {
				p.U16()[i] = uint16(v)
			} else {
				p.F32()[i] = float32(v) / 7
			}
		}
		s := &Source{Plane: p, Grid: sg, Name: name}
		if typ == compute.U16 {
			s.HasNoData, s.NoData = true, 0
			p.U16()[w*10+10] = 0
			s.Mask = make([]uint8, w*h)
			for i := 20 * w; i < 22*w; i++ {
				s.Mask[i] = 1
			}
		}
		return s
	}
	ga := SourceGrid{Width: w, Height: h, Affine: [6]float64{699500, 20, 0, 5601000, 0, -20}, CRS: "EPSG:32632"}
	gb := SourceGrid{Width: w, Height: h, Affine: [6]float64{270000, 20, 0, 5601500, 0, -20}, CRS: "EPSG:32633"}
	var fps [][4]float64
	for _, sg := range []SourceGrid{ga, gb} {
		g := grid.Grid{CRS: sg.CRS, X0: sg.Affine[0], Y0: sg.Affine[3], ResX: 20, ResY: 20, Width: w, Height: h}
		fp, err := grid.Footprint(g, "EPSG:32633")
		if err != nil {
			t.Fatal(err)
		}
		fps = append(fps, fp)
	}
	g, err := grid.Aligned("EPSG:32633", 32633, 20, 20, grid.Union(fps...))
	if err != nil {
		t.Fatal(err)
	}
	return g, [][]*Source{
		{mk("a:1", compute.U16, ga), mk("a:2", compute.F32, ga)},
		{mk("b:1", compute.U16, gb), mk("b:2", compute.F32, gb)},
	}
}

// streamOf is what MosaicStream takes for inputs already read.
func streamOf(inputs [][]*Source) ([]SourceGrid, []string, func(int) ([]*Source, error)) {
	var grids []SourceGrid
	var names []string
	for _, in := range inputs {
		grids = append(grids, in[0].Grid)
		names = append(names, in[0].Name)
	}
	return grids, names, func(i int) ([]*Source, error) { return inputs[i], nil }
}

// streamer is the go backend as a Streamer that checks what it is given.
type streamer struct {
	goBackend
	calls int
}

func (s *streamer) WarpStream(n int, arrived func(i int) ([]*Source, error), next func(i int) (*Plan, []*Source, error)) ([]*Target, error) {
	s.calls++
	var early [][]*Source
	for i := range n {
		b, err := arrived(i)
		if err != nil {
			return nil, err
		}
		early = append(early, b)
	}
	return warpEach(n, func(i int) (*Plan, []*Source, error) {
		p, c, err := next(i)
		if err == nil && (len(c) != len(early[i]) || c[0] != early[i][0]) {
			err = fmt.Errorf("input %d: arrived gave other bands than next", i)
		}
		return p, c, err
	}, s.goBackend)
}

// MosaicStream gives Mosaic's bytes on every backend, and through a
// Streamer, for every resampling.
func TestMosaicStreamEqualsMosaic(t *testing.T) {
	g, inputs := streamInputs(t)
	grids, names, read := streamOf(inputs)
	for _, r := range []Resampling{Nearest, Bilinear, Cubic, Average} {
		ref, _ := Get("go")
		want, _, err := Mosaic(g, inputs, r, MaxError, ref)
		if err != nil {
			t.Fatal(err)
		}
		st := &streamer{}
		bes := []Backend{st}
		for _, name := range Names() {
			b, _ := Get(name)
			bes = append(bes, b)
		}
		for _, be := range bes {
			if a, ok := be.(interface{ Available() (bool, string) }); ok {
				if ok, _ := a.Available(); !ok {
					continue
				}
			}
			got, tm, err := MosaicStream(g, grids, names, read, r, MaxError, be)
			if err != nil {
				t.Fatalf("%s %s: %v", be.Name(), r, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s %s: %d targets, want %d", be.Name(), r, len(got), len(want))
			}
			for b := range want {
				if !bytes.Equal(got[b].Plane.Data, want[b].Plane.Data) || !bytes.Equal(got[b].Filled, want[b].Filled) {
					t.Errorf("%s %s band %d: differs from Mosaic's", be.Name(), r, b+1)
				}
			}
			if tm.Total < tm.Tail || tm.Total < tm.Read || tm.Total < tm.Plan {
				t.Errorf("%s %s: times %+v: a part longer than the whole", be.Name(), r, tm)
			}
		}
		if st.calls != 1 {
			t.Errorf("the Streamer was called %d times, want 1", st.calls)
		}
	}
}

// A failed read, a plan that cannot be made and mixed inputs end the
// stream with the error, naming the input.
func TestMosaicStreamErrors(t *testing.T) {
	g, inputs := streamInputs(t)
	grids, names, read := streamOf(inputs)
	be, _ := Get("go")
	bad := errors.New("b.tif: truncated")
	failing := func(i int) ([]*Source, error) {
		if i == 1 {
			return nil, bad
		}
		return read(i)
	}
	for _, b := range []Backend{be, &streamer{}} {
		if _, _, err := MosaicStream(g, grids, names, failing, Bilinear, MaxError, b); !errors.Is(err, bad) {
			t.Errorf("%s: a failed read gave %v", b.Name(), err)
		}
		mixed := func(i int) ([]*Source, error) {
			in, _ := read(i)
			if i == 1 {
				return in[:1], nil
			}
			return in, nil
		}
		if _, _, err := MosaicStream(g, grids, names, mixed, Bilinear, MaxError, b); err == nil || !strings.Contains(err.Error(), "b:1 has 1 band") {
			t.Errorf("%s: mixed band counts gave %v", b.Name(), err)
		}
		far := slices.Clone(grids)
		far[1].Affine[1] = 0 // a singular geotransform
		_, _, err := MosaicStream(g, far, names, read, Bilinear, MaxError, b)
		if err == nil || !strings.Contains(err.Error(), names[1]) {
			t.Errorf("%s: an unplannable input gave %v", b.Name(), err)
		}
	}
	if _, _, err := MosaicStream(g, grids, names[:1], read, Bilinear, MaxError, be); err == nil {
		t.Error("fewer names than inputs: no error")
	}
	if _, _, err := MosaicStream(g, nil, nil, read, Bilinear, MaxError, be); err == nil {
		t.Error("no input: no error")
	}
}
