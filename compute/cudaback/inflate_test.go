package cudaback

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/native/cuda"
	"canopy/native/deflate"
)

// inflateCase is one stream for the inflate kernel and what it must give.
type inflateCase struct {
	name   string
	stream []byte // raw DEFLATE
	cap    int    // the chunk's size
	need   int
	want   []byte // the decoded bytes (nil: the stream is not valid)
}

// inflateAll runs the inflate kernel on dev over the cases as one launch
// and returns each chunk's status and slot.
func inflateAll(t testing.TB, dev residentDev, cases []inflateCase) ([]uint32, [][]byte) {
	t.Helper()
	var data []byte
	var spans []int64
	var caps, needs []int32
	for _, c := range cases {
		data = append(data, 0x78, 0x9c) // a header between the streams, as in a file
		spans = append(spans, int64(len(data)), int64(len(data)+len(c.stream)))
		data = append(data, c.stream...)
		caps = append(caps, int32(c.cap))
		needs = append(needs, int32(c.need))
	}
	data = append(data, make([]byte, inflatePad)...)
	var outs [][]byte
	leave, err := dev.enter()
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	status, err := inflateChunks(dev, data, spans, caps, needs, func(raw cuda.DevicePtr, stride int) error {
		all := make([]byte, stride*len(cases))
		if err := dev.download(all, raw); err != nil {
			return err
		}
		for i, c := range cases {
			outs = append(outs, all[i*stride:][:c.cap])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return status, outs
}

// checkInflated checks the kernel's results against the cases: a valid
// stream decodes to its bytes with status OK; any stream the kernel
// calls OK decodes, with Go's compress/flate, to what the kernel wrote.
func checkInflated(t *testing.T, cases []inflateCase, status []uint32, outs [][]byte) {
	t.Helper()
	for i, c := range cases {
		if c.want != nil {
			if status[i] != inflateOK {
				t.Errorf("%s: status %d, want OK", c.name, status[i])
				continue
			}
			if !bytes.Equal(outs[i][:len(c.want)], c.want) {
				k := 0
				for k < len(c.want) && outs[i][k] == c.want[k] {
					k++
				}
				t.Errorf("%s: %d bytes decoded, the first difference at byte %d", c.name, len(c.want), k)
			}
			continue
		}
		if status[i] != inflateOK {
			continue
		}
		got, err := io.ReadAll(flate.NewReader(bytes.NewReader(c.stream)))
		if err != nil {
			t.Errorf("%s: the kernel took a stream Go's decoder refuses (%v)", c.name, err)
			continue
		}
		if len(got) > c.cap || len(got) < c.need || !bytes.Equal(outs[i][:len(got)], got) {
			t.Errorf("%s: the kernel took the stream; Go decodes %d bytes (size %d, need %d), not the kernel's", c.name, len(got), c.cap, c.need)
		}
	}
}

func deflateGo(t testing.TB, level int, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// inflateInputs are data of the kinds a raster's chunks hold: noise,
// a smooth uint16 field with noise after horizontal differencing (as in
// a TIFF tile with predictor 2), runs of zeros (nodata), text-like
// repetition, and bytes of a very skewed distribution (codes longer than
// the lookup table).
func inflateInputs(n int) map[string][]byte {
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	in := map[string][]byte{}
	noise := make([]byte, n)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	in["noise"] = noise
	field := make([]byte, n&^1)
	prev := uint16(0)
	for i := 0; i+1 < len(field); i += 2 {
		x := i / 2 % 64
		v := uint16(1500 + 900*math.Sin(float64(x)/7) + 200*rng.Float64())
		if x == 0 {
			prev = 0
		}
		d := v - prev
		prev = v
		field[i], field[i+1] = byte(d), byte(d>>8)
	}
	in["field"] = field
	zeros := make([]byte, n)
	for i := n / 3; i < n/3+n/10; i++ {
		zeros[i] = byte(i)
	}
	in["zeros"] = zeros
	text := make([]byte, 0, n)
	words := []string{"canopy ", "forest ", "stand ", "NDVI ", "tile ", "pine ", "spruce "}
	for len(text) < n {
		text = append(text, words[rng.IntN(len(words))]...)
	}
	in["text"] = text[:n]
	skew := make([]byte, n)
	for i := range skew {
		switch r := rng.IntN(1 << 14); {
		case r < 4:
			skew[i] = byte(100 + r + 4*rng.IntN(30))
		case r < 200:
			skew[i] = byte(1 + rng.IntN(8))
		}
	}
	in["skew"] = skew
	return in
}

// TestInflateSim runs the inflate kernel in the PTX interpreter on
// streams from two encoders the project did not write (Go's
// compress/flate at every strategy and libdeflate), on stored, fixed and
// dynamic blocks, long codes, matches near and far; then on broken
// streams, which it must refuse or decode exactly as Go's decoder does.
func TestInflateSim(t *testing.T) {
	sizes := []int{0, 1, 300, 5000}
	if !testing.Short() {
		sizes = append(sizes, 40000)
	}
	var cases []inflateCase
	for _, n := range sizes {
		for name, b := range inflateInputs(n) {
			for _, level := range []int{flate.NoCompression, flate.HuffmanOnly, flate.BestSpeed, 6, flate.BestCompression} {
				if testing.Short() && n == 5000 && level != 6 {
					continue
				}
				cases = append(cases, inflateCase{name: fmt.Sprintf("%s %d go level %d", name, n, level), stream: deflateGo(t, level, b), cap: len(b), need: len(b), want: b})
			}
			if z := libdeflateZlib(t, 6, b); z != nil {
				cases = append(cases, inflateCase{name: fmt.Sprintf("%s %d libdeflate", name, n), stream: z[2 : len(z)-4], cap: len(b), need: len(b), want: b})
			}
		}
	}
	// A slot larger than the stream's bytes, and a need below them.
	b := inflateInputs(3000)["field"]
	z := deflateGo(t, 6, b)
	cases = append(cases, inflateCase{name: "room to spare", stream: z, cap: 4000, need: 2000, want: b})
	// Too long for its chunk, too short for its need.
	cases = append(cases, inflateCase{name: "too long", stream: z, cap: 2999, need: 0})
	cases = append(cases, inflateCase{name: "too short", stream: z, cap: 4000, need: 3001})
	status, outs := inflateAll(t, newSimDev(t), cases)
	checkInflated(t, cases, status, outs)
	if status[len(status)-2] != inflateLong || status[len(status)-1] != inflateShort {
		t.Errorf("too long: status %d (want %d); too short: %d (want %d)", status[len(status)-2], inflateLong, status[len(status)-1], inflateShort)
	}
}

// libdeflateZlib is b compressed by libdeflate as a zlib stream (nil
// without cgo).
func libdeflateZlib(t testing.TB, level int, b []byte) []byte {
	c, err := deflate.NewCompressor(level)
	if err != nil {
		return nil
	}
	defer c.Close()
	return c.ZlibCompress(make([]byte, 0, c.ZlibBound(len(b))), b)
}

// TestInflateSimBroken feeds the kernel truncated streams, flipped bits
// and random bytes: each is refused, or decoded exactly as Go decodes it;
// nothing is read or written outside the streams and slots (the
// interpreter fails any such access).
func TestInflateSimBroken(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var cases []inflateCase
	n := 0
	for name, b := range inflateInputs(1200) {
		for _, level := range []int{flate.NoCompression, flate.BestSpeed, 6} {
			z := deflateGo(t, level, b)
			for k := range 6 {
				cut := rng.IntN(len(z))
				cases = append(cases, inflateCase{name: fmt.Sprintf("%s level %d cut at %d", name, level, cut), stream: z[:cut], cap: len(b), need: len(b)})
				f := bytes.Clone(z)
				bit := rng.IntN(8 * len(f))
				f[bit/8] ^= 1 << (bit % 8)
				cases = append(cases, inflateCase{name: fmt.Sprintf("%s level %d bit %d flipped (%d)", name, level, bit, k), stream: f, cap: len(b) + 64, need: 0})
				n++
			}
		}
	}
	for k := range 20 {
		r := make([]byte, 1+rng.IntN(400))
		for i := range r {
			r[i] = byte(rng.Uint32())
		}
		cases = append(cases, inflateCase{name: fmt.Sprintf("random %d", k), stream: r, cap: 2000, need: 0})
	}
	cases = append(cases, inflateCase{name: "empty", stream: nil, cap: 10, need: 0})
	status, outs := inflateAll(t, newSimDev(t), cases)
	checkInflated(t, cases, status, outs)
	refused := 0
	for _, s := range status {
		if s != inflateOK {
			refused++
		}
	}
	if refused < len(cases)/3 {
		t.Errorf("only %d of %d broken streams refused", refused, len(cases))
	}
}

// storedFile writes a w×h band of type typ as a DEFLATE GeoTIFF with
// GDAL (tiled or in strips, with or without predictor 2), the zlib
// streams libtiff's, and opens it.
func storedFile(t *testing.T, typ compute.DataType, w, h int, tiled bool, pred int) *geotiff.File {
	t.Helper()
	if _, err := exec.LookPath("gdal_translate"); err != nil {
		if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
			t.Fatal("gdal_translate not found but CANOPY_EXPECT_GDAL=1")
		}
		t.Skip("gdal_translate not found (GDAL's command line tools)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src.tif")
	var err error
	switch typ {
	case compute.U8:
		err = geotiff.WriteBands(src, w, h, [][]uint8{storedValues[uint8](w, h)}, nil, geotiff.WriteOptions{})
	case compute.U16:
		err = geotiff.WriteBands(src, w, h, [][]uint16{storedValues[uint16](w, h)}, nil, geotiff.WriteOptions{})
	case compute.I16:
		err = geotiff.WriteBands(src, w, h, [][]int16{storedValues[int16](w, h)}, nil, geotiff.WriteOptions{})
	default:
		err = geotiff.WriteBands(src, w, h, [][]float32{storedValues[float32](w, h)}, nil, geotiff.WriteOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "gdal.tif")
	args := []string{"-q", "-co", "COMPRESS=DEFLATE", "-co", fmt.Sprintf("PREDICTOR=%d", pred)}
	if tiled {
		args = append(args, "-co", "TILED=YES", "-co", "BLOCKXSIZE=32", "-co", "BLOCKYSIZE=16")
	} else {
		args = append(args, "-co", "BLOCKYSIZE=7")
	}
	cmd := exec.Command("gdal_translate", append(args, src, out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gdal_translate: %v\n%s", err, b)
	}
	f, err := geotiff.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// storedValues is a smooth field with noise, wrapping at the type's range.
func storedValues[T uint8 | uint16 | int16 | float32](w, h int) []T {
	rng := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	v := make([]T, w*h)
	for i := range v {
		x, y := i%w, i/w
		v[i] = T(int64(1500+900*math.Sin(float64(x)/7)*math.Cos(float64(y)/5)) + rng.Int64N(200))
	}
	return v
}

// TestStoredPlaneSim inflates GDAL-written DEFLATE GeoTIFFs (tiles and
// strips, partial ones at the edges, predictor 1 and 2, 8-, 16- and
// 32-bit samples) on the interpreter and places them into the plane: the
// plane equals the host reader's bit for bit.
func TestStoredPlaneSim(t *testing.T) {
	for _, c := range []struct {
		typ   compute.DataType
		tiled bool
		pred  int
	}{{compute.U16, true, 2}, {compute.U16, false, 2}, {compute.U8, true, 1}, {compute.I16, true, 2}, {compute.F32, true, 1}, {compute.U8, false, 2}} {
		t.Run(fmt.Sprintf("%s tiled %v predictor %d", c.typ, c.tiled, c.pred), func(t *testing.T) {
			f := storedFile(t, c.typ, 75, 38, c.tiled, c.pred)
			st, err := f.ReadStored(1)
			if err != nil || st == nil {
				t.Fatalf("ReadStored: %v, %v", st, err)
			}
			want := compute.NewPlane(c.typ, 75, 38)
			if err := f.ReadRowsInto(1, 0, 38, want); err != nil {
				t.Fatal(err)
			}
			dev := newSimDev(t)
			r := &warpJob{dev: dev}
			plane, ok, err := r.storedPlane(st)
			if err != nil || !ok {
				t.Fatalf("storedPlane: ok %v, %v", ok, err)
			}
			got := make([]byte, len(want.Data))
			if err := dev.download(got, plane); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Data) {
				t.Errorf("the device's plane differs from the host reader's")
			}
			dev.free(plane)
			if dev.live != 0 {
				t.Errorf("%d device buffers left", dev.live)
			}
		})
	}
}

// inflateChunks is startInflate and finish, with then queuing work on
// the decoded chunks in between.
func inflateChunks(dev residentDev, data []byte, spans []int64, caps, needs []int32, then func(raw cuda.DevicePtr, stride int) error) ([]uint32, error) {
	in, err := startInflate(dev, data, spans, caps, needs)
	if err != nil {
		return nil, err
	}
	if then != nil {
		if err := then(in.raw, in.stride); err != nil {
			dev.sync()
			in.free()
			return nil, err
		}
	}
	defer in.free()
	return in.wait()
}

// storedPlane inflates st's chunks on the device and places them, the
// predictor undone, into a new device plane, which the caller frees. ok
// is false, and no plane is kept, when the device does not take st or a
// chunk did not inflate (the caller then decodes the band on the host).
func (r *warpJob) storedPlane(st *geotiff.Stored) (plane cuda.DevicePtr, ok bool, err error) {
	sb, err := r.startStored(st)
	if err != nil || sb == nil {
		return 0, false, err
	}
	defer sb.release()
	return sb.finish(r.dev)
}
