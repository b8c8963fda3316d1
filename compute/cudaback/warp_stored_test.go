package cudaback

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/geotiff"
	"canopy/compute/warp"
	"canopy/native/cuda"
)

// streamRun is a streamed mosaic on some device.
type streamRun func(n int, arrived func(i int) ([]*warp.Source, error), next func(i int) (*warp.Plan, []*warp.Source, error)) ([]*warp.Target, error)

// storedTiles writes two w×h uint16 DEFLATE GeoTIFFs (tiles of side
// tile, predictor 2, nodata 0) in UTM 32N and 33N across 12° E, the
// second with one tile's stream damaged when damage is set, and returns
// their paths and grids.
func storedTiles(t *testing.T, w, h, tile int, damage bool) ([]string, []warp.SourceGrid) {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	var grids []warp.SourceGrid
	for k, c := range []struct {
		epsg uint16
		x0   float64
	}{{32632, 712740 - float64(w)*6}, {32633, 287250 - float64(w)*4}} { // overlapping across 12° E at 50.5° N
		v := storedValues[uint16](w, h)
		for i := range v {
			if i%w < 3 && k == 1 {
				v[i] = 0 // nodata down the left edge
			}
		}
		g := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, c.x0, 5598520, 0},
			GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, c.epsg}}
		p := filepath.Join(dir, fmt.Sprintf("%d.tif", k))
		if err := geotiff.WriteBands(p, w, h, [][]uint16{v}, g, geotiff.WriteOptions{NoData: "0", TileSize: tile}); err != nil {
			t.Fatal(err)
		}
		if damage && k == 1 {
			f, err := geotiff.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			st, err := f.ReadStored(1)
			f.Close()
			if err != nil || st == nil {
				t.Fatalf("ReadStored: %v %v", st, err)
			}
			// The middle of the last tile's stream, found by its bytes.
			mid := (st.Spans[len(st.Spans)-2] + st.Spans[len(st.Spans)-1]) / 2
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			at := bytes.Index(b, st.Data[mid:mid+24])
			if at < 0 {
				t.Fatal("the tile's bytes are not in the file")
			}
			for i := range 24 {
				b[at+i] ^= 0x5A
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		paths = append(paths, p)
		grids = append(grids, warp.SourceGrid{Width: w, Height: h, Affine: [6]float64{c.x0, 10, 0, 5598520, 0, -10}, CRS: fmt.Sprintf("EPSG:%d", c.epsg)})
	}
	return paths, grids
}

// checkStoredStream mosaics two DEFLATE tiles across UTM zones with the
// bands as stored (inflated on the device) and as the host decodes them:
// the mosaics are identical. With a damaged tile, the stored road gives
// what the host road gives: the same mosaic, or the same error.
func checkStoredStream(t *testing.T, run func() streamRun, w, h, tile int, damage bool) {
	paths, grids := storedTiles(t, w, h, tile, damage)
	g := gridOver(t, grids, w, h)
	var plans []*warp.Plan
	for _, sg := range grids {
		p, err := warp.NewPlan(g, sg, warp.Bilinear, warp.MaxError)
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	mosaic := func(stored bool) ([]*warp.Target, error) {
		var files []*geotiff.File
		defer func() {
			for _, f := range files {
				f.Close()
			}
		}()
		read := make([][]*warp.Source, len(paths))
		arrived := func(i int) ([]*warp.Source, error) {
			f, err := geotiff.Open(paths[i])
			if err != nil {
				return nil, err
			}
			files = append(files, f)
			s := &warp.Source{Plane: compute.Plane{Type: compute.U16, Width: w, Height: h}, Grid: grids[i], HasNoData: true, Name: paths[i]}
			if stored {
				if s.Stored, err = f.ReadStored(1); err != nil || s.Stored == nil {
					return nil, fmt.Errorf("ReadStored: %v %v", s.Stored, err)
				}
			} else {
				s.Plane = compute.NewPlane(compute.U16, w, h)
				if err := f.ReadRowsInto(1, 0, h, s.Plane); err != nil {
					return nil, err
				}
			}
			read[i] = []*warp.Source{s}
			return read[i], nil
		}
		next := func(i int) (*warp.Plan, []*warp.Source, error) {
			if read[i] == nil {
				return nil, nil, fmt.Errorf("input %d planned before it arrived", i)
			}
			return plans[i], read[i], nil
		}
		return run()(len(paths), arrived, next)
	}
	want, werr := mosaic(false)
	got, gerr := mosaic(true)
	switch {
	case werr != nil || gerr != nil:
		if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
			t.Fatalf("host road: %v; stored road: %v", werr, gerr)
		}
		t.Logf("both roads: %v", werr)
	case !bytes.Contains(want[0].Filled, []byte{1}):
		t.Fatal("the mosaic has no valid pixel")
	case !bytes.Equal(got[0].Plane.Data, want[0].Plane.Data) || !bytes.Equal(got[0].Filled, want[0].Filled):
		t.Errorf("the mosaic from the stored bands differs from the host-decoded bands'")
	}
	if damage && werr == nil {
		t.Logf("the damaged tile decodes on the host (the damage past its rows)")
	}
}

// TestWarpStoredSim: the stored road on the PTX interpreter, with a clean
// and a damaged tile, frees what it allocates.
//
// forking: the device as cuda's is, each band inflated on a stream of its
// own (every one closed at the end) and the mosaic's filled map read off
// each piece of the plane as it lands.
func TestWarpStoredSim(t *testing.T) {
	for _, c := range []struct{ damage, forking bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		damage := c.damage
		t.Run(fmt.Sprintf("damaged %v forking %v", damage, c.forking), func(t *testing.T) {
			var devs []*simDev
			var forks []*forkingSim
			var jobs []*warpJob
			run := func() streamRun {
				d := newSimDev(t)
				devs = append(devs, d)
				r := &warpJob{dev: d}
				if c.forking {
					f := &forkingSim{simDev: d}
					forks = append(forks, f)
					r.dev = f
				}
				jobs = append(jobs, r)
				return func(n int, arrived func(int) ([]*warp.Source, error), next func(int) (*warp.Plan, []*warp.Source, error)) ([]*warp.Target, error) {
					return runStream(r, n, arrived, next)
				}
			}
			checkStoredStream(t, run, 40, 35, 16, damage)
			// The stored road's steps: each input's band inflated on the
			// device before its warp is queued (the damaged one decoded
			// on the host instead).
			var steps []string
			for _, e := range jobs[1].events {
				steps = append(steps, e.Name)
			}
			want := "input 1 band 1: inflated (on the device: true)"
			if damage {
				want = "input 0 band 1: inflated (on the device: true)"
			}
			if !slices.Contains(steps, want) || !slices.Contains(steps, "input 1 band 1: inflation queued") {
				t.Errorf("steps %q: want %q among them", steps, want)
			}
			for _, d := range devs {
				if d.live != 0 {
					t.Errorf("%d device buffers left allocated", d.live)
				}
			}
			// forks[0] made the mosaic from host-decoded bands, forks[1]
			// from the stored ones (the damaged pair fails on both roads).
			for k, f := range forks {
				if f.closed != f.forks || (k == 1 && f.forks != 2) || (!damage && f.pieces == 0) {
					t.Errorf("run %d: %d streams forked (the stored road forks one a band: 2), %d closed, %d pieces handed on", k, f.forks, f.closed, f.pieces)
				}
			}
		})
	}
}

// forkingSim is the simulated device with cuda's two extras: forked
// streams (counted, and their closes) and downloads handed on in pieces
// of 64 bytes.
type forkingSim struct {
	*simDev
	forks, closed, pieces int
}

type simSide struct {
	*simDev
	owner *forkingSim
}

func (s *simSide) close() { s.owner.closed++ }

func (f *forkingSim) fork() (residentDev, error) {
	f.forks++
	return &simSide{simDev: f.simDev, owner: f}, nil
}

func (f *forkingSim) downloadThen(dst []byte, src cuda.DevicePtr, then func(lo, hi int)) (bool, error) {
	if err := f.download(dst, src); err != nil || then == nil {
		return false, err
	}
	for lo := 0; lo < len(dst); lo += 64 {
		then(lo, min(lo+64, len(dst)))
		f.pieces++
	}
	return true, nil
}

// TestWarpStoredGPU: the stored road on the GPU, 256-pixel tiles with
// partial ones at the edges, clean and damaged.
func TestWarpStoredGPU(t *testing.T) {
	wb := gpuWarp(t)
	for _, damage := range []bool{false, true} {
		t.Run(fmt.Sprintf("damaged %v", damage), func(t *testing.T) {
			checkStoredStream(t, func() streamRun { return wb.WarpStream }, 1000, 700, 256, damage)
		})
	}
}

// gpuWarp is the cuda warp backend, the test skipped without a GPU.
func gpuWarp(t testing.TB) *WarpBackend {
	be, err := warp.Get("cuda")
	if err != nil {
		t.Fatal(err)
	}
	wb := be.(*WarpBackend)
	ok, why := wb.Available()
	computetest.SkipUnlessGPU(t, ok, why)
	t.Logf("cuda warp on %s", why)
	return wb
}

// gpuDev opens a session on the cuda warp's device (skipping without a
// GPU), closed when the test ends.
func gpuDev(t testing.TB) residentDev {
	dev, _, err := gpuWarp(t).backend().newDev()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if leave, err := dev.enter(); err == nil {
			dev.close()
			leave()
		}
	})
	return dev
}

// TestInflateGPU inflates on the GPU every stream TestInflateSim and
// TestInflateSimBroken use, at their full sizes and larger, many at once.
func TestInflateGPU(t *testing.T) {
	dev := gpuDev(t)
	var cases []inflateCase
	for _, n := range []int{0, 1, 300, 5000, 40000, 131072, 1 << 20} {
		for name, b := range inflateInputs(n) {
			for _, level := range []int{0, -2, 1, 6, 9} {
				cases = append(cases, inflateCase{name: fmt.Sprintf("%s %d go level %d", name, n, level), stream: deflateGo(t, level, b), cap: len(b), need: len(b), want: b})
			}
			if z := libdeflateZlib(t, 1, b); z != nil {
				cases = append(cases, inflateCase{name: fmt.Sprintf("%s %d libdeflate", name, n), stream: z[2 : len(z)-4], cap: len(b), need: len(b), want: b})
			}
		}
	}
	status, outs := inflateAll(t, dev, cases)
	checkInflated(t, cases, status, outs)
}

// BenchmarkInflateTiles inflates the chunks of a Sentinel-2-sized band
// (10980², uint16, 256-pixel tiles: 1849 chunks of 128 KiB, a smooth
// field with noise after horizontal differencing, libdeflate level 1 as
// geotiff's writer stores it) on the GPU: the upload of the streams, the
// kernel and the status back.
func BenchmarkInflateTiles(b *testing.B) {
	dev := gpuDev(b)
	const chunks, size = 1849, 256 * 256 * 2
	var data []byte
	var spans []int64
	var caps, needs []int32
	for k := range chunks {
		v := storedValues[uint16](256, 256+k%7)[:256*256]
		raw := make([]byte, size)
		for i := range v {
			d := v[i]
			if i%256 > 0 {
				d -= v[i-1]
			}
			raw[2*i], raw[2*i+1] = byte(d), byte(d>>8)
		}
		z := libdeflateZlib(b, 1, raw)
		if z == nil {
			b.Skip("no libdeflate (cgo)")
		}
		spans = append(spans, int64(len(data)+2), int64(len(data)+len(z)))
		data = append(data, z...)
		caps, needs = append(caps, size), append(needs, size)
	}
	data = append(data, make([]byte, inflatePad)...)
	b.SetBytes(chunks * size)
	b.ReportMetric(float64(len(data))/(chunks*size), "stored/decoded")
	for b.Loop() {
		leave, err := dev.enter()
		if err != nil {
			b.Fatal(err)
		}
		status, err := inflateChunks(dev, data, spans, caps, needs, nil)
		leave()
		if err != nil {
			b.Fatal(err)
		}
		for i, s := range status {
			if s != inflateOK {
				b.Fatalf("chunk %d: status %d", i, s)
			}
		}
	}
}
