package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"canopy/compute"
	_ "canopy/compute/backends"
	"canopy/compute/geotiff"
	"canopy/compute/index"
	"canopy/compute/pipeline"
	"canopy/compute/raster"
)

var roles = []string{"blue", "green", "red", "nir", "swir1", "swir2"}

// scene writes a w×h 6-band uint16 GeoTIFF (reflectance × 10000, nodata
// 0, some zeros and a saturated value) in tiles of the given size and
// returns the band specs by role.
func scene(t *testing.T, w, h, tile int) []string {
	t.Helper()
	g := rand.New(rand.NewPCG(7, uint64(tile)))
	bands := make([][]uint16, len(roles))
	for b := range bands {
		bands[b] = make([]uint16, w*h)
		for i := range bands[b] {
			switch g.IntN(40) {
			case 0:
				bands[b][i] = 0
			case 1:
				bands[b][i] = 65535
			default:
				bands[b][i] = uint16(100 + g.IntN(7000))
			}
		}
	}
	p := filepath.Join(t.TempDir(), "scene.tif")
	opt := geotiff.WriteOptions{TileSize: tile, NoData: "0"}
	if err := geotiff.WriteBands(p, w, h, bands, nil, opt); err != nil {
		t.Fatal(err)
	}
	var specs []string
	for i := range roles {
		specs = append(specs, fmt.Sprintf("%s:%d", p, i+1))
	}
	return specs
}

// collect is a sink that assembles the blocks' outputs into whole planes
// and checks they come in order, each once.
type collect struct {
	t      *testing.T
	w, h   int
	out    [][]float32
	nextY  int
	blocks int
}

func (c *collect) Write(b *pipeline.Block) error {
	if b.Y0 != c.nextY || b.Width != c.w || b.Index != c.blocks {
		c.t.Errorf("block %d at row %d (width %d), want block %d at row %d", b.Index, b.Y0, b.Width, c.blocks, c.nextY)
	}
	if c.out == nil {
		c.out = make([][]float32, len(b.Out))
		for i := range c.out {
			c.out[i] = make([]float32, c.w*c.h)
		}
	}
	for o := range b.Out {
		if len(b.Out[o]) != b.Rows*c.w {
			c.t.Errorf("block %d output %d holds %d pixels for %d rows", b.Index, o, len(b.Out[o]), b.Rows)
		}
		copy(c.out[o][b.Y0*c.w:], b.Out[o])
	}
	c.nextY += b.Rows
	c.blocks++
	return nil
}

// whole runs the job the old way: every band loaded whole.
func whole(t *testing.T, be compute.Backend, specs []string, mask []uint8, names []string, exprs []*index.Expr) (*compute.Job, error) {
	t.Helper()
	var bands []compute.BandInput
	for i, s := range specs {
		b, _, err := raster.LoadStored(roles[i], s)
		if err != nil {
			t.Fatal(err)
		}
		bands = append(bands, b)
	}
	j, err := compute.NewJob(bands, mask, names, exprs)
	if err != nil {
		t.Fatal(err)
	}
	_, err = compute.RunJob(be, j)
	return j, err
}

// sameBits checks that every number is the same float32 bits and NaN is
// in the same pixels. NaN payloads are not compared: go-parallel's AVX2
// kernels and its scalar tails give NaN with different payloads (as
// compute/internal/vec documents), so they depend on where a pixel falls
// in a worker's span even in one whole-image run; the GeoTIFF writer
// writes every NaN as the same bits.
func sameBits(t *testing.T, what string, w int, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			t.Fatalf("%s pixel (%d,%d): pipeline %v (%08x), whole image %v (%08x)", what, i%w, i/w, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestBitEqualToWholeImage runs every catalogue index (all in one job, and
// NDVI alone) whole and through the pipeline on every CPU backend, gl
// (llvmpipe here) and cuda where there is a GPU, over inputs in two tile
// sizes, with blocks aligned to the tiles and blocks that cut them, and
// compares the results bit for bit, and the verification reports.
func TestBitEqualToWholeImage(t *testing.T) {
	const w, h = 301, 203
	var names []string
	var exprs []*index.Expr
	for _, c := range index.Catalogue() {
		if slices.ContainsFunc(c.Roles, func(r string) bool { return !slices.Contains(roles, r) }) {
			continue
		}
		names = append(names, c.Name)
		exprs = append(exprs, c.Expr)
	}
	if len(names) < 8 {
		t.Fatalf("only %d catalogue indices on %v", len(names), roles)
	}
	type job struct {
		names []string
		exprs []*index.Expr
	}
	// All indices in one job (every op on every backend), and NDVI alone
	// (gl runs NDVI only for now; the CPU backends' NDVI fast paths).
	jobs := []job{{names, exprs}, {names[:1], exprs[:1]}}
	layouts := []struct {
		name string
		tile int
	}{{"tiles16", 16}, {"tiles32", 32}}
	if testing.Short() {
		// -short is the race detector's run in make test: one layout.
		layouts = layouts[:1]
	}
	for _, layout := range layouts {
		specs := scene(t, w, h, layout.tile)
		for _, name := range []string{compute.NameGo, compute.NameGoParallel, compute.NameC, compute.NameGL, compute.NameCUDA} {
			be, err := compute.New(name)
			if err != nil || !be.Info().Available {
				t.Logf("%s: not available here", name)
				continue
			}
			for _, jb := range jobs {
				want, err := whole(t, be, specs, nil, jb.names, jb.exprs)
				if err != nil {
					t.Fatalf("%s %v whole: %v", name, jb.names, err)
				}
				wantRep := compute.VerifyJob(want)
				for _, rows := range []int{0, 7, 3 * layout.tile} {
					in, err := raster.OpenStored(roles, specs)
					if err != nil {
						t.Fatal(err)
					}
					c := &collect{t: t, w: w, h: h}
					res, err := pipeline.Run(context.Background(), in.Input, pipeline.Options{Backend: be, Names: jb.names, Exprs: jb.exprs, Verify: true, BlockRows: rows, InFlight: 3}, c)
					in.Close()
					if err != nil {
						t.Fatalf("%s %v blocks of %d rows: %v", name, jb.names, rows, err)
					}
					if c.nextY != h || c.blocks != res.Blocks {
						t.Fatalf("%s: sink saw %d blocks to row %d, run says %d blocks", name, c.blocks, c.nextY, res.Blocks)
					}
					for o := range jb.names {
						sameBits(t, fmt.Sprintf("%s %s %s blocks of %d rows", layout.name, name, jb.names[o], res.BlockRows), w, c.out[o], want.Out[o])
						g, e := res.Reports[o], wantRep[o]
						if g.Pixels != e.Pixels || g.NaN != e.NaN || g.MaxAbsErr != e.MaxAbsErr || g.NaNMismatch != e.NaNMismatch || g.Wrong != e.Wrong || g.Conditioned != e.Conditioned || g.OK() != e.OK() {
							t.Fatalf("%s %s: pipeline report %+v, whole %+v", name, jb.names[o], g, e)
						}
					}
				}
			}
			be.Close()
		}
	}
}

func TestMaskAndMemoryInput(t *testing.T) {
	const w, h = 97, 61
	specs := scene(t, w, h, 16)
	mask := make([]uint8, w*h)
	g := rand.New(rand.NewPCG(1, 2))
	for i := range mask {
		if g.IntN(5) == 0 {
			mask[i] = 1
		}
	}
	be, _ := compute.New(compute.NameGoParallel)
	defer be.Close()
	ndvi, _ := index.Lookup("ndvi")
	evi, _ := index.Lookup("evi")
	names, exprs := []string{"ndvi", "evi"}, []*index.Expr{ndvi.Expr, evi.Expr}
	want, err := whole(t, be, specs, mask, names, exprs)
	if err != nil {
		t.Fatal(err)
	}
	var bands []compute.BandInput
	for i, s := range specs {
		b, _, err := raster.LoadStored(roles[i], s)
		if err != nil {
			t.Fatal(err)
		}
		bands = append(bands, b)
	}
	in, err := pipeline.Memory(bands, mask)
	if err != nil {
		t.Fatal(err)
	}
	c := &collect{t: t, w: w, h: h}
	res, err := pipeline.Run(context.Background(), in, pipeline.Options{Backend: be, Names: names, Exprs: exprs, Verify: true, BlockRows: 10}, c)
	if err != nil {
		t.Fatal(err)
	}
	for o := range names {
		sameBits(t, names[o], w, c.out[o], want.Out[o])
	}
	if res.Blocks != 7 || res.BlockRows != 10 || !res.Reports[0].OK() {
		t.Errorf("%d blocks of %d rows, report %v", res.Blocks, res.BlockRows, res.Reports[0])
	}
}

// failing reads rows until row at, then fails.
type failing struct {
	pipeline.Reader
	at    int
	reads atomic.Int32
}

func (f *failing) ReadRows(y0, y1 int, dst []compute.Plane) error {
	f.reads.Add(1)
	if y1 > f.at {
		return errors.New("read broken.tif: the file ends early")
	}
	return f.Reader.ReadRows(y0, y1, dst)
}

func TestErrorsStopTheRun(t *testing.T) {
	const w, h = 50, 400
	specs := scene(t, w, h, 16)
	be, _ := compute.New(compute.NameGo)
	ndvi, _ := index.Lookup("ndvi")
	opt := pipeline.Options{Backend: be, Names: []string{"ndvi"}, Exprs: []*index.Expr{ndvi.Expr}, BlockRows: 16}

	in, err := raster.OpenStored([]string{"red", "nir"}, specs[2:4])
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	f := &failing{Reader: in.Bands[0].Reader, at: 100}
	in.Bands[0].Reader, in.Bands[1].Reader = f, f
	var seen int
	_, err = pipeline.Run(context.Background(), in.Input, opt, pipeline.SinkFunc(func(b *pipeline.Block) error { seen++; return nil }))
	if err == nil || !strings.Contains(err.Error(), "the file ends early") {
		t.Fatalf("a failing read: %v", err)
	}
	if seen > 6 || f.reads.Load() > 7 {
		t.Errorf("after the read of rows 96-112 failed, %d blocks reached the sink and %d reads were made", seen, f.reads.Load())
	}

	in2, _ := raster.OpenStored([]string{"red", "nir"}, specs[2:4])
	defer in2.Close()
	_, err = pipeline.Run(context.Background(), in2.Input, opt, pipeline.SinkFunc(func(b *pipeline.Block) error {
		if b.Y0 >= 64 {
			return errors.New("write out.tif: no space left on device")
		}
		return nil
	}))
	if err == nil || err.Error() != "rows 64 to 80: write out.tif: no space left on device" {
		t.Fatalf("a failing sink: %v", err)
	}

	// A job whose index needs a band the input lacks fails before reading.
	in3, _ := raster.OpenStored([]string{"red"}, specs[2:3])
	defer in3.Close()
	_, err = pipeline.Run(context.Background(), in3.Input, opt)
	var mr *compute.MissingRoleError
	if !errors.As(err, &mr) || mr.Role != "nir" {
		t.Fatalf("missing role: %v", err)
	}
}

func TestBlockRowsFor(t *testing.T) {
	mk := func(w, h int, chunks ...int) *pipeline.Input {
		in := &pipeline.Input{Width: w, Height: h}
		for _, c := range chunks {
			in.Bands = append(in.Bands, pipeline.Band{BandInput: compute.BandInput{Plane: compute.Plane{Type: compute.U16}}, Reader: rows(c)})
		}
		return in
	}
	for _, c := range []struct {
		in      *pipeline.Input
		outputs int
		want    int
	}{
		{mk(10980, 10980, 256, 256), 1, 256},  // one row of tiles: 2.8 million pixels
		{mk(10980, 10980, 1, 1), 1, 96},       // strips of one row: about a million pixels
		{mk(10980, 10980, 11, 1), 1, 99},      // a multiple of 11
		{mk(10980, 10980, 256, 11), 1, 256},   // lcm 2816 is too tall: the tallest
		{mk(40000, 40000, 512, 512), 3, 512},  // one row of tiles even past 64 MiB
		{mk(1000, 300, 16), 1, 300},           // the whole image
		{mk(40000, 40000, 16, 16), 1, 32},     // two rows of tiles make a million pixels
		{mk(10980, 10980, 16, 32, 48), 1, 96}, // lcm 96
		{mk(100, 50, 128), 1, 50},             // chunks taller than the image
		{mk(100000, 10, 1), 2, 10},            // short and wide
		{mk(1<<20, 1<<10, 1), 1, 1},           // a million pixels in a row
		{mk(3, 1<<20, 7), 1, 349531},          // tall and thin: a million pixels, a multiple of 7
	} {
		if got := pipeline.BlockRowsFor(c.in, c.outputs); got != c.want {
			t.Errorf("%dx%d chunks %v: %d rows, want %d", c.in.Width, c.in.Height, readerRows(c.in), got, c.want)
		}
	}
}

type rows int

func (r rows) BlockRows() int                                 { return int(r) }
func (r rows) ReadRows(y0, y1 int, dst []compute.Plane) error { return nil }

func readerRows(in *pipeline.Input) []int {
	var out []int
	for _, b := range in.Bands {
		out = append(out, b.Reader.BlockRows())
	}
	return out
}

// The COG the pipeline writes block by block is byte for byte the one
// written from the whole-image run's planes (NaN payloads, which differ,
// are written as one NaN).
func TestCOGBytesEqualWholeImage(t *testing.T) {
	const w, h = 700, 530
	specs := scene(t, w, h, 16)
	be, _ := compute.New(compute.NameGoParallel)
	defer be.Close()
	ndvi, _ := index.Lookup("ndvi")
	evi, _ := index.Lookup("evi")
	names, exprs := []string{"ndvi", "evi"}, []*index.Expr{ndvi.Expr, evi.Expr}
	want, err := whole(t, be, specs, nil, names, exprs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, fill func(c *geotiff.COGWriter) error) []byte {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		c, err := geotiff.NewCOG(f, w, h, 2, nil, geotiff.COGOptions{Descriptions: names, TileSize: 128})
		if err != nil {
			t.Fatal(err)
		}
		if err := fill(c); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(f.Name())
		return b
	}
	a := write("whole.tif", func(c *geotiff.COGWriter) error { return c.WriteRows(0, h, want.Out) })
	in, err := raster.OpenStored(roles, specs)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	b := write("blocks.tif", func(c *geotiff.COGWriter) error {
		_, err := pipeline.Run(context.Background(), in.Input, pipeline.Options{Backend: be, Names: names, Exprs: exprs, BlockRows: 48},
			pipeline.SinkFunc(func(bl *pipeline.Block) error { return c.WriteRows(bl.Y0, bl.Rows, bl.Out) }))
		return err
	})
	if !bytes.Equal(a, b) {
		t.Fatal("the pipeline's COG differs from the whole image's")
	}
}

// A cancelled context stops the run at the next block with ctx.Err(), and
// Progress hears of every block that passed the sinks, in order of count.
func TestCancelAndProgress(t *testing.T) {
	const w, h = 50, 400
	specs := scene(t, w, h, 16)
	be, _ := compute.New(compute.NameGo)
	ndvi, _ := index.Lookup("ndvi")

	in, err := raster.OpenStored([]string{"red", "nir"}, specs[2:4])
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var counts []int
	opt := pipeline.Options{Backend: be, Names: []string{"ndvi"}, Exprs: []*index.Expr{ndvi.Expr}, BlockRows: 16,
		Progress: func(done, total int) {
			if total != 25 {
				t.Errorf("progress total %d, want 25 blocks", total)
			}
			counts = append(counts, done)
		}}
	if _, err := pipeline.Run(context.Background(), in.Input, opt, pipeline.SinkFunc(func(*pipeline.Block) error { return nil })); err != nil {
		t.Fatal(err)
	}
	if len(counts) != 25 || counts[0] != 1 || counts[24] != 25 {
		t.Errorf("progress calls %v, want 1 to 25", counts)
	}

	ctx, cancel := context.WithCancel(context.Background())
	opt.Progress = nil
	seen := 0
	_, err = pipeline.Run(ctx, in.Input, opt, pipeline.SinkFunc(func(b *pipeline.Block) error {
		seen++
		if b.Y0 == 64 {
			cancel()
		}
		return nil
	}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled run: %v, want context.Canceled", err)
	}
	if seen > 5+4 {
		t.Errorf("%d blocks reached the sink after the run was cancelled at the fifth", seen)
	}
	cancel()
	if _, err := pipeline.Run(ctx, in.Input, opt); !errors.Is(err, context.Canceled) {
		t.Errorf("a run on a cancelled context: %v", err)
	}
}
