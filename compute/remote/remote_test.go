package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// rangeServer serves files by byte ranges (net/http's ServeContent, as a
// web server does), counting requests and body bytes. hook, when set,
// may answer a request itself (a hostile server).
type rangeServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
	etags map[string]string

	requests atomic.Int64
	bytes    atomic.Int64
	hook     func(w http.ResponseWriter, r *http.Request) bool
}

type countWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c countWriter) Write(p []byte) (int, error) {
	k, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(k))
	return k, err
}

func (c countWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func newRangeServer(t *testing.T) *rangeServer {
	s := &rangeServer{files: map[string][]byte{}, etags: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if s.hook != nil && s.hook(w, r) {
			return
		}
		s.mu.Lock()
		data, ok := s.files[r.URL.Path]
		etag := s.etags[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", etag)
		http.ServeContent(countWriter{w, &s.bytes}, r, r.URL.Path, time.Unix(1700000000, 0), bytes.NewReader(data))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *rangeServer) put(path string, data []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = data
	s.etags[path] = fmt.Sprintf(`"v%d-%d"`, len(s.etags), len(data))
	return s.URL + path
}

func (s *rangeServer) reset() { s.requests.Store(0); s.bytes.Store(0) }

// testOptions: no disk cache, quick retries (the hostile tests wait for
// nothing real).
func testOptions() Options {
	return Options{BackoffBase: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Retries: 2}
}

// tiff writes a tiled uint16 GeoTIFF (DEFLATE, 256² tiles, two bands) of
// w×h pixels that look like land (smooth with noise), and returns its bytes.
func tiff(t *testing.T, w, h, bands int, seed uint64) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	data := make([][]uint16, bands)
	for b := range data {
		data[b] = make([]uint16, w*h)
		for y := range h {
			for x := range w {
				data[b][y*w+x] = uint16(1000 + 3*x + 2*y + 500*b + r.IntN(64))
			}
		}
	}
	geo := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, 500000, 6000000, 0}}
	p := filepath.Join(t.TempDir(), "b.tif")
	if err := geotiff.WriteBands(p, w, h, data, geo, geotiff.WriteOptions{Compression: geotiff.Deflate, TileSize: 256}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cog converts a GeoTIFF into a Cloud Optimized GeoTIFF with GDAL's COG
// driver (as the archives' Sentinel-2 and Landsat COGs are made: DEFLATE,
// horizontal predictor, overviews), with tiles of the given size.
func cog(t *testing.T, tif []byte, block int) []byte {
	t.Helper()
	if _, err := exec.LookPath("gdal_translate"); err != nil {
		if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
			t.Fatal("gdal_translate not found but CANOPY_EXPECT_GDAL=1")
		}
		t.Skip("gdal_translate (Debian gdal-bin) is not installed")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.tif"), filepath.Join(dir, "cog.tif")
	if err := os.WriteFile(in, tif, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gdal_translate", "-q", "-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=2",
		"-co", fmt.Sprintf("BLOCKSIZE=%d", block), "-co", "OVERVIEWS=AUTO", in, out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gdal_translate: %v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	windowMu   sync.Mutex
	windowData []byte
)

// windowCOG is the COG of TestWindowRequests and TestNginx, made once:
// 1500×1100, two uint16 bands, 256² tiles.
func windowCOG(t *testing.T) []byte {
	t.Helper()
	windowMu.Lock()
	defer windowMu.Unlock()
	if windowData == nil {
		windowData = cog(t, tiff(t, 1500, 1100, 2, 1), 256)
	}
	return windowData
}

// openBoth opens the same bytes locally and over the server.
func openBoth(t *testing.T, c *Client, u string, data []byte) (local, rem *geotiff.File, f *File) {
	t.Helper()
	local, err := geotiff.NewReader(bytes.NewReader(data), int64(len(data)), "local")
	if err != nil {
		t.Fatal(err)
	}
	f, err = c.Open(context.Background(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	rem, err = geotiff.NewReader(f, f.Size(), f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return local, rem, f
}

// window reads bands 1 and 2 of a window.
func window(t *testing.T, g *geotiff.File, x0, y0, x1, y1 int) []compute.Plane {
	t.Helper()
	dt, _ := g.DataType()
	dst := []compute.Plane{compute.NewPlane(dt, x1-x0, y1-y0), compute.NewPlane(dt, x1-x0, y1-y0)}
	if err := g.ReadWindowBandsInto(x0, y0, x1, y1, []int{1, 2}, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func samePlanes(t *testing.T, a, b []compute.Plane) {
	t.Helper()
	for i := range a {
		if !bytes.Equal(a[i].Data, b[i].Data) {
			t.Fatalf("band %d: the remote pixels differ from the local file's", i+1)
		}
	}
}

// TestWindowRequests: the header is one GET; a window costs at most one
// GET per row of tiles it touches (each row's tiles lie together in the
// file); the pixels are the local file's, bit for bit.
func TestWindowRequests(t *testing.T) {
	s := newRangeServer(t)
	data := windowCOG(t)
	u := s.put("/b.tif", data)
	c := New(testOptions())
	local, rem, f := openBoth(t, c, u, data)
	if n := s.requests.Load(); n != 1 {
		t.Fatalf("opening took %d requests, want 1 (the header)", n)
	}
	s.reset()
	// Columns 300-900, rows 200-700: tiles 1-3 of tile rows 0-2.
	got := window(t, rem, 300, 200, 900, 700)
	samePlanes(t, window(t, local, 300, 200, 900, 700), got)
	if n := s.requests.Load(); n > 3 {
		t.Fatalf("the window took %d requests, want at most 3 (one per row of tiles)", n)
	}
	// (The server's byte count may lag behind its handlers; the File's
	// own count is exact.)
	st := f.Stats()
	if st.Requests != 1+s.requests.Load() {
		t.Fatalf("the File counts %+v; the server saw %d requests after the header", st, s.requests.Load())
	}
	// Less than the whole file went over the wire.
	if st.Bytes >= int64(len(data))/2 {
		t.Fatalf("the header and the window fetched %d of the file's %d bytes", st.Bytes, len(data))
	}
	// The same window again: nothing is held after the read, so it is
	// fetched again, in as few requests.
	s.reset()
	samePlanes(t, got, window(t, rem, 300, 200, 900, 700))
	if n := s.requests.Load(); n > 3 {
		t.Fatalf("the window again took %d requests", n)
	}
	// The whole image, all bands: the pixels are the local file's.
	s.reset()
	all, err := rem.ReadBands(1, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := local.ReadBands(1, 2)
	for i := range all {
		for k := range all[i].Data {
			if all[i].Data[k] != want[i].Data[k] {
				t.Fatalf("whole read, band %d pixel %d differs", i+1, k)
			}
		}
	}
	if n := s.requests.Load(); n > 5 { // 5 tile rows, merged further by the gap rule
		t.Fatalf("the whole image took %d requests", n)
	}
}

// TestCache: a second Client with the same disk cache reads the window
// with the header GET only; a changed file (new ETag) never takes the old
// bytes.
func TestCache(t *testing.T) {
	s := newRangeServer(t)
	data := cog(t, tiff(t, 900, 600, 2, 2), 256)
	u := s.put("/c.tif", data)
	opt := testOptions()
	opt.Cache = NewCache(t.TempDir(), 1<<30)
	_, rem, _ := openBoth(t, New(opt), u, data)
	first := window(t, rem, 100, 100, 700, 500)

	s.reset()
	_, rem2, _ := openBoth(t, New(opt), u, data)
	samePlanes(t, first, window(t, rem2, 100, 100, 700, 500))
	if n := s.requests.Load(); n != 1 {
		t.Fatalf("a cached window took %d requests, want 1 (the header)", n)
	}

	// The file changes on the server: same URL, new bytes, new ETag.
	data2 := cog(t, tiff(t, 900, 600, 2, 3), 256)
	s.put("/c.tif", data2)
	s.reset()
	local2, rem3, _ := openBoth(t, New(opt), u, data2)
	samePlanes(t, window(t, local2, 100, 100, 700, 500), window(t, rem3, 100, 100, 700, 500))
	if s.requests.Load() < 2 {
		t.Fatal("the changed file was read from the old file's cache")
	}
}

// TestChangedWhileRead: a file replaced on the server between the header
// and the tiles is an error, never a mix.
func TestChangedWhileRead(t *testing.T) {
	s := newRangeServer(t)
	data := tiff(t, 600, 600, 2, 4)
	u := s.put("/d.tif", data)
	_, rem, _ := openBoth(t, New(testOptions()), u, data)
	s.put("/d.tif", tiff(t, 600, 600, 2, 5))
	dt, _ := rem.DataType()
	dst := []compute.Plane{compute.NewPlane(dt, 600, 600), compute.NewPlane(dt, 600, 600)}
	err := rem.ReadWindowBandsInto(0, 0, 600, 600, []int{1, 2}, dst)
	oneLine(t, err, "changed on the server")
}

// TestOverviewsCOG: a COG's overview is read through the same File.
func TestOverviewsCOG(t *testing.T) {
	w, h := 1300, 900
	band := make([]float32, w*h)
	for i := range band {
		band[i] = float32(i%w) * 0.001
	}
	p := filepath.Join(t.TempDir(), "cog.tif")
	fh, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := geotiff.WriteCOG(fh, w, h, [][]float32{band}, nil, geotiff.COGOptions{TileSize: 256}); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := newRangeServer(t)
	u := s.put("/cog.tif", data)
	local, rem, _ := openBoth(t, New(testOptions()), u, data)
	if n := s.requests.Load(); n != 1 {
		t.Fatalf("opening the COG took %d requests, want 1", n)
	}
	lo, err := local.Overviews()
	if err != nil {
		t.Fatal(err)
	}
	ro, err := rem.Overviews()
	if err != nil || len(ro) != len(lo) || len(ro) == 0 {
		t.Fatalf("%d overviews, want %d: %v", len(ro), len(lo), err)
	}
	if n := s.requests.Load(); n != 1 {
		t.Fatalf("listing the overviews took %d more requests, want none (the header holds them)", n-1)
	}
	last := len(ro) - 1
	a, err := ro[last].ReadBands(1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := lo[last].ReadBands(1)
	for i := range a[0].Data {
		if a[0].Data[i] != b[0].Data[i] {
			t.Fatalf("overview pixel %d differs", i)
		}
	}
}

func oneLine(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", want)
	}
	m := err.Error()
	if !strings.Contains(m, want) || strings.Contains(m, "\n") || len(m) > 400 {
		t.Fatalf("error %q, want one line saying %q", m, want)
	}
}

// TestHostile: servers that lie, stall or never stop are bounded, each
// with one line.
func TestHostile(t *testing.T) {
	data := tiff(t, 600, 600, 2, 6)
	cases := []struct {
		name string
		hook func(w http.ResponseWriter, r *http.Request) bool
		opt  func(*Options)
		want string
	}{
		{"wrong Content-Range", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 100-%d/%d", 100+32767, len(data)))
			w.Header().Set("Content-Length", "32768")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(data[100 : 100+32768])
			return true
		}, nil, "sent bytes 100-32867 for bytes 0-32767"},
		{"short read", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-32767/%d", len(data)))
			w.Header().Set("Content-Length", "32768")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(data[:1000])
			panic(http.ErrAbortHandler) // the connection drops
		}, nil, "after 3 tries"},
		{"redirect to file://", func(w http.ResponseWriter, r *http.Request) bool {
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
			return true
		}, nil, "only http and https are followed"},
		{"redirect to a private address of another host", func(w http.ResponseWriter, r *http.Request) bool {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
			return true
		}, nil, "private or local address of another host"},
		{"redirect to another host's 10/8 address", func(w http.ResponseWriter, r *http.Request) bool {
			http.Redirect(w, r, "http://10.1.2.3/b.tif", http.StatusTemporaryRedirect)
			return true
		}, nil, "private or local address of another host"},
		{"slow drip", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-32767/%d", len(data)))
			w.Header().Set("Content-Length", "32768")
			w.WriteHeader(http.StatusPartialContent)
			for i := 0; i < 32768; i++ {
				if _, err := w.Write(data[i : i+1]); err != nil {
					return true
				}
				w.(http.Flusher).Flush()
				time.Sleep(20 * time.Millisecond)
			}
			return true
		}, func(o *Options) { o.IdleTimeout, o.MinRate, o.Retries = 200*time.Millisecond, 1<<10, -1 }, "the transfer "},
		{"body larger than announced", func(w http.ResponseWriter, r *http.Request) bool {
			// Chunked: no Content-Length, a correct Content-Range, more bytes.
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-32767/%d", len(data)))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(data[:32768])
			w.Write(make([]byte, 1<<20))
			return true
		}, nil, "more than the 32768 bytes of the range"},
		{"Content-Length against Content-Range", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-32767/%d", len(data)))
			w.Header().Set("Content-Length", "65536")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(data[:65536])
			return true
		}, nil, "announces 65536 bytes for a range of 32768"},
		{"429 forever", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return true
		}, nil, "429 Too Many Requests, still after 3 tries"},
		{"429 with an hour's wait", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Retry-After", "3600")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return true
		}, nil, "asks to wait 1h0m0s"},
		{"503 forever", func(w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return true
		}, nil, "503 Service Unavailable, still after 3 tries"},
		{"200 for a range of a large file", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Length", fmt.Sprint(len(data)))
			w.Write(data)
			return true
		}, nil, "does not answer byte-range requests"},
		{"not found", func(w http.ResponseWriter, r *http.Request) bool {
			http.NotFound(w, r)
			return true
		}, nil, "not found (404 Not Found)"},
		{"forbidden", func(w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, "no", http.StatusForbidden)
			return true
		}, nil, "refuses access (403 Forbidden)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newRangeServer(t)
			u := s.put("/b.tif", data)
			s.hook = tc.hook
			opt := testOptions()
			if tc.opt != nil {
				tc.opt(&opt)
			}
			_, err := New(opt).Open(context.Background(), u, nil)
			oneLine(t, err, tc.want)
			if tc.name == "slow drip" && !strings.Contains(err.Error(), "too slow") && !strings.Contains(err.Error(), "stalled") {
				// Either is right: a busy machine may leave a gap of a
				// whole IdleTimeout between two drops.
				t.Fatalf("a slow drip: %v", err)
			}
			if n := s.requests.Load(); n > 4 {
				t.Fatalf("%d requests, want at most 4", n)
			}
		})
	}
}

// TestEndlessHeaders: a server that sends header lines forever is cut
// off at the header limit.
func TestEndlessHeaders(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				bufio.NewReader(conn).ReadString('\n')
				w := bufio.NewWriter(conn)
				w.WriteString("HTTP/1.1 206 Partial Content\r\n")
				for i := 0; ; i++ {
					if _, err := fmt.Fprintf(w, "X-Filler-%d: %s\r\n", i, strings.Repeat("a", 100)); err != nil {
						return
					}
					if i%100 == 0 && w.Flush() != nil {
						return
					}
				}
			}()
		}
	}()
	opt := testOptions()
	opt.MaxHeaderBytes = 64 << 10
	_, err = New(opt).Open(context.Background(), "http://"+ln.Addr().String()+"/x.tif", nil)
	oneLine(t, err, "response headers are longer than 64 KiB")
}

// TestLyingOffsets: a COG whose header points its tiles past the end of
// the file, or at bytes that are not a tile, is refused with one line,
// after a bounded number of requests.
func TestLyingOffsets(t *testing.T) {
	data := tiff(t, 600, 600, 2, 8)
	local, err := geotiff.NewReader(bytes.NewReader(data), int64(len(data)), "x")
	if err != nil || !local.Tiled() || local.BigTIFF() || local.BigEndian() {
		t.Fatal("the fixture is not a little-endian classic tiled TIFF", err)
	}
	offs, counts := tileArrays(t, data)
	past := bytes.Clone(data)
	binary.LittleEndian.PutUint32(past[offs+4:], uint32(len(data)+1000)) // tile 1 past the end
	garbage := bytes.Clone(data)
	for i := range 4 { // every tile of the first row at the header's bytes
		binary.LittleEndian.PutUint32(garbage[offs+4*i:], 8)
		_ = counts
	}
	s := newRangeServer(t)
	c := New(testOptions())
	f, err := c.Open(context.Background(), s.put("/past.tif", past), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = geotiff.NewReader(f, f.Size(), f.Name())
	oneLine(t, err, "ends early")

	f, err = c.Open(context.Background(), s.put("/garbage.tif", garbage), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := geotiff.NewReader(f, f.Size(), f.Name())
	if err == nil {
		dt, _ := g.DataType()
		dst := []compute.Plane{compute.NewPlane(dt, 600, 600), compute.NewPlane(dt, 600, 600)}
		err = g.ReadWindowBandsInto(0, 0, 600, 600, []int{1, 2}, dst)
	}
	oneLine(t, err, "damaged")
	if n := s.requests.Load(); n > 6 {
		t.Fatalf("%d requests for two lying files", n)
	}
}

// tileArrays finds the TileOffsets and TileByteCounts arrays (long
// values) of a little-endian classic TIFF's first IFD.
func tileArrays(t *testing.T, b []byte) (offs, counts int) {
	t.Helper()
	ifd := int(binary.LittleEndian.Uint32(b[4:]))
	n := int(binary.LittleEndian.Uint16(b[ifd:]))
	for i := range n {
		e := b[ifd+2+12*i:]
		tag, typ := binary.LittleEndian.Uint16(e), binary.LittleEndian.Uint16(e[2:])
		if typ != 4 {
			continue
		}
		switch tag {
		case 324:
			offs = int(binary.LittleEndian.Uint32(e[8:]))
		case 325:
			counts = int(binary.LittleEndian.Uint32(e[8:]))
		}
	}
	if offs == 0 || counts == 0 {
		t.Fatal("no long TileOffsets/TileByteCounts arrays")
	}
	return offs, counts
}

// signer counts signatures and refuses the first one's URL at the server.
type signer struct {
	n       atomic.Int64
	refresh atomic.Int64
}

func (s *signer) Sign(ctx context.Context, u string, refresh bool) (string, error) {
	if refresh {
		s.refresh.Add(1)
	}
	return u + fmt.Sprintf("?sig=%d", s.refresh.Load()), s.ctxErr(ctx)
}

func (s *signer) ctxErr(ctx context.Context) error { s.n.Add(1); return ctx.Err() }

// TestSigner: every request is signed; an expired signature (403) is
// signed afresh once and the read goes on.
func TestSigner(t *testing.T) {
	data := tiff(t, 600, 600, 2, 9)
	s := newRangeServer(t)
	u := s.put("/s.tif", data)
	s.hook = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Query().Get("sig") == "0" {
			http.Error(w, "Server failed to authenticate the request", http.StatusForbidden)
			return true
		}
		return false
	}
	sg := &signer{}
	f, err := New(testOptions()).Open(context.Background(), u, sg)
	if err != nil {
		t.Fatal(err)
	}
	if sg.refresh.Load() != 1 || sg.n.Load() != 2 {
		t.Fatalf("%d signatures, %d refreshed; want 2 and 1", sg.n.Load(), sg.refresh.Load())
	}
	if f.Size() != int64(len(data)) {
		t.Fatal("size")
	}
}

func TestPlan(t *testing.T) {
	got := plan([][2]int64{{1000, 100}, {0, 10}, {1108, 50}, {5000, 10}, {1100, 20}, {-5, 3}, {9990, 100}}, 10000, 16, 1<<20)
	want := []run{{0, 10}, {1000, 158}, {5000, 10}, {9990, 10}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("plan %v, want %v", got, want)
	}
	// A run is split where it would pass the longest request.
	got = plan([][2]int64{{0, 600}, {600, 600}, {1200, 600}}, 10000, 0, 1300)
	if fmt.Sprint(got) != fmt.Sprint([]run{{0, 1200}, {1200, 600}}) {
		t.Fatalf("split plan %v", got)
	}
}

func TestHTTPURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://sentinel-cogs.s3.us-west-2.amazonaws.com/x/B04.tif": "https://sentinel-cogs.s3.us-west-2.amazonaws.com/x/B04.tif",
		"s3://sentinel-cogs/sentinel-s2-l2a-cogs/32/T/QM/B04.tif":    "https://sentinel-cogs.s3.us-west-2.amazonaws.com/sentinel-s2-l2a-cogs/32/T/QM/B04.tif",
		"s3://my.bucket/a b.tif":                                     "https://s3.us-east-1.amazonaws.com/my.bucket/a%20b.tif",
	} {
		t.Setenv("AWS_REGION", "")
		t.Setenv("AWS_DEFAULT_REGION", "")
		got, err := HTTPURL(in)
		if err != nil || got != want {
			t.Errorf("HTTPURL(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"file:///etc/passwd", "ftp://x/y", "s3://bucket", "/local/path.tif", "https:///nohost"} {
		if _, err := HTTPURL(bad); err == nil {
			t.Errorf("HTTPURL(%s) accepted", bad)
		}
	}
	if k := cacheKey("https://a.blob.core.windows.net/c/x.tif?st=1&se=2&sig=abc"); k != "https://a.blob.core.windows.net/c/x.tif" {
		t.Errorf("cache key %s", k)
	}
}

// TestCacheLimit: the cache stays within its limit, oldest first.
func TestCacheLimit(t *testing.T) {
	dir := t.TempDir()
	c := NewCache(dir, 1<<20)
	for i := range 12 {
		o := c.object(fmt.Sprintf("https://h/%d.tif", i), validator{etag: `"x"`}, 1<<20)
		o.put(0, make([]byte, 200<<10))
		old := time.Now().Add(time.Duration(i-100) * time.Minute)
		os.Chtimes(filepath.Join(o.dir, "meta.json"), old, old)
	}
	var total int64
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			total += fi.Size()
		}
		return nil
	})
	if total > 1<<20 {
		t.Fatalf("the cache holds %d bytes, over its limit of %d", total, 1<<20)
	}
	// The newest file version is still there.
	o := c.object("https://h/11.tif", validator{etag: `"x"`}, 1<<20)
	buf := make([]byte, 10)
	if !o.readAll(buf, 100) {
		t.Fatal("the most recent range was evicted")
	}
	_ = io.EOF
}

// TestHTTP2: over TLS the requests go over HTTP/2 (one connection, many
// streams) where the server offers it.
func TestHTTP2(t *testing.T) {
	data := tiff(t, 600, 600, 2, 10)
	var protos sync.Map
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos.Store(r.Proto, true)
		http.ServeContent(w, r, "x.tif", time.Unix(1700000000, 0), bytes.NewReader(data))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	opt := testOptions()
	opt.TLS = srv.Client().Transport.(*http.Transport).TLSClientConfig
	f, err := New(opt).Open(context.Background(), srv.URL+"/x.tif", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(make([]byte, 1000), 100000); err != nil {
		t.Fatal(err)
	}
	n := 0
	protos.Range(func(k, _ any) bool {
		if k != "HTTP/2.0" {
			t.Errorf("a request over %v", k)
		}
		n++
		return true
	})
	if n != 1 {
		t.Fatalf("%d protocols seen", n)
	}
}

// TestOffline: with the server out of reach, a file opens from the disk
// cache (the version cached last): what was read before reads again, the
// same pixels; what was never fetched is one line saying so.
func TestOffline(t *testing.T) {
	s := newRangeServer(t)
	data := cog(t, tiff(t, 900, 600, 2, 12), 256)
	u := s.put("/o.tif", data)
	opt := testOptions()
	opt.Cache = NewCache(t.TempDir(), 1<<30)
	local, rem, _ := openBoth(t, New(opt), u, data)
	seen := window(t, rem, 0, 0, 300, 200)
	s.Close()

	f, err := New(opt).Open(context.Background(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Offline() {
		t.Fatal("not offline with the server closed")
	}
	g, err := geotiff.NewReader(f, f.Size(), f.Name())
	if err != nil {
		t.Fatal(err)
	}
	samePlanes(t, window(t, local, 0, 0, 300, 200), window(t, g, 0, 0, 300, 200))
	samePlanes(t, seen, window(t, g, 0, 0, 300, 200))
	dt, _ := g.DataType()
	dst := []compute.Plane{compute.NewPlane(dt, 300, 300), compute.NewPlane(dt, 300, 300)}
	err = g.ReadWindowBandsInto(600, 300, 900, 600, []int{1, 2}, dst)
	oneLine(t, err, "offline, and bytes")

	// Nothing cached of another file: the network's error, one line.
	_, err = New(opt).Open(context.Background(), strings.Replace(u, "/o.tif", "/p.tif", 1), nil)
	oneLine(t, err, "connection refused")
}

// rtFunc is an http.RoundTripper of a function.
type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestRequesterPays: Earth Search's Landsat assets are s3:// links into a
// requester-pays bucket; the 403 their HTTPS URL gets says why, in one
// line, and where the same scenes are; another bucket's 403 does not.
func TestRequesterPays(t *testing.T) {
	var seen []string
	c := New(Options{Transport: rtFunc(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r.URL.String())
		return &http.Response{StatusCode: 403, Status: "403 Forbidden", Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})})
	for href, want := range map[string]string{
		"s3://usgs-landsat/collection02/level-2/standard/oli-tirs/2023/033/032/LC08_L2SP_033032_20231008_20231017_02_T1/LC08_L2SP_033032_20231008_20231017_02_T1_SR_B4.TIF": "s3://usgs-landsat is a requester-pays bucket",
		"s3://sentinel-s2-l2a/tiles/13/T/DE/2023/10/8/0/B04.jp2":                                   "s3://sentinel-s2-l2a is a requester-pays bucket",
		"s3://sentinel-cogs/sentinel-s2-l2a-cogs/13/T/DE/2023/10/S2A_13TDE_20231008_0_L2A/B04.tif": "the link may need signing",
	} {
		u, err := HTTPURL(href)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Open(context.Background(), u, nil)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line saying %q", href, err, want)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("%d requests for 3 refused files (a 403 is not retried)", len(seen))
	}
}
