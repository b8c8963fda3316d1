package cudaback

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/grid"
	"canopy/compute/warp"
	"canopy/native/cuda"
)

// warpRun warps the sources along their plans into dst in order.
type warpRun func(plans []*warp.Plan, srcs []*warp.Source, dst *warp.Target) error

// checkWarpBackend warps w×h bands of every type, with nodata and a
// masked band of rows, from UTM 32N onto grids in UTM 33N at about the
// same and at a coarser resolution and in geographic coordinates, with
// every resampling, and compares the result with compute/warp's float64
// reference: the same pixels filled, and the values identical (exact) or
// within the gl backend's bounds (float32's rounding of the value, one
// step for integers). A mosaic of the band and a shifted copy of it is
// checked too. It returns how many pixels were identical of how many.
func checkWarpBackend(t *testing.T, run warpRun, w, h int, exact bool, types []compute.DataType) (same, all int) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, typ := range types {
		plane := compute.NewPlane(typ, w, h)
		for i := range plane.Data {
			plane.Data[i] = byte(rng.UintN(256))
		}
		if typ == compute.F32 {
			f := plane.F32()
			for i := range f {
				f[i] = float32(rng.Float64() * 1000)
			}
			f[w*5+7] = float32(math.NaN())
		}
		mask := make([]uint8, w*h)
		for i := h / 3 * w; i < (h/3+2)*w; i++ {
			mask[i] = 1
		}
		src := &warp.Source{Plane: plane, NoData: plane.At(w*(h*3/4) + w/2), HasNoData: true, Mask: mask, Name: typ.String(),
			Grid: warp.SourceGrid{Width: w, Height: h, Affine: [6]float64{699000, 10, 0, 5601000, 0, -10}, CRS: "EPSG:32632"}}
		// The second input of the mosaic: the band 25 pixels further
		// east, without mask or nodata.
		src2 := *src
		src2.Mask, src2.HasNoData, src2.Name = nil, false, typ.String()+" (east)"
		src2.Grid.Affine[0] += 250
		sg := grid.Grid{CRS: "EPSG:32632", EPSG: 32632, X0: 699000, Y0: 5601000, ResX: 10, ResY: 10, Width: w + 25, Height: h}
		for _, c := range []struct {
			epsg int
			res  float64
		}{{32633, 10}, {32633, 27}, {4326, 0.00015}} {
			crs := fmt.Sprintf("EPSG:%d", c.epsg)
			fp, err := grid.Footprint(sg, crs)
			if err != nil {
				t.Fatal(err)
			}
			g, err := grid.Aligned(crs, c.epsg, c.res, c.res, fp)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []warp.Resampling{warp.Nearest, warp.Bilinear, warp.Cubic, warp.Average} {
				plan, err := warp.NewPlan(g, src.Grid, r, warp.MaxError)
				if err != nil {
					t.Fatal(err)
				}
				plan2, err := warp.NewPlan(g, src2.Grid, r, warp.MaxError)
				if err != nil {
					t.Fatal(err)
				}
				want, _ := warp.NewTarget(plan, typ, 3, true)
				// A pixel already filled (an earlier input) stays.
				want.Filled[0] = 1
				warp.Reference(plan, src, want, 0, g.Height)
				warp.Reference(plan2, &src2, want, 0, g.Height)
				got, _ := warp.NewTarget(plan, typ, 3, true)
				got.Filled[0] = 1
				if err := run([]*warp.Plan{plan, plan2}, []*warp.Source{src, &src2}, got); err != nil {
					t.Fatalf("%s %s → %s %g: %v", typ, r, crs, c.res, err)
				}
				ok, bad, worst := 0, 0, 0.0
				for i := range want.Filled {
					if got.Filled[i] != want.Filled[i] {
						bad++
						continue
					}
					a, e := got.Plane.At(i), want.Plane.At(i)
					if a == e || (a != a && e != e) {
						ok++
						continue
					}
					tol := 1.0
					if typ == compute.F32 {
						tol = math.Abs(e) * 1.2e-7
					}
					if exact || r == warp.Nearest || math.Abs(a-e) > tol {
						bad++
						worst = max(worst, math.Abs(a-e))
					}
				}
				same += ok
				all += len(want.Filled)
				if bad > 0 {
					t.Errorf("%s %s → %s %g: %d pixels differ from the reference (%d identical of %d; the largest difference %g)",
						typ, r, crs, c.res, bad, ok, len(want.Filled), worst)
				}
			}
		}
	}
	return same, all
}

// The warp kernel on the PTX interpreter equals the float64 reference
// bit for bit, for every type, resampling and kind of grid, a mosaic of
// two inputs included, and frees what it allocates.
func TestWarpSimulated(t *testing.T) {
	d := newSimDev(t)
	run := func(plans []*warp.Plan, srcs []*warp.Source, dst *warp.Target) error {
		if err := checkWarp(plans, srcs, dst); err != nil {
			return err
		}
		_, err := runWarp(d, plans, srcs, dst)
		return err
	}
	types := []compute.DataType{compute.U8, compute.U16, compute.I16, compute.U32, compute.I32, compute.F32}
	w, h := 24, 20
	if testing.Short() {
		// signed, narrow and float (NaN) samples, fewer pixels
		types, w, h = []compute.DataType{compute.I16, compute.F32}, 16, 14
	}
	same, all := checkWarpBackend(t, run, w, h, true, types)
	t.Logf("%d of %d pixels identical to the reference's", same, all)
	if d.live != 0 {
		t.Errorf("%d device buffers left allocated", d.live)
	}
}

// Every shape of the warp kernel is PTX the interpreter reads, with
// nothing that could fuse or approximate an operation.
func TestWarpKernelsParse(t *testing.T) {
	for _, typ := range []compute.DataType{compute.U8, compute.U16, compute.I16, compute.U32, compute.I32, compute.F32} {
		for r := range 4 {
			for _, use4 := range []bool{false, true} {
				for _, flags := range []int{0, 7} {
					sh := warpShape{Type: typ, Resampling: r, Use4: use4, Mask: flags&1 != 0, NoData: flags&2 != 0, DstNoData: flags&4 != 0}
					sp := genWarp(sh, testTarget)
					if _, err := parsePTX(sp.PTX); err != nil {
						t.Errorf("%+v: %v", sh, err)
					}
					for _, bad := range []string{"fma", "mad.", ".ftz", ".approx", ".full", "rcp"} {
						if strings.Contains(sp.PTX, bad) {
							t.Errorf("%+v: the PTX contains %q", sh, bad)
						}
					}
				}
			}
		}
	}
}

// The cuda warp backend on the GPU equals the reference (skipped without
// one, failed with CANOPY_EXPECT_GPU set), and is registered with
// compute/warp.
func TestWarpGPU(t *testing.T) {
	wb := gpuWarp(t)
	types := []compute.DataType{compute.U8, compute.U16, compute.I16, compute.U32, compute.I32, compute.F32}
	same, all := checkWarpBackend(t, wb.WarpAll, 96, 80, false, types)
	t.Logf("%d of %d pixels identical to the reference's", same, all)
}

// gridOver is the UTM 33N grid at 10 m over sources of w×h 10 m pixels.
func gridOver(t *testing.T, grids []warp.SourceGrid, w, h int) grid.Grid {
	t.Helper()
	var fps [][4]float64
	for _, sg := range grids {
		fp, err := grid.Footprint(grid.Grid{CRS: sg.CRS, X0: sg.Affine[0], Y0: sg.Affine[3], ResX: 10, ResY: 10, Width: w, Height: h}, "EPSG:32633")
		if err != nil {
			t.Fatal(err)
		}
		fps = append(fps, fp)
	}
	g, err := grid.Aligned("EPSG:32633", 32633, 10, 10, grid.Union(fps...))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// fill sets simulated device memory as cuMemset does.
func (d *simDev) fill(p cuda.DevicePtr, value uint32, size, count int) error {
	b, err := d.span(p, size*count)
	if err != nil {
		return err
	}
	for i := 0; i < size*count; i++ {
		b[i] = byte(value >> (8 * (i % size)))
	}
	return nil
}

// noFill is a device without cuMemset: the targets go up from the host.
type noFill struct{ residentDev }

// A streamed mosaic (warp.Streamer) on the PTX interpreter equals the
// float64 reference's mosaic bit for bit, its targets set on the device
// (cuMemset) or uploaded, and frees what it allocates.
func TestWarpStreamSimulated(t *testing.T) {
	w, h := 20, 16
	types := []compute.DataType{compute.U16, compute.I16, compute.F32}
	if testing.Short() {
		types = []compute.DataType{compute.I16, compute.F32}
	}
	rng := rand.New(rand.NewPCG(11, 13))
	for _, typ := range types {
		var inputs [][]*warp.Source
		for k, sg := range []warp.SourceGrid{
			{Width: w, Height: h, Affine: [6]float64{699000, 10, 0, 5601000, 0, -10}, CRS: "EPSG:32632"},
			{Width: w, Height: h, Affine: [6]float64{699150, 10, 0, 5601050, 0, -10}, CRS: "EPSG:32632"},
		} {
			p := compute.NewPlane(typ, w, h)
			for i := range p.Data {
				p.Data[i] = byte(rng.UintN(256))
			}
			if typ == compute.F32 {
				for i := range p.F32() {
					p.F32()[i] = float32(rng.Float64() * 1000)
				}
			}
			s := &warp.Source{Plane: p, Grid: sg, Name: fmt.Sprintf("%s %d", typ, k)}
			if k == 0 {
				s.HasNoData, s.NoData = true, p.At(w*5+3)
			}
			inputs = append(inputs, []*warp.Source{s})
		}
		sg := grid.Grid{CRS: "EPSG:32632", EPSG: 32632, X0: 699000, Y0: 5601050, ResX: 10, ResY: 10, Width: w + 15, Height: h + 5}
		fp, err := grid.Footprint(sg, "EPSG:32633")
		if err != nil {
			t.Fatal(err)
		}
		g, err := grid.Aligned("EPSG:32633", 32633, 10, 10, fp)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []warp.Resampling{warp.Nearest, warp.Bilinear} {
			ref, _ := warp.Get("go")
			want, _, err := warp.Mosaic(g, inputs, r, warp.MaxError, ref)
			if err != nil {
				t.Fatal(err)
			}
			var plans []*warp.Plan
			for _, in := range inputs {
				p, err := warp.NewPlan(g, in[0].Grid, r, warp.MaxError)
				if err != nil {
					t.Fatal(err)
				}
				plans = append(plans, p)
			}
			next := func(i int) (*warp.Plan, []*warp.Source, error) { return plans[i], inputs[i], nil }
			for _, memset := range []bool{true, false} {
				d := newSimDev(t)
				var dev residentDev = d
				if !memset {
					dev = noFill{d}
				}
				arrived := func(i int) ([]*warp.Source, error) { return inputs[i], nil }
				got, err := runStream(&warpJob{dev: dev}, len(inputs), arrived, next)
				if err != nil {
					t.Fatalf("%s %s: %v", typ, r, err)
				}
				if !bytes.Equal(got[0].Plane.Data, want[0].Plane.Data) || !bytes.Equal(got[0].Filled, want[0].Filled) {
					t.Errorf("%s %s (memset %v): differs from the reference's mosaic", typ, r, memset)
				}
				if d.live != 0 {
					t.Errorf("%s %s (memset %v): %d device buffers left allocated", typ, r, memset, d.live)
				}
			}
		}
	}
}

// A streamed mosaic on the GPU (warp.MosaicStream, the cuda backend's
// warp.Streamer) equals the reference's mosaic bit for bit.
func TestWarpStreamGPU(t *testing.T) {
	be, err := warp.Get("cuda")
	if err != nil {
		t.Fatal(err)
	}
	ok, why := be.(*WarpBackend).Available()
	computetest.SkipUnlessGPU(t, ok, why)
	w, h := 300, 200
	rng := rand.New(rand.NewPCG(17, 19))
	for _, typ := range []compute.DataType{compute.U8, compute.U16, compute.I16, compute.U32, compute.I32, compute.F32} {
		var inputs [][]*warp.Source
		var grids []warp.SourceGrid
		var names []string
		for k, sg := range []warp.SourceGrid{
			{Width: w, Height: h, Affine: [6]float64{699000, 10, 0, 5601000, 0, -10}, CRS: "EPSG:32632"},
			{Width: w, Height: h, Affine: [6]float64{202000, 10, 0, 5601500, 0, -10}, CRS: "EPSG:32633"},
		} {
			var bands []*warp.Source
			for b := range 2 {
				p := compute.NewPlane(typ, w, h)
				for i := range p.Data {
					p.Data[i] = byte(rng.UintN(256))
				}
				if typ == compute.F32 {
					for i := range p.F32() {
						p.F32()[i] = float32(rng.Float64() * 1000)
					}
				}
				s := &warp.Source{Plane: p, Grid: sg, Name: fmt.Sprintf("%s %d:%d", typ, k, b+1), HasNoData: true, NoData: p.At(w*7 + 9)}
				if b == 1 {
					s.Mask = make([]uint8, w*h)
					for i := 50 * w; i < 53*w; i++ {
						s.Mask[i] = 1
					}
				}
				bands = append(bands, s)
			}
			inputs = append(inputs, bands)
			grids = append(grids, sg)
			names = append(names, bands[0].Name)
		}
		g := gridOver(t, grids, w, h)
		read := func(i int) ([]*warp.Source, error) { return inputs[i], nil }
		for _, r := range []warp.Resampling{warp.Nearest, warp.Bilinear, warp.Cubic, warp.Average} {
			ref, _ := warp.Get("go")
			want, _, err := warp.Mosaic(g, inputs, r, warp.MaxError, ref)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := warp.MosaicStream(g, grids, names, read, r, warp.MaxError, be)
			if err != nil {
				t.Fatalf("%s %s: %v", typ, r, err)
			}
			for b := range want {
				if !bytes.Equal(got[b].Plane.Data, want[b].Plane.Data) || !bytes.Equal(got[b].Filled, want[b].Filled) {
					t.Errorf("%s %s band %d: differs from the reference's mosaic", typ, r, b+1)
				}
			}
		}
	}
}

// TestWarpStreamLargeGPU streams two inputs onto targets large enough
// to come down staged in several chunks, the last one short: uint16 with
// nodata (the filled map read off the plane as each piece lands) and
// float32 (the map downloaded too). The mosaics equal the float64
// reference's.
func TestWarpStreamLargeGPU(t *testing.T) {
	wb := gpuWarp(t)
	w, h := 3001, 2399
	rng := rand.New(rand.NewPCG(23, 29))
	grids := []warp.SourceGrid{
		{Width: w, Height: h, Affine: [6]float64{699000, 10, 0, 5601000, 0, -10}, CRS: "EPSG:32632"},
		{Width: w, Height: h, Affine: [6]float64{202000, 10, 0, 5601500, 0, -10}, CRS: "EPSG:32633"},
	}
	g := gridOver(t, grids, w, h)
	ref, err := warp.Get("go-parallel")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []compute.DataType{compute.U16, compute.F32} {
		var inputs [][]*warp.Source
		for k, sg := range grids {
			p := compute.NewPlane(typ, w, h)
			if typ == compute.F32 {
				for i := range p.F32() {
					p.F32()[i] = float32(rng.Float64() * 1000)
				}
			} else {
				for i := range p.U16() {
					p.U16()[i] = uint16(1 + rng.UintN(60000))
				}
				p.U16()[w*h/2] = 0
			}
			inputs = append(inputs, []*warp.Source{{Plane: p, Grid: sg, Name: fmt.Sprintf("%s %d", typ, k), HasNoData: true, NoData: 0}})
		}
		want, _, err := warp.Mosaic(g, inputs, warp.Bilinear, warp.MaxError, ref)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(want[0].Plane.Data); n < RegisterMin || n%residentStageBytes == 0 || n < 2*residentStageBytes {
			t.Fatalf("%s: a %d-byte target does not test a staged download in chunks", typ, n)
		}
		read := func(i int) ([]*warp.Source, error) { return inputs[i], nil }
		got, _, err := warp.MosaicStream(g, grids, []string{"a", "b"}, read, warp.Bilinear, warp.MaxError, wb)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if !bytes.Equal(got[0].Plane.Data, want[0].Plane.Data) || !bytes.Equal(got[0].Filled, want[0].Filled) {
			t.Errorf("%s: differs from the reference's mosaic", typ)
		}
	}
}

// BenchmarkWarpTransfers times what the cuda warp's transfers may cost
// on a GPU, at the size of bench/warp's mosaic: a 10980² uint16 band up
// (its pages written, as a decoded band's are) and an 18 400 × 11 800
// uint16 plane with its filled map down (into memory whose pages are
// mapped, as the streamed warp's are), staged through the session's
// pinned buffers or page-locked in place: the page-locking, the copy and
// the release timed apart (pin-ms, copy-ms, unpin-ms a run).
func BenchmarkWarpTransfers(b *testing.B) {
	wb := &WarpBackend{}
	ok, why := wb.Available()
	computetest.SkipUnlessGPU(b, ok, why)
	defer runtime.KeepAlive(wb)
	dev, _, err := wb.backend().newDev()
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if leave, err := dev.enter(); err == nil {
			dev.close()
			leave()
		}
	}()
	const up, down = 10980 * 10980 * 2, 18400 * 11800 * 3
	leave, err := dev.enter()
	if err != nil {
		b.Fatal(err)
	}
	p, err := dev.alloc(down)
	leave()
	if err != nil {
		b.Fatal(err)
	}
	run := func(name string, n int, toDevice, pinned bool) {
		b.Run(name, func(b *testing.B) {
			var pin, cp, unpin time.Duration
			for range b.N {
				b.StopTimer()
				host := make([]byte, n)
				touch(host)
				b.StartTimer()
				leave, err := dev.enter()
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if pinned && !dev.pin(host) {
					leave()
					b.Fatal("the driver refused to page-lock the buffer")
				}
				t1 := time.Now()
				if toDevice {
					err = dev.upload(p, host)
				} else {
					err = dev.download(host, p)
				}
				if err == nil {
					err = dev.sync()
				}
				t2 := time.Now()
				if pinned {
					dev.unpin(host)
				}
				t3 := time.Now()
				leave()
				if err != nil {
					b.Fatal(err)
				}
				pin, cp, unpin = pin+t1.Sub(t0), cp+t2.Sub(t1), unpin+t3.Sub(t2)
			}
			per := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(b.N) }
			b.ReportMetric(per(pin), "pin-ms")
			b.ReportMetric(per(cp), "copy-ms")
			b.ReportMetric(per(unpin), "unpin-ms")
			b.ReportMetric(float64(n)/1e6/per(cp), "copy-GB/s")
		})
	}
	run("up-staged", up, true, false)
	run("up-pinned", up, true, true)
	run("down-staged", down, false, false)
	run("down-pinned", down, false, true)
	if leave, err := dev.enter(); err == nil {
		dev.free(p)
		leave()
	}
}
